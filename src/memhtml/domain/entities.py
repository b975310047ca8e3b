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
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

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


def match_masks(pattern: str) -> dict[str, int]:
    """Each character of ``pattern`` to the bit mask of the positions holding it."""
    masks: dict[str, int] = {}
    for position, ch in enumerate(pattern):
        masks[ch] = masks.get(ch, 0) | (1 << position)
    return masks


def lcs_length(left: str, right: str, masks: Mapping[str, int] | None = None) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison-Dix, in
    Hyyro's form).

    One Python integer holds a whole DP row as bits, one per character of
    ``left``; each character of ``right`` updates the row in four integer
    operations, so a pair costs ``len(right)`` steps instead of the DP's
    ``len(left) * len(right)`` cells. A zero bit marks a position where the
    subsequence grew, so the length is the count of zeros. ``masks`` (from
    ``match_masks(left)``) lets a caller build them once per name.
    """
    width = len(left)
    if not width or not right:
        return 0
    table = match_masks(left) if masks is None else masks
    row = (1 << width) - 1
    for ch in right:
        matched = row & table.get(ch, 0)
        # The addition's carry past the top bit never reaches the low bits, and
        # ``matched`` is a subset of ``row``, so the subtraction borrows nothing:
        # the low ``width`` bits are exact without masking every step.
        row = (row + matched) | (row - matched)
    return width - (row & ((1 << width) - 1)).bit_count()


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
    return 2 * lcs_length(left, right) / (len(left) + len(right))


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


GuardReason: TypeAlias = Literal["digits", "one-character"]
ReviewReason: TypeAlias = Literal["band", "digits", "one-character"]

_NAME_TOKEN: Final = re.compile(r"[^\W_]+")
_DIGIT_RUN: Final = re.compile(r"\d+")


def merge_guard(left: str, right: str) -> GuardReason | None:
    """Why two names a character ratio would auto-merge must go to review instead.

    A character ratio cannot tell a variant spelling from a sibling: ``postgres-14``
    against ``postgres-15`` scores 0.909, ``us-east-1`` against ``us-east-2`` and
    ``service-a`` against ``service-b`` 0.889, all above the auto-merge line, and
    each pair names two things. So two names whose digit runs differ (a version, a
    region, a shard), or whose words differ only in one-character words (a suffix
    letter), are never merged on characters alone. Names that differ only in case or
    separators have the same words and pass.
    """
    if _DIGIT_RUN.findall(left) != _DIGIT_RUN.findall(right):
        return "digits"
    mine, theirs = Counter(_NAME_TOKEN.findall(left)), Counter(_NAME_TOKEN.findall(right))
    differing = (mine - theirs) + (theirs - mine)
    if differing and all(len(token) == 1 for token in differing):
        return "one-character"
    return None


@dataclass(frozen=True, slots=True)
class CharacterPairs:
    """Every name pair split at the two overlap thresholds, in sorted pair order."""

    auto: tuple[NamePair, ...]
    """At or above ``AUTO_MERGE_THRESHOLD`` and not guarded: merged with no model."""
    review: tuple[NamePair, ...]
    """In [``REVIEW_THRESHOLD``, ``AUTO_MERGE_THRESHOLD``): counted, never merged here."""
    guarded: tuple[NamePair, ...] = ()
    """At or above ``AUTO_MERGE_THRESHOLD`` but refused by ``merge_guard``: for review."""


_COUNT_COLUMNS: Final = 64
"""Characters counted one column each for the prefilter; rarer ones share one column.
Sharing a column can only raise the bound (min(a+b, c+d) >= min(a, c) + min(b, d)),
so the filter stays safe for any alphabet while its matrix stays narrow."""


def _reach(lengths: Sequence[int]) -> dict[int, int]:
    """For each length, the longest partner length that could still reach the review
    band: the LCS is at most the shorter name, so ``2 * short / (short + long)``
    bounds the ratio."""
    distinct = sorted(set(lengths))
    reach: dict[int, int] = {}
    for short in distinct:
        partners = (m for m in distinct if m >= short)
        reach[short] = max(m for m in partners if 2 * short >= REVIEW_THRESHOLD * (short + m))
    return reach


def _count_matrix(names: Sequence[str]) -> npt.NDArray[np.int32]:
    frequency = Counter(ch for name in names for ch in name)
    common = sorted(frequency, key=lambda ch: (-frequency[ch], ch))[: _COUNT_COLUMNS - 1]
    column = {ch: k for k, ch in enumerate(common)}
    shared = len(common)
    counts = np.zeros((len(names), shared + 1), dtype=np.int32)
    for row, name in enumerate(names):
        for ch, n in Counter(name).items():
            counts[row, column.get(ch, shared)] += n
    return counts


def character_pairs(names: Iterable[str]) -> CharacterPairs:
    """All pairs of distinct names, each ``(smaller, larger)``, split by overlap band.

    The same answer as scoring every pair with ``name_similarity``, reached without
    scoring most of them. Names are walked shortest first, and each is compared only
    with the names whose length could still reach the review band (a contiguous run
    of the length order, so impossible pairs are never visited). Of those, a pair is
    scored only when the shared character counts (an upper bound on the LCS) could
    reach the band: one vectorized pass per name. The survivors get the bit-parallel
    LCS. Measured on these machines, 1,000 names took 20 s as a pairwise DP.
    """
    ordered = sorted(set(names))
    by_length = sorted(ordered, key=lambda name: (len(name), name))
    lengths = np.fromiter((len(n) for n in by_length), dtype=np.int64, count=len(by_length))
    reach = _reach(lengths.tolist())
    counts = _count_matrix(by_length)
    auto: list[NamePair] = []
    review: list[NamePair] = []
    guarded: list[NamePair] = []
    for row, left in enumerate(by_length):
        width = len(left)
        if width == 0:
            continue
        end = int(np.searchsorted(lengths, reach[width], side="right"))
        if end <= row + 1:
            continue
        shared = np.minimum(counts[row], counts[row + 1 : end]).sum(axis=1)
        # The same division the ratio uses, so the bound is compared like the ratio.
        bound = (2 * shared) / (width + lengths[row + 1 : end])
        candidates = np.flatnonzero(bound >= REVIEW_THRESHOLD) + row + 1
        if not candidates.size:
            continue
        masks = match_masks(left)
        for other in candidates.tolist():
            right = by_length[other]
            similarity = 2 * lcs_length(left, right, masks) / (width + len(right))
            if similarity < REVIEW_THRESHOLD:
                continue
            pair = (left, right) if left < right else (right, left)
            if similarity < AUTO_MERGE_THRESHOLD:
                review.append(pair)
            elif merge_guard(left, right) is None:
                auto.append(pair)
            else:
                guarded.append(pair)
    return CharacterPairs(tuple(sorted(auto)), tuple(sorted(review)), tuple(sorted(guarded)))


_WORD: Final = re.compile(r"[^\W_]+")


def name_words(name: str) -> int:
    """How many words a name has (runs of letters and digits): ``laith al-saadoon``
    has three, ``laith`` one."""
    return len(_WORD.findall(name))


def name_fullness(name: str) -> tuple[int, int]:
    """How full a name is: its words, then its letters and digits, so ``laith
    al-saadoon`` is fuller than ``laith`` and than ``l. al-saadoon``."""
    words = _WORD.findall(name)
    return len(words), sum(len(word) for word in words)


def _outranks(name: str, other: str, counts: Mapping[str, int], fullest: bool = False
              ) -> bool:
    if fullest:
        full, other_full = name_fullness(name), name_fullness(other)
        if full != other_full:
            return full > other_full
    weight, other_weight = counts.get(name, 0), counts.get(other, 0)
    return weight > other_weight or (weight == other_weight and name < other)


def union_pairs(counts: Mapping[str, int], pairs: Iterable[NamePair], *,
                fullest: bool = False) -> Mapping[str, str]:
    """One union-find over every merge source; returns alias to canonical, in alias order.

    The character pass, declared aliases and the model all feed this one call,
    so ``a~b`` from one source and ``b~c`` from another land in one cluster with
    one surviving name, and no two passes can disagree about it. The survivor
    is the name with the most files, ties to the lexicographically smaller; with
    ``fullest`` (a person's names) the fullest name comes first (``name_fullness``:
    most words, then most letters), so a full name is never rewritten to a short form
    of it (``laith``, ``l. al-saadoon``) however many files use the short one. Since
    either rule is a total order, the result does not depend on pair order.
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
        if _outranks(a, b, counts, fullest):
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
    not reported twice; a pair ``merge_guard`` holds back stays in, because a
    declaration is what the guard was waiting for.
    """
    known = set(names)
    out: set[NamePair] = set()
    for group in groups:
        present = sorted(known.intersection(group))
        for i, left in enumerate(present):
            for right in present[i + 1 :]:
                if (
                    name_similarity(left, right) < AUTO_MERGE_THRESHOLD
                    or merge_guard(left, right) is not None
                ):
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
class ReviewCandidate:
    """A name pair the pre-pass will not merge and a person should look at.

    ``reason`` is ``band`` for a ratio in [``REVIEW_THRESHOLD``,
    ``AUTO_MERGE_THRESHOLD``), or the ``merge_guard`` reason that kept a pair above
    the auto-merge line from merging. ``similarity`` is the measured ratio, the
    evidence a review task states.
    """

    left: str
    right: str
    similarity: float
    reason: ReviewReason

    @property
    def pair(self) -> NamePair:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class Resolution:
    """The deterministic pre-pass over one entity type's names."""

    names: NormalizedNames
    alias_to_canonical: Mapping[str, str]
    review_candidates: tuple[ReviewCandidate, ...]
    """Review-band and guarded pairs not already joined by a merge, in pair order."""

    @property
    def review(self) -> tuple[NamePair, ...]:
        """The review candidates as bare pairs."""
        return tuple(c.pair for c in self.review_candidates)


