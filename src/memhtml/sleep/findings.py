"""What a detector and the task machinery pass between them: the ``Finding`` a detector
states, with its evidence (a ``Quote`` of a memory, a ``SessionQuote`` of a transcript,
or a ``Measurement``); the digest of a finding and the task path it names
(``finding_digest``, ``task_path``, ``digest_of_path``); and the ``TaskCounts`` that
minting and sweeping hand back.

Its own module because these are plain values and names, read by every detector and by
``sleep.protected``, while ``sleep.tasks`` holds what is done with them: writing,
refreshing and closing task files through the plan, and reading a person's close from
the history. Why the path is the key is in ``sleep.tasks``'s module docstring.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, fields
from typing import Final, Literal, TypeAlias

from memhtml.sleep.decisions import Decision, FigureValue
from memhtml.store.layout import TASKS, slug_of

DIGEST_HEX: Final = 12
"""Hex digits of the finding's digest in the file name: 48 bits, so a store would need
millions of one detector's findings before two collide."""
SLUG_MAX: Final = 48
_DETECTED_NAME = re.compile(rf"det-([0-9a-f]{{{DIGEST_HEX}}})-[^/]*\.html")

MeasureKind: TypeAlias = Literal["ratio", "predicate", "count"]


@dataclass(frozen=True, slots=True)
class Quote:
    """A sentence the finding rests on, and the memory (either path form) stating it."""

    path: str
    sentence: str


@dataclass(frozen=True, slots=True)
class Measurement:
    """A number or name the night computed (a cosine ratio, the veto predicate that
    fired, a detection count): no file states it, so none is quoted."""

    kind: MeasureKind
    value: float | int | str


@dataclass(frozen=True, slots=True)
class SessionQuote:
    """A sentence quoted from an agent session's transcript. The transcript is not a
    memory the view holds, so the detector that read it checks the quote against it
    before it makes the finding (trace-consolidation does); ``mint_tasks`` cannot."""

    session: str
    sentence: str


Evidence: TypeAlias = Quote | Measurement | SessionQuote


@dataclass(frozen=True, slots=True)
class Finding:
    """One decision a detector leaves to a person.

    ``finding`` is the detector's canonical string for it (sorted, stable across
    nights: two paths of a pair in order, say); with ``detector`` it names the task
    file. ``title`` and ``statement`` are what the person reads first.
    """

    detector: str
    finding: str
    title: str
    statement: str
    evidence: Evidence
    figures: tuple[tuple[str, FigureValue], ...] = ()
    """What the detector measured besides the evidence (a cosine, say), for the
    task's decision record."""
    related: tuple[str, ...] = ()
    """The memories the finding is about, for the task's decision record."""
    rule: str | None = None
    """The rule the task's decision names, when not the detector's (``TASK_RULES``)."""


@dataclass(frozen=True, slots=True)
class TaskCounts:
    """What minting and sweeping did. ``blocked``: a finding whose path holds something
    that is not its open task, or a write or close the store refused (each with a
    warning)."""

    minted: int = 0
    refreshed: int = 0
    """Open tasks rewritten because their finding's words changed (or a swept task
    whose finding came back, opened again)."""
    refused_quote: int = 0
    overflow: int = 0
    closed: int = 0
    blocked: int = 0
    dismissed: int = 0
    """Findings whose task a person closed: not opened again."""
    unchanged: int = 0
    """Open tasks whose finding stands as written: left alone, nothing committed."""
    edited: int = 0
    """Open tasks whose finding's words changed but whose article a person edited: left
    as the person has them (the finding is still the same pair)."""
    warnings: tuple[str, ...] = ()
    decisions: tuple[Decision, ...] = field(default=(), compare=False)
    """Each task opened, rewritten or closed, as the detector's decision (a record of
    the counts, not one of them: two tallies compare by their numbers)."""

    def __add__(self, other: TaskCounts) -> TaskCounts:
        return TaskCounts(*(getattr(self, f.name) + getattr(other, f.name)
                            for f in fields(TaskCounts)))

    def as_counts(self, prefix: str = "tasks_") -> dict[str, int]:
        """The numbers for a phase's ``Memhtml-Counts``, each name prefixed."""
        return {f"{prefix}{f.name}": getattr(self, f.name)
                for f in fields(TaskCounts) if f.name not in ("warnings", "decisions")}


def finding_digest(detector: str, finding: str) -> str:
    """The first ``DIGEST_HEX`` hex digits of sha256 over the detector and its finding
    (a NUL between them, so no two pairs of strings run together alike)."""
    data = f"{detector}\x00{finding}".encode()
    return hashlib.sha256(data).hexdigest()[:DIGEST_HEX]


def task_path(finding: Finding) -> str:
    """``areas/tasks/det-<12 hex>-<slug>.html``; the slug only helps a person read it."""
    slug = slug_of(finding.title)[:SLUG_MAX].strip("-") or "finding"
    return f"{TASKS}det-{finding_digest(finding.detector, finding.finding)}-{slug}.html"


def digest_of_path(path: str) -> str | None:
    """The digest a detected task's path carries, or None for any other path."""
    if not path.startswith(TASKS):
        return None
    found = _DETECTED_NAME.fullmatch(path[len(TASKS):])
    return None if found is None else found.group(1)
