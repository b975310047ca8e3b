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

PairKind: TypeAlias = Literal["flip", "unrelated"]

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
