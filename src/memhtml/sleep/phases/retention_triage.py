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
every href to each archived file. Each archived file is recorded as a decision of rule
``evict-band`` with its score, band and eight signals (``sleep.decisions``), so review
and the report say why it was picked. A path whose archive path is already taken this
year is refused and counted, not a failed phase. A file the head could not parse is
not a record, so it is never scored or moved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final

from returns.io import IOResult
from returns.result import Result, Success

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import AccessCount
from memhtml.domain.graph import Edge, analyze_graph
from memhtml.domain.retention import Band, RetentionInput, RetentionScore, score_retention
from memhtml.domain.thresholds import DEFAULT_CONFIDENCE
from memhtml.head import HeadVersion, IndexedView
from memhtml.sleep.contract import LOG_START
from memhtml.sleep.decisions import Decision, FigureValue, retention_figures
from memhtml.sleep.phase import MinedEdge, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import StoreError, describe
from memhtml.store.plan import Plan, archive_many_step

AUTHORED_STRENGTH: Final = 1.0
"""A file-borne edge's strength. A mined edge carries its cosine (at most 1), so where
both join a pair the authored one wins the fold to the maximum."""
SECONDS_PER_DAY: Final = 86_400.0


def moment(text: str) -> datetime | None:
    """A format datetime (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ``) as a UTC instant;
    a date reads as its midnight."""
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
    """Each scored path's band, and the evict band in path order."""

    bands: Mapping[str, Band]
    scores: Mapping[str, RetentionScore] = field(
        default_factory=lambda: MappingProxyType({}))
    """Each scored path's score, band and eight signals: an archived file's decision
    record carries them (``decisions.retention_figures``)."""

    @property
    def evict(self) -> tuple[str, ...]:
        return tuple(sorted(p for p, band in self.bands.items() if band == "evict"))

    def count(self, band: Band) -> int:
        return sum(1 for b in self.bands.values() if b == band)


def triage(inputs: Mapping[str, RetentionInput]) -> Triage:
    scores = {path: score_retention(raw) for path, raw in inputs.items()}
    return Triage(MappingProxyType({path: s.band for path, s in scores.items()}),
                  MappingProxyType(scores))


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
        archived = len(moved)
        changes, _ = plan.changes()
        counts = {"scored": len(judged.bands), "keep": judged.count("keep"),
                  "compress": judged.count("compress"), "evict": judged.count("evict"),
                  "archived": archived, "refused": len(refused)}
        warnings = tuple(f"{path} not archived: {why}" for path, why in refused)
        if not changes:
            return PhaseResult(counts=counts, warnings=warnings)
        body = (f"scored {counts['scored']}: keep {counts['keep']}, compress "
                f"{counts['compress']}, evict {counts['evict']}")
        return PhaseResult(counts=counts, warnings=warnings, commits=(PhaseCommit(
            f"{archived} memor{'y' if archived == 1 else 'ies'} archived from the evict band",
            changes, body, decisions=evict_decisions(judged, inputs, moved)),))

    start = Plan.start(version, now)
    if not judged.evict:
        return Success(answer(start, (), ()))
    return archive_many_step(start, judged.evict).map(
        lambda done: answer(done.plan, tuple(done.archived), done.refused))


def retention_triage(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    version = env.version

    def scored(accesses: Mapping[str, AccessCount]) -> IOResult[PhaseResult, PhaseFault]:
        inputs = retention_inputs(version, accesses, env.mined, env.stamp)
        judged = triage(inputs)
        done: Result[PhaseResult, PhaseFault] = _result(version, env.now, judged, inputs).alt(
            lambda error: PhaseFault(describe(error)))
        return IOResult.from_result(done)

    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read").alt(lambda error: PhaseFault(
            f"the state plane's access log cannot be read: {error.reason}"))
    return read.bind(scored)
