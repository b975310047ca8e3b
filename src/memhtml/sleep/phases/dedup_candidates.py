"""Dedup-merge's candidates: the pairs a night offers the merge filter (content-hash
and frame-key twins, then cosine pairs above the merge threshold: ``propose``), and,
with a model bound, the components of near neighbours it asks about (``candidates``).

Its own module because proposing is a pure reading of the corpus and its vectors: no
model is asked and nothing is written. ``dedup_merge`` passes what this proposes
through the one merge filter and applies the folds. The rules are in
``dedup_merge``'s module docstring (**Proposals**, and *candidates* and *components*
under **With a model bound**).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias

from memhtml.contracts.record import MemoryRecord
from memhtml.domain.merge import CorpusMember, MergeText, VetoCache, is_near_duplicate
from memhtml.domain.thresholds import (
    DEDUP_COMPONENT_CAP,
    DEDUP_COMPONENTS_PER_NIGHT,
    DEDUP_RECALL_FLOOR,
    NEAR_DUPLICATE_THRESHOLD,
)
from memhtml.head import HeadVersion, VectorCache
from memhtml.sleep.neighbours import (
    Neighbour,
    Neighbours,
    corpus_order,
    scan_neighbours,
)
from memhtml.sleep.phases.dedup_prompt import Row

MINED_NEIGHBOURS: Final = DEDUP_COMPONENT_CAP
"""Neighbours above the merge cosine kept per member. More than this many copies of one
memory above 0.92 is a flood, not a pair: the rest are found once the first fold has
thinned it, a night later."""
TWIN_SIMILARITY: Final = 1.0
"""The similarity a twin pair is offered at: its key proves identity."""

ProposalKind: TypeAlias = Literal["hash", "frame", "cosine", "model"]
Mined: TypeAlias = tuple[CorpusMember, CorpusMember, float]


@dataclass(frozen=True, slots=True)
class Proposed:
    """The night's candidate pairs, in the order they are offered, and where each came
    from (keyed by the unordered pair of paths)."""

    members: tuple[CorpusMember, ...]
    pairs: tuple[Mined, ...]
    kinds: Mapping[frozenset[str], ProposalKind]
    with_vector: int

    def count(self, kind: ProposalKind) -> int:
        return sum(1 for k in self.kinds.values() if k == kind)


def _hash_key(record: MemoryRecord) -> str:
    if record.body_text.strip():
        return record.content_hash
    return f"{record.content_hash}\x00{' '.join(record.title.casefold().split())}"


def _frame_key(record: MemoryRecord) -> str | None:
    return record.frame_key if record.claim.strip() else None


def _twin_groups(records: Sequence[MemoryRecord]) -> list[int]:
    """Each member's group root (the group's smallest offset) over both twin keys."""
    parent = list(range(len(records)))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    firsts: dict[tuple[str, str], int] = {}
    for offset, record in enumerate(records):
        frame = _frame_key(record)
        keys = [("hash", _hash_key(record))] + ([("frame", frame)] if frame else [])
        for key in keys:
            first = firsts.setdefault(key, offset)
            a, b = root(first), root(offset)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [root(n) for n in range(len(records))]


def _stars(group: Sequence[int], refused: Callable[[int, int], bool]
           ) -> list[tuple[int, int]]:
    """Every member against the group's oldest; the members the veto will refuse
    against it, again against the oldest of them, and so on until none is left."""
    out: list[tuple[int, int]] = []
    rest = list(group)
    while len(rest) > 1:
        keeper, others = rest[0], rest[1:]
        out += [(keeper, other) for other in others]
        rest = [other for other in others if refused(keeper, other)]
    return out


def twin_pairs(records: Sequence[MemoryRecord], cache: VetoCache | None = None
               ) -> tuple[tuple[int, int, ProposalKind], ...]:
    """(keeper offset, copy offset, kind) for every twin: content-hash pairs first,
    then frame-key pairs, each by offsets.

    A group's members are proposed against its oldest member. Those the veto will
    refuse against it (a copy whose body negates the original's, say) are proposed
    again among themselves, against the oldest of them: two exact copies of a
    correction are still one memory, even though neither folds into what they
    correct. A pair joined only through a third member counts as a frame-key twin.
    """
    veto = (cache or VetoCache()).veto

    def refused(keeper: int, copy: int) -> bool:
        a, b = records[keeper], records[copy]
        return bool(veto(MergeText(a.claim, a.body_text), MergeText(b.claim, b.body_text)))

    groups: dict[int, list[int]] = {}
    for offset, root in enumerate(_twin_groups(records)):
        groups.setdefault(root, []).append(offset)
    by_hash: list[tuple[int, int, ProposalKind]] = []
    by_frame: list[tuple[int, int, ProposalKind]] = []
    for group in groups.values():
        for keeper, copy in _stars(group, refused):
            if _hash_key(records[copy]) == _hash_key(records[keeper]):
                by_hash.append((keeper, copy, "hash"))
            else:
                by_frame.append((keeper, copy, "frame"))
    return (*sorted(by_hash), *sorted(by_frame))


def propose(version: HeadVersion, vectors: VectorCache | None,
            cache: VetoCache | None = None, arrivals: Mapping[str, int] | None = None
            ) -> Proposed:
    """The corpus's members and the pairs offered to the merge filter. ``arrivals``: how
    long each path whose creation stamp ties another's has been on the branch."""
    records = corpus_order(version, arrivals)
    scan = None if vectors is None else scan_neighbours(
        records, vectors, floor=NEAR_DUPLICATE_THRESHOLD, k=MINED_NEIGHBOURS, strict=True)
    return _propose(records, scan, cache)


def _propose(records: Sequence[MemoryRecord], scan: Neighbours | None,
             cache: VetoCache | None) -> Proposed:
    """``propose`` over the records in corpus order and the scan strictly above the
    merge cosine (``None``: no vector plane)."""
    members = tuple(CorpusMember(r.path, n, MergeText(r.claim, r.body_text))
                    for n, r in enumerate(records))
    roots = _twin_groups(records)
    pairs: list[Mined] = []
    kinds: dict[frozenset[str], ProposalKind] = {}
    for keeper, copy, kind in twin_pairs(records, cache):
        pairs.append((members[keeper], members[copy], TWIN_SIMILARITY))
        kinds[frozenset((members[keeper].path, members[copy].path))] = kind
    with_vector = 0
    if scan is not None:
        with_vector = scan.with_vector
        for found in scan.pairs:
            if roots[found.i] == roots[found.j]:
                continue
            a, b = members[found.i], members[found.j]
            pairs.append((a, b, found.similarity))
            kinds[frozenset((a.path, b.path))] = "cosine"
    return Proposed(members, tuple(pairs), kinds, with_vector)


@dataclass(frozen=True, slots=True)
class Components:
    """The night's candidate components (corpus offsets, each in corpus order), oldest
    member first, and what was left out."""

    asked: tuple[tuple[int, ...], ...]
    oversize: int
    """Components over ``DEDUP_COMPONENT_CAP`` members: not asked."""
    deferred: int
    """Components past ``DEDUP_COMPONENTS_PER_NIGHT``: left for a later night."""

    def counts(self) -> dict[str, int]:
        return {"components": len(self.asked), "components_oversize": self.oversize,
                "components_deferred": self.deferred}


def components(size: int, recall: Sequence[Neighbour], roots: Sequence[int]) -> Components:
    """Connected components over the recall pairs united with the twin groups
    (``roots``: each member's twin-group root), among ``size`` members. A component
    that is one twin group is decided by its key and left out."""
    parent = list(range(size))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    def union(a: int, b: int) -> None:
        a, b = root(a), root(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    for n, twin in enumerate(roots):
        union(n, twin)
    for pair in recall:
        union(pair.i, pair.j)
    found: dict[int, list[int]] = {}
    for n in range(size):
        found.setdefault(root(n), []).append(n)
    # Keys are each component's smallest offset, met in ascending order: oldest first.
    open_ = [tuple(g) for g in found.values()
             if len(g) > 1 and len({roots[n] for n in g}) > 1]
    fitting = [g for g in open_ if len(g) <= DEDUP_COMPONENT_CAP]
    asked = tuple(fitting[:DEDUP_COMPONENTS_PER_NIGHT])
    return Components(asked, len(open_) - len(fitting), len(fitting) - len(asked))


@dataclass(frozen=True, slots=True)
class Candidates:
    """The model path's reading of the corpus: the deterministic proposals (as a night
    without a model makes them) and the components to ask about, as rows."""

    proposed: Proposed
    components: Components
    rows: tuple[tuple[Row, ...], ...]


def candidates(version: HeadVersion, vectors: VectorCache | None,
               cache: VetoCache | None = None, arrivals: Mapping[str, int] | None = None
               ) -> Candidates:
    """One scan at the recall floor serves both: its pairs strictly above the merge
    cosine are the deterministic ones (each member's best neighbours above 0.92 are the
    head of its best above 0.86), and all of them feed the components."""
    records = corpus_order(version, arrivals)
    recall = None if vectors is None else scan_neighbours(
        records, vectors, floor=DEDUP_RECALL_FLOOR, k=MINED_NEIGHBOURS)
    merge_scan = None if recall is None else replace(
        recall, pairs=tuple(p for p in recall.pairs if is_near_duplicate(p.similarity)))
    proposed = _propose(records, merge_scan, cache)
    found = components(len(records), () if recall is None else recall.pairs,
                       _twin_groups(records))
    rows = tuple(tuple(Row(proposed.members[n], records[n], number) for n in component)
                 for number, component in enumerate(found.asked, start=1))
    return Candidates(proposed, found, rows)
