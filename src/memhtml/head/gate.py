"""The head gate: does the version being landed still find what its base found?

It is stated over two versions of the same corpus, never over a fixture. Probes
are a seeded sample of the records active in *both* versions, each queried by its
own title; ``search_head`` is scored at the base and at the landed version with
the same probes, so the two MRRs differ only by what the landing changed. A
record the landing adds has no base rank to compare and is probed next time; a
record it archives leaves the sample, and the probe of the record it was folded
into measures whether the fold helped. Everything is deterministic and needs no
embedder: the sample is a function of the seed and the paths.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.indexes import is_active
from memhtml.head.search import SearchHeadInput, search_head

HEAD_GATE_PROBES = 200
HEAD_GATE_K = 10
HEAD_GATE_TOLERANCE = 0.02
"""Room for a landing that archives a near-duplicate and so nudges BM25's document
frequencies; a drop past it means the landing made the corpus harder to search."""
HEAD_GATE_SEED = 1
INVERSIONS_SHOWN = 5

_SENTENCE = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True, slots=True)
class HeadGateOptions:
    probes: int = HEAD_GATE_PROBES
    k: int = HEAD_GATE_K
    tolerance: float = HEAD_GATE_TOLERANCE
    seed: int = HEAD_GATE_SEED


@dataclass(frozen=True, slots=True)
class HeadGateProbe:
    path: str
    query: str


@dataclass(frozen=True, slots=True)
class HeadGateInversion:
    """``fell-out``: the target is not in the top k. ``superseded-outranks``: a record
    the target supersedes ranks above it (or is in the top k while it is not)."""

    kind: Literal["fell-out", "superseded-outranks"]
    path: str
    query: str
    by: str | None = None
    by_rank: int | None = None
    rank: int | None = None


@dataclass(frozen=True, slots=True)
class HeadGateResult:
    path: str
    query: str
    rank_before: int | None
    rank_after: int | None


@dataclass(frozen=True, slots=True)
class Scored:
    ranks: tuple[int | None, ...]
    mrr: float
    inversions: tuple[HeadGateInversion, ...]


@dataclass(frozen=True, slots=True)
class HeadGateReport:
    mode: Literal["head"]
    base: str | None
    landed: str | None
    probes: int
    k: int
    seed: int
    tolerance: float
    mrr_before: float
    mrr: float
    floor: float
    inversions_before: int
    inversions: tuple[HeadGateInversion, ...]
    added: int
    removed: int
    passed: bool
    results: tuple[HeadGateResult, ...] = field(repr=False)


def probe_query_for(record: MemoryRecord) -> str:
    """A record's probe query: its title, else its claim's first sentence, else the claim."""
    if record.title.strip():
        return record.title
    first = _SENTENCE.split(record.claim.strip(), maxsplit=1)[0]
    return first or record.claim


def _active_paths(view: HeadView) -> set[str]:
    return {r.path for r in view.records() if is_active(r)}


def probes_for(base: HeadView, landed: HeadView, count: int, seed: int) -> list[HeadGateProbe]:
    """The first ``count`` records active in both versions, ordered by the first eight
    hex digits of ``sha1(f"{seed}:{path}")`` with the path breaking ties."""
    common = _active_paths(base) & _active_paths(landed)

    def key(path: str) -> tuple[str, str]:
        digest = hashlib.sha1(f"{seed}:{path}".encode(), usedforsecurity=False).hexdigest()
        return digest[:8], path

    chosen = sorted(common, key=key)[: max(count, 0)]
    probes: list[HeadGateProbe] = []
    for path in chosen:
        record = landed.get(path)
        if record is not None:
            probes.append(HeadGateProbe(path, probe_query_for(record)))
    return probes


def score_probes(view: HeadView, probes: list[HeadGateProbe], k: int) -> Scored:
    """Rank every probe's target at one version, lexically, with no vectors."""
    ranks: list[int | None] = []
    inversions: list[HeadGateInversion] = []
    total = 0.0
    for probe in probes:
        hits = search_head(view, SearchHeadInput(probe.query, limit=k))
        positions = {hit.path: i for i, hit in enumerate(hits, start=1)}
        rank = positions.get(probe.path)
        ranks.append(rank)
        if rank is None:
            inversions.append(HeadGateInversion("fell-out", probe.path, probe.query))
        else:
            total += 1.0 / rank
        target = view.get(probe.path)
        superseded = (
            sorted({to_tree_path(link.href) for link in target.links if link.rel == "supersedes"})
            if target is not None
            else []
        )
        for old in superseded:
            old_rank = positions.get(old)
            if old_rank is not None and (rank is None or old_rank < rank):
                inversions.append(
                    HeadGateInversion("superseded-outranks", probe.path, probe.query, old,
                                      old_rank, rank)
                )
    mrr = round(total / len(probes), 4) if probes else 0.0
    return Scored(tuple(ranks), mrr, tuple(inversions))


def gate_heads(
    base: HeadView, landed: HeadView, options: HeadGateOptions | None = None
) -> HeadGateReport:
    """Score the same probes at both versions. Passes when the landed MRR reaches the
    floor (base MRR minus tolerance, clamped at 0) and inversions did not grow.
    Pure; never raises for any pair of views."""
    opts = options or HeadGateOptions()
    probes = probes_for(base, landed, opts.probes, opts.seed)
    before = score_probes(base, probes, opts.k)
    after = score_probes(landed, probes, opts.k)
    floor = round(max(0.0, before.mrr - opts.tolerance), 4)
    base_active, landed_active = _active_paths(base), _active_paths(landed)
    return HeadGateReport(
        mode="head",
        base=base.sha,
        landed=landed.sha,
        probes=len(probes),
        k=opts.k,
        seed=opts.seed,
        tolerance=opts.tolerance,
        mrr_before=before.mrr,
        mrr=after.mrr,
        floor=floor,
        inversions_before=len(before.inversions),
        inversions=after.inversions,
        added=len(landed_active - base_active),
        removed=len(base_active - landed_active),
        passed=after.mrr >= floor and len(after.inversions) <= len(before.inversions),
        results=tuple(
            HeadGateResult(p.path, p.query, rb, ra)
            for p, rb, ra in zip(probes, before.ranks, after.ranks, strict=True)
        ),
    )


def _describe(inversion: HeadGateInversion) -> str:
    if inversion.kind == "fell-out":
        return f"fell-out {inversion.path}"
    return f"superseded-outranks {inversion.by}@{inversion.by_rank} over {inversion.path}"


def describe_head_gate_failure(report: HeadGateReport) -> str:
    """One line: the probe count, then the MRR shortfall and the inversion growth
    (up to five inversions named), or ``passed``."""
    parts = [f"head gate: {report.probes} probes"]
    if report.mrr < report.floor:
        parts.append(
            f"MRR {report.mrr:.4f} below floor {report.floor:.4f} (base {report.mrr_before:.4f})"
        )
    if len(report.inversions) > report.inversions_before:
        shown = ", ".join(_describe(i) for i in report.inversions[:INVERSIONS_SHOWN])
        more = len(report.inversions) - INVERSIONS_SHOWN
        suffix = f" and {more} more" if more > 0 else ""
        parts.append(
            f"inversions {report.inversions_before} -> {len(report.inversions)}: {shown}{suffix}"
        )
    if len(parts) == 1:
        parts.append("passed")
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class HeadGateFailed:
    """A refused landing, carrying its whole report: a refusal an operator cannot read
    is one they override."""

    report: HeadGateReport

    @property
    def reason(self) -> str:
        return describe_head_gate_failure(self.report)
