"""Entity resolution, the deterministic parts: names, overlap, centroids, one union-find.

An entity merge is a one-way door on stored identity: no later commit separates
two subjects whose memories were fused. So the code here only merges what a
string comparison can prove (a casing or separator change), counts the band it
cannot settle for review, and computes per-name centroids as evidence for the
model, never as a threshold. The canonical name of a merge is chosen here by
file counts, never by a model, because it is every rewrite's target.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeAlias

import numpy as np
import numpy.typing as npt
from returns.result import Failure, Result, Success

from memhtml.domain.errors import ClusterRefused
from memhtml.domain.thresholds import AUTO_MERGE_THRESHOLD, REVIEW_THRESHOLD

NamePair: TypeAlias = tuple[str, str]
Centroid: TypeAlias = npt.NDArray[np.float64]

_WHITESPACE: Final = re.compile(r"\s+")


def normalize_entity_name(name: str) -> str:
    """NFC, lowercase, whitespace runs collapsed to one space, trimmed."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", name).lower()).strip()


def name_similarity(left: str, right: str) -> float:
    """Longest common subsequence length over the mean length, in [0, 1].

    Chosen over edit distance because it grows with every shared character in
    order, which is exactly what a separator or casing variant shares:
    ``checkout-api`` against ``checkout api`` is 0.92, against ``payments-api``
    0.5. Its blind spot, a short name against its full form (``laith`` against
    ``laith al-saadoon`` is 0.476), is left to the centroid-informed model.
    """
    if left == right:
        return 1.0
    if not left or not right:
        return 0.0
    previous = [0] * (len(right) + 1)
    for ch in left:
        current = [0]
        for j, other in enumerate(right):
            if ch == other:
                current.append(previous[j] + 1)
            else:
                current.append(max(previous[j + 1], current[j]))
        previous = current
    return 2 * previous[-1] / (len(left) + len(right))


@dataclass(frozen=True, slots=True)
class NormalizedNames:
    """The exact-merge pass: each raw spelling's normalized form and the summed counts."""

    canonical_of: Mapping[str, str]
    """Raw name to normalized name, for every raw name whose spelling changes."""
    counts: Mapping[str, int]
    """Normalized name to the number of files claiming it, in name order."""


def normalize_names(raw_counts: Mapping[str, int]) -> NormalizedNames:
    """Merge the names that normalize together; an empty normalized name is dropped."""
    rewrites: dict[str, str] = {}
    counts: dict[str, int] = {}
    for raw in sorted(raw_counts):
        name = normalize_entity_name(raw)
        if not name:
            continue
        counts[name] = counts.get(name, 0) + raw_counts[raw]
        if name != raw:
            rewrites[raw] = name
    return NormalizedNames(
        MappingProxyType(rewrites), MappingProxyType({n: counts[n] for n in sorted(counts)})
    )


@dataclass(frozen=True, slots=True)
class CharacterPairs:
    """Every name pair split at the two overlap thresholds, in sorted pair order."""

    auto: tuple[NamePair, ...]
    """At or above ``AUTO_MERGE_THRESHOLD``: merged with no model."""
    review: tuple[NamePair, ...]
    """In [``REVIEW_THRESHOLD``, ``AUTO_MERGE_THRESHOLD``): counted, never merged here."""


def character_pairs(names: Iterable[str]) -> CharacterPairs:
    """All pairs of distinct names, each ``(smaller, larger)``, split by overlap band."""
    ordered = sorted(set(names))
    auto: list[NamePair] = []
    review: list[NamePair] = []
    for i, left in enumerate(ordered):
        for right in ordered[i + 1 :]:
            # LCS can be at most the shorter length, so a pair whose lengths are
            # too far apart cannot reach the review band; skip the quadratic DP.
            if 2 * min(len(left), len(right)) < REVIEW_THRESHOLD * (len(left) + len(right)):
                continue
            similarity = name_similarity(left, right)
            if similarity >= AUTO_MERGE_THRESHOLD:
                auto.append((left, right))
            elif similarity >= REVIEW_THRESHOLD:
                review.append((left, right))
    return CharacterPairs(tuple(auto), tuple(review))


