"""Plan: would a run change anything? Counted from the store, running no phase.

Sleep has no schedule; the caller decides when to run, and should decide by volume
(enough written since the last run) rather than by the calendar: an entity merge is
promoted only when two runs reached it over a corpus that changed between them, and
two runs over an unchanged corpus would count one reading twice. ``plan`` is the
signal for that decision; the decision stays the caller's.

The verdict:

- ``would-change``: a counted signal is non-zero (memories changed since the last
  merged run, active memories without a vector, transcripts waiting, dangling links,
  entity merges waiting on a second run). Waiting transcripts count only when a
  language model is bound: without one, trace-consolidation reads none of them;
- ``no-signal``: every counted signal is zero, dedup-merge's and relationship-mining's
  inputs are empty, the checkout is the commit the counts are about, and the state
  plane read. The one state in which a caller may skip;
- ``unknown``: anything else. Dedup and mining pick candidate pairs from an n-by-n
  scan, so counting their candidates is the scan: they report their input size and an
  explicit ``unknown``, never a zero.

It names the commit it read (main's tip) and whether the checkout matches it: counts
about a tree the caller does not have are no permission to skip.

Transcripts waiting are the settled, unconsolidated ones trace-consolidation would
take, over all nights (its nightly cap aside), too large ones left out: the same
survey the phase makes, at the clock's reading, so a transcript still being written
is not counted, and one closed by its last line is (which takes reading it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.services import Counter
from memhtml.domain.thresholds import ENTITY_PROMOTION_DETECTIONS
from memhtml.head import HeadVersion, VectorCache, coverage, is_active, is_candidate_path
from memhtml.sleep.contract import run_stamp
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.history import RunLookup, last_merged_run
from memhtml.sleep.phases.trace_sessions import Survey, survey
from memhtml.sleep.runner import version_at

Verdict: TypeAlias = Literal["would-change", "no-signal", "unknown"]
UNKNOWN: Final = "unknown"
NO_TRANSCRIPTS_NOTE: Final = "no transcripts_dir set: no transcript is read"


@dataclass(frozen=True)
class SleepPlan:
    verdict: Verdict
    commit: str
    """The commit the counts are about (main's tip)."""
    checkout_matches: bool
    """The checkout is on that commit with no change of its own (a bare repository has
    no checkout and always matches)."""
    state_readable: bool
    last_run: str | None
    """The run id of the last merged run main holds, if any."""
    changed_since_last_run: int
    missing_vectors: int | None
    """None when the cache could not be read."""
    transcripts_waiting: int
    dangling_links: int
    entity_merges_waiting: int | None
    """None when the state plane could not be read."""
    dedup_input: int
    mining_input: int
    dedup_candidates: str = UNKNOWN
    mining_candidates: str = UNKNOWN
    notes: tuple[str, ...] = ()


def dangling_links(version: HeadVersion) -> int:
    """Edges and supersessions naming no memory of the version (what integrity repairs
    or drops)."""
    count = 0
    for record in version.records():
        count += sum(1 for link in record.links if version.get(to_tree_path(link.href)) is None)
        if record.superseded_by and version.get(to_tree_path(record.superseded_by)) is None:
            count += 1
    return count


def _last_run(deps: SleepDeps, main: str) -> IOResult[RunLookup, SleepError]:
    """The last run merged into main, read from the commits that landed it (never from
    a report file's name), stamped no later than the clock reads, and committed by
    memhtml (``deps.author`` is the identity memhtml commits as)."""
    found: IOResult[RunLookup, SleepError] = last_merged_run(
        deps.git, main, deps.clock.now(), deps.author)
    return found


def _changed_since(deps: SleepDeps, version: HeadVersion, since: str | None, main: str
                   ) -> IOResult[int, SleepError]:
    if since is None:
        return IOSuccess(sum(1 for r in version.records() if is_active(r)))
    changed: IOResult[tuple[str, ...], SleepError] = deps.git.changed_paths(since, main)
    return changed.map(lambda paths: sum(1 for p in paths if is_candidate_path(p)))


def _missing_vectors(deps: SleepDeps, version: HeadVersion) -> IOResult[int | None, SleepError]:
    embedder, store = deps.embedder, deps.vectors
    if embedder is None or store is None:
        return IOSuccess(0)

    def missing(cache: VectorCache) -> int | None:
        have, total = coverage(version, cache)
        return total - have

    return store.load(embedder.space).map(lambda loaded: missing(loaded.cache)).lash(
        lambda _: IOSuccess(None))


def _entity_waiting(deps: SleepDeps) -> IOResult[int | None, SleepError]:
    def waiting(counters: tuple[Counter, ...]) -> int | None:
        return sum(1 for c in counters if 0 < c.detections < ENTITY_PROMOTION_DETECTIONS)

    read: IOResult[tuple[Counter, ...], StateError] = deps.state.counters("entity")
    return read.map(waiting).lash(lambda _: IOSuccess(None))


@dataclass(frozen=True, slots=True)
class _Transcripts:
    waiting: int = 0
    notes: tuple[str, ...] = ()


def _transcripts(deps: SleepDeps) -> IOResult[_Transcripts, SleepError]:
    """The settled, unconsolidated transcripts a run would distil, and what to say
    about them: no source, a listing or a state read that failed, or no model to ask."""
    source = deps.transcripts
    if source is None:
        return IOSuccess(_Transcripts(notes=(NO_TRANSCRIPTS_NOTE,)))

    def said(found: Survey) -> _Transcripts:
        notes = list(found.warnings)
        if found.settled and deps.model is None:
            notes.append(f"{found.settled} settled transcript(s) wait, but no language "
                         "model is bound: trace-consolidation will not read them")
        return _Transcripts(found.settled, tuple(notes))

    surveyed: IOResult[Survey, StateError] = survey(source, deps.state,
                                                    run_stamp(deps.clock.now()), 0)
    return surveyed.map(said).lash(lambda error: IOSuccess(_Transcripts(notes=(
        f"the state plane could not say which transcripts are consolidated: "
        f"{error.reason}",))))


def _checkout_matches(deps: SleepDeps, main: str) -> IOResult[bool, SleepError]:
    if deps.worktree is None:
        return IOSuccess(True)
    git = deps.git
    head: IOResult[str | None, SleepError] = git.resolve("HEAD").map(_some).lash(
        lambda _: IOSuccess(None))

    def clean(at: str | None) -> IOResult[bool, SleepError]:
        if at != main:
            return IOSuccess(False)
        changes: IOResult[tuple[str, ...], SleepError] = git.worktree_changes()
        return changes.map(lambda paths: not paths).lash(lambda _: IOSuccess(False))

    return head.bind(clean)


def _some(sha: str) -> str | None:
    return sha


def plan_sleep(deps: SleepDeps) -> IOResult[SleepPlan, SleepError]:
    """The signals, the inputs of the uncountable phases, and the verdict. Each step
    reads what the one before found; the first that fails is the answer."""
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)
    planned: IOResult[SleepPlan, SleepError] = IOResult.do(
        _verdict(at, version, last, changed, missing, waiting, matches, transcripts,
                 deps.model is not None)
        for at in main
        for version in version_at(deps, at)
        for last in _last_run(deps, at)
        for changed in _changed_since(
            deps, version, None if last.last is None else last.last.commit, at)
        for missing in _missing_vectors(deps, version)
        for waiting in _entity_waiting(deps)
        for transcripts in _transcripts(deps)
        for matches in _checkout_matches(deps, at)
    )
    return planned


