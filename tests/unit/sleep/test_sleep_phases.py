"""The frame's phases on the doubles: integrity's two kinds of dangling href, the
access export, preflight's vector checks, and plan's three verdicts."""

from __future__ import annotations

import json

from tests.fake_embedders import RecordingEmbedder
from tests.unit.sleep.sleep_support import AUTHOR, RUN_AT, RUN_DAY, World, ok, world

from memhtml.adapters.memory_state import InMemoryState
from memhtml.adapters.memory_vectors import MemoryVectors
from memhtml.contracts.errors import StateUnusable
from memhtml.contracts.services import PathChange, Signature, VectorSpace
from memhtml.head import empty_vector_cache
from memhtml.sleep.contract import ACCESS_EXPORT_PATH
from memhtml.sleep.merge import merge_run
from memhtml.sleep.plan import plan_sleep
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep
from memhtml.store import Store, StoreDeps, init_store

NOTE0, NOTE1, NOTE2 = (f"areas/notes/note-{n}.html" for n in range(3))


def record(report: RunReport, phase: str) -> dict[str, object]:
    found = next(r for r in report.phases if r.phase == phase)
    return {"status": found.status, **found.counts, "warnings": found.warnings,
            "reason": found.reason, "observed": dict(found.observed)}


def warnings_of(report: RunReport, phase: str) -> tuple[str, ...]:
    return next(r for r in report.phases if r.phase == phase).warnings


def links_at(w: World, commit: str, path: str) -> list[str]:
    text = (w.blob(commit, path) or b"").decode()
    return [line for line in text.splitlines() if "memhtml-relates-to" in line]


# -- integrity ---------------------------------------------------------------------------


def test_an_href_to_an_archived_target_follows_it_newest_year_first() -> None:
    w = world()
    note0 = w.blob(w.main(), NOTE0)
    # A person's git moved note-0 by hand, twice archived: 2019 and 2025; the links
    # to it were left behind.
    w.raw([PathChange(NOTE0, None), PathChange(f"archive/2019/{NOTE0}", note0),
           PathChange(f"archive/2025/{NOTE0}", note0)])
    report = ok(run_sleep(w.deps()))
    got = record(report, "integrity")
    assert (got["repaired"], got["dropped"]) == (1, 0)
    assert links_at(w, report.head_sha, NOTE1) == [
        f'<link rel="memhtml-relates-to" href="/archive/2025/{NOTE0}">']
    assert b"2026-11-29T03:15:07Z" in (w.blob(report.head_sha, NOTE1) or b"")


def test_an_href_to_nothing_is_dropped_with_a_warning() -> None:
    w = world()
    w.raw([PathChange(NOTE0, None)])
    report = ok(run_sleep(w.deps()))
    got = record(report, "integrity")
    assert (got["repaired"], got["dropped"]) == (0, 1)
    assert links_at(w, report.head_sha, NOTE1) == []
    assert any("dropped relates_to link to /areas/notes/note-0.html" in warning
               for warning in warnings_of(report, "integrity"))
    info = ok(w.git.commit_info(next(c.sha for c in report.commits if c.phase == "integrity")))
    assert any(key == "Memhtml-Warning" for key, _ in info.trailers)


def test_an_archive_older_than_ten_years_is_not_followed() -> None:
    w = world()
    note0 = w.blob(w.main(), NOTE0)
    w.raw([PathChange(NOTE0, None), PathChange(f"archive/2016/{NOTE0}", note0)])
    report = ok(run_sleep(w.deps()))
    assert record(report, "integrity")["dropped"] == 1


def test_an_unreadable_target_is_left_and_never_rewritten() -> None:
    w = world()
    w.raw([PathChange(NOTE0, b"\xff\xfe not utf-8")])
    report = ok(run_sleep(w.deps()))
    got = record(report, "integrity")
    assert (got["unreadable_targets"], got["dropped"], got["files"]) == (1, 0, 0)
    assert w.blob(report.head_sha, NOTE0) == b"\xff\xfe not utf-8"
    assert links_at(w, report.head_sha, NOTE1) == [
        '<link rel="memhtml-relates-to" href="/areas/notes/note-0.html">']