def _outranks(name: str, other: str, counts: Mapping[str, int]) -> bool:
    weight, other_weight = counts.get(name, 0), counts.get(other, 0)
    return weight > other_weight or (weight == other_weight and name < other)


def union_pairs(counts: Mapping[str, int], pairs: Iterable[NamePair]) -> Mapping[str, str]:
    """One union-find over every merge source; returns alias to canonical, in alias order.

    The character pass, declared aliases and the model all feed this one call,
    so ``a~b`` from one source and ``b~c`` from another land in one cluster with
    one surviving name, and no two passes can disagree about it. The survivor
    is the name with the most files, ties to the lexicographically smaller.
    Since that rule is a total order, the result does not depend on pair order.
    """
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        root = name
        while parent.get(root, root) != root:
            root = parent[root]
        while name != root:  # path compression
            parent[name], name = root, parent[name]
        return root

    for left, right in pairs:
        a, b = find(left), find(right)
        if a == b:
            continue
        if _outranks(a, b, counts):
            parent[b] = a
        else:
            parent[a] = b
    names = sorted(set(counts) | set(parent))
    return MappingProxyType({n: find(n) for n in names if find(n) != n})


@dataclass(frozen=True, slots=True)
class ProposedMerge:
    """One rewrite: every ``alias`` claim becomes ``canonical``."""

    alias: str
    canonical: str


def decompose_cluster(
    members: Iterable[str], counts: Mapping[str, int]
) -> tuple[ProposedMerge, ...]:
    """A cluster as merges onto its heaviest member (ties: smaller name), in alias order."""
    distinct = sorted(set(members))
    if len(distinct) < 2:
        return ()
    canonical = distinct[0]
    for name in distinct[1:]:
        if _outranks(name, canonical, counts):
            canonical = name
    return tuple(ProposedMerge(n, canonical) for n in distinct if n != canonical)


def validate_cluster(
    members: Sequence[str], canonical_key: str
) -> Result[tuple[str, ...], ClusterRefused]:
    """Accept a model's cluster only when its named canonical is one of its own members.

    The model's canonical is used for nothing else; a cluster naming an outsider
    contradicts itself and is dropped rather than applied.
    """
    distinct = tuple(sorted(set(members)))
    if canonical_key not in distinct:
        return Failure(ClusterRefused(distinct, canonical_key, "canonical is not a member"))
    return Success(distinct)


AliasGroup: TypeAlias = frozenset[str]


def alias_pairs(groups: Iterable[AliasGroup], names: Iterable[str]) -> tuple[NamePair, ...]:
    """Pairs of known names some declaration says are one subject.

    A pair the character pass already auto-merges is left out so one merge is
    not reported twice.
    """
    known = set(names)
    out: set[NamePair] = set()
    for group in groups:
        present = sorted(known.intersection(group))
        for i, left in enumerate(present):
            for right in present[i + 1 :]:
                if name_similarity(left, right) < AUTO_MERGE_THRESHOLD:
                    out.add((left, right))
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class EntityClaim:
    """One file naming one entity: the unit centroids are built from."""

    entity_type: str
    name: str
    path: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class EntityCentroid:
    """One normalized name's evidence: how many files, a few titles, where it sits."""

    name: str
    memories: int
    titles: tuple[str, ...]
    vector: Centroid | None
    """The L2-normalized mean of its files' vectors; ``None`` when none has one."""


ENTITY_SAMPLE_TITLES: Final = 3


