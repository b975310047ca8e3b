"""Agent session transcripts, the input trace-consolidation distils memories from.

A transcript is one JSON-lines file per session in a directory the user names (the
local ``transcripts_dir`` setting, never a store's committed file: which files of this
machine are read and sent to a model is the user's choice). The session id is the
file's stem. The source lists what is there without reading it, so a run decides which
sessions are settled and unconsolidated before it reads a byte of any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from returns.io import IOResult

from memhtml.contracts.errors import TranscriptFailure


@dataclass(frozen=True, slots=True, order=True)
class TranscriptEntry:
    """One transcript as listed: its session id, when it last changed (UTC) and its
    size in bytes."""

    session: str
    modified: datetime
    size: int


class TranscriptSource(Protocol):
    """Where transcripts are read from (a directory, in the shipped adapter)."""

    def sessions(self) -> IOResult[tuple[TranscriptEntry, ...], TranscriptFailure]:
        """Every transcript there, ordered by session id."""
        ...

    def read(self, session: str, limit: int) -> IOResult[bytes, TranscriptFailure]:
        """One transcript's bytes, at most ``limit`` of them (a longer file is refused,
        not cut: a cut line is not JSON and a cut session is not the session)."""
        ...
