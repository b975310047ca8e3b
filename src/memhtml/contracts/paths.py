"""The two spellings of a memory path, and the checks that keep a path inside the store.

A link ``href`` is the *document* form, root-relative with a leading slash
(``/areas/deploy/x.html``) because a browser resolves it against the published
site. Git trees and the head's record map use the *tree* form without it
(``areas/deploy/x.html``). Conversion happens at the store boundary only.

Four checks, each stricter than the last: ``check_tree_path`` is what git may hold
(the adapters use it); ``check_checkout_path`` adds what no checkout can hold (a name
or a path too long for any file system; a tree brought from a remote is held to it);
``check_store_path`` adds where no memory can be (reads and edits use it, so an
existing file keeps working); ``check_portable_path`` adds what some file system a
clone lands on would read as another name or a device (a new name must pass it).
``check_carried_path`` is the last for a new name a remote's tree brings, which may
also be one of the files that travel with a store under ``.memhtml/``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused

_FORBIDDEN_SEGMENTS = frozenset({"", ".", ".."})


def to_tree_path(document_path: str) -> str:
    """``/a/b.html`` -> ``a/b.html``. A tree path passes through unchanged."""
    return document_path[1:] if document_path.startswith("/") else document_path


def to_document_path(tree_path: str) -> str:
    """``a/b.html`` -> ``/a/b.html``. A document path passes through unchanged."""
    return tree_path if tree_path.startswith("/") else "/" + tree_path


ARCHIVE_FOLDER = re.compile(r"([0-9]+)(?:-([2-9]|[1-9][0-9]+))?")
"""An archive path's year folder: ``2026``, or ``2026-2`` for that year's second
archive of one original path (``-1`` is never written: the first is the bare year)."""


def original_of_archived(path: str) -> str | None:
    """The original path an archive path (``archive/<YYYY>/<path>``, or
    ``archive/<YYYY>-<n>/<path>`` for a year's later archive of one path) was made
    from, or None for a live path. Here because the head (which follows a memory into
    the archive) and the store (which makes archive paths) both read it."""
    parts = path.split("/", 2)
    if len(parts) == 3 and parts[0] == "archive" and parts[2] \
            and ARCHIVE_FOLDER.fullmatch(parts[1]) is not None:
        return parts[2]
    return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""A control character, which no stored path may hold; one search in C where a test
per character cost a cold command's reading of a 3,000-path write mark about 0.3 s."""


def check_tree_path(path: str) -> Result[str, PathRefused]:
    """Accept a relative, slash-separated path that stays inside the store.

    Refused: absolute paths, backslashes, ``.``/``..``/empty segments, NUL and
    control characters, and anything under ``.git``. These are the spellings that
    would let a write land outside the repository's tree or inside git's own
    directory, so they are refused rather than normalized.
    """
    if not path:
        return Failure(PathRefused(path, "empty path"))
    if path.startswith("/"):
        return Failure(PathRefused(path, "absolute path; give it relative to the store root"))
    if "\\" in path:
        return Failure(PathRefused(path, "backslash in path; use '/' as the separator"))
    if _CONTROL.search(path) is not None:
        return Failure(PathRefused(path, "control character in path"))
    segments = path.split("/")
    if any(segment in _FORBIDDEN_SEGMENTS for segment in segments):
        return Failure(
            PathRefused(path, "empty, '.' or '..' segment: the path would leave the store")
        )
    if segments[0].lower() == ".git" or any(s.lower() == ".git" for s in segments):
        return Failure(PathRefused(path, "'.git' is git's own directory, not part of the store"))
    return Success(path)


MAX_SEGMENT_BYTES = 255
"""The longest file or directory name, in UTF-8 bytes, that ext4, APFS and NTFS all hold."""
MAX_PATH_BYTES = 4096
"""The longest path, in UTF-8 bytes: Linux's ``PATH_MAX``; git cannot check out a longer one."""
STATE_DIR = ".memhtml"
"""This clone's local state directory at the store root (ignored by git, never a memory)."""

_DEVICES = ("CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
            *(f"{port}{n}" for port in ("COM", "LPT") for n in "123456789\u00b9\u00b2\u00b3"))
_RESERVED_STEMS = frozenset(_DEVICES)
"""Windows device names: a file whose stem is one of them opens the device instead."""
_WINDOWS_FORBIDDEN = frozenset('<>:"|?*')


def path_key(path: str) -> str:
    """The form two names share when a case-insensitive or normalizing file system
    (NTFS, APFS, HFS+) would make them one file: NFC, case-folded, NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def shown_path(path: str) -> str:
    """A path quoted for a message: ``repr``, and every character past ASCII escaped
    when the path is not in NFC, so the decomposed twin of a name (``cafe\\u0301``)
    never prints the same as its composed one (``café``)."""
    return repr(path) if unicodedata.is_normalized("NFC", path) else ascii(path)


def is_reserved_name(segment: str) -> bool:
    """Whether Windows reads ``segment`` as a device: its stem (the part before the
    first dot, trailing spaces dropped, case ignored) is CON, PRN, AUX, NUL, CONIN$,
    CONOUT$, COM1-COM9 or LPT1-LPT9 (the superscript ¹²³ forms too)."""
    return segment.split(".", 1)[0].rstrip(" ").upper() in _RESERVED_STEMS


def check_checkout_path(path: str) -> Result[str, PathRefused]:
    """``check_tree_path``, and a path no checkout could hold is refused too: a name over
    ``MAX_SEGMENT_BYTES`` or a path over ``MAX_PATH_BYTES`` (UTF-8). Git keeps such a
    path in a tree, but no file system a clone lands on can write it, so a tree brought
    from elsewhere is held to this whatever its names are."""
    def bounded(tree: str) -> Result[str, PathRefused]:
        size = len(tree.encode("utf-8"))
        if size > MAX_PATH_BYTES:
            return Failure(PathRefused(tree, f"path is {size} bytes (UTF-8), over the "
                                             f"{MAX_PATH_BYTES}-byte limit"))
        for segment in tree.split("/"):
            width = len(segment.encode("utf-8"))
            if width > MAX_SEGMENT_BYTES:
                return Failure(PathRefused(tree, f"name {_short(segment)!r} is {width} bytes "
                                                 f"(UTF-8), over the {MAX_SEGMENT_BYTES}-byte "
                                                 "limit on one file or directory name"))
        return Success(tree)

    return check_tree_path(path).bind(bounded)


def check_store_path(path: str) -> Result[str, PathRefused]:
    """``check_checkout_path``, and anything under the root's ``.memhtml/``, the state
    directory, is refused too.

    This is what a read or an edit may name. An existing file keeps working: the
    stricter rules a new name must meet are ``check_portable_path``'s.
    """
    def outside_state(tree: str) -> Result[str, PathRefused]:
        if tree.split("/", 1)[0] == STATE_DIR:
            return Failure(PathRefused(tree, _STATE_DIR_REASON))
        return Success(tree)

    return check_checkout_path(path).bind(outside_state)


_STATE_DIR_REASON = (f"{STATE_DIR}/ is this clone's state directory: git ignores it and "
                     "nothing reads a memory there")


def check_portable_path(path: str, existing: int = 0) -> Result[str, PathRefused]:
    """A name a *new* file may be given: ``check_store_path``, and one every file system
    a clone may land on holds as itself.

    Refused: ``.memhtml`` at the root in any case (a case-insensitive file system maps
    ``.MEMHTML/`` onto the state directory); a Windows device name as a segment's stem
    (``con.html``, ``nul.d/``, ``Com1.txt``); a segment ending in a dot or a space
    (Windows drops them, so ``a.`` and ``a`` are one name); and the characters
    ``<>:"|?*``. The first ``existing`` segments name a directory the tree already
    has, and a name that exists is not a new one: they are held to the store rules
    only, so a memory can still be added beside one in a directory an older version
    (or another tool) named. Whether the name collides with an existing one by case
    or Unicode normalization needs the tree, so the store judges that.
    """
    return check_store_path(path).bind(lambda tree: _portable(tree, existing))


def check_carried_path(path: str, existing: int = 0, travelling: Collection[str] = ()
                       ) -> Result[str, PathRefused]:
    """A new name in a tree brought from elsewhere (another clone's branch): what
    ``check_portable_path`` asks of a new name, except that under the state directory
    the entries that travel with a store on purpose (``travelling``, first names under
    ``.memhtml/``: its settings, its marker, the sleep run's reports) are names like any
    other rather than refused. Anything else under ``.memhtml/`` is refused: a checkout
    would write it among this clone's own state, which git ignores."""
    parts = path.split("/")
    if len(parts) >= 2 and parts[0] == STATE_DIR and parts[1] in travelling:
        return check_checkout_path(path).bind(lambda tree: _portable(tree, existing))
    return check_portable_path(path, existing)


def _portable(tree: str, existing: int) -> Result[str, PathRefused]:
    segments = tree.split("/")
    if segments[0] != STATE_DIR and segments[0].casefold() == STATE_DIR:
        return Failure(PathRefused(tree, _STATE_DIR_REASON + " (on a case-insensitive "
                                         "file system any spelling is that directory)"))
    for segment in segments[existing:]:
        reason = _segment_problem(segment)
        if reason is not None:
            return Failure(PathRefused(tree, reason))
    return Success(tree)


def _segment_problem(segment: str) -> str | None:
    if is_reserved_name(segment):
        stem = segment.split(".", 1)[0].rstrip(" ")
        return (f"name {segment!r} is the Windows device name {stem.upper()}; "
                "a Windows checkout would open the device instead of the file")
    forbidden = sorted({ch for ch in segment if ch in _WINDOWS_FORBIDDEN})
    if forbidden:
        return (f"name {_short(segment)!r} holds {' '.join(forbidden)}, which Windows "
                "does not allow in a file name")
    if segment.endswith((".", " ")):
        return (f"name {_short(segment)!r} ends in a {'dot' if segment[-1] == '.' else 'space'}"
                ", which Windows drops, making it another file's name")
    return None


def _short(segment: str) -> str:
    """A name as an error message quotes it: a few dozen characters, not a whole 300."""
    return segment if len(segment) <= 48 else segment[:45] + "..."
