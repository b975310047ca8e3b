"""The marks of writes in flight on disk (``Journals``): one JSON file per mark under
``<git-dir>/memhtml/pending/``, each put by renaming a fresh temporary over it and
fsyncing, so a kill leaves the older mark or the newer one, never half of either.

Nothing at a mark's name is ever opened for writing or followed: a FIFO or a link
there cannot hold a command or send the bytes elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.journals import Journal, JournalUnrecorded, PathStep
from memhtml.contracts.local_files import blocking_entry, read_regular, write_replacing

PENDING_DIR = "pending"
JOURNAL_SUFFIX = ".json"
ABANDONED_TEMPORARY_SECONDS = 600.0
"""A mark's temporary file older than this was left by a process killed while writing
it (writing one takes milliseconds); ``sweep`` removes it."""


def pending_dir(git_dir: Path) -> Path:
    """Where a clone whose git directory is ``git_dir`` keeps its marks."""
    return git_dir / "memhtml" / PENDING_DIR


@dataclass(frozen=True, slots=True)
class JournalFiles:
    """The marks of the clone whose git directory is ``git_dir``."""

    git_dir: Path

    @property
    def folder(self) -> Path:
        return pending_dir(self.git_dir)

    def path_of(self, journal: Journal) -> Path:
        """The file a mark is kept in."""
        return self.folder / journal.name

    def new_name(self) -> str:
        return f"{os.getpid()}-{secrets.token_hex(6)}{JOURNAL_SUFFIX}"

    def put(self, journal: Journal) -> IOResult[Journal, JournalUnrecorded]:
        file = self.path_of(journal)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            # A new temporary, renamed over the mark: nothing found at either name (a
            # FIFO, a link) is ever opened for writing.
            write_replacing(file, _body(journal).encode("utf-8"), file.with_suffix(".tmp"),
                            sync=True)
        except OSError as exc:
            blocked = blocking_entry(self.folder, self.git_dir)
            return IOFailure(JournalUnrecorded(
                f"cannot record the write in {self.folder}: {exc}"
                + (f" ({blocked}: move it aside)" if blocked else "")))
        return IOSuccess(journal)

    def drop(self, journal: Journal) -> None:
        with contextlib.suppress(OSError):
            self.path_of(journal).unlink(missing_ok=True)

    def read_all(self) -> tuple[Journal, ...]:
        """Every mark, oldest first (by the file's time, then its name). An unreadable
        one is skipped (``doctor``'s scan still finds what it was about, and names a
        mark that is not a regular file)."""
        try:
            files = sorted(self.folder.glob(f"*{JOURNAL_SUFFIX}"),
                           key=lambda p: (_mtime(p), p.name))
        except OSError:
            return ()
        found: list[Journal] = []
        for file in files:
            try:
                found.append(_parsed(file.name, json.loads(read_regular(file).decode("utf-8"))))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return tuple(found)

    def sweep(self, now: float) -> None:
        with contextlib.suppress(OSError):
            for file in self.folder.glob("*.tmp"):
                with contextlib.suppress(OSError):
                    if now - file.stat().st_mtime > ABANDONED_TEMPORARY_SECONDS:
                        file.unlink()


def _body(journal: Journal) -> str:
    return json.dumps({
        "ref": journal.ref, "parent": journal.parent, "commit": journal.commit,
        "at": journal.at, "synced": journal.synced, "target": journal.target,
        "merge_parent": journal.merge_parent,
        "received": None if journal.received is None else list(journal.received),
        "steps": [[s.path, s.before, s.after] for s in journal.steps],
    })


def _parsed(name: str, data: dict[str, object]) -> Journal:
    steps = tuple(PathStep(str(path), _blob(before), _blob(after))
                  for path, before, after in data["steps"])  # type: ignore[attr-defined]
    return Journal(name, str(data["ref"]), steps, _blob(data.get("parent")),
                   _blob(data.get("commit")), float(data.get("at", 0.0)),  # type: ignore[arg-type]
                   data.get("synced") is True, _blob(data.get("target")),
                   _blob(data.get("merge_parent")), _received(data.get("received")))


def _blob(value: object) -> str | None:
    return None if value is None else str(value)


def _received(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(str(path) for path in value)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
