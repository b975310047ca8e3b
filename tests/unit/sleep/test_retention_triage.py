"""retention-triage on a real store: what the scorer is handed, which band each memory
lands in, and the evict band archived in one commit (tasks and unreadable files never
touched, a taken archive path a counted refusal)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from returns.io import IOResult
from tests.unit.sleep.sleep_support import (
    RUN_DAY,
    WRITTEN,
    World,
    blank_world,
    ok,
    put_memory,
)

from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange
from memhtml.domain.retention import SIGNAL_NAMES, score_retention
from memhtml.domain.thresholds import DEFAULT_CONFIDENCE, RETENTION_GRACE_DAYS
from memhtml.sleep.ledger import RETENTION_SIGNALS, read_ledger
from memhtml.sleep.phase import MinedEdge, PhaseEnv, PhaseFault, PhaseResult, TaskBudget
from memhtml.sleep.phases.retention_triage import (
    age_days,
    created_age_days,
    created_ages,
    moment,
    retention_inputs,
    retention_triage,
    triage,
)
from memhtml.store import link

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
HUB = "areas/facts/hub.html"
STALE = tuple(f"areas/diary/stale-{n}.html" for n in range(3))
SUPPORTERS = tuple(f"areas/facts/support-{n}.html" for n in range(5))
TASK = "areas/tasks/old-task.html"
BROKEN = "areas/facts/broken.html"




def corpus() -> World:
    """A hub five memories support and readers use; three stale, doubtful diary
    entries (one linked from a supporter); an ancient task; an unreadable file."""
    w = blank_world()
    put_memory(w, HUB, 0, importance=10)
    for n, path in enumerate(STALE, start=1):
        put_memory(w, path, n, memory_type="episodic", confidence=0.2, importance=1)
    for n, path in enumerate(SUPPORTERS, start=10):
        links = [Link("supports", "/" + HUB)]
        if n == 10:
            links.append(Link("relates_to", "/" + STALE[0]))
        put_memory(w, path, n, links=tuple(links))
    put_memory(w, TASK, 99, memory_type="task", importance=1)
    w.raw([PathChange(BROKEN, b"<!doctype html><p>not a memory</p>")])
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    for _ in range(10):
        ok(w.state.append_access(HUB, STAMP, "read"))
    return w


def env_for(w: World, mined: tuple[MinedEdge, ...] | None = None,
            stamp: datetime = STAMP, grace: float = RETENTION_GRACE_DAYS) -> PhaseEnv:
    version = ok(w.store.head())
    return PhaseEnv(phase="retention-triage", run_id=RUN_DAY, stamp=stamp, base=w.main(),
                    base_version=version, version=version, git=w.git, state=w.state,
                    budget=TaskBudget(), dry_run=False, mined=mined,
                    retention_grace_days=grace)


def run(w: World, mined: tuple[MinedEdge, ...] | None = None, stamp: datetime = STAMP,
        grace: float = RETENTION_GRACE_DAYS) -> PhaseResult:
    done: IOResult[PhaseResult, PhaseFault] = retention_triage(
        env_for(w, mined, stamp, grace))
    return ok(done)


def test_moments_and_ages_read_the_format_forms() -> None:
    assert moment("2026-05-01") == datetime(2026, 5, 1, tzinfo=UTC)
    assert moment("2026-05-01T12:00:00Z") == WRITTEN
    assert moment("yesterday") is None
    w = corpus()
    record = ok(w.store.head()).get(HUB)
    assert record is not None
    assert age_days(record, STAMP) == (STAMP - WRITTEN).total_seconds() / 86_400
    assert age_days(record, WRITTEN) == 0.0


def test_the_scorer_is_handed_each_fact_once() -> None:
    w = corpus()
    version = ok(w.store.head())
    accesses = ok(w.state.access_counts(datetime(1970, 1, 1, tzinfo=UTC)))
    inputs = retention_inputs(version, accesses, None, STAMP)
    assert sorted(inputs) == sorted([HUB, *STALE, *SUPPORTERS])
    hub = inputs[HUB]
    assert (hub.access_count, hub.reinforcement_count, hub.importance) == (10.0, 5.0, 10.0)
    assert hub.confidence == DEFAULT_CONFIDENCE
    assert hub.graph_rank == hub.max_graph_rank
    stale = inputs[STALE[0]]
    assert (stale.memory_type, stale.confidence, stale.importance) == ("episodic", 0.2, 1.0)
    assert stale.access_count == 0.0
    assert inputs[STALE[1]].graph_rank < inputs[STALE[0]].graph_rank


def test_contradictions_count_each_counterpart_once_in_either_direction() -> None:
    w = blank_world()
    put_memory(w, "areas/a.html", 1)
    put_memory(w, "areas/b.html", 2, links=(Link("contradicts", "/areas/a.html"),))
    put_memory(w, "areas/c.html", 3, links=(Link("contradicts", "/areas/a.html"),))
    # a answers b back: the same pair written into both files is one contradiction.
    ok(link(w.store, "areas/a.html", "contradicts", "/areas/b.html"))
    inputs = retention_inputs(ok(w.store.head()), {}, None, STAMP)
    assert inputs["areas/a.html"].contradiction_count == 2.0
    assert inputs["areas/b.html"].contradiction_count == 1.0
    assert inputs["areas/c.html"].contradiction_count == 1.0


def test_mined_edges_join_the_graph_but_never_at_a_task() -> None:
    w = corpus()
    version = ok(w.store.head())
    mined = (MinedEdge(STALE[1], STALE[2], 0.9), MinedEdge(STALE[2], TASK, 0.95))
    alone = retention_inputs(version, {}, None, STAMP)
    joined = retention_inputs(version, {}, mined, STAMP)
    assert TASK not in joined
    assert joined[STALE[1]].graph_rank > alone[STALE[1]].graph_rank
    assert joined[STALE[1]].graph_rank == joined[STALE[2]].graph_rank


def test_the_bands_of_the_corpus() -> None:
    w = corpus()
    version = ok(w.store.head())
    accesses = ok(w.state.access_counts(datetime(1970, 1, 1, tzinfo=UTC)))
    judged = triage(retention_inputs(version, accesses, None, STAMP),
                    created_ages(version, STAMP))
    assert judged.bands[HUB] == "keep"
    assert judged.evict == STALE
    assert all(judged.bands[p] == "compress" for p in SUPPORTERS)
    # Bands alone (no ages, as compress reads them) never name a path to archive.
    assert triage(retention_inputs(version, accesses, None, STAMP)).evict == ()


def test_the_evict_band_is_archived_in_one_commit() -> None:
    w = corpus()
    assert BROKEN in {s.path for s in ok(w.store.head()).skipped_files}
    result = run(w)
    assert dict(result.counts) == {"scored": 9, "keep": 1, "compress": 5, "evict": 3,
                                   "graced": 0, "protected": 0, "archived": 3,
                                   "refused": 0}
    (commit,) = result.commits
    w.raw(list(commit.changes))
    after = ok(w.store.head())
    for path in STALE:
        assert after.get(path) is None
        archived = after.get(f"archive/2026/{path}")
        assert archived is not None and archived.status == "archived"
    linking = after.get(SUPPORTERS[0])
    assert linking is not None
    assert Link("relates_to", f"/archive/2026/{STALE[0]}") in linking.links
    changed = {c.path for c in commit.changes}
    assert TASK not in changed and BROKEN not in changed
    assert after.get(TASK) is not None


def test_a_taken_archive_path_is_refused_and_counted() -> None:
    w = corpus()
    # A file that is not a memory holds the name (an earlier archive of the path would
    # only send this one to archive/2026-2/).
    w.raw([PathChange(f"archive/2026/{STALE[2]}", b"<!doctype html><p>not a memory</p>\n")])
    result = run(w)
    assert (result.counts["evict"], result.counts["archived"], result.counts["refused"]) == (
        3, 2, 1)
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(f"{STALE[2]} not archived: archive/2026/{STALE[2]} "
                                         "is a file that is not a memory (")
    assert STALE[2] not in {c.path for c in result.commits[0].changes}


def test_nothing_to_evict_commits_nothing() -> None:
    w = blank_world()
    put_memory(w, HUB, 0, importance=10)
    w.clock.advance(60)
    result = run(w)
    assert result.commits == ()
    assert result.counts["scored"] == 1


def test_a_second_run_evicts_nothing_more() -> None:
    w = corpus()
    w.raw(list(run(w).commits[0].changes))
    again = run(w)
    assert again.counts["evict"] == 0 and again.commits == ()


def test_a_store_without_links_still_evicts() -> None:
    # With no edge at all every memory would tie for the top PageRank (its teleport
    # share), a full graph signal for each, and nothing could ever fall to the evict
    # band: an isolated memory has no graph standing instead.
    w = blank_world()
    for n, path in enumerate(STALE, start=1):
        put_memory(w, path, n, memory_type="episodic", confidence=0.2, importance=1)
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    version = ok(w.store.head())
    accesses = ok(w.state.access_counts(datetime(1970, 1, 1, tzinfo=UTC)))
    inputs = retention_inputs(version, accesses, None, STAMP)
    assert {raw.graph_rank for raw in inputs.values()} == {0.0}
    assert triage(inputs, created_ages(version, STAMP)).evict == STALE


def young_world(days: float) -> World:
    """The stale diary entries of ``corpus``, written ``days`` before the run."""
    w = blank_world()
    for n, path in enumerate(STALE, start=1):
        put_memory(w, path, n, memory_type="episodic", confidence=0.2, importance=1)
    w.clock.advance(days * 86_400)
    return w


def test_created_ages_read_the_write_stamp_and_an_unreadable_one_is_young() -> None:
    w = young_world(0)
    record = ok(w.store.head()).get(STALE[0])
    assert record is not None
    written = moment(record.created_at)
    assert written is not None
    assert created_age_days(record, written + timedelta(days=3)) == 3.0
    assert created_age_days(record, written - timedelta(days=1)) == -1.0
    assert math.isnan(created_age_days(replace(record, created_at="soon"), STAMP))


@pytest.mark.parametrize(("grace", "archived"), [(RETENTION_GRACE_DAYS, 0), (10.0, 3),
                                                  (0.0, 3)])
def test_the_evict_band_inside_the_grace_period_is_kept(grace: float, archived: int) -> None:
    """Twenty days old: evicted by score, kept by the default thirty days of grace,
    archived under a ten-day or no grace period."""
    w = young_world(0)
    record = ok(w.store.head()).get(STALE[0])
    assert record is not None
    written = moment(record.created_at)
    assert written is not None
    result = run(w, stamp=written + timedelta(days=20), grace=grace)
    assert (result.counts["evict"], result.counts["archived"]) == (3, archived)
    assert result.counts["graced"] == 3 - archived
    assert len(result.commits) == (1 if archived else 0)
    assert len(result.marks) == archived


def test_the_grace_period_ends_on_its_last_second() -> None:
    w = young_world(0)
    record = ok(w.store.head()).get(STALE[-1])
    assert record is not None
    written = moment(record.created_at)
    assert written is not None
    grace = timedelta(days=RETENTION_GRACE_DAYS)
    before = run(w, stamp=written + grace - timedelta(seconds=1))
    assert STALE[-1] not in {c.path for commit in before.commits for c in commit.changes}
    at = run(w, stamp=written + grace)
    assert STALE[-1] in {c.path for commit in at.commits for c in commit.changes}


def test_each_archived_file_carries_its_figures() -> None:
    """The score, the band and the eight signals of every archived file, in the
    ledger's decision record and in the commit's body: what a review says why from."""
    w = corpus()
    version = ok(w.store.head())
    accesses = ok(w.state.access_counts(datetime(1970, 1, 1, tzinfo=UTC)))
    inputs = retention_inputs(version, accesses, None, STAMP)
    result = run(w)
    assert RETENTION_SIGNALS == SIGNAL_NAMES
    records = {str(mark.get("path")): mark for mark in result.marks}
    assert sorted(records) == list(STALE)
    (commit,) = result.commits
    for path in STALE:
        mark = records[path]
        scored = score_retention(inputs[path])
        assert mark.kind == "retention-archived"
        assert (mark.get("rule"), mark.get("band"), mark.get("score")) == (
            "evict-band", "evict", scored.score)
        for name, value in zip(SIGNAL_NAMES, scored.signals.values(), strict=True):
            assert mark.get(name) == round(value, 4)
        age = mark.get("created_age_days")
        assert isinstance(age, float) and age >= RETENTION_GRACE_DAYS
        assert mark.get("grace_days") == RETENTION_GRACE_DAYS
        assert f"{path}: archived from the evict band: score {scored.score:g} (recency " \
            in commit.body
    # Read back as the ledger holds them: decisions, never pending marks.
    lines = "".join(mark.line() + "\n" for mark in result.marks).encode()
    ledger = read_ledger(lines)
    assert ledger.marks == () and ledger.decisions == result.marks
