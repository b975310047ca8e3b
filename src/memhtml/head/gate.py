"""The head gate: does the version being landed still find what its base found?

It is stated over two versions of the same corpus, never over a fixture. Probes come
from the *base*: a seeded sample of its active records, and every active record the
landing changed (moved, folded, rewritten or edited), each queried by its own title
and by its claim as the base held them. ``search_head`` is scored at the base and at
the landed version with the same queries, so the two MRRs differ only by what the
landing changed. At the landed version a probe's target is what stands for it there
(``head.succession``): the record itself, where it was moved, or the keeper whose
supersession absorbed it. A record the landing adds has no base rank to compare and
is probed next time; one it archived with nothing standing for it was forgotten (the
caller bounds how much may be), and is not scored.

The spec drew its probes from the records active in *both* versions, queried by the
landed title. That cannot see loss: a landing that archives half the corpus leaves
only survivors to probe, and one that rewrites a title answers its own new query.
Everything is deterministic and needs no embedder: the sample is a function of the
seed and the paths.

Tasks are neither probed nor ranked. A task is work for a person, not a memory a
search stands for, and the review tasks a night opens quote the memories they are
about: ranked beside them, each took the place of the memory its probe looks for,
so an ordinary first night read as a store that searches worse. A task's own
probes would measure the queue, which a night changes on purpose. So the probes
come from memories only, and each ranking admits memories only (BM25's statistics
stay the whole corpus's, as for any scoped search: a task shifts them as much as
one more memory would, and no more).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.indexes import is_active
from memhtml.head.search import SearchHeadInput, search_head
from memhtml.head.succession import Succession

HEAD_GATE_PROBES = 200
"""Unchanged records sampled as targets; every record the landing changed is a
target besides."""
HEAD_GATE_K = 10
HEAD_GATE_TOLERANCE = 0.02
"""Room for a landing that archives a near-duplicate and so nudges BM25's document
frequencies; a drop past it means the landing made the corpus harder to search."""
HEAD_GATE_SEED = 1
INVERSIONS_SHOWN = 5
UNFOUND_SHOWN = 5

_SENTENCE = re.compile(r"(?<=[.!?])\s")

ProbeKind = Literal["title", "claim"]


@dataclass(frozen=True, slots=True)
class HeadGateOptions:
    probes: int = HEAD_GATE_PROBES
    k: int = HEAD_GATE_K
    tolerance: float = HEAD_GATE_TOLERANCE
    seed: int = HEAD_GATE_SEED


@dataclass(frozen=True, slots=True)
class HeadGateProbe:
    """One query for one base record (``path``): its title or its claim."""

    path: str
    query: str
    kind: ProbeKind = "title"


@dataclass(frozen=True, slots=True)
class HeadGateInversion:
    """``fell-out``: the target (or what stands for it) is not in the top k.
    ``superseded-outranks``: a record the target supersedes ranks above it (or is in
    the top k while it is not)."""

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
    found_as: str | None = None
    """The path that stands for the target at the landed version, when it is not the
    target's own (a move, a keeper); None when it is, or when nothing does."""


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
    unfound: tuple[str, ...] = ()
    """Targets some probe found at the base that no probe finds at the landed version,
    neither themselves nor what stands for them: each a refusal on its own."""
    followed: int = 0
    """Targets found through what stands for them at another path (moved, folded)."""
    forgotten: int = 0
    """Base records archived with nothing standing for them (not probed)."""


def probe_query_for(record: MemoryRecord) -> str:
    """A record's probe query: its title, else its claim's first sentence, else the claim."""
    if record.title.strip():
        return record.title
    first = _SENTENCE.split(record.claim.strip(), maxsplit=1)[0]
    return first or record.claim


def probe_queries_for(record: MemoryRecord) -> tuple[tuple[ProbeKind, str], ...]:
    """A record's probes: its title, and its claim when it says something else (the
    claim alone, or the title's fallback, for a record with no title)."""
    title, claim = record.title.strip(), " ".join(record.claim.split())
    found: list[tuple[ProbeKind, str]] = []
    if title:
        found.append(("title", record.title))
    if claim and claim.casefold() != title.casefold():
        found.append(("claim", claim))
    if not found:
        query = probe_query_for(record)
        if query.strip():
            found.append(("title", query))
    return tuple(found)


def competes(record: MemoryRecord) -> bool:
    """Whether a record takes part in the gate: a memory, not a task."""
    return record.memory_type != "task"


def _active_paths(view: HeadView) -> set[str]:
    return {r.path for r in view.records() if is_active(r)}


def _changed(record: MemoryRecord, landed: HeadView) -> bool:
    held = landed.get(record.path)
    return (held is None or not is_active(held) or held.title != record.title
            or held.claim != record.claim or held.content_hash != record.content_hash)


def probes_for(base: HeadView, landed: HeadView, count: int, seed: int,
               succession: Succession | None = None) -> list[HeadGateProbe]:
    """The probes of every base memory the landing changed that something still
    stands for, then of the first ``count`` unchanged ones ordered by the first eight
    hex digits of ``sha1(f"{seed}:{path}")`` with the path breaking ties; each record
    queried by its title and its claim as the base holds them. Tasks are not probed
    (``competes``)."""
    follow = succession or Succession.of(base, landed)

    def key(path: str) -> tuple[str, str]:
        digest = hashlib.sha1(f"{seed}:{path}".encode(), usedforsecurity=False).hexdigest()
        return digest[:8], path

    changed: list[MemoryRecord] = []
    unchanged: list[MemoryRecord] = []
    for record in base.records():
        if not is_active(record) or not competes(record):
            continue
        if not _changed(record, landed):
            unchanged.append(record)
        elif follow.successor(record.path) is not None:
            changed.append(record)
    chosen = sorted(changed, key=lambda r: key(r.path)) + sorted(
        unchanged, key=lambda r: key(r.path))[: max(count, 0)]
    return [HeadGateProbe(record.path, query, kind) for record in chosen
            for kind, query in probe_queries_for(record)]


