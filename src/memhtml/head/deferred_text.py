"""A restored record's texts, read from the snapshot's bytes when first asked.

A snapshot keeps each record's file text and article text concatenated in one
column apiece, memory-mapped rather than read (``adapters.snapshot_files``), so a
load never touches them; each text carries its own CRC-32, checked here on its first
read. Bytes damaged since the load are never served: the file's text is read again
from git, the article text parsed again from it, and when neither can be had the read
raises ``DeferredTextError`` with its typed value. Apart from ``head.codec``, which
frames the columns, because this is what runs after the load, at every first read.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from typing import Any

import numpy.typing as npt
from returns.result import Success

from memhtml.contracts.errors import TextUnreadable
from memhtml.contracts.record import MemoryRecord


class DeferredTextError(ValueError):
    """A deferred text whose bytes fail their checksum, with no good copy to be had:
    the snapshot file was damaged after it was read, and git could not give the text
    back. It is raised from an attribute read (a record's text is a plain ``str``), so
    it carries its typed value, ``error``, which the store's doors answer with
    (``Store.run``) and the command line and the MCP server show as any other failure:
    no path leaves it uncaught."""

    def __init__(self, error: TextUnreadable) -> None:
        super().__init__(f"the local snapshot's copy of {error.path} ({error.field}) is "
                         "damaged and git could not give it back")
        self.error = error


RecoverBlob = Callable[[str], "bytes | None"]
"""Reads a blob by id from the repository (``None`` when it cannot)."""


def _blob_id(data: bytes, like: str) -> str:
    """Git's id of a blob holding ``data``, in the object format ``like`` is in (40 hex
    digits: SHA-1; 64: SHA-256)."""
    framed = b"blob %d\x00" % len(data) + data
    if len(like) == 64:
        return hashlib.sha256(framed).hexdigest()
    return hashlib.sha1(framed, usedforsecurity=False).hexdigest()


class TextColumnBytes:
    """One text field of every restored record: the texts concatenated in the
    snapshot's bytes (a memory map when the snapshot is read from disk), each read on
    first use and checked against its own CRC-32, since those bytes skipped the load's
    whole-array checksum.

    Bytes that fail it are not served: a file's text is read again from git by the
    record's blob id (``recover``) and checked against that id; an article text is
    taken from the file's text again, parsed. So a damaged cache costs a blob read or
    a parse, not a failed command.
    """

    __slots__ = ("crcs", "data", "ends", "field", "recover")

    def __init__(self, data: npt.NDArray[Any], ends: npt.NDArray[Any], crcs: npt.NDArray[Any],
                 field: str, recover: RecoverBlob | None) -> None:
        self.data, self.ends, self.crcs = data, ends, crcs
        self.field, self.recover = field, recover

    def text(self, row: int, record: MemoryRecord, /) -> str:
        start = int(self.ends[row - 1]) if row else 0
        raw = bytes(self.data[start:int(self.ends[row])])
        if zlib.crc32(raw) == int(self.crcs[row]):
            return str(raw, "utf-8", "surrogatepass")
        if self.field == "html":
            again = self.recover(record.blob_sha) if self.recover is not None else None
            if again is not None and _blob_id(again, record.blob_sha) == record.blob_sha:
                return str(again, "utf-8", "surrogatepass")
        elif self.field == "body_text":
            from memhtml.head.record import record_from  # the parser, only on damage

            reparsed = record_from(record.html, record.path)
            if isinstance(reparsed, Success):
                body: str = reparsed.unwrap().body_text
                return body
        raise DeferredTextError(TextUnreadable(record.path, self.field))
