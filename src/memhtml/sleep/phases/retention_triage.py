"""Phase 9, retention-triage: score every live memory, archive the evict band. One commit.

Each active memory that is not a task is scored by ``domain.retention`` from facts
gathered here, each read once for the whole corpus:

- **age** from ``recency_key`` (the world time the article names, else the last
  write) to the run's stamp, never a clock reading;
- **accesses**, the state plane's lifetime read count for the path;
- **confidence** as the file states it, after tonight's decay (the phase runs on the
  tip decay left); a file stating none reads ``DEFAULT_CONFIDENCE``, the value the
  format documents for an omission;
- **PageRank and bridges** from ``analyze_graph`` over the file-borne links between
  scored memories plus relationship-mining's derived edges of this run (when it ran
  here; otherwise the files' links alone). Only scored memories are nodes, so no edge
  reaches a task: a task endpoint would pass rank and bridge counts into the very
  records the exclusion keeps out;
- **reinforcement**, the distinct scored memories linking ``supports`` to it;
- **importance** as authored (the scorer owns the default);
- **contradictions**, the distinct scored memories it and they link ``contradicts``
  in either direction. Only files count: a machine's suspicion is a mined pair or a
  detection counter, and reaches a file only as a corroborated, promoted edge.

Why tasks are never scored: recency and use dominate the score, so a task nobody has
touched for a month scores at the floor, and it is the task most likely still owed.

The evict band is archived in one commit through ``archive_many_step``, which rewrites
every href to each archived file, except:

- a memory younger than the grace period (``env.retention_grace_days``, the store
  setting ``retention_grace_days``, 30 days by default), counted from the later of its
  ``memhtml-created`` and its arrival on the store's branch (``sleep.arrivals``: the
  committer time of the first-parent commit that brought it): it keeps its place
  whatever it scores (counted ``graced``). A memory new to this store has had no time
  to be read, linked or corroborated, which is most of what the score weighs, so
  without the grace night one archived every fresh procedure; counted from
  ``memhtml-created`` alone, it archived a third of two years of notes imported that
  day, whose frontmatter dates are old;
- a person's file (a memory under ``resources/people/``, where person-links finds
  and mints them), counted ``protected``: memories link to it ``about_person``, it
  carries a person's aliases, and archiving it breaks every such link's meaning while
  saving nothing. It is still scored, and its band recorded. Tasks are never scored.

A path whose archive path is already taken this year is refused and counted, not a
failed phase. A file the head could not parse is not a record, so it is never scored
or moved.

Why each file was archived is recorded with it: the commit's body names every archived
path with its score, its band, its eight signals and its ages, and the phase adds one
``retention-archived`` decision record per archived file to the run's ledger (in the
same commit), carrying the same figures as data (see ``sleep.ledger``; beside
``created_age_days`` the record gives ``arrived_age_days``, the days since the file
came onto the branch: the grace period read the smaller). The same figures, with the
raw facts the signals came from, are the file's decision of rule ``evict-band``
(``sleep.decisions``), which review and the report show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final

from returns.io import IOResult
from returns.result import Result, Success

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import AccessCount, Arrival
from memhtml.domain.graph import Edge, analyze_graph
from memhtml.domain.retention import (
    SCORE_PRECISION,
    SIGNAL_NAMES,
    Band,
    RetentionInput,
    RetentionScore,
    Verdict,
    grace_age_days,
    retention_verdict,
    score_retention,
)
from memhtml.domain.thresholds import DEFAULT_CONFIDENCE, RETENTION_GRACE_DAYS
from memhtml.head import HeadVersion, IndexedView
from memhtml.sleep.arrivals import arrived_at
from memhtml.sleep.contract import LOG_START
from memhtml.sleep.decisions import Decision, FigureValue, retention_figures
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import MinedEdge, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import StoreError, describe
from memhtml.store.layout import PEOPLE
from memhtml.store.plan import Plan, archive_many_step

AUTHORED_STRENGTH: Final = 1.0
"""A file-borne edge's strength. A mined edge carries its cosine (at most 1), so where
both join a pair the authored one wins the fold to the maximum."""
SECONDS_PER_DAY: Final = 86_400.0
_INSTANT_LENGTH: Final = len("2026-01-01T00:00:00Z")


def moment(text: str) -> datetime | None:
    """A format datetime (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ``) as a UTC instant;
    a date reads as its midnight."""
    if len(text) == _INSTANT_LENGTH and text[10] == "T" and text.endswith("Z") \
            and text[:4].isdigit():
        # The write stamps' form, read for every memory of a night by retention and by
        # decay: ``fromisoformat`` parses it several times faster than ``strptime``.
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            return None
    for form in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def is_scored(record: MemoryRecord) -> bool:
    """Active and not a task: what retention reads (and may archive)."""
    return not record.archived and record.status == "active" and record.memory_type != "task"


def age_days(record: MemoryRecord, stamp: datetime) -> float:
    """Days from the record's recency key to the stamp; 0 when it is later or unreadable
    (the parser admits no unreadable one, and a young age keeps rather than evicts)."""
    at = moment(record.recency_key)
    if at is None:
        return 0.0
    return max(0.0, (stamp - at).total_seconds() / SECONDS_PER_DAY)


def created_age_days(record: MemoryRecord, stamp: datetime) -> float:
    """Days from the record's ``memhtml-created`` to the stamp, which the grace period
    reads; NaN when it cannot be read (and so inside any grace period), negative when
    it lies after the stamp (inside it too)."""
    at = moment(record.created_at)
    if at is None:
        return math.nan
    return (stamp - at).total_seconds() / SECONDS_PER_DAY


def created_ages(view: IndexedView, stamp: datetime) -> Mapping[str, float]:
    """``created_age_days`` of every scored memory, by path."""
    return MappingProxyType({r.path: created_age_days(r, stamp)
                             for r in view.records() if is_scored(r)})


def arrived_ages(view: IndexedView, arrivals: Mapping[str, Arrival], stamp: datetime
                 ) -> Mapping[str, float]:
    """Days since each scored memory came onto the branch (``sleep.arrivals``; 0 for a
    path this run brought), by path."""
    return MappingProxyType({
        r.path: (stamp - arrived_at(arrivals, r.path, stamp)).total_seconds() / SECONDS_PER_DAY
        for r in view.records() if is_scored(r)})


def is_protected(record: MemoryRecord) -> bool:
    """A kind retention never archives, whatever it scores: a person's file. (Tasks
    are never scored at all.)"""
    return record.path.startswith(PEOPLE)


def protected_paths(view: IndexedView) -> frozenset[str]:
    """The scored memories of a protected kind."""
    return frozenset(r.path for r in view.records() if is_scored(r) and is_protected(r))


def graph_edges(records: Mapping[str, MemoryRecord],
                 mined: tuple[MinedEdge, ...] | None) -> list[Edge]:
    """The graph retention scores over (and compress groups by): file-borne links
    between ``records`` plus the mined edges, never an edge to anything else."""
    edges = [Edge(record.path, target, AUTHORED_STRENGTH)
             for record in records.values() for link in record.links
             if (target := to_tree_path(link.href)) in records]
    if mined is not None:
        edges += [Edge(m.source, m.target, m.similarity) for m in mined
                  if m.source in records and m.target in records]
    return edges


def retention_inputs(view: IndexedView, accesses: Mapping[str, AccessCount],
                     mined: tuple[MinedEdge, ...] | None, stamp: datetime
                     ) -> Mapping[str, RetentionInput]:
    """The scorer's facts for every scored memory, by path in path order."""
    records = {r.path: r for r in view.records() if is_scored(r)}
    # Only memories with an edge enter the graph. An isolated memory has no graph
    # standing, and PageRank would otherwise hand it the teleport share, which in a
    # store with few links ties every memory for the top rank: a full PageRank signal
    # for all, and no memory could ever reach the evict band.
    graph = analyze_graph(graph_edges(records, mined))
    max_rank = graph.max_pagerank
    supporters: dict[str, set[str]] = {}
    contested: dict[str, set[str]] = {}
    for record in records.values():
        for link in record.links:
            target = to_tree_path(link.href)
            if target not in records or target == record.path:
                continue
            if link.rel == "supports":
                supporters.setdefault(target, set()).add(record.path)
            elif link.rel == "contradicts":
                contested.setdefault(target, set()).add(record.path)
                contested.setdefault(record.path, set()).add(target)
    out: dict[str, RetentionInput] = {}
    for path, record in records.items():
        read = accesses.get(path)
        out[path] = RetentionInput(
            memory_type=record.memory_type,
            age_days=age_days(record, stamp),
            access_count=0.0 if read is None else float(read.count),
            confidence=DEFAULT_CONFIDENCE if record.confidence is None else record.confidence,
            graph_rank=graph.pagerank.get(path, 0.0),
            max_graph_rank=max_rank,
            bridge_count=float(graph.bridges.get(path, 0)),
            reinforcement_count=float(len(supporters.get(path, ()))),
            importance=None if record.importance is None else float(record.importance),
            contradiction_count=float(len(contested.get(path, ()))),
        )
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True)
class Triage:
    """Each scored path's score (its band and signals inside), the age the grace
    period read (``grace_age_days``), the days since it came onto the branch, and the
    verdict; the paths to archive in path order."""

    scores: Mapping[str, RetentionScore]
    ages: Mapping[str, float]
    verdicts: Mapping[str, Verdict]
    grace_days: float
    arrived: Mapping[str, float] = field(default_factory=dict)
    created: Mapping[str, float] = field(default_factory=dict)

    @property
    def bands(self) -> Mapping[str, Band]:
        return MappingProxyType({path: s.band for path, s in self.scores.items()})

    @property
    def evict(self) -> tuple[str, ...]:
        """The paths to archive: the evict band outside the grace period."""
        return tuple(sorted(p for p, verdict in self.verdicts.items() if verdict == "archive"))

    def count(self, band: Band) -> int:
        return sum(1 for s in self.scores.values() if s.band == band)

    @property
    def graced(self) -> int:
        return sum(1 for v in self.verdicts.values() if v == "graced")

    @property
    def protected(self) -> int:
        return sum(1 for v in self.verdicts.values() if v == "protected")


