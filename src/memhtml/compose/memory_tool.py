"""Anthropic's memory tool served by a store: each command read or landed through the doors.

``agent.memory_tool`` checks the paths and does the text; this module reads the
memories and lands each change as one commit, ``memhtml memory-tool: <command>
<path>``, with the command in a ``Memhtml-Memory-Tool`` trailer:

- ``view`` of a file answers the memory as the markdown export writes it (its
  frontmatter, then its body), line-numbered; of a folder, what it holds two levels
  down (the store's ``archive/`` left out, as the tool leaves out hidden items);
- ``create`` converts the text as the markdown import converts a note (a file with
  no prose takes its first line as its claim) and writes it at the named path;
- ``str_replace`` and ``insert`` edit that markdown and put the memory back **in
  place** (``revise``): same path, ``created`` kept, its edges kept as they were
  (an edge is changed with ``memhtml link``/``unlink``; one named only in the text
  is kept as the note's own link and is no edge); git keeps the version before;
- ``delete`` archives (a folder: each memory under it, one commit), so ``memhtml
  restore`` brings it back; ``rename`` moves (a folder: each memory under it), and
  every link to a moved memory follows it.

A memory a person edits by hand stays theirs: a door refuses a path with uncommitted
edits, as every door does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final, Protocol

from returns.io import IOFailure, IOResult
from returns.result import Failure, Result, Success

from memhtml.agent.memory_tool import (
    ToolPath,
    fallback_claim,
    folder_view,
    inserted,
    numbered,
    replaced,
    sized,
    tool_path,
)
from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head import is_archived_path, record_from
from memhtml.store import (
    BArchive,
    BatchOp,
    BMove,
    BRevise,
    BWrite,
    Refused,
    Store,
    StoreError,
    WriteInput,
    batch,
)
from memhtml.store.markdown_export import export_markdown, export_paths
from memhtml.store.markdown_note import (
    Converted,
    check_rendered,
    convert_markdown,
    render_file,
)
from memhtml.store.markdown_write import article_root
from memhtml.store.stamps import now_stamp

__all__ = [
    "MEMORY_TOOL_LABEL",
    "MEMORY_TOOL_TRAILER",
    "tool_create",
    "tool_delete",
    "tool_insert",
    "tool_rename",
    "tool_str_replace",
    "tool_view",
]

MEMORY_TOOL_LABEL: Final = "memory-tool"
"""The op a memory-tool commit's subject names: ``memhtml memory-tool: create ...``."""
MEMORY_TOOL_TRAILER: Final = "Memhtml-Memory-Tool"
"""The trailer that carries the command, as the model gave it."""
_ARCHIVE = "archive/"
_FRONT: Final = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
VERBATIM_SUFFIX: Final = ".txt"
"""The note name (``memhtml-source``) of a memory the tool keeps verbatim: its text
is the article's one code block, given back whole by ``view``."""


class _NoView:
    """A view holding nothing: a file's text read back alone, before it lands."""

    def get(self, path: str) -> MemoryRecord | None:
        return None


_NO_VIEW: Final = _NoView()

ToolResult = IOResult[str, StoreError]


def _path(raw: str) -> IOResult[ToolPath, StoreError]:
    checked: Result[ToolPath, StoreError] = tool_path(raw).alt(lambda e: e)
    return IOResult.from_result(checked)


def _missing(raw: str) -> Refused:
    return Refused(f"The path {raw} does not exist. Please provide a valid path.")


def _file(view: HeadView, path: ToolPath) -> MemoryRecord | None:
    """The memory the path names as a file: none for the root, nor for a path ending
    in ``/`` where a folder of that name holds memories (``notes/`` beside
    ``notes.md``)."""
    if path.is_root or (path.folder_only
                        and any(p.startswith(path.folder) for p in view.paths())):
        return None
    return view.get(path.memory)


def _live(view: HeadView, path: ToolPath) -> MemoryRecord | None:
    record = _file(view, path)
    return record if record is not None and not record.archived else None


def _under(view: HeadView, folder: str) -> list[str]:
    """The live memories anywhere under ``folder`` (the root: all but the archive)."""
    return sorted(p for p in view.paths() if p.startswith(folder)
                  and not is_archived_path(p))


def _verbatim_text(record: MemoryRecord) -> str | None:
    """A verbatim memory's text: its article's code block, whole."""
    if not (record.source or "").endswith(VERBATIM_SUFFIX):
        return None
    article = article_root(record.html)
    blocks = article.findall(".//pre") if article is not None else []
    return "".join(blocks[-1].itertext()) if blocks else None


class _Records(Protocol):
    def get(self, path: str) -> MemoryRecord | None: ...


def text_of(view: _Records, record: MemoryRecord) -> str:
    """The memory as the model reads it: a verbatim one's text as given; else the
    export's markdown, its edges named by the memories they reach (only those are
    exported beside it, so this costs its links, not the store), and the store's own
    ``updated`` stamp left out unless the text wrote it (an edit would otherwise move
    every line down by a frontmatter the model never wrote)."""
    verbatim = _verbatim_text(record)
    if verbatim is not None:
        return verbatim
    shown = replace(record, status="active", archived=False, updated_at=record.created_at)
    targets = [t for t in (view.get(to_tree_path(link.href)) for link in record.links)
               if t is not None and t.path != record.path]
    chosen = [shown, *targets]
    own = export_paths(chosen)[record.path]
    return export_markdown(chosen).files[own]


