"""The agent doors' services: the store's head, this clone's reads and the
transcripts directory, handed to the pure ``memhtml.agent`` functions.

``brief`` reads the access log of the last ``READS_DAYS`` days (a store with no state
plane, or one whose database cannot be read, briefs without the part: a briefing
must not fail on a counter). ``capture`` reads the transcript the caller names (at
most ``CAPTURE_MAX_BYTES``) and writes its redacted copy where ``transcripts_dir``
says; with the setting unset it is refused with the one line that sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Final

from returns.io import IOFailure, IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.agent.brief import BRIEF_ITEMS, BRIEF_TOKENS, Brief, brief
from memhtml.agent.capture import CAPTURE_MAX_BYTES, prepare
from memhtml.agent.recall import RECALL_LIMIT, RECALL_TOKENS, Recall, recall
from memhtml.compose.services import Services
from memhtml.compose.settings import SettingsError
from memhtml.contracts.errors import TranscriptFailure
from memhtml.store import Store, StoreError
from memhtml.store.stamps import now_stamp

READS_DAYS: Final = 90


def brief_of(services: Services, store: Store, *, budget: int = BRIEF_TOKENS,
             items: int = BRIEF_ITEMS) -> IOResult[Brief, StoreError]:
    """The session brief of the store's tip."""
    now = services.clock.now()
    reads: dict[str, int] = {}
    if services.state is not None:
        counted = services.state.access_counts(now - timedelta(days=READS_DAYS))
        if is_successful(counted):
            reads = {path: c.count
                     for path, c in unsafe_perform_io(counted.unwrap()).items()}
    return store.head().map(lambda version: brief(version, now_stamp(now), reads,
                                                  budget=budget, items=items))


def recall_of(store: Store, prompt: str, *, limit: int = RECALL_LIMIT,
              budget: int = RECALL_TOKENS) -> IOResult[Recall, StoreError]:
    """The memories of the store's tip the prompt has evidence for."""
    return store.head().map(lambda version: recall(version, prompt, limit=limit,
                                                   budget=budget))


@dataclass(frozen=True, slots=True)
class Captured:
    session: str
    path: str
    written: bool
    """False when the copy already held exactly these bytes."""
    lines: int
    redacted: int
    unparsed: int
    ended: bool


def capture_session(services: Services, source: Path, session: str, *, end: bool = False
                    ) -> IOResult[Captured, SettingsError | TranscriptFailure]:
    """``source`` redacted into ``transcripts_dir`` as ``<session>.jsonl``."""
    from memhtml.adapters.transcripts import keep_session, read_source
    from memhtml.compose.sleep import transcripts_source

    chosen = transcripts_source(services.settings.transcripts_dir)
    if not is_successful(chosen):
        return IOFailure(chosen.failure())
    directory = chosen.unwrap()
    if directory is None:
        return IOFailure(SettingsError(
            "transcripts_dir is not set, so there is nowhere to keep sessions for the "
            "nightly run: add transcripts_dir = \"~/.local/share/memhtml/transcripts\" to "
            "~/.config/memhtml/config.toml (or set MEMHTML_TRANSCRIPTS_DIR)"))
    root: Path = directory.root  # type: ignore[attr-defined]
    read: IOResult[bytes, SettingsError | TranscriptFailure] = read_source(
        source, CAPTURE_MAX_BYTES)

    def keep(data: bytes) -> IOResult[Captured, SettingsError | TranscriptFailure]:
        ready = prepare(data, end=end)
        written: IOResult[bool, SettingsError | TranscriptFailure] = keep_session(
            root, session, ready.data)
        return written.map(lambda done: Captured(
            session, str(root / f"{session}.jsonl"), done, ready.lines, ready.redacted,
            ready.unparsed, end))

    return read.bind(keep)


__all__ = ["Captured", "brief_of", "capture_session", "recall_of"]