def triage(inputs: Mapping[str, RetentionInput], ages: Mapping[str, float] | None = None,
           grace_days: float = RETENTION_GRACE_DAYS, arrived: Mapping[str, float] | None = None,
           protected: frozenset[str] = frozenset()) -> Triage:
    """Score every input and decide what to archive. ``ages`` are days since creation,
    ``arrived`` days since each path came onto the branch; the grace period reads the
    younger (``grace_age_days``). A path with no age in ``ages`` (or no ``ages`` at all)
    has an unknown age, so it is inside the grace period and never archived: a caller
    that only wants the bands cannot archive by omission. A path in ``protected`` is
    never archived."""
    scores = {path: score_retention(raw) for path, raw in inputs.items()}
    known = ages or {}
    came = arrived or {}
    grace = {path: grace_age_days(known.get(path, math.nan), came.get(path))
             for path in scores}
    return Triage(
        MappingProxyType(scores), MappingProxyType(grace),
        MappingProxyType({path: retention_verdict(scored, grace[path], grace_days,
                                                  path in protected)
                          for path, scored in scores.items()}),
        grace_days, MappingProxyType({p: came[p] for p in scores if p in came}),
        MappingProxyType({p: known.get(p, math.nan) for p in scores}))


def _figure(value: float) -> float:
    return round(value, SCORE_PRECISION)


