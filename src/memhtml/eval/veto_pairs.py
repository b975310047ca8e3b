"""Generated pairs of memories for measuring the merge veto's negation predicate.

Two classes, built from one small vocabulary so a measurement can count how often
the veto refuses each:

- **flips** (``VetoPair.kind == "flip"``): one memory states a claim and the other its
  negation, in the forms a correction takes: "is not", "isn't", "is never", "is no
  longer", "does not", "doesn't", "never", "cannot", "can't", "should not", "do not"
  and "never" before an instruction, "without" against "with", and a flip stated in
  the article's second sentence (about another subject) while both claims agree.
  Every flip must be vetoed.
- **unrelated negations** (``kind == "unrelated"``): both memories state the same
  claim and article, and the second adds one negated sentence about something else
  ("Never on a Friday.", "Do not page the on-call engineer for it."), in two shapes:
  sharing no content word with the claim, or naming the claim's own subject
  ("Never run the deploy script by hand."). Two statements of one fact, one with a
  remark added: no veto should refuse the fold.

And two more for the numeric predicate (``number_pairs``):

- **number paraphrases** (``kind == "number paraphrase"``): one claim stated twice,
  its number written two ways: in digits and in words ("40 minutes", "forty
  minutes"), as a time on either clock ("02:00 UTC", "2 AM UTC"), in another unit
  ("2 hours", "120 minutes"), with or without a thousands comma, a percentage sign or
  the word, and in words on both sides ("forty-two", "forty two"). No veto should refuse the fold.
- **number flips** (``kind == "number flip"``): the same two spellings, but the
  second states another value (a neighbouring one, the other half of the day, a
  unit off by its factor). Every one must be refused by the numeric predicate.

The texts are plain ``(claim, article)`` strings (the veto's ``MergeText`` is built by
the caller), and every choice is drawn from the ``random.Random`` handed in, so a
seeded generator gives the same pairs in every process and hypothesis can drive it
through ``st.randoms()``. No word of the vocabulary is a number or a variant
qualifier, and none is an affixed or antonym form of another, so the only thing that
differs between the two memories of a pair is the planted negation (or the remark).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

PairKind: TypeAlias = Literal["flip", "unrelated", "number paraphrase", "number flip"]

SUBJECTS: Final = (
    "the deploy script", "the billing worker", "the nightly backup", "the staging cluster",
    "the search index", "the payments queue", "the export job", "the metrics pipeline",
    "the login service", "the image resizer", "the audit log", "the release branch",
    "the mobile client", "the webhook relay", "the cache warmer", "the schema migration",
)  # fmt: skip
ADJECTIVES: Final = (
    "safe to rerun", "idempotent", "cached", "encrypted at rest", "rate limited",
    "monitored", "sharded", "replicated", "versioned", "compressed", "signed", "retried",
)  # fmt: skip
# (base form, third person singular, object)
ACTIONS: Final = (
    ("copy", "copies", "the ledger to cold storage"),
    ("retry", "retries", "timed out requests"),
    ("push", "pushes", "events to the audit topic"),
    ("store", "stores", "session tokens in redis"),
    ("lock", "locks", "the orders table"),
    ("send", "sends", "receipts to customers"),
    ("read", "reads", "settings from the vault"),
    ("purge", "purges", "stale thumbnails"),
    ("rotate", "rotates", "the signing keys"),
    ("compact", "compacts", "the write ahead log"),
    ("notify", "notifies", "the finance channel"),
    ("expire", "expires", "idle sessions"),
)  # fmt: skip
BODIES: Final = (
    "Seen during the quarterly review of the platform.",
    "Confirmed by the owning team after the incident review.",
    "Written down while onboarding the new maintainers.",
    "Noted when the runbook was rewritten last spring.",
    "Checked against the dashboards before the freeze.",
)  # fmt: skip
REMARKS: Final = (
    "Never on a Friday.",
    "This is not a drill.",
    "Do not page the on-call engineer for it.",
    "Nobody has asked about it since, not even the auditors.",
    "The old wiki page does not mention it.",
    "We never found out who set it up.",
    "No one else on the team remembers the history.",
    "It is not urgent.",
    "Do not confuse it with the marketing site.",
    "There is no dashboard for it yet.",
)  # fmt: skip
"""Negated sentences about something else: no content word of the claims above."""
SUBJECT_REMARKS: Final = (
    "Never touch {subject} by hand.",
    "Do not restart {subject} during business hours.",
    "Nobody should edit {subject} without a review.",
    "{Subject} is not owned by the platform team.",
)  # fmt: skip
"""Negated sentences naming the claim's own subject and nothing else of it."""

FLIP_FORMS: Final = (
    "is not", "isn't", "is never", "is no longer", "does not", "doesn't", "never",
    "no longer", "cannot", "can't", "should not", "do not", "never (instruction)",
    "without", "article",
)  # fmt: skip
"""The negation a flip pair is built with, one name per construction."""
UNRELATED_FORMS: Final = ("remark", "subject remark")