def _converted(store: Store, path: ToolPath, source: str, note: bytes, claim: str
               ) -> Result[Converted, str]:
    """The note converted as the import converts one (raw HTML kept as text when the
    format refuses it), or why it cannot be a memory."""
    why = ""
    for raw_html in (True, False):
        done = convert_markdown(source, note, raw_html=raw_html, detect=store.deps.detect,
                                fallback_claim=claim)
        if isinstance(done, Failure):
            failure = done.failure()
            return Failure(failure if isinstance(failure, str) else failure.reason)
        refused = check_rendered(done.unwrap(), path.memory)
        if refused is None:
            return Success(done.unwrap())
        why = refused
    return Failure(why)


def _fenced(text: str) -> bytes:
    """``text`` as one fenced code block, its fence longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}\n".encode()


def _rendered(store: Store, path: ToolPath, text: str, links: tuple[Link, ...],
              view: _Records = _NO_VIEW) -> Result[str, StoreError]:
    """The memory file a text becomes at ``path``, ``links`` its edges (the memories
    they reach read from ``view``, as ``view`` names them): the note as the import
    converts it when the view gives the text back as written; else (XML, a table the
    markdown reader joins, raw HTML the format refuses) the text kept verbatim as the
    article's code block, so what the model wrote is what it reads."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError as error:
        return Failure(Refused(f"No change was made: the text has a lone surrogate at "
                               f"offset {error.start}, which UTF-8 cannot hold"))
    at = now_stamp(store.deps.clock.now())
    claim = fallback_claim(text, path.parts[-1].rsplit(".", 1)[0])
    note = _converted(store, path, path.source, raw, claim)
    if isinstance(note, Success):
        html = render_file(note.unwrap(), links, at)
        record = record_from(html, path.memory).value_or(None)
        if record is not None and text_of(view, record).rstrip("\n") == \
                text.replace("\r\n", "\n").rstrip("\n"):
            return Success(html)
    # The text whole in the code block; its frontmatter, when it has one the reader
    # takes, also before it, so the memory keeps the type, tags, entities and stamps
    # the text gives (an edit of a memory holding raw HTML otherwise dropped them).
    source = path.source.removesuffix(".md") + VERBATIM_SUFFIX
    front = _FRONT.match(text.replace("\r\n", "\n"))
    verbatim = _converted(store, path, source, _fenced(text), claim)
    if front is not None:
        with_front = _converted(store, path, source,
                                front.group(0).encode() + b"\n" + _fenced(text), claim)
        verbatim = with_front if isinstance(with_front, Success) else verbatim
    match verbatim:
        case Success(converted):
            return Success(render_file(converted, links, at))
        case Failure(why):
            return Failure(Refused(f"No change was made: {path.shown} cannot be a memory: "
                                   f"{why}"))
    raise AssertionError("unreachable")  # pragma: no cover


def _land(store: Store, command: str, ops: Sequence[BatchOp], answer: str) -> ToolResult:
    return batch(store, ops, subject=command, label=MEMORY_TOOL_LABEL,
                 trailers=((MEMORY_TOOL_TRAILER, command),)).map(lambda _: answer)


def tool_view(store: Store, raw: str, view_range: Sequence[int] | None = None) -> ToolResult:
    """A file's markdown, numbered, or a folder's entries two levels down."""
    def answer(path: ToolPath, view: HeadView) -> Result[str, StoreError]:
        record = _file(view, path)
        if record is not None:
            return numbered(raw, text_of(view, record), view_range).alt(lambda e: e)
        folder = path.folder
        if path.is_root or any(p.startswith(folder) for p in view.paths()):
            return Success(_folder(view, raw.rstrip("/") or raw, folder))
        return Failure(_missing(raw))

    return _path(raw).bind(lambda path: store.head().bind(
        lambda view: IOResult.from_result(answer(path, view))))


def _folder(view: HeadView, shown: str, folder: str) -> str:
    sizes: dict[str, int] = {}
    total = 0
    paths = (p for p in view.paths() if p.startswith(folder))
    for tree in paths:
        rel = tree[len(folder):]
        if not folder and rel.startswith(_ARCHIVE):
            continue
        record = view.get(tree)
        size = len(record.html.encode("utf-8")) if record is not None else 0
        total += size
        parts = rel.split("/")
        for depth in range(1, min(2, len(parts) - 1) + 1):
            key = "/".join(parts[:depth]) + "/"
            sizes[key] = sizes.get(key, 0) + size
        if len(parts) <= 2:
            shown_name = rel.removesuffix(".html") + ".md"
            sizes[shown_name] = size
    return folder_view(shown, total, [(sizes[rel], rel) for rel in sorted(sizes)])


