"""What the write doors take: a new memory's fields, and the ops a batch is made of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import MemoryType, TaskStatus


@dataclass(frozen=True)
class WriteInput:
    """A new memory, either as fields the template renders or as a whole file.

    Text and markup never mix. ``title``, ``claim`` and ``body`` are plain text: the
    template escapes them, so ``Tables use the <table> element.`` is stored as those
    characters and reads back as them; only NUL and lone surrogates, which no file can
    hold, are refused. ``body`` holds one paragraph each (a paragraph that is a whole
    fenced block becomes a code figure, its lines kept). Markup comes in only through
    the two fields that say so: ``article_html`` (an HTML fragment for the article)
    and ``file_html`` (a whole file).

    With ``file_html`` set the file is committed verbatim (after validation) and
    the template fields are ignored; ``path`` then names where it goes, or the path
    is made from its ``<title>``. Without it, ``title`` is required, and ``claim``
    unless ``article_html`` marks its own.
    """

    title: str = ""
    claim: str = ""
    memory_type: MemoryType | None = None
    """None: ``semantic`` for a write, the corrected memory's type for a correct."""
    body: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    aliases: tuple[str, ...] = ()
    directory: str | None = None
    """Where the file goes; default ``areas/inbox/`` (``areas/tasks/`` for a task)."""
    article_html: str | None = None
    """An HTML fragment for the article, in place of ``body`` (which it makes unused).
    A fragment with a ``<mark>`` of its own is the whole article (its mark is the
    claim); one without follows ``claim``, which leads the article as its own marked
    paragraph. The format's checks apply to it as to any file."""
    confidence: float | None = None
    importance: int | None = None
    author: str | None = None
    due_at: str | None = None
    task_status: TaskStatus | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    session_id: str | None = None
    file_html: str | None = None
    path: str | None = None
    """An explicit tree path for the new file; refused when a memory is there."""


@dataclass(frozen=True)
class BWrite:
    data: WriteInput


@dataclass(frozen=True)
class BCorrect:
    path: str
    data: WriteInput


@dataclass(frozen=True)
class BArchive:
    path: str


@dataclass(frozen=True)
class BLink:
    path: str
    rel: str
    href: str


@dataclass(frozen=True)
class BUnlink:
    path: str
    rel: str
    href: str


@dataclass(frozen=True)
class BLabel:
    path: str
    entity: str


@dataclass(frozen=True)
class BUnlabel:
    path: str
    entity: str


@dataclass(frozen=True)
class BMove:
    path: str
    to: str


@dataclass(frozen=True)
class BTaskStatus:
    path: str
    status: str


@dataclass(frozen=True)
class BRevise:
    """The memory at ``path`` rewritten in place as ``file_html`` (a file edited where
    it lies, as the memory tool edits one): same path, its ``created`` kept."""

    path: str
    file_html: str


BatchOp: TypeAlias = (
    BWrite | BCorrect | BArchive | BLink | BUnlink | BLabel | BUnlabel | BMove | BTaskStatus
    | BRevise
)
"""One door's request inside a batch; a task is added with ``BWrite`` of type task."""
