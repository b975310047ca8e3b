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

from memhtml.domain.quantities import quantities
from memhtml.domain.thresholds import MAX_MERGE_PAIRS, NEAR_DUPLICATE_THRESHOLD

VetoPredicate: TypeAlias = Literal["negation", "numeric", "variant"]
VETO_PREDICATES: Final[tuple[VetoPredicate, ...]] = ("negation", "numeric", "variant")

ProposalSource: TypeAlias = Literal["model", "cosine"]

NEGATION_MARKERS: Final = frozenset(
    {"not", "no", "never", "none", "cannot", "without", "neither", "nor", "avoid"}
)  # fmt: skip
"""Words that negate what follows them in their clause: "is not safe", "never on a
Friday", "without a lock", "avoid the cache". A marker flips only what it governs and
the other side states plainly (see ``_flipped``), never the pair as a whole: two
statements of one claim, one adding "Never on a Friday.", are one memory.

Polarity words that are not such operators ("failed", "unsafe", "invalid", "false",
"denied", "rejected", "forbidden", "disallowed") flip as terms instead, against the
word they oppose: through ``NEGATING_PREFIXES`` ("unsafe" against "safe") or
``ANTONYM_PAIRS`` ("failed" against "passed" or "succeeded"). As markers they scoped
whatever followed them by word order alone, so "retry failed jobs" read as
negating "jobs" where "retry the jobs that failed" did not."""

SCOPE_SKIPS: Final = frozenset({"only", "just"})
"""A ``not`` before one of these does not negate ("not only fast but also cheap")."""

SCOPE_FREE_BEFORE: Final = frozenset({"or", "whether"})
"""A ``not`` after one of these does not negate ("whether or not it is warm")."""

SCOPE_STOPWORDS: Final = frozenset(
    {
        "a", "an", "the", "to", "of", "in", "on", "at", "by", "for", "from", "with", "into",
        "onto", "over", "under", "about", "as", "is", "are", "was", "were", "be", "been",
        "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had",
        "will", "would", "shall", "should", "can", "could", "may", "might", "must",
        "it", "its", "this", "that", "these", "those", "there", "here", "than", "then",
        "so", "and", "or", "if", "when", "what", "which", "who", "whom", "whose", "any",
        "all", "each", "every", "some", "more", "most", "less", "very", "too", "also",
        "just", "only", "ever", "again", "anymore", "longer", "still", "even", "always",
        "i", "we", "you", "he", "she", "they", "them", "us", "me", "my", "our", "your",
        "his", "her", "their", "one", "anyone", "anything", "up", "off", "down", "out",
    }
)  # fmt: skip
"""Words a marker's scope leaves out: function words say nothing a flip turns on, and
"never on a friday" must not negate the "on" of "runs on tuesdays"."""

_CLAUSE_BREAK: Final = re.compile(
    r"[!?;:()\[\]{}\n\u2013\u2014\"]|[.,](?![0-9])"
    r"|\b(?:but|however|although|though|whereas|yet|except)\b"
)
"""Where a marker's scope ends: sentence and clause punctuation (a period or comma
not inside a number), and the contrastive conjunctions."""

STEM_MIN: Final = 3
"""Shortest stem ``term_stem`` leaves: "uses" becomes "use", never "us"."""

_SUFFIXES: Final = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""),
                    ("s", ""), ("e", ""))


def term_stem(word: str) -> str:
    """A word with one inflectional ending cut, so "expires", "expired" and "expire"
    are one term to a marker's scope ("does not expire" against "expires"). Crude on
    purpose: it only has to make the forms of one verb or noun meet, and a word of
    three letters or fewer, or holding a digit, is its own stem."""
    if len(word) <= STEM_MIN or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= STEM_MIN:
            return word[: -len(suffix)] + replacement
    return word


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
    (("allow", "allows", "allowed", "permit", "permits", "permitted"),
     ("deny", "denies", "denied", "forbid", "forbids", "forbidden")),
    (("accept", "accepts", "accepted"), ("reject", "rejects", "rejected")),
    (("enable", "enables", "enabled"), ("disable", "disables", "disabled")),
    (("include", "includes", "included"), ("exclude", "excludes", "excluded")),
    (("pass", "passes", "passed", "success", "succeeds", "succeeded"),
     ("fail", "fails", "failed", "failure", "failures")),
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


def _folded(text: str) -> str:
    folded = text.lower() if text.isascii() else unicodedata.normalize("NFC", text).lower()
    folded = folded.replace("\u2019", "'")
    # Most texts hold no contraction; skipping the substitution halves their cost.
    if "'" in folded or "cannot" in folded:
        folded = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(0)], folded)
    return folded


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(_folded(text))


def _marker_at(tokens: Sequence[str]) -> int | None:
    """The index of the first marker of a clause that negates what follows it."""
    for n, token in enumerate(tokens):
        if token not in NEGATION_MARKERS:
            continue
        if token == "not" and ((n + 1 < len(tokens) and tokens[n + 1] in SCOPE_SKIPS)
                               or (n > 0 and tokens[n - 1] in SCOPE_FREE_BEFORE)):
            continue
        return n
    return None


Statement: TypeAlias = frozenset[str]
"""What a text, or one negated clause of it, says: its content words as ``term_stem``
stems, function words and markers left out."""


