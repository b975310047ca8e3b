"""Anthropic's memory tool, the parts that are text: its paths, its answers, its edits.

The memory tool (``memory_20250818``) lets a model keep files under ``/memories``: it
views a folder or a file, creates a file, replaces a unique string in one, inserts a
line, deletes and renames. Served by a store, each ``/memories/...`` file is a memory
and each folder a folder of the store; the model reads and edits a memory as the
markdown the export writes of it, which the import reads back into the same memory
(``compose.memory_tool`` does the reading and landing; this module is pure).

A path is refused before anything is read when it could name something outside the
memories: it must start with ``/memories``, and no segment may be empty, ``.``,
``..`` or hidden (``.git``, ``.memhtml``); a backslash, a control character or a
percent-encoded byte is refused rather than decoded (``%2e%2e%2f`` is never read as
``../``), as the tool's documentation asks of a handler. A file's name keeps its
folders; its last suffix (``.md``, ``.txt``...) is the view's, and the memory is the
same name ending in ``.html``, so ``/memories/notes.md``, ``/memories/notes.txt`` and
``/memories/notes`` name one memory, ``notes.html``, listed as ``notes.md``.

The answers and edits follow the SDK's own file-system handler
(``BetaLocalFilesystemMemoryTool``) word for word, because a model is trained on
those answers; a law test holds them to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from returns.result import Failure, Result, Success

from memhtml.store.errors import Refused

__all__ = [
    "LINE_NUMBER_WIDTH",
    "MAX_FILE_BYTES",
    "MEMORIES_ROOT",
    "TEXT_SUFFIXES",
    "VIEW_MAX_CHARS",
    "ToolPath",
    "fallback_claim",
    "file_size",
    "folder_view",
    "inserted",
    "numbered",
    "replaced",
    "tool_path",
]

MEMORIES_ROOT: Final = "/memories"
TEXT_SUFFIXES: Final = (".md", ".markdown", ".txt", ".html", ".htm")
"""A file name's suffix the view drops: the memory's name is the stem plus ``.html``."""
MAX_FILE_BYTES: Final = 256 * 1024
"""The largest file a command may leave (UTF-8 bytes of its text): a memory is a fact
and its context, and a file past this is a log, which belongs in a transcript. Below
the store's own cap on one write (1 MiB), so the tool's refusal is the one a model
sees, in the tool's words."""
VIEW_MAX_CHARS: Final = 40_000
"""The most a ``view`` answers with (about 10,000 tokens); the rest is named with the
``view_range`` that shows it, so one large file cannot fill a model's context."""
MAX_PATH_CHARS: Final = 1024
LINE_NUMBER_WIDTH: Final = 6
MAX_LINES: Final = 999_999

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")
_TAG = re.compile(r"<[^>]*>")
_MARKERS = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)*")
_CLAIM_MAX = 200
_FEW_WORDS = 3


@dataclass(frozen=True, slots=True)
class ToolPath:
    """A ``/memories`` path, checked: its segments below the root, and whether it
    ended in ``/`` (it then names the folder the folder view lists, where a file has
    the folder's name: ``notes/`` beside ``notes.md``)."""

    parts: tuple[str, ...]
    folder_only: bool = False

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def shown(self) -> str:
        """The path as the tool names it, normalized (no trailing slash)."""
        return "/".join((MEMORIES_ROOT, *self.parts))

    @property
    def memory(self) -> str:
        """The tree path of the memory this path names as a file."""
        name = self.parts[-1]
        lowered = name.lower()
        for suffix in TEXT_SUFFIXES:
            if lowered.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                break
        return "/".join((*self.parts[:-1], name + ".html"))

    @property
    def folder(self) -> str:
        """The tree folder this path names as a folder (``a/b/``; the root is ``""``)."""
        return "".join(part + "/" for part in self.parts)

    @property
    def source(self) -> str:
        """The note name the memory records (``memhtml-source``): the stem, ``.md``."""
        return self.memory.rsplit("/", 1)[-1].removesuffix(".html") + ".md"


