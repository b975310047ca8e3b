"""The marks of writes in flight on disk (``Journals``): one JSON file per mark under
``<git-dir>/memhtml/pending/``, each put by renaming a fresh temporary over it and
fsyncing, so a kill leaves the older mark or the newer one, never half of either.

Nothing at a mark's name is ever opened for writing or followed: a FIFO or a link
there cannot hold a command or send the bytes elsewhere, and a link standing where
the marks' folder (or ``memhtml/`` above it) belongs is refused, not followed. A mark
is local state, never trusted: one that does not parse as a mark (a ref, blob ids,
step paths that stay inside the tree) is passed over, so no mark can name a file
outside the checkout or stop a command.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful

from memhtml.contracts.journals import Journal, JournalUnrecorded, PathStep
from memhtml.contracts.local_files import blocking_entry, read_regular, write_replacing
from memhtml.contracts.paths import check_tree_path

PENDING_DIR = "pending"
JOURNAL_SUFFIX = ".json"
ABANDONED_TEMPORARY_SECONDS = 600.0
"""A mark's temporary file older than this was left by a process killed while writing
it (writing one takes milliseconds); ``sweep`` removes it."""


MAX_MARK_BYTES = 1 << 22
"""The largest mark read (4 MiB: a write of every memory of a large store); a bigger
file at a mark's name is not one of memhtml's."""
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


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

    def _linked(self) -> Path | None:
        """A symbolic link standing where the marks' folder or ``memhtml/`` belongs."""
        for folder in (self.folder.parent, self.folder):
            if folder.is_symlink():
                return folder
        return None

    def put(self, journal: Journal) -> IOResult[Journal, JournalUnrecorded]:
        file = self.path_of(journal)
        linked = self._linked()
        if linked is not None:
            return IOFailure(JournalUnrecorded(
                f"cannot record the write in {self.folder}: {linked} is a symbolic link, "
                "where memhtml keeps a folder of its own (move it aside)"))
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
        if self._linked() is not None:
            return ()
        try:
            files = sorted(self.folder.glob(f"*{JOURNAL_SUFFIX}"),
                           key=lambda p: (_mtime(p), p.name))
        except OSError:
            return ()
        found: list[Journal] = []
        known = _READ.get(self.folder, {})
        seen: dict[tuple[object, ...], Journal] = {}
        for file in files:
            key = _identity(file)
            journal = known.get(key) if key is not None else None
            if journal is None:
                try:
                    data = read_regular(file, MAX_MARK_BYTES)
                    journal = _parsed(file.name, json.loads(data.decode("utf-8")))
                except (OSError, ValueError, KeyError, TypeError, RecursionError):
                    continue
            if key is not None:
                seen[key] = journal
            found.append(journal)
        _READ[self.folder] = seen
        return tuple(found)

    def sweep(self, now: float) -> None:
        if self._linked() is not None:
            return
        with contextlib.suppress(OSError):
            for file in self.folder.glob("*.tmp"):
                with contextlib.suppress(OSError):
                    if now - file.stat().st_mtime > ABANDONED_TEMPORARY_SECONDS:
                        file.unlink()


_READ: dict[Path, dict[tuple[object, ...], Journal]] = {}
"""The marks each folder held when last read, by the identity of their files: a command
reads the marks several times (before it starts, after it writes), and a mark of a
large import (thousands of steps, each path checked) took a tenth of a second to
parse. A mark is only ever replaced by renaming a new file over it, which is another
identity; only the last reading's files are kept."""


def _identity(file: Path) -> tuple[object, ...] | None:
    """What changes whenever the file at ``file`` is another file or is written: its
    name, inode, device, size and times; None when it cannot be looked at (it is read,
    and passed over if it cannot be)."""
    try:
        st = os.lstat(file)
    except OSError:
        return None
    return (file.name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
            st.st_mode)


def _body(journal: Journal) -> str:
    return json.dumps({
        "ref": journal.ref, "parent": journal.parent, "commit": journal.commit,
        "at": journal.at, "synced": journal.synced, "target": journal.target,
        "merge_parent": journal.merge_parent,
        "received": None if journal.received is None else list(journal.received),
        "steps": [[s.path, s.before, s.after] for s in journal.steps],
    })


def _parsed(name: str, data: object) -> Journal:
    """The mark ``data`` holds; ``ValueError`` when it is not one of memhtml's."""
    if not isinstance(data, dict) or not isinstance(data.get("ref"), str) \
            or not data["ref"].startswith("refs/") or not isinstance(data.get("steps"), list):
        raise ValueError("not a mark")
    steps: list[PathStep] = []
    for step in data["steps"]:
        if not isinstance(step, list) or len(step) != 3 or not isinstance(step[0], str) \
                or not is_successful(check_tree_path(step[0])):
            raise ValueError("a step that is not a path inside the tree")
        steps.append(PathStep(step[0], _object(step[1]), _object(step[2])))
    at = data.get("at", 0.0)
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        raise ValueError("a time that is not a number")
    received = _received(data.get("received", None))
    if received is not None and not all(is_successful(check_tree_path(p)) for p in received):
        raise ValueError("a received path that is not inside the tree")
    return Journal(name, data["ref"], tuple(steps), _object(data.get("parent")),
                   _object(data.get("commit")), float(at), data.get("synced") is True,
                   _object(data.get("target")), _object(data.get("merge_parent")), received)


def _object(value: object) -> str | None:
    """An object id, or None; anything else is not a mark's."""
    if value is None:
        return None
    if not isinstance(value, str) or not _OBJECT_ID.fullmatch(value):
        raise ValueError("not an object id")
    return value


def _received(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(str(path) for path in value)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
