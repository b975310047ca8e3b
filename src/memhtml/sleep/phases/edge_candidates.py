"""Edge-typing's candidates (stage 1, no model): the pairs of related memories the model
is asked to type, found by two arms (relationship-mining's derived edges and a
shared-entity scan), pairs already linked left out, capped, and sorted by the deepest
directory both paths share (``candidates``).

Its own module because finding the pairs is a pure reading of the corpus, its mined
edges and its vectors, apart from the question and from what code promotes of the
answers; ``edge_typing`` asks about the pairs this returns. The rules are in
``edge_typing``'s module docstring (stages 1 and 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.domain.thresholds import (
    EDGE_TYPING_CANDIDATES,
    EDGE_TYPING_COSINE,
    EDGE_TYPING_K,
    MINING_COSINE,
)
from memhtml.head import HeadVersion, VectorCache
from memhtml.sleep.neighbours import corpus_order, scan_neighbours
from memhtml.sleep.phase import MinedEdge

Arm: TypeAlias = Literal["mined", "entity"]


@dataclass(frozen=True, slots=True)
class Pair:
    """One candidate: two active non-task memories (``a`` < ``b``, tree paths), their
    claims as the model reads them, their cosine, and the arm that found them."""

    a: str
    b: str
    text_a: str
    text_b: str
    similarity: float
    arm: Arm

    @property
    def key(self) -> str:
        """The pair's canonical spelling: its counter key and its task's finding."""
        return f"{self.a}|{self.b}"


def shared_directory(a: str, b: str) -> tuple[str, ...]:
    """The deepest directory both paths sit under, as its components."""
    common: list[str] = []
    for left, right in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if left != right:
            break
        common.append(left)
    return tuple(common)


def _text(record: MemoryRecord) -> str:
    # Whitespace collapsed, so a claim cannot add a line of its own to its row.
    return " ".join((record.claim or record.title).split())


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def linked_pairs(version: HeadVersion) -> frozenset[tuple[str, str]]:
    """Every unordered pair of paths an authored link joins, whatever its rel."""
    return frozenset(_ordered(record.path, to_tree_path(link.href.strip()))
                     for record in version.records() for link in record.links)


def entity_pairs(members: Sequence[MemoryRecord], cache: VectorCache
                 ) -> dict[tuple[str, str], float]:
    """For each entity value two or more members carry, each holder's ``EDGE_TYPING_K``
    nearest fellow holders at cosine ``>= EDGE_TYPING_COSINE``; each pair once, with
    its cosine. The scan runs within the holders, so a nearer member naming another
    entity never crowds out one sharing this one."""
    holders: dict[str, list[MemoryRecord]] = {}
    for record in members:
        for entity in sorted(set(record.entities)):
            holders.setdefault(entity, []).append(record)
    found: dict[tuple[str, str], float] = {}
    for entity in sorted(holders):
        group = holders[entity]
        if len(group) < 2:
            continue
        scan = scan_neighbours(group, cache, floor=EDGE_TYPING_COSINE, k=EDGE_TYPING_K)
        for near in scan.pairs:
            found[_ordered(group[near.i].path, group[near.j].path)] = near.similarity
    return found


@dataclass(frozen=True, slots=True)
class Candidates:
    """The pairs to type, in batch order, and how they were found."""

    pairs: tuple[Pair, ...]
    mined: int
    shared_entity: int
    linked: int
    over_cap: int


def candidates(version: HeadVersion, mined: Iterable[MinedEdge] | None,
               vectors: VectorCache | None) -> Candidates:
    """Stage 1 and the sort of stage 2 (see the module docstring)."""
    members = corpus_order(version)
    by_path = {record.path: record for record in members}
    found: dict[tuple[str, str], tuple[float, Arm]] = {}
    for edge in mined or ():
        pair = _ordered(edge.source, edge.target)
        if (edge.similarity >= MINING_COSINE and pair[0] != pair[1]
                and pair[0] in by_path and pair[1] in by_path):
            found[pair] = (edge.similarity, "mined")
    if vectors is not None:
        for pair, similarity in entity_pairs(members, vectors).items():
            found.setdefault(pair, (similarity, "entity"))
    linked = linked_pairs(version)
    kept = {pair: got for pair, got in found.items() if pair not in linked}
    strongest = sorted(kept, key=lambda pair: (-kept[pair][0], pair))
    chosen = sorted(strongest[:EDGE_TYPING_CANDIDATES],
                    key=lambda pair: (shared_directory(*pair), pair))
    pairs = tuple(Pair(a, b, _text(by_path[a]), _text(by_path[b]), *kept[(a, b)])
                  for a, b in chosen)
    arms = [arm for _, arm in kept.values()]
    return Candidates(pairs, arms.count("mined"), arms.count("entity"),
                      len(found) - len(kept), max(0, len(kept) - EDGE_TYPING_CANDIDATES))
