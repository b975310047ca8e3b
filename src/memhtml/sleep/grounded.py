"""Whether text a model wrote may stand in a memory: code decides, never the answer.

A weak model's answer can pass every shape check and still be no memory at all: a
canonical titled "Jenkins Backup for New Roes" whose body is ``m4`` / ``m6`` (the
batch's keys), a claim ``10``, a claim ``p20``. Compress would then archive the members
it "absorbs" behind text that carries none of their facts. So every phase that writes
model-authored text into a memory (compress's canonicals, arc-synthesis's arcs,
trace-consolidation's distilled memories) passes that text through two checks here,
and an answer that fails either is refused, with its rule and its figures, whatever the
model said.

**Shape** (``text_fault``): each title, claim and body paragraph must be words, not a
key or a number. Its *words* are its ``\\w+`` tokens holding at least two letters and
not shaped like a key (``m4``, ``p20``, ``M1``: at most three letters then digits); a
text is refused as

- ``text-blank``: nothing but whitespace;
- ``text-key-or-number``: no word at all, only keys, numbers and punctuation
  (``m4``, ``10``, ``m3 m4 m5``, ``p20``), or keys joined by function words only
  (``m3 and m4``);
- ``text-fragment``: fewer words than its part asks (``MIN_WORDS``: a title one, a
  claim three, a paragraph three), or fewer content words (words that are not
  ``head.STOP_WORDS``: a title one, a claim or a paragraph two), or more keys and
  numbers than words (``m3, m4 and m5``).

**Drawn from its sources** (``drawn``): the *content terms* of a text are its tokens
with the search index's stop words dropped, each stemmed as the index stems it
(``head.index_terms``), so "backups" and "backup" are one term. A text is drawn from its
sources when at least ``DRAWN_FLOOR`` of its distinct content terms occur among the
sources' (``text-not-drawn`` otherwise): a canonical's title, claim and each paragraph
against the members it absorbs (their titles, claims and articles), an arc's against
the members it covers, a distilled memory's against the session turns the model was
shown.

**Carried** (``carried``): a canonical archives the members it absorbs, so each of
their claims must live on in it: at least ``CARRIED_FLOOR`` of an archived member's
claim terms occur among the canonical's own (title, claim and body together),
``member-not-carried`` otherwise. A dated episode compress keeps (and links) need only
share one term with it.

**The floors, measured** (docs/design.md, "Model text is checked by code"), on the
planted corpus (``eval.planted``: 240 base memories written from one template, the
worst case for word overlap, since unrelated memories share its words):

- a canonical built from its members' own sentences (what the prompt asks) scores 1.0
  on both shares; the weak answers above score 0 (a key shares no word with any
  member), and "Jenkins Backup for New Roes" over notes on the Jenkins backup 0.5;
- a member's claim against its planted paraphrase (a lead phrase added, the claim
  reworded around it): carried 0.727 at the least, median 0.90 (20 pairs);
- a member's claim against an unrelated member's text (5,000 random pairs): at or
  above 0.5 in 18.1%, 0.6 in 5.3%, 0.7 in 1.6%, 0.8 in 0.1%; against a two-member
  canonical made of two unrelated members (3,000 triples): at or above 0.7 in 5.2%.

A refusal leaves every member as it was (the safe outcome), an acceptance archives
them, so the floors lean to refusing: ``CARRIED_FLOOR`` 0.7 keeps every planted
paraphrase and carries an unrelated member in 1.6% of pairs; ``DRAWN_FLOOR`` 0.6 asks
that most of what the model wrote be words its sources used (one new word in a
three-word title passes, two do not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from memhtml.head import STOP_WORDS, index_terms
from memhtml.sleep.ledger import MarkValue, PendingMark

TextPart: TypeAlias = Literal["title", "claim", "paragraph"]
GroundRule: TypeAlias = Literal[
    "text-blank", "text-key-or-number", "text-fragment", "text-not-drawn",
    "member-not-carried",
]
GROUND_RULES: Final[tuple[GroundRule, ...]] = (
    "text-blank", "text-key-or-number", "text-fragment", "text-not-drawn",
    "member-not-carried",
)

MIN_WORDS: Final[dict[TextPart, int]] = {"title": 1, "claim": 3, "paragraph": 3}
"""Fewest words each part may hold: a title may name its subject in one word
("Backups"), a claim or a paragraph says something about one in three."""
MIN_CONTENT_WORDS: Final[dict[TextPart, int]] = {"title": 1, "claim": 2, "paragraph": 2}
"""Fewest words outside the stop list: "It is the thing" is four words and no fact."""
DRAWN_FLOOR: Final = 0.6
"""Least share of a text's content terms its sources must hold (module docstring)."""
CARRIED_FLOOR: Final = 0.7
"""Least share of an archived member's claim terms its canonical must hold."""

_TOKEN: Final = re.compile(r"\w+")
_KEY: Final = re.compile(r"[^\W\d_]{0,3}\d+[^\W\d_]?", re.UNICODE)
"""A key or a number: at most three letters, digits, at most one letter after
(``m4``, ``p20``, ``M1``, ``101``, ``3b``)."""


def _letters(token: str) -> int:
    return sum(1 for ch in token if ch.isalpha())


