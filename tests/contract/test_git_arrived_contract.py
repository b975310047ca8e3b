"""``GitService.arrived``: when each path came onto a branch, on ``PygitService`` and on
``InMemoryGit`` alike, and over generated histories the two give the same answer as a
model of the definition."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.contracts.errors import NotFound
from memhtml.contracts.services import Arrival, GitService, PathChange
from tests.contract.git_backends import AUTHOR, Backend, drop, err, make_backend, ok, put

T0 = datetime(2024, 1, 1, 9, 0, 0, tzinfo=UTC)
MOVE = "memhtml move: x\n\nMemhtml-Op: move\n"
FOLLOW = (("Memhtml-Op", "move"),)


def at(day: int) -> datetime:
    return T0 + timedelta(days=day)


def commit(git: GitService, parent: str | None, changes: list[PathChange], day: int,
           message: str = "write", ref: str = "main") -> str:
    return ok(git.commit(ref, parent, changes, message, AUTHOR, at(day)))


def test_each_arrival_names_the_commit_its_steps_and_its_committer_time(
        backend: Backend) -> None:
    git = backend.git
    c1 = commit(git, None, [put("a/one.html", "1"), put("b.html", "b")], 0)
    c2 = commit(git, c1, [put("a/two.html", "2"), put("b.html", "b2")], 10)
    c3 = commit(git, c2, [drop("a/one.html")], 20)
    c4 = commit(git, c3, [put("a/one.html", "back"), put("c/d/e.html", "e")], 30)
    wanted = ["a/one.html", "a/two.html", "b.html", "c/d/e.html", "gone.html", "a", "c/d"]
    got = ok(git.arrived("main", wanted))
    # An edit keeps the arrival; a deletion and re-adding moves it; a path the tip
    # lacks, or a directory, is absent; the root's paths arrived with it.
    assert got == {
        "a/one.html": Arrival(0, c4, at(30), "a/one.html"),
        "c/d/e.html": Arrival(0, c4, at(30), "c/d/e.html"),
        "a/two.html": Arrival(2, c2, at(10), "a/two.html"),
        "b.html": Arrival(3, c1, at(0), "b.html"),
    }
    assert ok(git.arrived(c2, wanted)) == {
        "a/one.html": Arrival(1, c1, at(0), "a/one.html"),
        "a/two.html": Arrival(0, c2, at(10), "a/two.html"),
        "b.html": Arrival(1, c1, at(0), "b.html"),
    }
    assert ok(git.arrived(c4, [])) == {}
    assert isinstance(err(git.arrived("nope", ["b.html"])), NotFound)
    # ``arrivals`` is the same walk, in steps.
    assert ok(git.arrivals("main", wanted)) == {p: a.steps for p, a in got.items()}


def test_a_merge_brings_what_its_second_parent_held(backend: Backend) -> None:
    git = backend.git
    base = commit(git, None, [put("base.html", "b")], 0)
    ok(git.create_branch("side", base))
    side = commit(git, base, [put("side.html", "s")], 5, ref="side")
    main = commit(git, base, [put("main.html", "m")], 7)
    merged = ok(git.commit_merge("refs/heads/main", main, side, [put("side.html", "s")],
                                 "merge", AUTHOR, at(9)))
    got = ok(git.arrived(merged, ["side.html", "main.html", "base.html"]))
    assert got["side.html"] == Arrival(0, merged, at(9), "side.html")
    assert got["main.html"].at == at(7) and got["base.html"].at == at(0)


def test_a_move_the_caller_follows_keeps_the_earlier_arrival(backend: Backend) -> None:
    git = backend.git
    c1 = commit(git, None, [put("inbox/note.html", "note"), put("areas/t/keep.html", "k")], 0)
    c2 = commit(git, c1, [drop("inbox/note.html"), put("areas/t/note.html", "note"),
                          put("areas/t/keep.html", "k2")], 40, MOVE)
    c3 = commit(git, c2, [drop("areas/t/note.html"), put("areas/u/note.html", "note")], 50,
                MOVE)
    assert ok(git.arrived(c3, ["areas/u/note.html"], FOLLOW)) == {
        "areas/u/note.html": Arrival(2, c1, at(0), "inbox/note.html")}
    # Not asked to follow, or a commit without the trailer: the move is an arrival.
    assert ok(git.arrived(c3, ["areas/u/note.html"])) == {
        "areas/u/note.html": Arrival(0, c3, at(50), "areas/u/note.html")}
    assert ok(git.arrived(c3, ["areas/u/note.html"], (("Memhtml-Op", "write"),)))[
        "areas/u/note.html"].commit == c3


def test_a_move_is_followed_only_when_it_is_unambiguous(backend: Backend) -> None:
    git = backend.git
    c1 = commit(git, None, [put("a/x.html", "x"), put("a/y.html", "same"),
                            put("a/z.html", "same"), put("a/w.html", "w")], 0)
    # Bytes changed on the way: not the same file as far as git can tell.
    c2 = commit(git, c1, [drop("a/x.html"), put("b/x.html", "x, edited")], 10, MOVE)
    # Two deleted copies of one blob: which one moved is not known.
    c3 = commit(git, c2, [drop("a/y.html"), drop("a/z.html"), put("b/y.html", "same")], 20,
                MOVE)
    # One deleted, two brought: neither copy takes its age.
    c4 = commit(git, c3, [drop("a/w.html"), put("b/w1.html", "w"), put("b/w2.html", "w")], 30,
                MOVE)
    got = ok(git.arrived(c4, ["b/x.html", "b/y.html", "b/w1.html", "b/w2.html"], FOLLOW))
    assert got == {
        "b/x.html": Arrival(2, c2, at(10), "b/x.html"),
        "b/y.html": Arrival(1, c3, at(20), "b/y.html"),
        "b/w1.html": Arrival(0, c4, at(30), "b/w1.html"),
        "b/w2.html": Arrival(0, c4, at(30), "b/w2.html"),
    }


def test_a_wide_directory_is_walked_as_any_other(backend: Backend) -> None:
    """Hundreds of files in one folder (an import) are compared another way; the
    answer is the same."""
    git = backend.git
    first = [f"areas/imported/note-{n:04d}-{'x' * 40}.html" for n in range(400)]
    c1 = commit(git, None, [put(p, p) for p in first], 0, "import")
    c2 = commit(git, c1, [put(first[7], "edited"), put("areas/imported/late.html", "l"),
                          drop(first[9])], 3)
    c3 = commit(git, c2, [put("areas/other/x.html", "x")], 6)
    got = ok(git.arrived(c3, [*first, "areas/imported/late.html", "areas/other/x.html"]))
    assert len(got) == 401 and first[9] not in got
    assert got[first[0]] == Arrival(2, c1, at(0), first[0])
    assert got[first[7]].commit == got[first[0]].commit == c1
    assert got["areas/imported/late.html"] == Arrival(1, c2, at(3), "areas/imported/late.html")
    assert got["areas/other/x.html"].commit == c3


# -- generated histories ---------------------------------------------------------------

NAMES = ("a.html", "b.html", "d/c.html", "d/e/f.html", "g/h.html")


@dataclass(frozen=True)
class Step:
    """One commit: paths written (with a content token), paths dropped, paths moved
    (from, to: the content carried over), and whether it carries the move trailer."""

    writes: tuple[tuple[str, int], ...]
    drops: tuple[str, ...]
    moves: tuple[tuple[str, str], ...]
    move: bool

    def apply(self, tree: dict[str, int]) -> tuple[dict[str, int], list[PathChange]]:
        """The next tree and the changes that make it."""
        nxt = dict(tree)
        for source, target in self.moves:
            if source in nxt and target not in nxt and source != target:
                nxt[target] = nxt.pop(source)
        nxt.update(self.writes)
        for path in self.drops:
            nxt.pop(path, None)
        changes = [put(p, f"content {v}") for p, v in sorted(nxt.items()) if tree.get(p) != v]
        changes += [drop(p) for p in sorted(tree) if p not in nxt]
        return nxt, changes


steps = st.lists(st.builds(
    Step, st.lists(st.tuples(st.sampled_from(NAMES), st.integers(0, 3)), max_size=2,
                   unique_by=lambda w: w[0]).map(tuple),
    st.lists(st.sampled_from(NAMES), max_size=1, unique=True).map(tuple),
    st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)), max_size=2
             ).map(tuple),
    st.booleans()), min_size=1, max_size=8)


def model(history: list[tuple[str, dict[str, int], bool, datetime]]
          ) -> dict[str, tuple[str, datetime, str]]:
    """The definition, over the trees themselves: walk back while the parent holds the
    path; at a followed move, continue as the single deleted path of the same content
    when the commit brought no other copy of it."""
    tip = history[-1][1]
    out: dict[str, tuple[str, datetime, str]] = {}
    for path in tip:
        name, index = path, len(history) - 1
        while True:
            sha, tree, move, when = history[index]
            parent = history[index - 1][1] if index > 0 else {}
            if name in parent:
                index -= 1
                continue
            if move and index > 0:
                blob = tree[name]
                sources = [p for p, v in parent.items() if p not in tree and v == blob]
                copies = [p for p, v in tree.items() if p not in parent and v == blob]
                if len(sources) == 1 and copies == [name]:
                    name, index = sources[0], index - 1
                    continue
            out[path] = (sha, when, name)
            break
    return out


@settings(max_examples=25)
@given(steps)
def test_both_repositories_agree_with_the_definition(history: list[Step]) -> None:
    with tempfile.TemporaryDirectory(prefix="memhtml-arrived-") as folder:
        backends = [make_backend(kind, Path(folder) / kind, bare=True)
                    for kind in ("pygit", "memory")]
        for backend in backends:
            parent: str | None = None
            tree: dict[str, int] = {}
            made: list[tuple[str, dict[str, int], bool, datetime]] = []
            for day, step in enumerate(history):
                nxt, changes = step.apply(tree)
                if parent is not None and not changes:
                    continue
                message = MOVE if step.move else "write"
                parent = ok(backend.git.commit("main", parent, changes, message, AUTHOR,
                                               at(day)))
                tree = nxt
                made.append((parent, dict(tree), step.move, at(day)))
            if parent is None:
                continue
            got = ok(backend.git.arrived(parent, NAMES, FOLLOW))
            expected = model(made)
            assert {p: (a.commit, a.at, a.came_as) for p, a in got.items()} == expected
            assert all(a.steps == len(made) - 1 - [m[0] for m in made].index(a.commit)
                       for a in got.values())