def _verdict(main: str, version: HeadVersion, last: RunLookup, changed: int,
             missing: int | None, waiting: int | None, matches: bool,
             transcripts: _Transcripts, model_bound: bool) -> SleepPlan:
    inputs = sum(1 for r in version.records() if is_active(r) and r.memory_type != "task")
    dangling = dangling_links(version)
    # Without a model the waiting transcripts stay waiting: no signal of a change.
    signals = (changed, missing, transcripts.waiting if model_bound else 0, dangling,
               waiting)
    notes = [*last.notes, *transcripts.notes]
    if missing is None:
        notes.append("the vector cache could not be read")
    if waiting is None:
        notes.append("the state plane could not be read")
    if not matches:
        notes.append(f"the checkout is not {main[:10]} as committed: the counts describe "
                     "another tree")
    verdict: Verdict
    if any(s is not None and s > 0 for s in signals):
        verdict = "would-change"
    elif all(s == 0 for s in signals) and inputs == 0 and matches:
        verdict = "no-signal"
    else:
        verdict = "unknown"
    return SleepPlan(
        verdict=verdict, commit=main, checkout_matches=matches,
        state_readable=waiting is not None,
        last_run=None if last.last is None else last.last.run_id,
        changed_since_last_run=changed, missing_vectors=missing,
        transcripts_waiting=transcripts.waiting,
        dangling_links=dangling, entity_merges_waiting=waiting, dedup_input=inputs,
        mining_input=inputs, notes=tuple(notes))
