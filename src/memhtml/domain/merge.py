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

NEGATING_PREFIXES: Final = ("non", "dis", "un", "in")
"""Prefixes that turn a word into its opposite ("available"/"unavailable",
"active"/"inactive"). A hyphenated ``non-`` reads as two tokens and is handled
where tokens are paired (see ``_after_non``)."""

AFFIX_MIN_STEM: Final = 3
"""Shortest stem an affixed word may flip. Below it "in" + "to", "un" + "it" and the
like would pair a word with a fragment no one reads as its opposite."""

AFFIX_LOOKALIKES: Final = (
    "input", "inline", "insight", "inside", "income", "install", "invoice", "instead",
    "intend", "intent", "intake", "inset", "indeed", "inbound", "index",
    "display", "dispatch", "discover", "discount", "dismiss", "dispose", "dissolve",
    "disease", "discharge", "discuss", "discord", "unless",
)  # fmt: skip
"""Word roots whose leading ``in``/``dis``/``un`` is not a negation while what
follows is a common word ("input"/"put", "display"/"play", "discount"/"count").
A word starting with one of these roots (so "inputs", "displayed" too) never flips.
Kept to roots whose remainder is an everyday word, plus "index", a word memories
about software carry constantly. Any other remainder nobody writes alone
("include"/"clude") cannot fire anyway: the stem must be a token on the other side."""

ANTONYM_PAIRS: Final[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = (
    (("allow", "allows", "allowed"), ("deny", "denies", "denied")),
    (("accept", "accepts", "accepted"), ("reject", "rejects", "rejected")),
    (("enable", "enables", "enabled"), ("disable", "disables", "disabled")),
    (("include", "includes", "included"), ("exclude", "excludes", "excluded")),
    (("pass", "passes", "passed"), ("fail", "fails", "failed")),
    (("success", "succeeds", "succeeded"), ("failure", "failures")),
    (("true",), ("false",)),
    (("open",), ("closed",)),
    (("on",), ("off",)),
    (("up",), ("down",)),
)  # fmt: skip
"""Opposites no prefix relates, each with the inflections a claim uses. Every pair
states a switch's two positions or an outcome's two values, which is what a
correction flips; none is a word a body carries incidentally in the positive and
the negative at once. "enabled"/"disabled" sit here because "dis" + "abled" is not
"enabled". The common ones ("on", "up") are tempered by the rule that fires: a side
carrying both forms flips nothing, so a preposition only fires against a text that
says the opposite and drops the original."""

_ANTONYM_KEYS: Final = {
    word: (f"~{positive[0]}", polarity)
    for positive, negative in ANTONYM_PAIRS
    for polarity, forms in ((True, positive), (False, negative))
    for word in forms
}
"""Word to (pair key, is the positive form). Keys start with ``~``, which no token
can, so a pair never collides with a word's own stem."""

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


def _affix_stem(word: str) -> str | None:
    """The word an affixed word negates, or None when it is not one."""
    for prefix in NEGATING_PREFIXES:
        if word.startswith(prefix):
            stem = word[len(prefix) :]
            if (
                len(stem) >= AFFIX_MIN_STEM
                and stem.isalpha()
                and not word.startswith(AFFIX_LOOKALIKES)
            ):
                return stem
            return None
    return None


def _after_non(tokens: Sequence[str]) -> tuple[set[str], set[str]]:
    """The walk in order, for a run holding ``non``: a word right after it (as in
    "non-blocking") is stated negated, and that occurrence is not stated plainly."""
    plain: set[str] = set()
    negated: set[str] = set()
    after_non = False
    for token in tokens:
        if after_non:
            after_non = False
            if len(token) >= AFFIX_MIN_STEM and token.isalpha():
                negated.add(token)
                continue
        after_non = token == "non"
        plain.add(token)
        stem = _affix_stem(token)
        if stem is not None:
            negated.add(stem)
    return plain, negated


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


def _numbers(tokens: Iterable[str]) -> frozenset[str]:
    # A token is letters, digits and dot-digit runs, so "not all letters" means "has a digit".
    return frozenset(t for t in tokens if not t.isalpha())


def _qualifiers(tokens: Iterable[str]) -> frozenset[str]:
    return VARIANT_QUALIFIERS.intersection(tokens)


def negation_divergent(text_a: str, text_b: str) -> bool:
    """Exactly one side carries a negation marker, or a term is flipped by a negating
    prefix or an antonym ("enabled"/"disabled", "available"/"unavailable")."""
    a, b = _polarity((_tokens(text_a),)), _polarity((_tokens(text_b),))
    return a.negated != b.negated or _flipped(a.plain, a.flipped, b.plain, b.flipped)


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
    body is still a contradiction. Negation also fires on a term one side states
    plainly and the other only in a negated form (a ``NEGATING_PREFIXES`` affix or
    an ``ANTONYM_PAIRS`` opposite); that is a comparison of two texts, so each
    text keeps its ``plain`` and ``flipped`` terms for it.
    """

    negated: bool
    """A negation marker is present."""
    numbers: frozenset[str]
    qualifiers: frozenset[str]
    plain: frozenset[str]
    """Terms stated plainly: the tokens, and the antonym keys held in positive form."""
    flipped: frozenset[str]
    """Terms stated in a negated form: affix stems, antonym keys held in negative form."""


@dataclass(frozen=True, slots=True)
class _Polarity:
    negated: bool
    qualifiers: frozenset[str]
    plain: frozenset[str]
    flipped: frozenset[str]


def _polarity(runs: Sequence[Sequence[str]]) -> _Polarity:
    """What token runs state plainly and in a negated form.

    Plain: every token not consumed by a ``non-`` before it, plus the key of each
    antonym pair whose positive form is there. Negated: the stem of each affixed
    word, the word after a hyphenated ``non``, the key of each antonym pair whose
    negative form is there. Markers and qualifiers read every token as written.
    """
    words: set[str] = set().union(*runs)
    if "non" in words:
        # Each run walked on its own: a "non" ending the claim does not negate the
        # article's first word.
        plain: set[str] = set()
        flipped: set[str] = set()
        for tokens in runs:
            run_plain, run_flipped = _after_non(tokens)
            plain |= run_plain
            flipped |= run_flipped
    else:
        # Set operations first: the veto tokenizes every memory of a corpus, and most
        # tokens are neither affixed nor an antonym.
        plain = set(words)
        flipped = {
            stem
            for token in words
            if token.startswith(NEGATING_PREFIXES) and (stem := _affix_stem(token)) is not None
        }
    for word in plain & _ANTONYM_KEYS.keys():
        key, positive = _ANTONYM_KEYS[word]
        (plain if positive else flipped).add(key)
    return _Polarity(_negated(words), _qualifiers(words), frozenset(plain), frozenset(flipped))


def veto_features(text: MergeText) -> VetoFeatures:
    """Tokenize one memory for the veto."""
    claim = _tokens(text.claim)
    runs = (claim, _tokens(text.article)) if text.article else (claim,)
    polarity = _polarity(runs)
    return VetoFeatures(
        negated=polarity.negated,
        numbers=_numbers(claim),
        qualifiers=polarity.qualifiers,
        plain=polarity.plain,
        flipped=polarity.flipped,
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
    negation = a.negated != b.negated or (
        (bool(a.flipped) or bool(b.flipped)) and _flipped(a.plain, a.flipped, b.plain, b.flipped)
    )
    return _FIRED[negation, a.numbers != b.numbers, a.qualifiers != b.qualifiers]


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
