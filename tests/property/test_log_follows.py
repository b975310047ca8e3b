"""``log`` follows a memory through everything that moves it: for any sequence of
moves (by the door, or a person's own ``git mv``), labels, archives and restores of
one memory, among writes of others, ``log`` of where it ends lists exactly the
commits that touched it, newest first, each with the path it had after that commit;
and a read of any path it left says where it went and when."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful

from memhtml.contracts.services import PathChange
from memhtml.store import WriteInput, archive, describe, label, log, move, read, restore, write
from memhtml.store.errors import Moved
from tests.integration.store.store_support import AUTHOR, CLOCK, err, make_memory_store, ok

FOLDERS = ("areas/ops/", "areas/team/", "areas/inbox/")
NAMES = ("deploy-window.html", "window.html")
STEP = st.one_of(
    st.tuples(st.just("move"), st.sampled_from(FOLDERS), st.sampled_from(NAMES)),
    st.tuples(st.just("git-mv"), st.sampled_from(FOLDERS), st.sampled_from(NAMES)),
    st.tuples(st.just("label"), st.sampled_from(["service:api", "team:ops", "topic:deploy"]),
              st.just("")),
    st.tuples(st.just("archive"), st.just(""), st.just("")),
    st.tuples(st.just("restore"), st.just(""), st.just("")),
    st.tuples(st.just("other"), st.sampled_from(["Cache", "Queue", "Pager"]), st.just("")),
)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, max_size=8))
def test_log_lists_every_commit_that_touched_the_memory(
        steps: list[tuple[str, str, str]]) -> None:
    store, git = make_memory_store()
    first = ok(write(store, WriteInput(title="Deploy window", claim="Deploys on Tuesdays.")))
    path = first.primary or ""
    touched = [(first.commit, path)]
    left: list[str] = []
    archived = False
    for n, (kind, a, b) in enumerate(steps):
        before = ok(store.tip())
        if kind == "other":
            ok(write(store, WriteInput(title=f"{a} {n}", claim=f"{a} note number {n}.")))
            continue
        if kind == "restore":
            if not archived:
                continue
            landed = restore(store, path)
        elif archived:
            continue
        elif kind == "move":
            landed = move(store, path, a + b)
        elif kind == "git-mv":
            to = a + b
            if to == path or ok(store.head()).get(to) is not None:
                continue
            data = ok(store.head()).indexes.records[path].html.encode()
            ok(git.commit("refs/heads/main", before, [PathChange(path, None),
                                                      PathChange(to, data)],
                          "git mv by hand", AUTHOR, CLOCK.now()))
            left.append(path)
            path = to
            touched.append((ok(store.tip()) or "", path))
            continue
        elif kind == "label":
            landed = label(store, path, a)
        else:
            landed = archive(store, path)
        if not is_successful(landed) or ok(store.tip()) == before:
            continue
        done = ok(landed)
        went = {"move": a + b,
                "archive": next((p for p in done.paths if p.startswith("archive/")), path),
                "restore": next((p for p in done.paths if not p.startswith("archive/")),
                                path)}.get(kind, path)
        if kind in ("move", "archive"):
            left.append(path)
        archived = kind == "archive" or (archived and kind != "restore")
        path = went
        touched.append((done.commit, path))
    history = ok(log(store, path, limit=100))
    assert [(h.commit.sha, h.path) for h in history] == list(reversed(touched))
    for old in left:
        if old == path or ok(store.head()).get(old) is not None:
            continue
        said = err(read(store, old))
        if isinstance(said, Moved):
            assert " on 2026-05-01 " in describe(said)