def tool_path(raw: str) -> Result[ToolPath, Refused]:
    """``raw`` checked to stay under ``/memories``, or why not.

    >>> tool_path("/memories/notes/coffee.md").unwrap().memory
    'notes/coffee.html'
    >>> tool_path("/memories/").unwrap().is_root
    True
    >>> tool_path("/memories/../.git/config").failure().reason
    'Path /memories/../.git/config would escape /memories directory'
    >>> tool_path("/memories/%2e%2e/x").failure().reason.split(":")[1]
    ' percent-encoded characters are not decoded; name the file as it is'
    """
    if len(raw) > MAX_PATH_CHARS:
        return Failure(Refused(f"Path refused: it is {len(raw)} characters, over "
                               f"{MAX_PATH_CHARS}"))
    if _CONTROL.search(raw) is not None:
        return Failure(Refused(f"Path {raw!r} refused: backslashes and control "
                               "characters are not allowed in a memory path"))
    if raw != MEMORIES_ROOT and not raw.startswith(MEMORIES_ROOT + "/"):
        return Failure(Refused(f"Path must start with /memories, got: {raw}"))
    if _PERCENT.search(raw) is not None:
        return Failure(Refused(f"Path {raw} refused: percent-encoded characters are not "
                               "decoded; name the file as it is"))
    rest = raw[len(MEMORIES_ROOT):].strip("/")
    parts = tuple(rest.split("/")) if rest else ()
    if any(part in (".", "..") for part in parts):
        return Failure(Refused(f"Path {raw} would escape /memories directory"))
    if any(not part for part in parts):
        return Failure(Refused(f"Path {raw} refused: it has an empty segment (//)"))
    if any(part.startswith(".") for part in parts):
        return Failure(Refused(f"Path {raw} refused: a name starting with a dot is hidden "
                               "(the store's own files), not a memory"))
    return Success(ToolPath(parts, folder_only=bool(parts) and raw.endswith("/")))


def fallback_claim(text: str, name: str) -> str:
    """The claim of a file with no prose to take one from (``compose.memory_tool``
    hands it to the conversion, which uses it only then): its words with markup and
    list markers taken off, from the first line that has any, and the file's name
    before them when that line alone says little (``status: phase 2``).

    >>> fallback_claim("# Only a heading", "h")
    'Only a heading'
    >>> fallback_claim("<status>\\n  <phase>2</phase>\\n</status>", "status")
    'status: 2'
    """
    words: list[str] = []
    for line in text.splitlines():
        words += _MARKERS.sub("", _TAG.sub(" ", line)).split()
        if len(words) >= _FEW_WORDS:
            break
    title = name.replace("_", " ").strip() or "memory"
    said = " ".join(words)
    if not any(ch.isalnum() for ch in said):
        return title[:_CLAIM_MAX]
    return (said if len(words) >= _FEW_WORDS else f"{title}: {said}")[:_CLAIM_MAX]


