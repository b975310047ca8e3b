"""Near-duplicate merges: the divergence veto, orientation, and the in-batch role guard.

Cosine similarity is geometric, and embedders are weakest on exactly the tokens
that carry polarity and tell variants apart: "the deploy step is safe" and "the
deploy step is NOT safe" sit above the near-duplicate cosine. A merge keeps the
older file, so folding on cosine alone would fold a newer correction into the
older wrong memory and bring back the error the correction was written to fix.
The veto is deterministic and cheap, and it filters every proposal, a model's
included: binding a model changes which pairs are proposed, never which pairs
may be committed.

How the veto reads one text (the marker words and their scopes, stems, affixes,
antonyms and variant qualifiers) is ``domain.veto_text``; this module compares two
readings and decides which proposals commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from memhtml.domain.quantities import quantities
from memhtml.domain.thresholds import MAX_MERGE_PAIRS, NEAR_DUPLICATE_THRESHOLD
from memhtml.domain.veto_text import (
    Polarity,
    Statement,
    polarity_of,
    qualifiers_of,
    scope_clauses,
    veto_tokens,
)

VetoPredicate: TypeAlias = Literal["negation", "numeric", "variant"]
VETO_PREDICATES: Final[tuple[VetoPredicate, ...]] = ("negation", "numeric", "variant")

ProposalSource: TypeAlias = Literal["model", "cosine"]


def _flipped(
    plain_a: frozenset[str],
    negated_a: frozenset[str],
    plain_b: frozenset[str],
    negated_b: frozenset[str],
) -> bool:
    """Some term is stated plainly (and only plainly) on one side and only negated on
    the other. A side holding both forms of a term flips nothing, which is what keeps
    a text from ever diverging from itself and "enabled here, disabled there" from
    firing against either half."""
    return any(s in plain_a and s not in plain_b for s in negated_b - negated_a) or any(
        s in plain_b and s not in plain_a for s in negated_a - negated_b
    )




def negation_divergent(text_a: str, text_b: str) -> bool:
    """A term one side states plainly is negated on the other: governed by a marker
    ("is not safe" against "is safe"), or flipped by a negating prefix or an antonym
    ("enabled"/"disabled", "available"/"unavailable"). A negated remark about something
    the other side does not state flips nothing."""
    a, b = polarity_of((scope_clauses(text_a),)), polarity_of((scope_clauses(text_b),))
    return _negation_flip(a, b)


def numeric_token_divergent(text_a: str, text_b: str) -> bool:
    """The sides state different numbers, compared by value (``domain.quantities``):
    "forty minutes" and "40 min", "02:00" and "2 AM" are one number; "40" and "45",
    "2 AM" and "2 PM", "v2.1" and "v2.10" are two."""
    return quantities(text_a) != quantities(text_b)


def variant_qualifier_divergent(text_a: str, text_b: str) -> bool:
    """The sides carry different sets of variant qualifiers."""
    return qualifiers_of(veto_tokens(text_a)) != qualifiers_of(veto_tokens(text_b))


@dataclass(frozen=True, slots=True)
class MergeText:
    """What the veto reads of one memory: its one-line claim and its article text."""

    claim: str
    article: str = ""


@dataclass(frozen=True, slots=True)
class VetoFeatures:
    """The veto's view of one text, computed once however many pairs it is in.

    The numeric set comes from the claim alone, each number by value with what it
    measures (``domain.quantities``): a body cites its evidence, and
    two honest statements of one fact almost never cite the same date, ticket
    or exit code (read over whole articles, that predicate vetoed every
    candidate it saw). Negation and qualifiers read claim and article together:
    their markers are rare, load-bearing words, and a flip stated only in the
    body is still a contradiction.

    Negation is a comparison of two texts, term by term: it fires on a term one
    side states plainly and the other only negated. So each text keeps what it
    states outside any marker's scope and what a marker governs (``stated`` and
    ``scoped``, as ``term_stem`` stems), and, for the affix and antonym flips, its
    plain tokens and the terms it holds in a negated form (``plain`` and
    ``flipped``).
    """

    negated: bool
    """A negation marker is present (whatever it governs)."""
    numbers: frozenset[str]
    qualifiers: frozenset[str]
    plain: frozenset[str]
    """Terms stated plainly outside any marker's scope: the tokens, and the antonym keys
    held in positive form."""
    flipped: frozenset[str]
    """Terms stated in a negated form outside any marker's scope: affix stems, antonym
    keys held in negative form."""
    stated: frozenset[str] = frozenset()
    """The stems of every content word outside a marker's scope."""
    scoped: frozenset[str] = frozenset()
    """The stems of the content words a marker governs."""
    statements: tuple[Statement, ...] = ()
    """What the claim and the article each assert plainly: the content of their clauses
    that hold no marker."""
    negations: tuple[tuple[Statement, Statement], ...] = ()
    """Each negated clause: its content words and those its marker governs."""