def words_of(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` that are words: two letters or more, not key-shaped."""
    return tuple(t for t in _TOKEN.findall(text)
                 if _letters(t) >= 2 and not _KEY.fullmatch(t))


def keys_of(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` shaped like a key or a number."""
    return tuple(t for t in _TOKEN.findall(text) if _KEY.fullmatch(t))


def terms(text: str) -> frozenset[str]:
    """A text's distinct content terms, as the search index stems them."""
    return frozenset(index_terms(text))


@dataclass(frozen=True, slots=True)
class Fault:
    """Why a text may not stand in a memory: the rule, the part, the text (cut), and
    the figures the rule read."""

    rule: GroundRule
    part: str
    text: str
    figures: tuple[tuple[str, float | int | str], ...] = ()

    def mark(self, phase: str, subject: str, batch: int | None = None) -> PendingMark:
        """The refusal as a ``model-refused`` ledger record: its rule, what it was
        about, why in words, and the figures (the overlap and floor it compared)."""
        figures: dict[str, MarkValue] = {"part": self.part}
        figures.update({k: v for k, v in self.figures if k in ("overlap", "floor")})
        if batch is not None:
            figures["batch"] = batch
        return PendingMark.of("model-refused", phase=phase, rule=self.rule,
                              subject=subject, detail=self.detail, **figures)

    @property
    def detail(self) -> str:
        """The refusal in plain words."""
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        figures = ", ".join(f"{k} {_shown(v)}" for k, v in self.figures)
        tail = f" ({figures})" if figures else ""
        return f"{self.part} {shown!r}: {_WORDS[self.rule]}{tail}"


def _shown(value: float | int | str) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


_WORDS: Final[dict[GroundRule, str]] = {
    "text-blank": "blank",
    "text-key-or-number": "a key or a number, not words",
    "text-fragment": "a fragment, not a sentence",
    "text-not-drawn": "not drawn from what it stands for",
    "member-not-carried": "the member's claim is not carried",
}


def text_fault(text: str, part: TextPart, name: str | None = None) -> Fault | None:
    """Why ``text`` is not a ``part`` a memory may hold (module docstring), or None."""
    label = name or part
    if not text.strip():
        return Fault("text-blank", label, text)
    words, keys = words_of(text), keys_of(text)
    content = [w for w in words if w.lower() not in STOP_WORDS]
    if not words or (keys and not content):
        return Fault("text-key-or-number", label, text, (("keys", len(keys)),))
    if (len(words) < MIN_WORDS[part] or len(content) < MIN_CONTENT_WORDS[part]
            or len(keys) > len(words)):
        return Fault("text-fragment", label, text, (
            ("words", len(words)), ("content_words", len(content)),
            ("least", MIN_WORDS[part]), ("keys", len(keys))))
    return None


def drawn(text: str, sources: frozenset[str]) -> float:
    """The share of ``text``'s content terms that ``sources`` (terms) hold; 0.0 for a
    text with none."""
    own = terms(text)
    return len(own & sources) / len(own) if own else 0.0


def drawn_fault(text: str, part: TextPart, sources: frozenset[str],
                name: str | None = None) -> Fault | None:
    """``text_fault``, then whether ``text`` is drawn from ``sources`` (terms)."""
    fault = text_fault(text, part, name)
    if fault is not None:
        return fault
    share = drawn(text, sources)
    if share < DRAWN_FLOOR:
        return Fault("text-not-drawn", name or part, text,
                     (("overlap", share), ("floor", DRAWN_FLOOR)))
    return None


def carried(claim: str, canonical: frozenset[str]) -> float:
    """The share of a member's ``claim`` terms the canonical's terms hold (1.0 for a
    claim with no content terms: there is nothing of it to lose)."""
    own = terms(claim)
    return len(own & canonical) / len(own) if own else 1.0


@dataclass(frozen=True, slots=True)
class Written:
    """Model-written text for one memory: its title, claim and paragraphs."""

    title: str
    claim: str
    body: tuple[str, ...]

    def terms(self) -> frozenset[str]:
        return terms("\n".join((self.title, self.claim, *self.body)))


def written_faults(text: Written, sources: frozenset[str]) -> tuple[Fault, ...]:
    """Every part of ``text`` that is not words drawn from ``sources`` (terms), in
    order: the title, the claim, then each paragraph (``paragraph 2``...)."""
    parts: list[tuple[str, TextPart, str]] = [("title", "title", text.title),
                                               ("claim", "claim", text.claim)]
    parts += [(f"paragraph {n}", "paragraph", p) for n, p in enumerate(text.body, 1)]
    return tuple(f for name, part, value in parts
                 if (f := drawn_fault(value, part, sources, name)) is not None)


@dataclass(frozen=True, slots=True)
class Member:
    """An absorbed member as the check reads it: a name for the refusal (its key or
    path), its claim, and whether it is archived (a kept episode need only overlap)."""

    name: str
    claim: str
    archived: bool = True


def carried_faults(text: Written, members: Iterable[Member]) -> tuple[Fault, ...]:
    """Each member whose claim ``text`` does not carry (module docstring)."""
    own = text.terms()
    out: list[Fault] = []
    for member in members:
        share = carried(member.claim, own)
        floor = CARRIED_FLOOR if member.archived else 1e-9
        if share < floor:
            out.append(Fault("member-not-carried", member.name, member.claim,
                             (("overlap", share), ("floor", round(floor, 4)))))
    return tuple(out)


def source_terms(texts: Iterable[str]) -> frozenset[str]:
    """The content terms of every text in ``texts``, together."""
    out: set[str] = set()
    for text in texts:
        out.update(terms(text))
    return frozenset(out)