@dataclass(frozen=True, slots=True)
class VetoPair:
    """Two memories as ``(claim, article)``; ``form`` names the construction."""

    kind: PairKind
    form: str
    first: tuple[str, str]
    second: tuple[str, str]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _flip(rng: random.Random, form: str, besides: str = "") -> tuple[str, str]:
    """A claim and its negation in ``form``, about a subject other than ``besides``."""
    subject = rng.choice([s for s in SUBJECTS if s != besides])
    adjective = rng.choice(ADJECTIVES)
    verb, verbs, thing = rng.choice(ACTIONS)
    s = _capital(subject)
    copula = {"is not": "is not", "isn't": "isn't", "is never": "is never",
              "is no longer": "is no longer"}
    if form in copula:
        return f"{s} is {adjective}.", f"{s} {copula[form]} {adjective}."
    verbal = {"does not": f"does not {verb}", "doesn't": f"doesn't {verb}",
              "never": f"never {verbs}", "no longer": f"no longer {verbs}"}
    if form in verbal:
        return f"{s} {verbs} {thing}.", f"{s} {verbal[form]} {thing}."
    modal = {"cannot": "cannot", "can't": "can't", "should not": "should not"}
    if form in modal:
        can = "should" if form == "should not" else "can"
        return f"{s} {can} {verb} {thing}.", f"{s} {modal[form]} {verb} {thing}."
    if form == "do not":
        return f"{_capital(verb)} {thing} before {subject} runs.", \
            f"Do not {verb} {thing} before {subject} runs."
    if form == "never (instruction)":
        return f"{_capital(verb)} {thing} after {subject} runs.", \
            f"Never {verb} {thing} after {subject} runs."
    if form == "without":
        return f"{s} {verbs} {thing} with a lock.", f"{s} {verbs} {thing} without a lock."
    raise ValueError(f"unknown flip form {form!r}")


def flip_pair(rng: random.Random, form: str | None = None) -> VetoPair:
    """A claim against its negation (``form``, else one drawn); the article is one
    shared sentence, or for ``article`` the flip is the article's second sentence and
    the claims agree."""
    chosen = form if form is not None else rng.choice(FLIP_FORMS)
    body = rng.choice(BODIES)
    if chosen == "article":
        # The article's flip is about another subject than the claim: a memory whose
        # claim states what its own article negates holds both readings, and a side
        # holding both flips nothing.
        about = rng.choice(SUBJECTS)
        claim = f"{_capital(about)} is {rng.choice(ADJECTIVES)}."
        stated, negated = _flip(rng, rng.choice(FLIP_FORMS[:-1]), besides=about)
        return VetoPair("flip", chosen, (claim, f"{body} {stated}"),
                        (claim, f"{body} {negated}"))
    stated, negated = _flip(rng, chosen)
    return VetoPair("flip", chosen, (stated, body), (negated, body))


def unrelated_pair(rng: random.Random, form: str | None = None) -> VetoPair:
    """One claim and article twice, the second with a negated remark added (``form``:
    ``remark`` about something else, ``subject remark`` naming the claim's subject)."""
    chosen = form if form is not None else rng.choice(UNRELATED_FORMS)
    subject = rng.choice(SUBJECTS)
    _, verbs, thing = rng.choice(ACTIONS)
    if rng.random() < 0.5:
        claim = f"{_capital(subject)} is {rng.choice(ADJECTIVES)}."
    else:
        claim = f"{_capital(subject)} {verbs} {thing}."
    body = rng.choice(BODIES)
    if chosen == "remark":
        remark = rng.choice(REMARKS)
    elif chosen == "subject remark":
        remark = rng.choice(SUBJECT_REMARKS).format(subject=subject,
                                                    Subject=_capital(subject))
    else:
        raise ValueError(f"unknown unrelated form {form!r}")
    return VetoPair("unrelated", chosen, (claim, body), (claim, f"{body} {remark}"))


def veto_pairs(count: int, seed: int = 30) -> tuple[VetoPair, ...]:
    """``count`` flips and ``count`` unrelated negations, every form in turn."""
    rng = random.Random(seed)
    flips = tuple(flip_pair(rng, FLIP_FORMS[n % len(FLIP_FORMS)]) for n in range(count))
    others = tuple(unrelated_pair(rng, UNRELATED_FORMS[n % len(UNRELATED_FORMS)])
                   for n in range(count))
    return flips + others


# -- numbers -------------------------------------------------------------------------------

NUMBER_FORMS: Final = ("words", "spelled", "time", "unit", "thousands", "percent")
"""How the two sides of a numeric pair write their number, one name per construction."""

_ONES: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                "sixteen", "seventeen", "eighteen", "nineteen")
_TENS: Final = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
                "eighty", "ninety")
COUNTED: Final = (
    ("{subject} keeps {n}.", "snapshots"),
    ("{subject} retries {n} before it gives up.", "times"),
    ("{subject} runs on {n}.", "workers"),
)  # fmt: skip
WAITS: Final = (
    "{subject} waits {n} before it retries.",
    "{subject} times out after {n}.",
    "{subject} holds a lock for {n}.",
)  # fmt: skip
AT_TIMES: Final = (
    "{subject} runs at {n} UTC.",
    "{subject} starts every day at {n}.",
)  # fmt: skip
SHARES: Final = (
    "{subject} alerts when the disk is {n} full.",
    "{subject} samples {n} of requests.",
)  # fmt: skip
DURATION_UNITS: Final = (("seconds", 1), ("minutes", 60), ("hours", 3600))
"""Units a wait is written in, and their length in seconds."""