def _overlap(statements: Iterable[Statement], content: Statement, governed: Statement
             ) -> int:
    """How much of a negated clause's content the statement that says most of it
    holds, among those holding a word the clause's marker governs (0: none does)."""
    return max((len(content & s) for s in statements if not governed.isdisjoint(s)),
               default=0)


def _clause_flip(a: Polarity | VetoFeatures, b: Polarity | VetoFeatures) -> bool:
    """``b`` negates a clause ``a`` states plainly: ``a``'s claim or article holds a
    word the marker governs and at least half the clause's content, and says more of
    it than what ``b`` states plainly (which would be ``b`` stating it too) or any
    negated clause of ``a`` (``a`` negating it too). The clause-level reading catches
    what the term-level one cannot: a governed word the negating side also uses
    elsewhere ("the cache warmer is not cached", "A is encrypted; B is not
    encrypted")."""
    for content, governed in b.negations:
        if governed.isdisjoint(a.stated):
            continue  # no statement of ``a`` holds a governed word: most pairs end here
        here = _overlap(a.statements, content, governed)
        if (2 * here >= len(content)
                and here > _overlap(b.statements, content, governed)
                and here > _overlap((c for c, _ in a.negations), content, governed)):
            return True
    return False


def _negation_flip(a: Polarity | VetoFeatures, b: Polarity | VetoFeatures) -> bool:
    """A term or a clause one side states plainly is negated on the other, or a term is
    flipped by an affix or an antonym; a side holding both forms flips nothing."""
    if a.scoped or b.scoped:
        if _flipped(a.stated, a.scoped, b.stated, b.scoped):
            return True
        if (b.negations and _clause_flip(a, b)) or (a.negations and _clause_flip(b, a)):
            return True
    return (bool(a.flipped) or bool(b.flipped)) and _flipped(a.plain, a.flipped, b.plain,
                                                             b.flipped)


def veto_features(text: MergeText) -> VetoFeatures:
    """Tokenize one memory for the veto."""
    claim = scope_clauses(text.claim)
    texts = (claim, scope_clauses(text.article)) if text.article else (claim,)
    polarity = polarity_of(texts)
    return VetoFeatures(
        negated=polarity.negated,
        numbers=quantities(text.claim),
        qualifiers=polarity.qualifiers,
        plain=polarity.plain,
        flipped=polarity.flipped,
        stated=polarity.stated,
        scoped=polarity.scoped,
        statements=polarity.statements,
        negations=polarity.negations,
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
    return _FIRED[_negation_flip(a, b), a.numbers != b.numbers, a.qualifiers != b.qualifiers]


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
    model's group implies. Without both texts the veto cannot read the pair, so
    ``merge_outcomes`` refuses it (``missing_text``) rather than let an unread pair
    through the one filter every fold must pass.
    """

    keep_path: str
    drop_path: str
    source: ProposalSource
    similarity: float | None = None
    keep_text: MergeText | None = None
    drop_text: MergeText | None = None


def keeper_key(created_at: str, on_branch: int, path: str) -> tuple[str, int, str]:
    """Where a memory sits in the oldest-first corpus order a fold's keeper is chosen
    by: the earlier ``memhtml-created`` first; on a tie (the stamp is to the second,
    and two writes land in one second), the file committed first, then the path.

    ``on_branch`` is how long the file has been on the store's branch, in commits of
    its first-parent history (``Repository.arrivals``), so more is earlier. It is data
    the caller reads from git; for files whose stamps do not tie any value serves,
    since the stamp already decides. Before it a tie went to the smaller path, and a
    newer file with the smaller name kept its twin's place."""
    return (created_at, -on_branch, path)


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
    missing_text: tuple[MergeProposal, ...] = ()
    """Refused because one side's text was not supplied: the veto cannot read such a
    pair, and a pair nobody read is not a proven duplicate. Counted apart from
    ``vetoed`` because no predicate fired: it is a caller's gap, not a divergence."""


def merge_outcomes(
    proposals: Sequence[MergeProposal],
    max_pairs: int = MAX_MERGE_PAIRS,
    cache: VetoCache | None = None,
) -> MergeOutcomes:
    """Filter proposals, in order, through self-merge, missing text, veto, role guard
    and cap.

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
    unread: list[MergeProposal] = []
    kept: set[str] = set()
    dropped: set[str] = set()
    self_merges = 0
    for index, p in enumerate(proposals):
        if len(committed) >= max_pairs:
            return MergeOutcomes(
                tuple(committed), tuple(vetoed), tuple(guarded), self_merges,
                len(proposals) - index, tuple(unread),
            )  # fmt: skip
        if p.keep_path == p.drop_path:
            self_merges += 1
            continue
        if p.keep_text is None or p.drop_text is None:
            unread.append(p)
            continue
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
    return MergeOutcomes(
        tuple(committed), tuple(vetoed), tuple(guarded), self_merges, 0, tuple(unread)
    )