def _numbered_lines(lines: Sequence[str], start: int) -> list[str]:
    return [f"{str(i + start).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)]


def numbered(path: str, text: str, view_range: Sequence[int] | None = None
             ) -> Result[str, Refused]:
    """A file's view: each line numbered, as the SDK's handler answers, cut at
    ``VIEW_MAX_CHARS`` with the ``view_range`` that shows the rest."""
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        return Failure(Refused(f"File {path} exceeds maximum line limit of 999,999 lines."))
    start = 1
    shown: Sequence[str] = lines
    if view_range is not None:
        if len(view_range) != 2:
            return Failure(Refused(f"Invalid `view_range` {list(view_range)}: give two "
                                   "line numbers, [start, end] (end -1 for the last line)"))
        first, last = view_range
        if first < 1 or (last != -1 and last < first) or first > len(lines):
            return Failure(Refused(f"Invalid `view_range` {list(view_range)}: the file has "
                                   f"{len(lines)} lines; give [start, end] with 1 <= start "
                                   "<= end, or end -1 for the last line"))
        shown = lines[first - 1:] if last == -1 else lines[first - 1:last]
        start = first
    head = f"Here's the content of {path} with line numbers:\n"
    out = _numbered_lines(shown, start)
    answer = head + "\n".join(out)
    if len(answer) <= VIEW_MAX_CHARS:
        return Success(answer)
    kept: list[str] = []
    size = len(head)
    for line in out:
        if size + len(line) + 1 > VIEW_MAX_CHARS - 200:
            break
        kept.append(line)
        size += len(line) + 1
    next_line = start + len(kept)
    end = start + len(out) - 1
    return Success(head + "\n".join(kept) + (
        f"\n[{len(out) - len(kept)} more lines not shown: view them with view_range "
        f"[{next_line}, {end}]]"))


def _too_large(path: str, text: str) -> Refused | None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_FILE_BYTES:
        return None
    return Refused(f"No change was made: {path} would be {size} bytes, over the "
                   f"{MAX_FILE_BYTES}-byte limit on one memory file; keep a memory to "
                   "one fact and its context, and split the rest into other files")


def sized(path: str, text: str) -> Result[str, Refused]:
    """``text`` when a file may hold it, else the refusal naming the limit."""
    refused = _too_large(path, text)
    return Success(text) if refused is None else Failure(refused)


def replaced(path: str, text: str, old: str, new: str) -> Result[tuple[str, str], Refused]:
    """``text`` with its one ``old`` replaced by ``new``, and the answer with the
    changed lines around it; refused when ``old`` is absent or not unique."""
    count = text.count(old)
    if count == 0:
        return Failure(Refused(f"No replacement was performed, old_str `{old}` did not "
                               f"appear verbatim in {path}."))
    if count > 1:
        lines: list[int] = []
        line, counted = 1, 0
        at = text.find(old)
        while at != -1:
            line += text.count("\n", counted, at)
            counted = at
            lines.append(line)
            at = text.find(old, at + 1)
        return Failure(Refused(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in "
            f"lines: {', '.join(map(str, lines))}. Please ensure it is unique"))
    at = text.find(old)
    changed = text[:at].count("\n")
    after = text.replace(old, new)
    refused = _too_large(path, after)
    if refused is not None:
        return Failure(refused)
    new_lines = after.split("\n")
    first = max(0, changed - 2)
    last = min(len(new_lines), changed + 3)
    snippet = [f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{new_lines[n - 1]}"
               for n in range(first + 1, last + 1)]
    return Success((after, "The memory file has been edited. Here is the snippet showing "
                           "the change (with line numbers):\n" + "\n".join(snippet)))


def inserted(path: str, text: str, line: int, insert: str) -> Result[tuple[str, str], Refused]:
    """``text`` with ``insert`` as a line after line ``line`` (0: first), and the
    answer; refused past the file's end."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if line < 0 or line > len(lines):
        return Failure(Refused(f"Invalid `insert_line` parameter: {line}. It should be "
                               f"within the range [0, {len(lines)}]."))
    lines.insert(line, insert.rstrip("\n"))
    after = "\n".join(lines)
    if not after.endswith("\n"):
        after += "\n"
    refused = _too_large(path, after)
    if refused is not None:
        return Failure(refused)
    return Success((after, f"The file {path} has been edited."))


def file_size(size: int) -> str:
    """A size as the SDK's listing writes it (``0B``, ``512B``, ``1.5K``, ``2M``)."""
    if size == 0:
        return "0B"
    units = ("B", "K", "M", "G")
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024 ** index)
    return f"{int(scaled)}{units[index]}" if scaled == int(scaled) else \
        f"{scaled:.1f}{units[index]}"


def folder_view(path: str, size: int, entries: Sequence[tuple[int, str]]) -> str:
    """A folder's view, as the SDK's listing: the folder's own line, then each entry
    (size, path relative to it; a folder's ends in ``/``) up to two levels down, in
    order; cut at ``VIEW_MAX_CHARS`` with the count left out."""
    head = (f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:")
    lines = [f"{file_size(size)}\t{path}"]
    used = len(head) + len(lines[0]) + 2
    for index, (bytes_, rel) in enumerate(entries):
        line = f"{file_size(bytes_)}\t{path}/{rel}"
        if used + len(line) + 1 > VIEW_MAX_CHARS - 200:
            lines.append(f"[{len(entries) - index} more entries not shown: view a folder "
                         "below to see them]")
            break
        lines.append(line)
        used += len(line) + 1
    return head + "\n" + "\n".join(lines)
