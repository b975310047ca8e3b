"""How the merge veto reads one text: its words, the clauses a negation marker governs,
and what the text states plainly and in a negated form.

Everything here looks at a single text (a claim, or a claim with its article): the
marker and scope words, the stemmer, the negating prefixes and antonym pairs, the
variant qualifiers, the tokenizer, the clause scoping (``Scoped``) and what a text
states (``Polarity``). ``domain.merge`` compares two such readings and decides
which merges commit. The reading is its own module because it holds the veto's
vocabulary and tokenizer, which change apart from the comparison and the merge
bookkeeping, and it needs nothing from either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

NEGATION_MARKERS: Final = frozenset(
    {"not", "no", "never", "none", "cannot", "without", "neither", "nor", "avoid"}
)  # fmt: skip
"""Words that negate what follows them in their clause: "is not safe", "never on a
Friday", "without a lock", "avoid the cache". A marker flips only what it governs and
the other side states plainly (see ``domain.merge._flipped``), never the pair as a whole: two
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


def veto_tokens(text: str) -> list[str]:
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
class Scoped:
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


def scope_clauses(text: str) -> Scoped:
    """Each clause's tokens before its first marker are outside; those after it, but
    function words and markers, are inside (a marker ending its clause governs
    nothing). A text with no marker is one run, all outside, and is not split."""
    folded = _folded(text)
    tokens = tuple(_TOKEN_RE.findall(folded))
    if NEGATION_MARKERS.isdisjoint(tokens):
        content = _content(tokens)
        return Scoped(tokens, (tokens,), (), False, content, content)
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
    return Scoped(tokens, tuple(outside), tuple(inside), True,
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


def qualifiers_of(tokens: Iterable[str]) -> frozenset[str]:
    return VARIANT_QUALIFIERS.intersection(tokens)


@dataclass(frozen=True, slots=True)
class Polarity:
    negated: bool
    qualifiers: frozenset[str]
    plain: frozenset[str]
    flipped: frozenset[str]
    stated: frozenset[str]
    scoped: frozenset[str]
    statements: tuple[Statement, ...]
    negations: tuple[tuple[Statement, Statement], ...]


def polarity_of(texts: Sequence[Scoped]) -> Polarity:
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
    return Polarity(
        any(text.marked for text in texts), qualifiers_of(words.union(inside)),
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