def decision_record(path: str, judged: Triage) -> PendingMark:
    """The ledger's ``retention-archived`` record of one archived path: its score, its
    band, its eight signals and the age that put it past the grace period."""
    scored = judged.scores[path]
    signals = dict(zip(SIGNAL_NAMES, scored.signals.values(), strict=True))
    arrived = judged.arrived.get(path)
    more = {} if arrived is None else {"arrived_age_days": _figure(arrived)}
    return PendingMark.of(
        "retention-archived", path=path, rule="evict-band", score=scored.score,
        band=scored.band, created_age_days=_figure(judged.created.get(path, judged.ages[path])),
        grace_days=judged.grace_days, **more,
        **{name: _figure(value) for name, value in signals.items()})


def explained(path: str, judged: Triage) -> str:
    """One commit-body line: why ``path`` was archived, in figures."""
    scored = judged.scores[path]
    signals = ", ".join(f"{name} {_figure(value):g}" for name, value in
                        zip(SIGNAL_NAMES, scored.signals.values(), strict=True))
    created = judged.created.get(path, judged.ages[path])
    arrived = judged.arrived.get(path)
    held = "" if arrived is None else f", on this branch for {_figure(arrived):g}"
    return (f"{path}: archived from the {scored.band} band: score {scored.score:g} "
            f"({signals}); created {_figure(created):g} days ago{held}, past the "
            f"{judged.grace_days:g}-day grace period")