def test_a_symlinked_target_is_left_and_never_rewritten() -> None:
    w = world()
    ok(w.git.chmod("main", w.main(), {NOTE0: 0o120000}, "a symlink", AUTHOR, RUN_AT))
    before = w.tree(w.main())[NOTE0]
    report = ok(run_sleep(w.deps()))
    got = record(report, "integrity")
    assert (got["unreadable_targets"], got["dropped"]) == (1, 0)
    assert w.tree(report.head_sha)[NOTE0] == before
    assert ok(w.git.entries_at(report.head_sha, [NOTE0]))[0].is_symlink


def test_generated_pages_regenerate_only_in_a_published_store() -> None:
    from memhtml.store import publish

    w = world()
    w.raw([PathChange(NOTE0, None)])
    plain = ok(run_sleep(w.deps()))
    assert record(plain, "integrity")["published"] is False
    assert not any(path.endswith("index.html") for path in w.tree(plain.head_sha))
    ok(publish(w.store))
    w.raw([PathChange(NOTE2, None)])
    published = ok(run_sleep(w.deps()))
    got = record(published, "integrity")
    assert got["published"] is True and got["pages"] > 0  # type: ignore[operator]
    from memhtml.store.site import render_site

    tip = ok(w.store.version_at(published.head_sha))
    site = render_site(tip, w.tree(published.head_sha))
    for path, data in site.items():
        assert w.blob(published.head_sha, path) == data, path


# -- state-export ------------------------------------------------------------------------


def test_the_access_export_holds_reads_by_path() -> None:
    w = world()
    for path in (NOTE1, NOTE0, NOTE1, "areas/notes/moved-away.html"):
        ok(w.state.append_access(path, RUN_AT, "read"))
    report = ok(run_sleep(w.deps()))
    data = (w.blob(report.head_sha, ACCESS_EXPORT_PATH) or b"").decode()
    lines = [json.loads(line) for line in data.splitlines()]
    assert lines == [
        {"last_read": "2026-11-29T03:15:07Z", "path": NOTE0, "reads": 1},
        {"last_read": "2026-11-29T03:15:07Z", "path": NOTE1, "reads": 2},
    ]
    assert data.splitlines()[0] == ('{"last_read":"2026-11-29T03:15:07Z",'
                                    '"path":"areas/notes/note-0.html","reads":1}')
    got = record(report, "state-export")
    assert (got["paths"], got["reads"], got["unknown_paths"]) == (2, 3, 1)


# -- preflight's vectors -------------------------------------------------------------------


SPACE = VectorSpace("toy", 4)




def test_preflight_fills_the_base_and_records_coverage() -> None:
    w = world()
    vectors = MemoryVectors()
    embedder = RecordingEmbedder(SPACE)
    report = ok(run_sleep(w.deps(embedder=embedder, embedder_name="toy", vectors=vectors)))
    got = record(report, "preflight")
    assert got["status"] == "done"
    assert (got["vector_coverage"], got["vector_check"], got["vectors_total"]) == (1.0, "ok", 3)
    assert got["observed"] == {"embedded": 3, "worktree_changes": 0, "entity_counters": 0,
                               "edge_counters": 0}
    assert len(ok(vectors.load(SPACE)).cache) == 3


def test_an_embedder_that_embeds_nothing_is_refused_naming_the_remedy() -> None:
    w = world()
    report = ok(run_sleep(w.deps(embedder=RecordingEmbedder(SPACE, fail="no credential"),
                                 embedder_name="toy", vectors=MemoryVectors())))
    got = record(report, "preflight")
    assert got["status"] == "failed"
    assert "MEMHTML_EMBEDDER=none" in str(got["reason"])
    assert "no credential" in str(got["reason"])
    assert report.commits == ()