@dataclass(frozen=True, slots=True)
class _Scoped:
    """A text split at its markers: the token runs outside any marker's scope (one per
    clause, in order), the content tokens inside one, what it states plainly (the
    content of everything outside a scope) and each negated clause with the words its
    marker governs."""

    tokens: tuple[str, ...]
    outside: tuple[tuple[str, ...], ...]
    inside: tuple[str, ...]
    marked: bool
    stated: Statement
    """The content of every token outside a marker's scope."""
    statement: Statement
    """The content of the clauses holding no marker: what the text asserts plainly."""
    negations: tuple[tuple[Statement, Statement], ...] = ()


def _content(words: Iterable[str]) -> Statement:
    kept = set(words)
    kept -= SCOPE_STOPWORDS
    kept -= NEGATION_MARKERS
    return frozenset(map(_STEMS.__getitem__, kept))


def _scoped(text: str) -> _Scoped:
    """Each clause's tokens before its first marker are outside; those after it, but
    function words and markers, are inside (a marker ending its clause governs
    nothing). A text with no marker is one run, all outside, and is not split."""
    folded = _folded(text)
    tokens = tuple(_TOKEN_RE.findall(folded))
    if NEGATION_MARKERS.isdisjoint(tokens):
        content = _content(tokens)
        return _Scoped(tokens, (tokens,), (), False, content, content)
    outside: list[tuple[str, ...]] = []
    inside: list[str] = []
    plain: set[str] = set()
    negations: list[tuple[Statement, Statement]] = []
    for clause in _CLAUSE_BREAK.split(folded):
        words = _TOKEN_RE.findall(clause)
        at = _marker_at(words)
        if at is None:
            outside.append(tuple(words))
            plain.update(words)
            continue
        outside.append(tuple(words[:at]))
        governed = [w for w in words[at + 1 :]
                    if w not in SCOPE_STOPWORDS and w not in NEGATION_MARKERS]
        inside += governed
        if governed:
            negations.append((_content(words), _content(governed)))
    return _Scoped(tokens, tuple(outside), tuple(inside), True,
                   _content({w for run in outside for w in run}), _content(plain),
                   tuple(negations))


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


def _qualifiers(tokens: Iterable[str]) -> frozenset[str]:
    return VARIANT_QUALIFIERS.intersection(tokens)


def negation_divergent(text_a: str, text_b: str) -> bool:
    """A term one side states plainly is negated on the other: governed by a marker
    ("is not safe" against "is safe"), or flipped by a negating prefix or an antonym
    ("enabled"/"disabled", "available"/"unavailable"). A negated remark about something
    the other side does not state flips nothing."""
    a, b = _polarity((_scoped(text_a),)), _polarity((_scoped(text_b),))
    return _negation_flip(a, b)


def numeric_token_divergent(text_a: str, text_b: str) -> bool:
    """The sides state different numbers, compared by value (``domain.quantities``):
    "forty minutes" and "40 min", "02:00" and "2 AM" are one number; "40" and "45",
    "2 AM" and "2 PM", "v2.1" and "v2.10" are two."""
    return quantities(text_a) != quantities(text_b)


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


@dataclass(frozen=True, slots=True)
class _Polarity:
    negated: bool
    qualifiers: frozenset[str]
    plain: frozenset[str]
    flipped: frozenset[str]
    stated: frozenset[str]
    scoped: frozenset[str]
    statements: tuple[Statement, ...]
    negations: tuple[tuple[Statement, Statement], ...]


def _polarity(texts: Sequence[_Scoped]) -> _Polarity:
    """What texts state plainly and in a negated form.

    Plain: every token outside a marker's scope not consumed by a ``non-`` before it,
    plus the key of each antonym pair whose positive form is there. Flipped: the stem
    of each affixed word, the word after a hyphenated ``non``, the key of each antonym
    pair whose negative form is there. Stated and scoped: the stems of the tokens
    outside and inside a marker's scope. Qualifiers read every token as written.
    """
    runs = [run for text in texts for run in text.outside]
    words: set[str] = set().union(*runs)
    inside = [w for text in texts for w in text.inside]
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
    return _Polarity(
        any(text.marked for text in texts), _qualifiers(words.union(inside)),
        frozenset(plain), frozenset(flipped), frozenset().union(*(t.stated for t in texts)),
        frozenset(map(_stem, inside)), tuple(text.statement for text in texts),
        tuple(n for text in texts for n in text.negations))


class _StemCache(dict[str, str]):
    """``term_stem`` memoized: a corpus repeats its vocabulary, and the veto stems every
    content word of it. Bounded, so a stream of unique tokens cannot grow the process
    without end (past the bound a stem is computed and not kept)."""

    def __missing__(self, word: str) -> str:
        found = term_stem(word)
        if len(self) < _STEM_CACHE:
            self[word] = found
        return found


_STEM_CACHE: Final = 200_000
_STEMS: Final = _StemCache()


def _stem(word: str) -> str:
    return _STEMS[word]


def _overlap(statements: Iterable[Statement], content: Statement, governed: Statement
             ) -> int:
    """How much of a negated clause's content the statement that says most of it
    holds, among those holding a word the clause's marker governs (0: none does)."""
    return max((len(content & s) for s in statements if not governed.isdisjoint(s)),
               default=0)


def _clause_flip(a: _Polarity | VetoFeatures, b: _Polarity | VetoFeatures) -> bool:
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


def _negation_flip(a: _Polarity | VetoFeatures, b: _Polarity | VetoFeatures) -> bool:
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
    claim = _scoped(text.claim)
    texts = (claim, _scoped(text.article)) if text.article else (claim,)
    polarity = _polarity(texts)
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