def evict_decisions(judged: Triage, inputs: Mapping[str, RetentionInput],
                    archived: tuple[tuple[str, str], ...]) -> tuple[Decision, ...]:
    """Each file archived from the evict band, with its score, band, eight signals,
    and the raw facts the signals came from (age in days, reads, memory type)."""
    out: list[Decision] = []
    for path, to in archived:
        scored, raw = judged.scores.get(path), inputs.get(path)
        if scored is None:
            continue
        more: dict[str, FigureValue] = {} if raw is None else {
            "memory_type": raw.memory_type, "age_days": raw.age_days,
            "reads": raw.access_count}
        out.append(Decision.of("retention-triage", "archived", path, "evict-band", to=to,
                               figures=retention_figures(scored, **more)))
    return tuple(out)


def _result(version: HeadVersion, now: str, judged: Triage,
            inputs: Mapping[str, RetentionInput] = MappingProxyType({})
            ) -> Result[PhaseResult, StoreError]:
    def answer(plan: Plan, moved: tuple[tuple[str, str], ...],
               refused: tuple[tuple[str, str], ...]) -> PhaseResult:
        archived = tuple(path for path, _ in moved)
        changes, _ = plan.changes()
        counts = {"scored": len(judged.scores), "keep": judged.count("keep"),
                  "compress": judged.count("compress"), "evict": judged.count("evict"),
                  "graced": judged.graced, "protected": judged.protected,
                  "archived": len(archived), "refused": len(refused)}
        warnings = tuple(f"{path} not archived: {why}" for path, why in refused)
        if not changes:
            return PhaseResult(counts=counts, warnings=warnings)
        body = "\n".join((
            f"scored {counts['scored']}: keep {counts['keep']}, compress "
            f"{counts['compress']}, evict {counts['evict']} (of which {counts['graced']} "
            f"younger than the {judged.grace_days:g}-day grace period and "
            f"{counts['protected']} person files, kept)",
            *(explained(path, judged) for path in archived)))
        n = len(archived)
        return PhaseResult(
            counts=counts, warnings=warnings,
            marks=tuple(decision_record(path, judged) for path in archived),
            commits=(PhaseCommit(
                f"{n} memor{'y' if n == 1 else 'ies'} archived from the evict band",
                changes, body, decisions=evict_decisions(judged, inputs, moved)),))

    start = Plan.start(version, now)
    if not judged.evict:
        return Success(answer(start, (), ()))
    return archive_many_step(start, judged.evict).map(
        lambda done: answer(done.plan, tuple(done.archived), done.refused))


def retention_triage(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    version = env.version

    def scored(accesses: Mapping[str, AccessCount], arrivals: Mapping[str, Arrival]
               ) -> IOResult[PhaseResult, PhaseFault]:
        inputs = retention_inputs(version, accesses, env.mined, env.stamp)
        judged = triage(inputs, created_ages(version, env.stamp), env.retention_grace_days,
                        arrived_ages(version, arrivals, env.stamp), protected_paths(version))
        done: Result[PhaseResult, PhaseFault] = _result(version, env.now, judged, inputs).alt(
            lambda error: PhaseFault(describe(error)))
        return IOResult.from_result(done)

    arrived: IOResult[Mapping[str, Arrival], PhaseFault] = env.arrival_book().read().alt(
        lambda reason: PhaseFault(
            f"git could not say when each memory came onto the branch, so no age can be "
            f"read for the grace period: {reason}"))
    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read").alt(lambda error: PhaseFault(
            f"the state plane's access log cannot be read: {error.reason}"))
    return arrived.bind(lambda arrivals: read.bind(
        lambda accesses: scored(accesses, arrivals)))