def entity_centroids(
    claims: Iterable[EntityClaim],
    vector_for_path: Mapping[str, npt.NDArray[np.floating]],
    sample_titles: int = ENTITY_SAMPLE_TITLES,
) -> Mapping[str, tuple[EntityCentroid, ...]]:
    """One centroid per (type, normalized name), in one pass over the claims: O(files).

    Members are summed in sorted path order because float addition is not
    associative and a centroid summed in arrival order would change its bytes,
    and so the neighbor lists shown to the model, from run to run. A file
    claiming one name under two spellings counts once.
    """
    by_type: dict[str, dict[str, dict[str, str]]] = {}
    for claim in claims:
        name = normalize_entity_name(claim.name)
        if name:
            by_type.setdefault(claim.entity_type, {}).setdefault(name, {})[claim.path] = claim.title
    out: dict[str, tuple[EntityCentroid, ...]] = {}
    for entity_type in sorted(by_type):
        names = by_type[entity_type]
        centroids = []
        for name in sorted(names):
            paths = sorted(names[name])
            titles = tuple(
                names[name][p].strip() for p in paths[:sample_titles] if names[name][p].strip()
            )
            centroids.append(
                EntityCentroid(name, len(paths), titles, _mean_unit(paths, vector_for_path))
            )
        out[entity_type] = tuple(centroids)
    return MappingProxyType(out)


def _mean_unit(
    paths: Sequence[str], vector_for_path: Mapping[str, npt.NDArray[np.floating]]
) -> Centroid | None:
    total: Centroid | None = None
    for path in paths:
        vector = vector_for_path.get(path)
        if vector is None:
            continue
        if total is None:
            total = np.zeros(vector.shape[0], dtype=np.float64)
        width = min(total.shape[0], vector.shape[0])
        # Accumulated in float64: the float32 inputs would round every partial sum.
        total[:width] += vector[:width]
    if total is None:
        return None
    norm = float(np.sqrt(np.dot(total, total)))
    if norm == 0.0 or not np.isfinite(norm):
        return None
    return total / norm


@dataclass(frozen=True, slots=True)
class CentroidNeighbor:
    """Another name of the same type and the cosine between the two centroids."""

    name: str
    similarity: float


def nearest_centroids(
    centroids: Sequence[EntityCentroid], of: str, k: int
) -> tuple[CentroidNeighbor, ...]:
    """The ``k`` nearest same-type names to ``of``: similarity descending, then name."""
    subject = next((c for c in centroids if c.name == of), None)
    if subject is None or subject.vector is None:
        return ()
    scored = [
        CentroidNeighbor(c.name, float(np.dot(subject.vector, c.vector)))
        for c in centroids
        if c.name != of and c.vector is not None
    ]
    scored.sort(key=lambda n: (-n.similarity, n.name))
    return tuple(scored[: max(0, k)])


@dataclass(frozen=True, slots=True)
class Resolution:
    """The deterministic pre-pass over one entity type's names."""

    names: NormalizedNames
    alias_to_canonical: Mapping[str, str]
    review: tuple[NamePair, ...]
    """Review-band pairs not already joined by a merge."""


def resolve_names(
    raw_counts: Mapping[str, int],
    alias_groups: Iterable[Iterable[str]] = (),
    extra_pairs: Iterable[NamePair] = (),
) -> Resolution:
    """Normalize, then union every merge source in one union-find.

    ``alias_groups`` are the names each person file declares one subject (its
    own name plus its ``memhtml-alias`` values), as spelled. ``extra_pairs`` is
    where model-proposed pairs that cleared their gates join; with none, this is
    the whole credential-free phase.
    """
    names = normalize_names(raw_counts)
    character = character_pairs(names.counts)
    declared = alias_pairs(
        (frozenset(normalize_entity_name(n) for n in g) for g in alias_groups), names.counts
    )
    pairs = [*character.auto, *declared, *extra_pairs]
    merged = union_pairs(names.counts, pairs)
    review = tuple((a, b) for a, b in character.review if merged.get(a, a) != merged.get(b, b))
    return Resolution(names, merged, review)