def _identity(path: str) -> str | None:
    return path


def score_probes(view: HeadView, probes: list[HeadGateProbe], k: int,
                 stand_for: Callable[[str], str | None] = _identity) -> Scored:
    """Rank every probe's target at one version, lexically, with no vectors, among
    the memories only (``competes``): the record ``stand_for`` names for it there
    (itself, at the base)."""
    ranks: list[int | None] = []
    inversions: list[HeadGateInversion] = []
    total = 0.0
    for probe in probes:
        target_path = stand_for(probe.path)
        hits = search_head(view, SearchHeadInput(probe.query, limit=k, admit=competes))
        positions = {hit.path: i for i, hit in enumerate(hits, start=1)}
        rank = None if target_path is None else positions.get(target_path)
        ranks.append(rank)
        if rank is None:
            inversions.append(HeadGateInversion("fell-out", probe.path, probe.query,
                                                target_path if target_path != probe.path
                                                else None))
        else:
            total += 1.0 / rank
        target = None if target_path is None else view.get(target_path)
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


def _unfound(probes: list[HeadGateProbe], before: Scored, after: Scored) -> tuple[str, ...]:
    found_before: set[str] = set()
    found_after: set[str] = set()
    for probe, was, now in zip(probes, before.ranks, after.ranks, strict=True):
        if was is not None:
            found_before.add(probe.path)
        if now is not None:
            found_after.add(probe.path)
    return tuple(sorted(found_before - found_after))


def gate_heads(
    base: HeadView, landed: HeadView, options: HeadGateOptions | None = None
) -> HeadGateReport:
    """Score the same probes at both versions. Passes when the landed MRR reaches the
    floor (base MRR minus tolerance, clamped at 0), inversions did not grow, and no
    target the base found is lost to search (``unfound``). Pure; never raises for any
    pair of views.

    A landing that adds a memory passes; one that rewrites a memory into another
    fact loses what its title and claim used to find, and fails:

    >>> from memhtml.contracts.ops import Put
    >>> from memhtml.format import NewMemoryInput, render_template
    >>> from memhtml.head import (
    ...     describe_head_gate_failure, gate_heads, record_from, version_from_records,
    ...     with_overlay)
    >>> def memory(title, claim):
    ...     return render_template(NewMemoryInput(
    ...         title=title, claim=claim, memory_type="semantic", at="2026-01-06T09:00:00Z"))
    >>> base = version_from_records([
    ...     record_from(memory("Deploy window", "Deploys happen on Tuesdays."),
    ...                 "areas/inbox/deploys.html").unwrap(),
    ...     record_from(memory("Coffee machine", "The coffee machine is on floor two."),
    ...                 "areas/inbox/coffee.html").unwrap(),
    ... ], "0" * 40)
    >>> lunch = memory("Lunch", "Lunch is at noon.")
    >>> added = with_overlay(base, [Put("areas/inbox/lunch.html", lunch)]).unwrap()
    >>> describe_head_gate_failure(gate_heads(base, added))
    'head gate: 4 probes; passed'
    >>> rewritten = with_overlay(base, [Put("areas/inbox/deploys.html", lunch)]).unwrap()
    >>> report = gate_heads(base, rewritten)
    >>> report.passed, report.mrr_before, report.mrr, report.unfound
    (False, 1.0, 0.5, ('areas/inbox/deploys.html',))
    >>> [(inversion.kind, inversion.query) for inversion in report.inversions]
    [('fell-out', 'Deploy window'), ('fell-out', 'Deploys happen on Tuesdays.')]
    """
    opts = options or HeadGateOptions()
    succession = Succession.of(base, landed)
    probes = probes_for(base, landed, opts.probes, opts.seed, succession)
    before = score_probes(base, probes, opts.k)
    after = score_probes(landed, probes, opts.k, succession.successor)
    floor = round(max(0.0, before.mrr - opts.tolerance), 4)
    base_active, landed_active = _active_paths(base), _active_paths(landed)
    unfound = _unfound(probes, before, after)
    standing = {p.path: succession.successor(p.path) for p in probes}
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
        passed=(after.mrr >= floor and len(after.inversions) <= len(before.inversions)
                and not unfound),
        results=tuple(
            HeadGateResult(p.path, p.query, rb, ra,
                           None if standing[p.path] == p.path else standing[p.path])
            for p, rb, ra in zip(probes, before.ranks, after.ranks, strict=True)
        ),
        unfound=unfound,
        followed=len({p.path for p in probes if standing[p.path] not in (None, p.path)}),
        forgotten=sum(1 for path in base_active if succession.forgotten(path)),
    )


def _describe(inversion: HeadGateInversion) -> str:
    if inversion.kind == "fell-out":
        return f"fell-out {inversion.path}"
    return f"superseded-outranks {inversion.by}@{inversion.by_rank} over {inversion.path}"


def describe_head_gate_failure(report: HeadGateReport) -> str:
    """One line: the probe count, then the MRR shortfall, the inversion growth (up to
    five inversions named) and the targets lost to search (up to five), or ``passed``."""
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
    if report.unfound:
        shown = ", ".join(report.unfound[:UNFOUND_SHOWN])
        more = len(report.unfound) - UNFOUND_SHOWN
        suffix = f" and {more} more" if more > 0 else ""
        parts.append(
            f"{len(report.unfound)} memory(ies) the base found are found no more, neither "
            f"themselves nor a memory standing for them: {shown}{suffix}"
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