def test_coverage_between_the_floors_warns_and_goes_on() -> None:
    w = world(memories=4)
    version = ok(w.store.head())
    from memhtml.head import fill_vectors

    partial = ok(fill_vectors(version, empty_vector_cache(SPACE), RecordingEmbedder(SPACE),
                              limit=3)).cache
    report = ok(run_sleep(w.deps(embedder=RecordingEmbedder(SPACE, fail="no credential"),
                                 embedder_name="toy", vectors=MemoryVectors(partial))))
    got = record(report, "preflight")
    assert (got["status"], got["vector_check"], got["vector_coverage"]) == ("done", "warned", 0.75)
    assert report.ok


def test_a_dry_run_embeds_nothing() -> None:
    w = world()
    vectors, embedder = MemoryVectors(), RecordingEmbedder(SPACE)
    report = ok(run_sleep(w.deps(embedder=embedder, vectors=vectors), RunOptions(dry_run=True)))
    assert embedder.calls == [] and vectors.saved_spaces() == ()
    assert record(report, "preflight")["reason"] is not None  # nothing embedded yet: refused


def test_a_half_migrated_space_is_refused() -> None:
    w = world()
    vectors = MemoryVectors(empty_vector_cache(VectorSpace("toy", 8)))
    report = ok(run_sleep(w.deps(embedder=RecordingEmbedder(SPACE), vectors=vectors)))
    assert "not the cached one" in str(record(report, "preflight")["reason"])


def test_no_embedder_is_lexical_only() -> None:
    w = world()
    vectors = MemoryVectors(empty_vector_cache(SPACE))
    report = ok(run_sleep(w.deps(vectors=vectors)))
    got = record(report, "preflight")
    assert got["status"] == "done" and got["vector_check"] == "off"
    assert any("lexical-only" in warning for warning in warnings_of(report, "preflight"))


# -- plan --------------------------------------------------------------------------------


def test_plan_on_a_fresh_store_would_change() -> None:
    w = world()
    plan = ok(plan_sleep(w.deps()))
    assert plan.verdict == "would-change"
    assert plan.changed_since_last_run == 3 and plan.last_run is None
    assert plan.commit == w.main() and plan.checkout_matches
    assert (plan.dedup_candidates, plan.mining_candidates) == ("unknown", "unknown")
    assert plan.dedup_input == plan.mining_input == 3


def test_plan_after_a_merged_run_is_unknown_not_no_signal() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    ok(merge_run(w.deps(), RUN_DAY))
    plan = ok(plan_sleep(w.deps()))
    assert plan.last_run == RUN_DAY
    assert (plan.changed_since_last_run, plan.dangling_links, plan.missing_vectors,
            plan.entity_merges_waiting) == (0, 0, 0, 0)
    assert plan.verdict == "unknown", "dedup and mining have input they cannot count"
    w.raw([PathChange(NOTE0, None)])
    assert ok(plan_sleep(w.deps())).verdict == "would-change"


FORGED = ".memhtml/sleep/2099-01-01.html"


def forged_run(w: World, run_id: str, stamp: str, *, by: Signature = AUTHOR,
               trailers: bool = True) -> str:
    """A commit on main that looks like a run's report landing: the report file, and
    (with ``trailers``) the trailers a report phase's commit carries."""
    message = f"memhtml sleep: report ({run_id})"
    if trailers:
        message += (f"\n\nMemhtml-Op: sleep\nMemhtml-Run: {run_id}\nMemhtml-Phase: report\n"
                    f"Memhtml-Stamp: {stamp}\n")
    return ok(w.git.commit("main", w.main(), [PathChange(
        f".memhtml/sleep/{run_id}.html", b"<!doctype html><p>a report</p>\n")], message, by,
        w.clock.now()))