def tool_create(store: Store, raw: str, text: str) -> ToolResult:
    """A new memory at the path, from the text; refused where one already is."""
    def create(path: ToolPath, view: HeadView) -> ToolResult:
        if path.is_root or (view.get(path.memory) is None
                            and any(p.startswith(path.folder) for p in view.paths())):
            return IOFailure(Refused(f"The path {raw} is a directory; create a file in it"))
        if path.memory.startswith(_ARCHIVE):
            return IOFailure(Refused(f"No change was made: {raw} is in the store's archive, "
                                     "where deleted memories are kept; create it elsewhere"))
        if view.get(path.memory) is not None:
            return IOFailure(Refused(f"File {raw} already exists"))
        fits: Result[str, StoreError] = sized(raw, text).alt(lambda e: e)
        return IOResult.from_result(fits.bind(
            lambda _: _rendered(store, path, text, ()))).bind(
            lambda html: _land(store, f"create {path.shown}",
                               [BWrite(WriteInput(file_html=html, path=path.memory))],
                               f"File created successfully at: {raw}"))

    return _path(raw).bind(lambda path: store.head().bind(lambda view: create(path, view)))


def _edit(store: Store, raw: str, command: str,
          edit: Callable[[str], Result[tuple[str, str], Refused]]) -> ToolResult:
    def revise(path: ToolPath, view: HeadView) -> ToolResult:
        record = _live(view, path)
        if record is None:
            if _file(view, path) is not None:
                return IOFailure(Refused(f"No change was made: {raw} is archived; "
                                         "restore it first (memhtml restore)"))
            if path.is_root or _under(view, path.folder):
                return IOFailure(Refused(f"The path {raw} is not a file."))
            return IOFailure(_missing(raw))
        edited: Result[tuple[str, str], StoreError] = edit(text_of(view, record)).alt(
            lambda e: e)

        def land(done: tuple[str, str]) -> ToolResult:
            after, answer = done
            return IOResult.from_result(_rendered(store, path, after, record.links,
                                                  view)).bind(
                lambda html: _land(store, f"{command} {path.shown}",
                                   [BRevise(record.path, html)], answer))

        return IOResult.from_result(edited).bind(land)

    return _path(raw).bind(lambda path: store.head().bind(lambda view: revise(path, view)))


def tool_str_replace(store: Store, raw: str, old: str, new: str) -> ToolResult:
    """The memory's one ``old`` replaced by ``new``, the memory kept where it is."""
    return _edit(store, raw, "str_replace", lambda text: replaced(raw, text, old, new))


def tool_insert(store: Store, raw: str, line: int, text: str) -> ToolResult:
    """``text`` inserted after line ``line`` of the memory's markdown (0: first)."""
    return _edit(store, raw, "insert", lambda current: inserted(raw, current, line, text))


def tool_delete(store: Store, raw: str) -> ToolResult:
    """The memory, or every memory under the folder, archived in one commit."""
    def delete(path: ToolPath, view: HeadView) -> ToolResult:
        if path.is_root:
            return IOFailure(Refused("Cannot delete the /memories directory itself"))
        record = _live(view, path)
        paths = [record.path] if record is not None else _under(view, path.folder)
        if not paths:
            return IOFailure(Refused(f"The path {raw} does not exist"))
        kept = ("it is kept in the store's archive; `memhtml restore " + paths[0] + "` "
                "brings it back") if len(paths) == 1 else (
            f"its {len(paths)} memories are kept in the store's archive; `memhtml "
            "restore PATH` brings each back")
        return _land(store, f"delete {path.shown}", [BArchive(p) for p in paths],
                     f"Successfully deleted {raw} ({kept})")

    return _path(raw).bind(lambda path: store.head().bind(lambda view: delete(path, view)))


def tool_rename(store: Store, old_raw: str, new_raw: str) -> ToolResult:
    """The memory, or every memory under the folder, moved to the new path in one
    commit; every link to a moved memory follows it."""
    def rename(old: ToolPath, new: ToolPath, view: HeadView) -> ToolResult:
        if old.is_root:
            return IOFailure(Refused("Cannot rename the /memories directory itself"))
        if new.is_root or view.get(new.memory) is not None or _under(view, new.folder):
            return IOFailure(Refused(f"The destination {new_raw} already exists"))
        if new.memory.startswith(_ARCHIVE) or new.folder.startswith(_ARCHIVE):
            return IOFailure(Refused(f"No change was made: {new_raw} is in the store's "
                                     "archive; delete archives a memory"))
        record = _live(view, old)
        if record is not None:
            moves = [BMove(record.path, new.memory)]
        else:
            under = _under(view, old.folder)
            if not under:
                return IOFailure(Refused(f"The path {old_raw} does not exist"))
            if new.folder.startswith(old.folder):
                return IOFailure(Refused(f"No change was made: {new_raw} is inside "
                                         f"{old_raw}; a folder cannot move into itself"))
            moves = [BMove(p, new.folder + p[len(old.folder):]) for p in under]
        return _land(store, f"rename {old.shown} {new.shown}", moves,
                     f"Successfully renamed {old_raw} to {new_raw}")

    return _path(old_raw).bind(lambda old: _path(new_raw).bind(
        lambda new: store.head().bind(lambda view: rename(old, new, view))))
