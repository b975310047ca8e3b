"""Near-duplicate merges: the divergence veto, orientation, and the in-batch role guard.

Cosine similarity is geometric, and embedders are weakest on exactly the tokens
that carry polarity and tell variants apart: "the deploy step is safe" and "the
deploy step is NOT safe" sit above the near-duplicate cosine. A merge keeps the
older file, so folding on cosine alone would fold a newer correction into the
older wrong memory and bring back the error the correction was written to fix.
The veto is deterministic and cheap, and it filters every proposal, a model's
included: binding a model changes which pairs are proposed, never which pairs
may be committed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from memhtml.domain.thresholds import MAX_MERGE_PAIRS, NEAR_DUPLICATE_THRESHOLD

VetoPredicate: TypeAlias = Literal["negation", "numeric", "variant"]
VETO_PREDICATES: Final[tuple[VetoPredicate, ...]] = ("negation", "numeric", "variant")

ProposalSource: TypeAlias = Literal["model", "cosine"]

NEGATION_MARKERS: Final = frozenset(
    {
        "not", "no", "never", "none", "cannot", "without", "neither", "nor",
        "avoid", "disallow", "disallowed", "forbidden", "unsafe", "invalid",
        "false", "fail", "fails", "failed", "deny", "denied", "reject", "rejected",
    }
)  # fmt: skip
"""Polarity words. Exactly one side carrying any of them is a polarity flip."""

VARIANT_QUALIFIERS: Final = frozenset(
    {"pro", "max", "beta", "alpha", "rc", "preview", "legacy", "deprecated", "experimental"}
)
"""Words that name a different product or release ("M1" against "M1 Pro")."""

# Contractions are expanded so "isn't" yields the marker "not" and the marker set
# stays small and word-bounded. The specific forms come first in the alternation;
# the bare "n't" catches the rest.
_CONTRACTIONS: Final = {
    "isn't": "is not", "aren't": "are not", "wasn't": "was not", "weren't": "were not",
    "don't": "do not", "doesn't": "does not", "didn't": "did not", "won't": "will not",
    "can't": "can not", "cannot": "can not", "couldn't": "could not",
    "shouldn't": "should not", "wouldn't": "would not", "mustn't": "must not",
    "haven't": "have not", "hasn't": "has not", "hadn't": "had not", "n't": " not",
}  # fmt: skip
_CONTRACTION_RE: Final = re.compile("|".join(re.escape(k) for k in _CONTRACTIONS))
_TOKEN_RE: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")


def _tokens(text: str) -> list[str]:
    folded = text.lower() if text.isascii() else unicodedata.normalize("NFC", text).lower()
    folded = folded.replace("\u2019", "'")
    # Most texts hold no contraction; skipping the substitution halves their cost.
    if "'" in folded or "cannot" in folded:
        folded = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(0)], folded)
    return _TOKEN_RE.findall(folded)


def _negated(tokens: Iterable[str]) -> bool:
    return not NEGATION_MARKERS.isdisjoint(tokens)


def _numbers(tokens: Iterable[str]) -> frozenset[str]:
    # A token is letters, digits and dot-digit runs, so "not all letters" means "has a digit".
    return frozenset(t for t in tokens if not t.isalpha())


def _qualifiers(tokens: Iterable[str]) -> frozenset[str]:
    return VARIANT_QUALIFIERS.intersection(tokens)


def negation_divergent(text_a: str, text_b: str) -> bool:
    """Exactly one side negates. Both or neither negating is agreement."""
    return _negated(_tokens(text_a)) != _negated(_tokens(text_b))


def numeric_token_divergent(text_a: str, text_b: str) -> bool:
    """The sides carry different sets of tokens containing a digit (dates, versions, counts)."""
    return _numbers(_tokens(text_a)) != _numbers(_tokens(text_b))


def variant_qualifier_divergent(text_a: str, text_b: str) -> bool:
    """The sides carry different sets of variant qualifiers."""
    return _qualifiers(_tokens(text_a)) != _qualifiers(_tokens(text_b))


@dataclass(frozen=True, slots=True)
class MergeText:
    """What the veto reads of one memory: its one-line claim and its article text."""

    claim: str
    article: str = ""


@dataclass(frozen=True, slots=True)
class VetoFeatures:
    """The veto's view of one text, computed once however many pairs it is in.

    The numeric set comes from the claim alone: a body cites its evidence, and
    two honest statements of one fact almost never cite the same date, ticket
    or exit code (read over whole articles, that predicate vetoed every
    candidate it saw). Negation and qualifiers read claim and article together:
    their markers are rare, load-bearing words, and a flip stated only in the
    body is still a contradiction.
    """

    negated: bool
    numbers: frozenset[str]
    qualifiers: frozenset[str]


def veto_features(text: MergeText) -> VetoFeatures:
    """Tokenize one memory for the veto."""
    claim = _tokens(text.claim)
    # No token spans the line break, so the joined text's tokens are the two lists.
    joined = claim + _tokens(text.article) if text.article else claim
    return VetoFeatures(
        negated=_negated(joined),
        numbers=_numbers(claim),
        qualifiers=_qualifiers(joined),
    )


def _fired(negation: bool, numeric: bool, variant: bool) -> tuple[VetoPredicate, ...]:
    return tuple(
        name
        for name, fired in zip(VETO_PREDICATES, (negation, numeric, variant), strict=True)
        if fired
    )


# All eight answers built once: the veto runs over every candidate pair of a corpus.
_FIRED: Final = {
    (a, b, c): _fired(a, b, c) for a in (False, True) for b in (False, True) for c in (False, True)
}


def divergences(a: VetoFeatures, b: VetoFeatures) -> tuple[VetoPredicate, ...]:
    """The predicates that fire, in ``VETO_PREDICATES`` order. Symmetric in ``a`` and ``b``."""
    return _FIRED[a.negated != b.negated, a.numbers != b.numbers, a.qualifiers != b.qualifiers]


def merge_veto(a: MergeText, b: MergeText) -> tuple[VetoPredicate, ...]:
    """Why two memories must not merge; empty when nothing diverges."""
    return divergences(veto_features(a), veto_features(b))


def merge_vetoed(a: MergeText, b: MergeText) -> bool:
    """The veto: any one of the three predicates firing refuses the merge."""
    return bool(merge_veto(a, b))


class VetoCache:
    """Features memoized per distinct text, for scoring many pairs over one corpus."""

    __slots__ = ("_features",)

    def __init__(self) -> None:
        self._features: dict[tuple[str, str], VetoFeatures] = {}

    def features(self, text: MergeText) -> VetoFeatures:
        # Keyed on the two strings, whose hashes Python caches, rather than on
        # the dataclass, whose generated __hash__ rebuilds a tuple in Python.
        key = (text.claim, text.article)
        found = self._features.get(key)
        if found is None:
            found = veto_features(text)
            self._features[key] = found
        return found

    def veto(self, a: MergeText, b: MergeText) -> tuple[VetoPredicate, ...]:
        return divergences(self.features(a), self.features(b))


def is_near_duplicate(similarity: float) -> bool:
    """Strictly above the near-duplicate cosine: at exactly 0.92 a pair is not proposed."""
    return similarity > NEAR_DUPLICATE_THRESHOLD


@dataclass(frozen=True, slots=True)
class CorpusMember:
    """A candidate file and its offset in the oldest-first corpus order."""

    path: str
    offset: int
    text: MergeText | None = None


@dataclass(frozen=True, slots=True)
class MergeProposal:
    """One oriented proposal: fold ``drop_path`` into ``keep_path``.

    ``similarity`` is the cosine for a mined pair and ``None`` for a pair a
    model's group implies. Without both texts the veto cannot read the pair
    and does not fire.
    """

    keep_path: str
    drop_path: str
    source: ProposalSource
    similarity: float | None = None
    keep_text: MergeText | None = None
    drop_text: MergeText | None = None


def _older_first(a: CorpusMember, b: CorpusMember) -> tuple[CorpusMember, CorpusMember]:
    return (a, b) if (a.offset, a.path) <= (b.offset, b.path) else (b, a)


def orient(a: CorpusMember, b: CorpusMember, similarity: float) -> MergeProposal:
    """A mined pair as a proposal whose keeper is the older file (ties: smaller path)."""
    keep, drop = _older_first(a, b)
    return MergeProposal(keep.path, drop.path, "cosine", similarity, keep.text, drop.text)


def group_proposals(members: Sequence[CorpusMember]) -> tuple[MergeProposal, ...]:
    """A model's group as proposals: every member folds into the oldest one.

    The model says which memories are one memory; it never picks the keeper,
    which stays arithmetic over corpus order.
    """
    distinct = sorted({m.path: m for m in members}.values(), key=lambda m: (m.offset, m.path))
    if len(distinct) < 2:
        return ()
    keeper = distinct[0]
    return tuple(
        MergeProposal(keeper.path, m.path, "model", None, keeper.text, m.text) for m in distinct[1:]
    )


def merge_candidates(
    groups: Sequence[Sequence[CorpusMember]],
    mined: Sequence[tuple[CorpusMember, CorpusMember, float]],
) -> tuple[MergeProposal, ...]:
    """Model groups first, then the mined near-duplicates no group already proposed.

    Groups first so that, where the two disagree, the model's answer claims the
    paths (it read both files; the cosine read neither). Every mined pair is still
    offered, so binding a model never makes a run fold less than the cosine alone.
    """
    proposals = [p for group in groups for p in group_proposals(group)]
    seen = {frozenset((p.keep_path, p.drop_path)) for p in proposals}
    for a, b, similarity in mined:
        if not is_near_duplicate(similarity):
            continue
        key = frozenset((a.path, b.path))
        if key in seen:
            continue
        seen.add(key)
        proposals.append(orient(a, b, similarity))
    return tuple(proposals)


@dataclass(frozen=True, slots=True)
class MergeDecision:
    """A merge to commit: ``keep_path`` gains a supersedes link, ``drop_path`` is archived."""

    keep_path: str
    drop_path: str
    source: ProposalSource
    similarity: float | None


@dataclass(frozen=True, slots=True)
class VetoedProposal:
    """A refused proposal and the predicates that refused it, for the review task."""

    proposal: MergeProposal
    predicates: tuple[VetoPredicate, ...]


@dataclass(frozen=True, slots=True)
class MergeOutcomes:
    """Every proposal accounted for, each in exactly one bucket."""

    committed: tuple[MergeDecision, ...]
    vetoed: tuple[VetoedProposal, ...]
    role_guarded: tuple[MergeProposal, ...]
    self_merges: int
    capped: int


def merge_outcomes(
    proposals: Sequence[MergeProposal],
    max_pairs: int = MAX_MERGE_PAIRS,
    cache: VetoCache | None = None,
) -> MergeOutcomes:
    """Filter proposals, in order, through self-merge, veto, role guard and cap.

    The role guard fixes each committed pair's roles for the batch. A dropped
    file can be neither dropped again nor a later keeper, and a keeper cannot
    later be dropped: given (gf keeps a) then (b keeps gf), both would commit,
    and a's content would be superseded into a file the same batch archives. A
    keeper may keep again, so a group of N folds its N-1 duplicates in one run.
    The first proposal to claim a path wins, so the result depends on input
    order alone.
    """
    veto = (cache or VetoCache()).veto
    committed: list[MergeDecision] = []
    vetoed: list[VetoedProposal] = []
    guarded: list[MergeProposal] = []
    kept: set[str] = set()
    dropped: set[str] = set()
    self_merges = 0
    for index, p in enumerate(proposals):
        if len(committed) >= max_pairs:
            return MergeOutcomes(
                tuple(committed), tuple(vetoed), tuple(guarded), self_merges,
                len(proposals) - index,
            )  # fmt: skip
        if p.keep_path == p.drop_path:
            self_merges += 1
            continue
        if p.keep_text is not None and p.drop_text is not None:
            fired = veto(p.keep_text, p.drop_text)
            if fired:
                vetoed.append(VetoedProposal(p, fired))
                continue
        if p.drop_path in dropped or p.drop_path in kept or p.keep_path in dropped:
            guarded.append(p)
            continue
        committed.append(MergeDecision(p.keep_path, p.drop_path, p.source, p.similarity))
        kept.add(p.keep_path)
        dropped.add(p.drop_path)
    return MergeOutcomes(tuple(committed), tuple(vetoed), tuple(guarded), self_merges, 0)