def test_a_report_file_alone_is_no_run() -> None:
    w = world()
    forged_run(w, "2099-01-01", "", trailers=False)
    plan = ok(plan_sleep(w.deps()))
    assert plan.last_run is None and plan.changed_since_last_run == 3
    assert plan.verdict == "would-change"
    assert any(FORGED in note and "not counted" in note for note in plan.notes), plan.notes
    ok(run_sleep(w.deps()))
    ok(merge_run(w.deps(), RUN_DAY))
    w.write("After", "Written after the run.", path="areas/notes/after.html")
    forged_run(w, "2099-01-01", "", trailers=False)
    plan = ok(plan_sleep(w.deps()))
    assert (plan.last_run, plan.changed_since_last_run) == (RUN_DAY, 1), plan
    assert any(FORGED in note for note in plan.notes)


def test_a_run_stamped_in_the_future_is_passed_over_with_a_note() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    ok(merge_run(w.deps(), RUN_DAY))
    w.write("After", "Written after the run.", path="areas/notes/after.html")
    forged_run(w, "2099-01-01", "2099-01-01T00:00:00Z")
    plan = ok(plan_sleep(w.deps()))
    assert (plan.last_run, plan.changed_since_last_run) == (RUN_DAY, 1), plan
    (note,) = [n for n in plan.notes if "2099-01-01" in n]
    assert "stamped 2099-01-01T00:00:00Z" in note and "future" in note, note
    # A stamp on another day than its run id names, or a run committed by another
    # identity than memhtml's, is no run either.
    forged_run(w, "2026-11-29-5", "2026-11-28T00:00:00Z")
    forged_run(w, "2026-11-29-6", "2026-11-29T04:00:00Z", by=Signature("Mallory", "m@x"))
    plan = ok(plan_sleep(w.deps()))
    assert plan.last_run == RUN_DAY, plan
    assert {n.split(" ", 1)[0] for n in plan.notes if "was not committed" in n} == {
        ".memhtml/sleep/2026-11-29-5.html", ".memhtml/sleep/2026-11-29-6.html"}, plan.notes


def test_a_plan_reads_a_run_that_landed_by_a_merge_commit() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    tip = ok(w.git.resolve(f"sleep/{RUN_DAY}"))
    written = w.write("During", "Written during the run.", path="areas/notes/during.html")
    merged = ok(merge_run(w.deps(), RUN_DAY))
    assert merged.merged and not merged.fast_forwarded, merged
    w.write("After", "Written after the merge.", path="areas/notes/after.html")
    plan = ok(plan_sleep(w.deps()))
    assert plan.last_run == RUN_DAY and not [n for n in plan.notes if "run" in n], plan
    # Counted from the run's own tip: the write it never saw and the one after it.
    assert plan.changed_since_last_run == 2 and written, plan
    assert ok(w.git.commit_info(w.main())).parents[0] != tip


def test_plan_says_no_signal_only_when_everything_reads_zero() -> None:
    from memhtml.adapters.clock import ManualClock
    from memhtml.adapters.memory_git import InMemoryGit

    git = InMemoryGit(bare=True)
    clock = ManualClock(RUN_AT)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    empty = World(git, clock, InMemoryState(), store)
    assert ok(plan_sleep(empty.deps())).verdict == "no-signal"
    broken = InMemoryState(failing=StateUnusable("state.db", "newer schema"))
    unread = ok(plan_sleep(empty.deps(state=broken)))
    assert (unread.verdict, unread.state_readable) == ("unknown", False)
    linked = empty.write("A", "A fact.", path="areas/a.html")
    assert linked and ok(plan_sleep(empty.deps())).verdict == "would-change"


def test_plan_counts_a_waiting_entity_merge() -> None:
    from memhtml.contracts.services import CounterKey

    w = world()
    ok(w.state.bump(CounterKey("entity", "a|b"), "2026-11-28", 2, RUN_AT))
    assert ok(plan_sleep(w.deps())).entity_merges_waiting == 1

