"""Turning the write options (``--title``, ``--body``, ``--link REL=TARGET``, ``--file``)
into the store's ``WriteInput``. Shared by ``write``, ``correct`` and ``task add``.

``--title``, ``--claim`` and ``--body`` are plain text, stored escaped: what they hold
reads back as the same characters, ``<table>`` included. Markup goes in only through
the options that say so: ``--body-html`` (a fragment for the article) and ``--file``
(a whole memory file)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

from cyclopts import Parameter

from memhtml.cli.choices import MemoryTypeName
from memhtml.cli.output import CliError, UsageError

if TYPE_CHECKING:
    from memhtml.contracts.record import Link
    from memhtml.contracts.vocabulary import EdgeRel, MemoryType
    from memhtml.store import WriteInput

MAX_FILE_BYTES = 1 << 20
"""``--file``'s cap, 1 MiB: the write door's own cap on one write
(``memhtml.store.write_checks.MAX_WRITE_BYTES``; a test holds the two equal). Kept here as a
number so ``--help`` need not import the store."""

Many = Annotated[tuple[str, ...], Parameter(consume_multiple=False, negative_iterable=())]
"""A repeatable option: ``--body a --body b``, one value per flag."""

Words = Annotated[str, Parameter(required=True)]
"""The type of a ``*words`` parameter: free text as the rest of the command line's
positional tokens, at least one. The command joins them with single spaces, so
``search deploy window`` asks what ``search "deploy window"`` asks; a shell user need
not quote, and an option may sit between the words."""


@Parameter(name="*")
@dataclass(frozen=True)
class MemoryFields:
    """The fields of a new memory."""

    title: str = ""
    """The title, plain text (the file name is made from it)."""
    claim: str = ""
    """The claim, plain text: one sentence, the gist a search hit shows."""
    type: MemoryTypeName | None = None
    """The memory type (default semantic; a correction keeps the corrected one's)."""
    body: Many = ()
    """One paragraph of plain text; repeat for more. Anything in it, <div> included,
    is stored as text. A paragraph that is a whole fenced code block (```lang ...
    ```) becomes a code figure, its lines kept."""
    body_html: str | None = None
    """The body as an HTML fragment instead of --body (e.g. "<ul><li>one</li></ul>"):
    it follows the claim in the article and is checked like any memory file. A
    fragment that marks its claim in a <mark> of its own is the whole article."""
    entity: Many = ()
    """An entity as type:name (person:ines, service:checkout-api); repeatable."""
    tag: Many = ()
    """A tag; repeatable."""
    alias: Many = ()
    """Another name the memory is known by (person files); repeatable."""
    link: Many = ()
    """An edge as REL=TARGET (relates_to=/areas/x/y.html), to a memory that exists;
    repeatable."""
    dir: str | None = None
    """The directory for the new file (default areas/inbox/, tasks areas/tasks/)."""
    confidence: float | None = None
    """Confidence in the claim, 0 to 1."""
    importance: int | None = None
    """Importance, 1 to 10."""
    due: str | None = None
    """A due date (YYYY-MM-DD or an instant), for tasks."""
    file: Path | None = None
    """A whole memory file to commit verbatim (after validation) instead of the fields:
    a regular UTF-8 file of at most 1 MiB."""
    path: str | None = None
    """The tree path for the new file (default: made from the title)."""


def parse_links(raw: tuple[str, ...]) -> tuple[Link, ...]:
    """``REL=TARGET`` pairs as links; the rel, and that the target exists, are checked
    by the door."""
    from memhtml.contracts.record import Link

    links: list[Link] = []
    for item in raw:
        rel, sep, href = item.partition("=")
        if not sep or not rel.strip() or not href.strip():
            raise UsageError(f"--link {item!r} is not REL=TARGET (e.g. "
                             "relates_to=areas/x/y.html)")
        links.append(Link(cast("EdgeRel", rel.strip()), href.strip()))
    return tuple(links)


def read_capped(path: Path) -> str:
    """A regular file's text, refused before reading when it is something else (a FIFO
    would block, ``/dev/zero`` never ends) and after at most ``MAX_FILE_BYTES`` + 1
    bytes when it is larger than the cap."""
    cap = f"the {MAX_FILE_BYTES}-byte (1 MiB) cap on --file"
    try:
        # Non-blocking, so opening a FIFO with no writer returns at once; the check is
        # on the opened descriptor, so nothing can swap the file after it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "not a regular file")
            raise CliError(f"cannot read {path}: it is {kind}; --file takes a regular file "
                           f"within {cap}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise CliError(f"cannot read {path}: it is larger than {cap}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"cannot read {path}: not UTF-8 text ({exc.reason} at byte "
                       f"{exc.start})") from exc
    # Universal newlines, as reading the file as text always gave the door.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def write_input(fields: MemoryFields, default_type: str | None = "semantic", *,
                correcting: bool = False) -> WriteInput:
    """The door's input; ``--file`` reads the whole file and ignores the other fields.
    A correction (``correcting``) needs no field: what it leaves out is carried from
    the memory it corrects, by the door."""
    from memhtml.store import WriteInput

    if fields.file is not None:
        return WriteInput(file_html=read_capped(fields.file), path=fields.path)
    if fields.body_html is not None and fields.body:
        raise UsageError("--body and --body-html were both given: give the body as plain "
                         "paragraphs (--body) or as one HTML fragment (--body-html)")
    needed = [("--title", fields.title)]
    # A fragment that marks its own claim needs no --claim (the door checks the mark).
    if fields.body_html is None or "<mark" not in fields.body_html.lower():
        needed.append(("--claim", fields.claim))
    missing = [name for name, value in needed if not value.strip()]
    if missing and not correcting:
        raise UsageError(f"{' and '.join(missing)} required (or --file PATH)")
    return WriteInput(
        title=fields.title, claim=fields.claim,
        memory_type=cast("MemoryType | None", fields.type or default_type), body=fields.body,
        article_html=fields.body_html,
        entities=fields.entity, tags=fields.tag, aliases=fields.alias,
        links=parse_links(fields.link), directory=fields.dir, confidence=fields.confidence,
        importance=fields.importance, due_at=fields.due,
        path=fields.path,
    )


@Parameter(name="*")
@dataclass(frozen=True)
class TaskFields:
    """The fields of a new task."""

    title: str = ""
    """The title."""
    claim: str = ""
    """What has to be done, in one sentence."""
    due: str | None = None
    """The due date (YYYY-MM-DD or an instant); a task past it is overdue."""
    body: Many = ()
    """One paragraph of detail; repeatable."""
    entity: Many = ()
    """An entity as type:name; repeatable."""
    tag: Many = ()
    """A tag; repeatable."""
    link: Many = ()
    """An edge as REL=TARGET (blocks=/areas/tasks/x.html), to a memory that exists;
    repeatable."""
    dir: str | None = None
    """The directory (default areas/tasks/)."""
    importance: int | None = None
    """Importance, 1 to 10."""