def resolve_names(
    raw_counts: Mapping[str, int],
    alias_groups: Iterable[Iterable[str]] = (),
    extra_pairs: Iterable[NamePair] = (),
    *,
    fullest: bool = False,
) -> Resolution:
    """Normalize, then union every merge source in one union-find.

    ``alias_groups`` are the names each person file declares one subject (its
    own name plus its ``memhtml-alias`` values), as spelled. ``extra_pairs`` is
    where model-proposed pairs that cleared their gates join; with none, this is
    the whole credential-free phase. A declared alias is a person's assertion of
    identity, so ``merge_guard`` does not apply to it; it applies to the character
    pass only. ``fullest`` picks survivors by words first (``union_pairs``).
    """
    names = normalize_names(raw_counts)
    character = character_pairs(names.counts)
    declared = alias_pairs(
        (frozenset(normalize_entity_name(n) for n in g) for g in alias_groups), names.counts
    )
    pairs = [*character.auto, *declared, *extra_pairs]
    merged = union_pairs(names.counts, pairs, fullest=fullest)
    reasons: dict[NamePair, ReviewReason] = dict.fromkeys(character.review, "band")
    for a, b in character.guarded:
        reasons[(a, b)] = merge_guard(a, b) or "band"
    review = tuple(
        ReviewCandidate(a, b, name_similarity(a, b), reasons[(a, b)])
        for a, b in sorted(reasons)
        if merged.get(a, a) != merged.get(b, b)
    )
    return Resolution(names, merged, review)
