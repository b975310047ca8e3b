"""Trace-consolidation's sessions: a transcript's lines read into turns
(``parse_transcript``), and the listing walked into the night's settled, unconsolidated
sessions, oldest first and capped (``survey``).

Its own module because reading the transcript directory involves no model and no
write: the phase asks about what this hands it, and the sleep plan reads the same
survey to say how many sessions a run would consume. The line format and the rules
for which sessions are taken are in ``trace_consolidation``'s module docstring
(**Input**, **Which sessions**).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Final

from returns.io import IO, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Result

from memhtml.contracts.errors import StateError, TranscriptFailure
from memhtml.contracts.services import StatePlane
from memhtml.contracts.transcripts import TranscriptEntry, TranscriptSource
from memhtml.domain.thresholds import (
    TRACE_SESSIONS_PER_NIGHT,
    TRANSCRIPT_MAX_BYTES,
    TRANSCRIPT_SETTLE_SECONDS,
)

SESSION_END: Final = "session_end"
ROLE_CHARS: Final = 32

_ROLE: Final = re.compile(rf"[A-Za-z0-9_-]{{1,{ROLE_CHARS}}}")


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    text: str


@dataclass(frozen=True, slots=True)
class Parsed:
    """A transcript's turns, whether a ``session_end`` line closed it, and how many
    lines were not JSON objects."""

    turns: tuple[Turn, ...]
    closed: bool
    bad_lines: int


def _text_of(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        parts = [item["text"].strip() for item in value
                 if isinstance(item, dict) and isinstance(item.get("text"), str)]
        return "\n".join(part for part in parts if part)
    return ""


def _role_of(line: Mapping[str, object], message: Mapping[str, object]) -> str:
    for value in (line.get("role"), message.get("role"), line.get("type")):
        if isinstance(value, str):
            return value if _ROLE.fullmatch(value) else "unknown"
    return "unknown"


def parse_transcript(data: bytes) -> Parsed:
    """The turns of a transcript (see the module docstring for the line format)."""
    turns: list[Turn] = []
    closed = False
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            bad += 1
            continue
        if not isinstance(line, dict):
            bad += 1
            continue
        if line.get("type") == SESSION_END:
            closed = True
        inner = line.get("message")
        message: Mapping[str, object] = inner if isinstance(inner, dict) else {}
        text = (_text_of(line.get("content")) or _text_of(message.get("content"))
                or _text_of(line.get("text")))
        if text:
            turns.append(Turn(_role_of(line, message), text))
    return Parsed(tuple(turns), closed, bad)


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True, slots=True)
class Transcript:
    """A settled session chosen for tonight, as parsed."""

    entry: TranscriptEntry
    turns: tuple[Turn, ...]
    bad_lines: int

    @property
    def session(self) -> str:
        return self.entry.session


@dataclass(frozen=True)
class Survey:
    """What the listing held and what became of each session (module docstring)."""

    listed: int = 0
    consolidated_before: int = 0
    too_large: int = 0
    unsettled: int = 0
    unreadable: int = 0
    deferred: int = 0
    taken: tuple[Transcript, ...] = ()
    empty: tuple[Transcript, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def settled(self) -> int:
        """Settled, unconsolidated sessions a run would consume (all nights' worth)."""
        return len(self.taken) + len(self.empty) + self.deferred

    def counts(self) -> dict[str, int]:
        return {"sessions": self.listed, "consolidated_before": self.consolidated_before,
                "too_large": self.too_large, "unsettled": self.unsettled,
                "unreadable": self.unreadable, "settled": self.settled,
                "deferred": self.deferred, "empty": len(self.empty),
                "bad_lines": sum(t.bad_lines for t in self.taken)}


def aged(entry: TranscriptEntry, stamp: datetime) -> bool:
    """Unchanged for ``TRANSCRIPT_SETTLE_SECONDS`` before ``stamp`` (a time in the
    future, a clock skew, never is)."""
    return (stamp - entry.modified).total_seconds() >= TRANSCRIPT_SETTLE_SECONDS


def _failed(failure: TranscriptFailure) -> str:
    return f"{failure.path}: {failure.reason}"


def _classify(source: TranscriptSource, stamp: datetime, limit: int, so_far: Survey, *,
              entry: TranscriptEntry) -> IO[Survey]:
    """One listed, unconsolidated session added to ``so_far``: read (unless it is too
    large, or old and past the cap, where its place is known unread) and judged."""
    if entry.size > TRANSCRIPT_MAX_BYTES:
        return IO(replace(so_far, too_large=so_far.too_large + 1))
    if aged(entry, stamp) and len(so_far.taken) >= limit:
        return IO(replace(so_far, deferred=so_far.deferred + 1))

    def judged(got: Result[bytes, TranscriptFailure]) -> Survey:
        if not is_successful(got):
            return replace(so_far, unreadable=so_far.unreadable + 1, warnings=(
                *so_far.warnings, f"transcript not read: {_failed(got.failure())}"))
        parsed = parse_transcript(got.unwrap())
        if not (parsed.closed or aged(entry, stamp)):
            return replace(so_far, unsettled=so_far.unsettled + 1)
        chosen = Transcript(entry, parsed.turns, parsed.bad_lines)
        if not parsed.turns:
            return replace(so_far, empty=(*so_far.empty, chosen))
        if len(so_far.taken) >= limit:
            return replace(so_far, deferred=so_far.deferred + 1)
        return replace(so_far, taken=(*so_far.taken, chosen))

    return IO.from_ioresult(source.read(entry.session, TRANSCRIPT_MAX_BYTES)).map(judged)


def survey(source: TranscriptSource, state: StatePlane, stamp: datetime,
           limit: int = TRACE_SESSIONS_PER_NIGHT) -> IOResult[Survey, StateError]:
    """The settled, unconsolidated sessions, oldest first, at most ``limit`` of them
    taken (read and parsed) and the rest counted. A listing that fails is a warning in
    an otherwise empty survey; only the state plane failing fails it."""

    def after(got: Result[tuple[TranscriptEntry, ...], TranscriptFailure]
              ) -> IOResult[Survey, StateError]:
        if not is_successful(got):
            return IOSuccess(Survey(unreadable=1, warnings=(
                f"transcripts not listed: {_failed(got.failure())}",)))
        entries = got.unwrap()
        fresh: IOResult[tuple[str, ...], StateError] = state.unconsolidated(
            [entry.session for entry in entries])
        return fresh.bind(lambda ids: IOResult.from_io(
            _walk(source, stamp, limit, entries, frozenset(ids))))

    listed = IO.from_ioresult(source.sessions())
    return IOResult.from_typecast(listed.bind(lambda got: IO.from_ioresult(after(got))))


def _walk(source: TranscriptSource, stamp: datetime, limit: int,
          entries: Sequence[TranscriptEntry], fresh: frozenset[str]) -> IO[Survey]:
    start = Survey(listed=len(entries),
                   consolidated_before=sum(1 for e in entries if e.session not in fresh))
    ordered = sorted((e for e in entries if e.session in fresh),
                     key=lambda e: (e.modified, e.session))
    done: IO[Survey] = IO(start)
    for entry in ordered:
        done = done.bind(partial(_classify, source, stamp, limit, entry=entry))
    return done
