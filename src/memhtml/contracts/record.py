"""The flat record the head stores for one memory file.

A record is the parsed file plus four facts the head derives: its git blob sha,
its content hash, its claim's frame key, and whether it sits under ``archive/``.
It holds the file's text too, because an overlay op (link, label, move) edits
and re-parses the current bytes rather than re-reading git.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

from memhtml.contracts.vocabulary import EdgeRel, MemoryStatus, MemoryType, TaskStatus


@dataclass(frozen=True, slots=True)
class Link:
    """One ``<link rel="memhtml-...">`` edge: the unprefixed rel and the href as authored."""

    rel: EdgeRel
    href: str


@dataclass(frozen=True, slots=True)
class FacetValue:
    """One ``<dt>``/``<dd>`` pair; ``numeric_value`` only from a finite ``<data value>``."""

    name: str
    value: str
    numeric_value: float | None = None


@dataclass(frozen=True, slots=True)
class CitationValue:
    """One ``<cite>`` or ``<q>``; ``href`` is a ``<q cite>`` URI when present."""

    text: str
    href: str | None = None


@dataclass(frozen=True)
class MemoryRecord:
    """One memory as the head indexes it. Frozen, so versions can share it by reference.

    Deliberately not slotted: a cold command rebuilds thousands of records from a
    snapshot's columns, and a ``__dict__`` is filled in one C-level step where slots
    need a Python-level assignment per field (see ``records_from_rows``).
    """

    path: str
    """Tree form, no leading slash."""
    blob_sha: str
    content_hash: str
    """``sha256:<hex>`` recomputed from the article, never the file's own claim."""
    frame_key: str
    archived: bool
    """True when the path is under ``archive/``."""
    html: str
    """The file's text, as committed (or as an overlay holds it)."""

    title: str
    claim: str
    """The one ``<mark>`` span: the gist."""
    body_text: str
    memory_type: MemoryType
    status: MemoryStatus
    created_at: str
    updated_at: str
    event_at: str | None = None
    confidence: float | None = None
    importance: int | None = None
    author: str | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    archived_at: str | None = None
    superseded_by: str | None = None
    needs_revision: bool | None = None
    task_status: TaskStatus | None = None
    due_at: str | None = None
    stated_content_hash: str | None = None
    """The file's own ``memhtml-content-hash`` meta, advisory; may be stale."""
    source: str | None = None
    """An imported memory's note (``memhtml-source``): its path under the folder."""
    source_sha256: str | None = None
    source_links: str | None = None
    source_shape: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    summary_texts: tuple[str, ...] = ()
    aside_texts: tuple[str, ...] = ()
    captions: tuple[str, ...] = ()
    defined_terms: tuple[str, ...] = ()
    code_langs: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    facets: tuple[FacetValue, ...] = ()
    citations: tuple[CitationValue, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def recency_key(self) -> str:
        """World time when the article names one, else the last write time."""
        return self.event_at if self.event_at is not None else self.updated_at

    if not TYPE_CHECKING:  # a fallback for two attributes; the checker keeps the fields

        def __getattr__(self, name: str) -> Any:
            # Reached only when ``name`` is not in the instance: a record restored
            # from a snapshot holds its file text and article text as deferred reads
            # (``DEFERRED_FIELDS``), made on first use and kept, so a command that
            # never reads them never loads them.
            if name in DEFERRED_FIELDS:
                state = self.__dict__
                deferred = state.get(deferred_key(name))
                if deferred is not None:
                    column, row = deferred
                    text = column.text(row, self)
                    state[name] = text
                    state.pop(deferred_key(name), None)
                    return text
                # Another thread read it between this lookup's miss and now.
                if name in state:
                    return state[name]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        """The fields for pickle and ``copy``, deferred texts read (a deferred read
        holds an open mapping of a local file, which does not travel)."""
        state = dict(self.__dict__)
        for name in DEFERRED_FIELDS:
            if state.pop(deferred_key(name), None) is not None:
                state[name] = getattr(self, name)
        return state


DEFERRED_FIELDS: tuple[str, ...] = ("html", "body_text")
"""The record fields a snapshot may leave unread: the two long texts."""


def deferred_key(name: str) -> str:
    """The instance key under which a restored record keeps ``(column, row)`` in place
    of the field ``name``: ``column.text(row, record)`` returns the field's value."""
    return f"_deferred_{name}"


class TextColumn(Protocol):
    """Where a restored record's deferred texts come from."""

    def text(self, row: int, record: MemoryRecord, /) -> str: ...


RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(MemoryRecord))


def record_rows(records: Iterable[MemoryRecord]) -> list[tuple[object, ...]]:
    """Records as plain value tuples, in field order (``RECORD_FIELDS``)."""
    return [tuple(getattr(r, name) for name in RECORD_FIELDS) for r in records]


def records_from_rows(rows: Iterable[tuple[object, ...]],
                      names: tuple[str, ...] = ()) -> list[MemoryRecord]:
    """The inverse of ``record_rows``, for rows whose values are already known good
    (a snapshot's, checked as they were decoded).

    Each record is made the way ``copy.copy`` (and pickle) restores any frozen
    dataclass instance: ``object.__new__``, then the saved fields placed as the new
    instance's ``__dict__``. ``MemoryRecord(*row)`` gives an equal record, because the
    generated ``__init__`` only assigns (the class has no ``__post_init__``; a test
    holds both facts), but it assigns one field at a time through the frozen
    ``__setattr__`` guard: about 37 ms for SciFact's 5,183 rows, twice this loop. A row
    whose length is not the field count raises ``ValueError``.
    """
    new, place = object.__new__, object.__setattr__
    names = names or RECORD_FIELDS
    out: list[MemoryRecord] = []
    for values in rows:
        record = new(MemoryRecord)
        # A whole new __dict__ in one assignment: a fifth faster than filling the one
        # the instance starts with, and half the memory (4.6 MB against 8.5 on SciFact).
        place(record, "__dict__", dict(zip(names, values, strict=True)))
        out.append(record)
    return out