def number_words(n: int) -> str:
    """``n`` (0 to 999,999) in words, hyphenated tens: 42 is "forty-two", 105 is
    "one hundred and five", 2,300 is "two thousand three hundred"."""
    if not 0 <= n < 1_000_000:
        raise ValueError(f"{n} is out of range")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" and {number_words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{number_words(thousands)} thousand" + (
        (" and " if rest < 100 else " ") + number_words(rest) if rest else "")


def clock_24(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def clock_12(hour: int, minute: int, dotted: bool = False) -> str:
    """The same time of day on a 12-hour clock: "2 AM", "2:30 p.m.", "12 PM" (noon)."""
    shown = hour % 12 or 12
    half = ("a.m." if dotted else "AM") if hour < 12 else ("p.m." if dotted else "PM")
    return f"{shown}:{minute:02d} {half}" if minute else f"{shown} {half}"


def _two_ways(rng: random.Random, form: str, value: int) -> tuple[str, str, str]:
    """One value written two ways in ``form``: (template, first, second)."""
    if form == "words":
        template, noun = rng.choice(COUNTED)
        first = f"{value} {noun}"
        return template, first, f"{number_words(value)} {noun}"
    if form == "spelled":
        template, noun = rng.choice(COUNTED)
        words = number_words(value)
        return template, f"{words} {noun}", f"{words.replace('-', ' ')} {noun}"
    if form == "time":
        hour, minute = divmod(value, 60)
        return rng.choice(AT_TIMES), clock_24(hour, minute), clock_12(
            hour, minute, dotted=rng.random() < 0.5)
    if form == "unit":
        template = rng.choice(WAITS)
        unit, seconds = rng.choice(DURATION_UNITS)
        smaller = {3600: ("minutes", 60), 60: ("seconds", 1)}.get(seconds)
        if smaller is not None and rng.random() < 0.5:
            other, factor = smaller
            return template, f"{value} {unit}", f"{value * seconds // factor} {other}"
        short = {"seconds": "sec", "minutes": "min", "hours": "h"}[unit]
        return template, f"{value} {unit}", f"{number_words(value)} {short}" if value < 100 \
            else f"{value}{short}"
    if form == "thousands":
        template, noun = rng.choice(COUNTED)
        return template, f"{value:,} {noun}", f"{number_words(value)} {noun}"
    if form == "percent":
        return rng.choice(SHARES), f"{value}%", f"{number_words(value)} percent"
    raise ValueError(f"unknown number form {form!r}")


def _value(rng: random.Random, form: str) -> int:
    if form == "time":
        return rng.randrange(24) * 60 + rng.choice((0, 0, 15, 30, 45))
    if form == "thousands":
        return rng.randrange(1, 1000) * 1000 + rng.choice((0, 0, rng.randrange(1000)))
    if form == "percent":
        return rng.randrange(1, 100)
    # From 2: "one" alone is read as a word, not a count (``domain.quantities``).
    return rng.randrange(2, 100)


def _other(rng: random.Random, form: str, value: int) -> int:
    """A value a correction would state instead: a neighbour, the other half of the day."""
    if form == "time":
        hour, minute = divmod(value, 60)
        return ((hour + rng.choice((1, 12, 23))) % 24) * 60 + minute
    step = rng.choice((1, 1, 2, 5, 10))
    return value + step if value - step < 2 or rng.random() < 0.5 else value - step


def number_pair(rng: random.Random, form: str | None = None, flip: bool = False) -> VetoPair:
    """One claim with its number written two ways (``form``, else one drawn); with
    ``flip`` the second states another value, written the second way."""
    chosen = form if form is not None else rng.choice(NUMBER_FORMS)
    subject = _capital(rng.choice(SUBJECTS))
    body = rng.choice(BODIES)
    value = _value(rng, chosen)
    # The same draws spell both values, so a flip differs from its paraphrase by
    # the value alone: the same template, unit and clock.
    ways = rng.random()
    template, first, second = _two_ways(random.Random(ways), chosen, value)
    if flip:
        _, _, second = _two_ways(random.Random(ways), chosen, _other(rng, chosen, value))
    return VetoPair("number flip" if flip else "number paraphrase", chosen,
                    (template.format(subject=subject, n=first), body),
                    (template.format(subject=subject, n=second), body))


def number_pairs(count: int, seed: int = 31) -> tuple[VetoPair, ...]:
    """``count`` number paraphrases and ``count`` number flips, every form in turn."""
    rng = random.Random(seed)
    same = tuple(number_pair(rng, NUMBER_FORMS[n % len(NUMBER_FORMS)]) for n in range(count))
    flips = tuple(number_pair(rng, NUMBER_FORMS[n % len(NUMBER_FORMS)], flip=True)
                  for n in range(count))
    return same + flips
