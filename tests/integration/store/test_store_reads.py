"""The read doors and the snapshot cache against real repositories."""

from __future__ import annotations

from pathlib import Path

import pygit2

from memhtml.adapters.snapshot_files import save_snapshot, snapshot_files, snapshot_path
from memhtml.contracts.errors import NotFound
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.head import load_head
from memhtml.store import (
    Finding,
    InboundLink,
    OutboundLink,
    Store,
    WriteInput,
    archive,
    doctor,
    log,
    read,
    related,
    search,
    status,
    task_add,
    write,
)
from memhtml.store.site import render_site
from memhtml.store.snapshot import SNAPSHOTS_KEPT
from tests.integration.store.store_support import (
    AUTHOR,
    CLOCK,
    NOW,
    err,
    make_store,
    ok,
    state_dir_of,
    tip,
)

DETAILED = (
    "<p><mark>Retries back off exponentially.</mark> The cap is thirty seconds.</p>\n"
    "<details><summary>Why a cap</summary><p>Unbounded waits stall the queue.</p></details>"
)


def test_read_by_tier(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    path = ok(write(store, WriteInput(title="Retry", claim="", article_html=DETAILED))).primary
    assert path is not None
    assert ok(read(store, path, "gist")) == "Retries back off exponentially."
    assert ok(read(store, path, "summary")) == (
        "Retries back off exponentially.\n\nThe cap is thirty seconds.\n\nWhy a cap")
    assert ok(read(store, path)) == ok(read(store, path, "summary"))
    assert ok(read(store, path, "details")) == (
        "Retries back off exponentially. The cap is thirty seconds.\n\nWhy a cap\n\n"
        "Unbounded waits stall the queue.")
    assert ok(read(store, path, "all")).startswith("<!doctype html>")
    assert isinstance(err(read(store, "areas/inbox/none.html")), NotFound)
    assert "tier" in err(read(store, path, "everything")).reason  # type: ignore[union-attr]


def test_search_filters_and_reads_old_versions(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    ok(write(store, WriteInput(title="Canary deploys", claim="Deploys go to the canary first.",
                               entities=("service:deploy",), tags=("ops",))))
    first = tip(store)
    ok(write(store, WriteInput(title="Canary rollback", claim="A failed canary rolls back.",
                               memory_type="procedural", directory="areas/ops",
                               entities=("service:deploy", "team:infra"))))
    ok(write(store, WriteInput(title="Canary birds", claim="Canaries are small birds.")))
    assert {h.path for h in ok(search(store, "canary"))} == {
        "areas/inbox/canary-deploys.html", "areas/ops/canary-rollback.html",
        "areas/inbox/canary-birds.html"}
    assert [h.path for h in ok(search(store, "canary", types=("procedural",)))] == [
        "areas/ops/canary-rollback.html"]
    assert {h.path for h in ok(search(store, "canary", entities=("service:deploy",)))} == {
        "areas/inbox/canary-deploys.html", "areas/ops/canary-rollback.html"}
    assert [h.path for h in ok(search(store, "canary", tags=("ops",)))] == [
        "areas/inbox/canary-deploys.html"]
    assert [h.path for h in ok(search(store, "canary", prefix="areas/ops/"))] == [
        "areas/ops/canary-rollback.html"]
    assert len(ok(search(store, "canary", limit=1))) == 1
    hits = ok(search(store, "canary", at=first))
    assert [h.path for h in hits] == ["areas/inbox/canary-deploys.html"]
    assert hits[0].arms == ("lexical",)
    assert hits[0].claim == "Deploys go to the canary first."


def test_related_status_and_log(tmp_path: Path) -> None:
    store, git = make_store(tmp_path)
    a = ok(write(store, WriteInput(title="Alpha", claim="Alpha."))).primary or ""
    gone = ok(write(store, WriteInput(title="Nowhere", claim="Soon gone."))).primary or ""
    ok(write(store, WriteInput(title="Beta", claim="Beta.", links=(
        Link("supports", "/" + a), Link("relates_to", "/" + gone)))))
    # A person's git rm leaves the edge dangling: no door would write one.
    ok(git.commit("refs/heads/main", tip(store), [PathChange(gone, None)], "rm by hand",
                  AUTHOR, CLOCK.now()))
    ok(task_add(store, "Do it", "Do the thing.", due_at="2026-01-01"))
    rel = ok(related(store, "areas/inbox/beta.html"))
    assert rel.outbound == (OutboundLink("supports", "/" + a, True),
                            OutboundLink("relates_to", "/areas/inbox/nowhere.html", False))
    assert ok(related(store, a)).inbound == (InboundLink("areas/inbox/beta.html", "supports"),)
    ok(archive(store, a))
    st = ok(status(store))
    assert st.commit == tip(store)
    assert st.memories == 3
    assert st.by_type == (("semantic", 2), ("task", 1))
    assert st.by_status == (("active", 2), ("archived", 1))
    assert (st.tasks, st.overdue, st.skipped) == ((("todo", 1),), 1, ())
    history = ok(log(store, a))
    assert [(h.commit.message.splitlines()[0], h.path) for h in history] == [
        (f"memhtml archive: {a}", a), (f"memhtml write: {a}", a)]


def test_doctor_names_every_fault(tmp_path: Path) -> None:
    store, git = make_store(tmp_path, worktree=False)
    good = render_template(NewMemoryInput(title="Good", claim="Good.", memory_type="semantic",
                                          at=NOW))
    stale = good.replace("<mark>Good.</mark>", "<mark>Good, edited by hand.</mark>")
    misplaced = set_meta(set_meta(good, "memhtml-status", "archived"), "memhtml-archived", NOW)
    broken = good.replace('content="semantic"', 'content="gossip"').replace(
        "<mark>Good.</mark>", "Good.")
    parent = tip(store)
    ok(git.commit("refs/heads/main", parent, [
        PathChange("areas/inbox/stale.html", stale.encode()),
        PathChange("areas/inbox/misplaced.html", misplaced.encode()),
        PathChange("areas/inbox/broken.html", broken.encode()),
        PathChange("areas/inbox/dangling.html", render_template(NewMemoryInput(
            title="D", claim="D.", memory_type="semantic", at=NOW,
            links=(Link("supports", "/areas/inbox/gone.html"),))).encode()),
    ], "hand edits", AUTHOR, CLOCK.now()))
    findings = ok(doctor(store))
    kinds = {(f.path, f.kind) for f in findings}
    assert ("areas/inbox/stale.html", "stale-hash") in kinds
    assert ("areas/inbox/misplaced.html", "status-path") in kinds
    assert ("areas/inbox/dangling.html", "dangling") in kinds
    broken_violations = [f for f in findings if f.path == "areas/inbox/broken.html"
                         and f.kind == "violation"]
    assert len(broken_violations) >= 2
    assert findings == sorted(findings, key=lambda f: (f.path, f.kind, f.message))
    assert Finding("areas/inbox/good.html", "dangling", "") not in findings


def test_a_cold_start_uses_the_newest_ancestor_snapshot(tmp_path: Path) -> None:
    store, git = make_store(tmp_path)
    for i in range(5):
        ok(write(store, WriteInput(title=f"Note {i}", claim=f"Note number {i}.")))
    state = tmp_path / ".memhtml"
    assert len(snapshot_files(state)) == 1
    cold = Store(store.deps)
    version = ok(cold.head())
    assert version == ok(load_head(git, tip(store) or ""))
    first_snapshot = snapshot_files(state)[0]
    assert first_snapshot != snapshot_path(state, tip(store) or "")
    # A corrupt snapshot is ignored, removed, and a fresh one is written.
    for path in snapshot_files(state):
        path.write_bytes(b"not a snapshot")
    again = Store(store.deps)
    assert ok(again.head()) == version
    assert snapshot_files(state) == [snapshot_path(state, tip(store) or "")]
    # One cut short is refused the same way.
    target = snapshot_files(state)[0]
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    assert ok(Store(store.deps).head()) == version
    assert target.read_bytes() == data


def test_a_snapshot_off_the_branch_is_not_advanced(tmp_path: Path) -> None:
    store, git = make_store(tmp_path, worktree=False)
    ok(write(store, WriteInput(title="Base", claim="Base.")))
    base = tip(store) or ""
    ok(git.create_branch("side", base))
    side = Store(type(store.deps)(git, CLOCK, AUTHOR, branch="side",
                                  snapshots=store.deps.snapshots, local=store.deps.local))
    ok(write(side, WriteInput(title="Side", claim="Only on the side branch.")))
    ok(write(store, WriteInput(title="Main", claim="Only on main.")))
    state = state_dir_of(store)
    # The newest snapshot is of the side branch's tip: a cold main must not use it.
    ok(save_snapshot(state, ok(side.head())))
    assert snapshot_files(state)[0] == snapshot_path(state, tip(side) or "")
    version = ok(Store(store.deps).head())
    assert version.get("areas/inbox/side.html") is None
    assert version.get("areas/inbox/main.html") is not None
    assert version == ok(load_head(git, tip(store) or ""))
    assert len(snapshot_files(state)) <= SNAPSHOTS_KEPT
    assert pygit2.Repository(str(tmp_path)).head.shorthand == "main"


def test_doctor_flags_stale_published_pages_only_after_a_publish(tmp_path: Path) -> None:
    store, git = make_store(tmp_path, worktree=False)
    ok(write(store, WriteInput(title="Alpha", claim="Alpha.")))
    assert [f for f in ok(doctor(store)) if f.kind == "artifact"] == []
    version = ok(store.head())
    paths = [e.path for e in ok(git.list_tree(version.sha or ""))]
    site = render_site(version, paths)
    ok(git.commit("refs/heads/main", version.sha,
                  [PathChange(p, data) for p, data in site.items()], "publish", AUTHOR,
                  CLOCK.now()))
    assert [f for f in ok(doctor(store)) if f.kind == "artifact"] == []
    ok(write(store, WriteInput(title="Beta", claim="Beta.")))
    stale = {f.path for f in ok(doctor(store)) if f.kind == "artifact"}
    assert "areas/inbox/index.html" in stale
