"""One file to one record: the parsed fields plus what the head derives."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from returns.result import Result, Success

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import DAY_FACET
from memhtml.format import MemoryDoc, parse_memory_hashed

ARCHIVE_PREFIX = "archive/"
_WORD = re.compile(r"[^\W_]+")
"""A word: a maximal run of word characters other than the underscore. No word
character is whitespace, so these are exactly the words left by breaking the text at
every run of non-word characters or underscores and splitting on whitespace."""
_ASCII_BREAKS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
"""Every ASCII character that is not a letter or digit, to a space."""
_new, _place = object.__new__, object.__setattr__


def is_archived_path(path: str) -> bool:
    """True for a tree path under the archive bucket: that is what archived means."""
    return path.startswith(ARCHIVE_PREFIX)


def blob_sha_of(text: str) -> str:
    """The git blob id of ``text``: sha1 over ``blob <byte length>\\0`` and the UTF-8 bytes.

    Computed here because an overlay holds files git has not stored yet. The length
    is in UTF-8 bytes, not characters, which is what makes multibyte text agree
    with git.
    """
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def frame_key_of(claim: str) -> str:
    """The claim's frame key: equal for claims in the same words up to case,
    punctuation and whitespace, different when any word, number or negation differs.

    Punctuation becomes a word break rather than vanishing, so ``3.5`` and ``35``
    stay apart while ``deploy-step`` and ``deploy step`` meet. The key is a digest
    of the normalized words, so it is short and opaque whatever the claim's length.
    """
    folded = claim.casefold()
    # An ASCII claim is cut in C (``translate``, ``split``): in ASCII the pattern's
    # word characters are exactly letters and digits, so the words are the same.
    words = (folded.translate(_ASCII_BREAKS).split() if folded.isascii()
             else _WORD.findall(folded))
    return "fk:" + hashlib.sha1(" ".join(words).encode("utf-8"), usedforsecurity=False).hexdigest()


def record_of(doc: MemoryDoc, digest: str, path: str, html: str) -> MemoryRecord:
    """Assemble the flat record from a parsed doc and its computed content hash.

    Every field is given, in field order, so the record is made the way
    ``records_from_rows`` makes one: a new instance with its ``__dict__`` placed in
    one step. ``MemoryRecord(**fields)`` builds an equal record but assigns its
    forty-odd fields one at a time through the frozen ``__setattr__`` guard, which
    cost more than everything else this function does, once per file of a load. A
    test holds the key list to ``RECORD_FIELDS``.
    """
    m = doc.metas
    a = doc.article
    record = _new(MemoryRecord)
    _place(record, "__dict__", {
        "path": path,
        "blob_sha": blob_sha_of(html),
        "content_hash": digest,
        "frame_key": frame_key_of(a.gist),
        "archived": is_archived_path(path),
        "html": html,
        "title": doc.title,
        "claim": a.gist,
        "body_text": a.body_text,
        "memory_type": m.memory_type,
        "status": m.status,
        "created_at": m.created_at,
        "updated_at": m.updated_at,
        "event_at": a.event_at,
        "confidence": m.confidence,
        "importance": m.importance,
        "author": m.author,
        "session_id": m.session_id,
        "prompt_id": m.prompt_id,
        "turn_uuid": m.turn_uuid,
        "valid_from": m.valid_from,
        "valid_until": m.valid_until,
        "reprieves": m.reprieves,
        "archived_at": m.archived_at,
        "superseded_by": m.superseded_by,
        "needs_revision": m.needs_revision,
        "task_status": m.task_status,
        "due_at": m.due_at,
        "stated_content_hash": m.content_hash,
        "source": m.source,
        "source_sha256": m.source_sha256,
        "source_links": m.source_links,
        "source_shape": m.source_shape,
        "entities": doc.entities,
        "tags": doc.tags,
        "aliases": doc.aliases,
        "links": doc.links,
        "summary_texts": a.summary_texts,
        "aside_texts": a.aside_texts,
        "captions": a.captions,
        "defined_terms": a.defined_terms,
        "code_langs": a.code_langs,
        "abbreviations": a.abbreviations,
        "facets": a.facets,
        "citations": a.citations,
        "warnings": doc.warnings,
    })
    return record


_READ_AHEAD: dict[tuple[str, str], MemoryRecord] = {}
"""Records already read from their files, by (path, text): see ``read_ahead``."""


@contextmanager
def read_ahead(records: Iterable[MemoryRecord]) -> Iterator[None]:
    """Within the block, ``record_from`` of the very text one of ``records`` was read
    from, at its path, is that record rather than a second parse of the same bytes.

    ``record_from`` is a pure function of (text, path), so a record computed ahead
    (the markdown import parses each file it renders where it renders it, on every
    core, ``markdown_import``) is the one a parse here would give; the write door's
    check of the file is that parse. A text or path that differs at all (a door that
    adds a link first) is parsed as always. Only successful reads are held: a file
    the format refuses is refused by the door's own parse, with its own error."""
    added = {(r.path, r.html): r for r in records}
    added = {key: r for key, r in added.items() if key not in _READ_AHEAD}
    _READ_AHEAD.update(added)
    try:
        yield
    finally:
        for key in added:
            _READ_AHEAD.pop(key, None)


def record_from(html: str, path: str) -> Result[MemoryRecord, InvalidMemory]:
    """Parse one file into its record, or fail with the parser's own error.

    A file in the serializer's plain shape is read without a tree
    (``format.canonical``): the same record, several times cheaper, which is most of
    what the first command in a fresh clone of a large store spends."""
    if _READ_AHEAD:
        known = _READ_AHEAD.get((path, html))
        if known is not None:
            return Success(known)
    # Imported here: a command that restores a snapshot and parses nothing never
    # pays for the reader's import.
    from memhtml.format.canonical import read_canonical

    quick = read_canonical(html)
    if quick is not None:
        return Success(record_of(quick[0], quick[1], path, html))
    return parse_memory_hashed(html, path).map(
        lambda pair: record_of(pair[0], pair[1], path, html)
    )


def is_dated_episode(record: MemoryRecord) -> bool:
    """An ``episodic`` memory carrying a non-empty ``day`` facet (see ``DAY_FACET``).

    Only compress exempts these: a day's record is summarized and linked from the
    canonical, never absorbed, since the day it records duplicates no other day.
    dedup-merge and retention-triage treat it as any memory."""
    return record.memory_type == "episodic" and any(
        facet.name.strip().lower() == DAY_FACET and facet.value.strip()
        for facet in record.facets)
