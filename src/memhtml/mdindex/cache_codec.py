"""The cached index as plain arrays and back, checked before anything is believed.

``encode`` turns a ``CachedIndex`` into a JSON-able header and numeric arrays (no
object arrays, so the file that holds them is data only); ``decode`` turns them
back, refusing anything a build of this code could not have written. The file
framing (checksums, atomic writes) is the composition root's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from returns.result import Failure, Result, Success

from memhtml.mdindex.cache import (
    CHUNK_FIELDS,
    CODE_DIGEST,
    Arrays,
    CachedIndex,
    FileEntry,
    Stamp,
    readonly,
)
from memhtml.mdindex.corpus import Chunk, Corpus, Postings

_INT, _STR, _OPT_STR = "int", "str", "str?"


def _kind(values: Sequence[object]) -> str | None:
    kinds = {type(v) for v in values}
    if kinds <= {int}:
        return _INT
    if kinds <= {str}:
        return _STR
    if kinds <= {str, type(None)}:
        return _OPT_STR
    return None


def encode(index: CachedIndex) -> Result[tuple[dict[str, Any], Arrays], str]:
    """The index as a JSON-able header and arrays of numbers: what the cache file holds.

    Every distinct string (paths, paragraph texts, terms) is stored once in one
    UTF-8 table; chunk fields and the vocabulary are indexes into it, ``-1`` for
    ``None``. A chunk field of a type this cannot store makes the index
    uncacheable (a failure), never lossy.
    """
    corpus = index.corpus
    table: dict[str, int] = {}
    arrays: Arrays = {}
    fields: list[list[str]] = []
    for name in CHUNK_FIELDS:
        values = list(map(attrgetter(name), corpus.chunks))
        kind = _kind(values)
        if kind is None:
            return Failure(f"chunk field {name} holds values the cache cannot store")
        fields.append([name, kind])
        if kind == _INT:
            arrays[f"chunk.{name}"] = np.array(values, dtype=np.int64)
        else:
            arrays[f"chunk.{name}"] = np.fromiter(
                (-1 if v is None else table.setdefault(v, len(table)) for v in values),
                dtype=np.int64, count=len(values))
    rows = corpus.postings.rows
    if list(rows) != list(corpus.df) or sorted(rows.values()) != list(range(len(rows))):
        return Failure("the vocabulary and the document frequencies disagree")
    terms = sorted(rows, key=rows.__getitem__)
    arrays["vocabulary"] = np.fromiter(
        (table.setdefault(t, len(table)) for t in terms), dtype=np.int64, count=len(terms))
    arrays["df"] = np.fromiter(map(corpus.df.__getitem__, terms), dtype=np.int64,
                               count=len(terms))
    arrays["postings.offsets"] = np.asarray(corpus.postings.offsets, dtype=np.int64)
    arrays["postings.ids"] = np.asarray(corpus.postings.ids, dtype=np.int32)
    arrays["postings.frequencies"] = np.asarray(corpus.postings.frequencies, dtype=np.int32)
    strings = list(table)
    # NUL-separated, one ``split`` to read back, unless some string holds a NUL;
    # then the end offsets slice it out one string at a time.
    separated = not any("\0" in text for text in strings)
    joined = "\0".join(strings) if separated else "".join(strings)
    arrays["strings.text"] = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    arrays["strings.ends"] = np.cumsum(np.fromiter(map(len, strings), dtype=np.int64,
                                                   count=len(strings)), dtype=np.int64)
    files = [[e.path, e.stamp.size, e.stamp.mtime_ns, e.stamp.ctime_ns, e.stamp.inode,
              e.stamp.device, e.digest, e.checked_ns, e.size, e.start, e.count]
             for e in (index.entries[path] for path in corpus.files)]
    header = {"code": CODE_DIGEST, "root": index.root, "fields": fields, "files": files,
              "separated": separated}
    return Success((header, arrays))


class _RefusedError(ValueError):
    """The cache holds something a build of this code could not have written."""


def _need(condition: bool, reason: str) -> None:
    if not condition:
        raise _RefusedError(reason)


def _array(arrays: Mapping[str, npt.NDArray[Any]], name: str, dtype: type,
           length: int | None = None) -> npt.NDArray[Any]:
    array = arrays.get(name)
    _need(isinstance(array, np.ndarray) and array.dtype == dtype and array.ndim == 1,
          f"array {name} is missing or of the wrong type")
    assert array is not None
    _need(length is None or array.size == length, f"array {name} has the wrong length")
    return array


def _strings(arrays: Mapping[str, npt.NDArray[Any]], separated: object) -> list[str | None]:
    """The string table, with ``None`` last so that index ``-1`` reads as ``None``."""
    text = str(_array(arrays, "strings.text", np.uint8).data, "utf-8")
    ends = _array(arrays, "strings.ends", np.int64)
    if separated is True:
        split: list[str | None] = list(text.split("\0")) if ends.size else []
        _need(len(split) == ends.size and (ends.size > 0 or not text),
              "the string table's count does not fit its text")
        split.append(None)
        return split
    _need(ends.size == 0 or (int(ends[-1]) == len(text) and int(ends[0]) >= 0
                             and bool(np.all(np.diff(ends) >= 0))),
          "the string table's offsets do not fit its text")
    _need(ends.size > 0 or not text, "the string table's offsets do not fit its text")
    bounds = ends.tolist()
    table: list[str | None] = [text[a:b] for a, b in zip([0, *bounds[:-1]], bounds, strict=True)]
    table.append(None)
    return table


def _column(arrays: Mapping[str, npt.NDArray[Any]], name: str, kind: str, count: int,
            table: Sequence[str | None]) -> list[Any]:
    values = _array(arrays, f"chunk.{name}", np.int64, count)
    if kind == _INT:
        return list(values.tolist())
    low = -1 if kind == _OPT_STR else 0
    _need(count == 0 or (int(values.min()) >= low and int(values.max()) < len(table) - 1),
          f"chunk field {name} points outside the string table")
    return [table[i] for i in values.tolist()]


def _entries(header: Mapping[str, Any], chunk_count: int) -> dict[str, FileEntry]:
    files = header.get("files")
    if not isinstance(files, list):
        raise _RefusedError("the header has no file table")
    entries: dict[str, FileEntry] = {}
    expected = 0
    previous = ""
    for row in files:
        _need(isinstance(row, list) and len(row) == 11 and isinstance(row[0], str)
              and isinstance(row[6], str)
              and all(type(v) is int and v >= 0 for v in row[1:6] + row[7:]),
              "a file entry is malformed")
        path, size, mtime, ctime, inode, device, digest, checked, length, start, count = row
        _need(path > previous or not entries, "the file table is not sorted")
        _need(start == expected or count == 0, "the file table's chunk ranges do not tile")
        expected += count
        previous = path
        entries[path] = FileEntry(path, Stamp(size, mtime, ctime, inode, device), digest,
                                  checked, length, start, count)
    _need(expected == chunk_count, "the file table's chunk ranges do not cover the chunks")
    return entries


def decode(header: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]], root: str
           ) -> Result[CachedIndex, str]:
    """The cached index, or why it cannot be trusted.

    Everything a query relies on is checked, not assumed: the code that built
    it, the root it belongs to, the chunk fields, the string table, posting
    offsets and ids within range and ascending, document frequencies and chunk
    lengths agreeing with the postings, and every chunk lying inside its file's
    range. Ill-formed input of any kind is a refusal, not an exception.
    """
    try:
        return Success(_decode(header, arrays, root))
    except _RefusedError as refused:
        return Failure(str(refused))
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as exc:
        return Failure(f"unreadable: {type(exc).__name__}")


def _decode(header: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]], root: str
            ) -> CachedIndex:
    _need(header.get("code") == CODE_DIGEST, "written by another version of the indexer")
    _need(header.get("root") == root, "written for another directory")
    fields = header.get("fields")
    if not isinstance(fields, list) or [f[0] for f in fields if isinstance(f, list)] != list(
        CHUNK_FIELDS
    ):
        raise _RefusedError("the chunk fields differ")
    table = _strings(arrays, header.get("separated"))
    count = _array(arrays, "chunk.file", np.int64).size
    columns = [_column(arrays, name, kind, count, table) for name, kind in fields]
    chunks = tuple(map(Chunk, *columns)) if count else ()
    entries = _entries(header, count)
    # Every chunk lies in its own file's range: the file column repeats, range by
    # range, an index naming that file.
    spans = [e for e in entries.values() if e.count]
    owners = _array(arrays, "chunk.file", np.int64)
    firsts = owners[[e.start for e in spans]] if spans else owners[:0]
    _need(bool(np.array_equal(np.repeat(firsts, [e.count for e in spans]), owners))
          and all(table[i] == e.path for i, e in zip(firsts.tolist(), spans, strict=True)),
          "a chunk lies outside its file's range")
    vocabulary = _array(arrays, "vocabulary", np.int64)
    terms_count = vocabulary.size
    _need(terms_count == 0 or (int(vocabulary.min()) >= 0
                               and int(vocabulary.max()) < len(table) - 1),
          "a term points outside the string table")
    terms = [table[i] for i in vocabulary.tolist()]
    rows = dict(zip(cast("list[str]", terms), range(terms_count), strict=True))
    _need(len(rows) == terms_count, "the vocabulary repeats a term")
    df = _array(arrays, "df", np.int64, terms_count)
    offsets = _array(arrays, "postings.offsets", np.int64, terms_count + 1)
    ids = _array(arrays, "postings.ids", np.int32)
    frequencies = _array(arrays, "postings.frequencies", np.int32, ids.size)
    steps = np.diff(offsets)
    _need(int(offsets[0]) == 0 and int(offsets[-1]) == ids.size and bool(np.all(steps >= 1)),
          "the posting offsets are out of order")
    _need(bool(np.array_equal(steps, df)), "document frequencies disagree with the postings")
    _need(ids.size == 0 or (int(ids.min()) >= 0 and int(ids.max()) < count),
          "a posting names a chunk that does not exist")
    _need(ids.size == 0 or int(frequencies.min()) >= 1, "a posting has no occurrences")
    rising = np.diff(ids.astype(np.int64)) > 0
    starts = np.zeros(ids.size, dtype=np.bool_)
    starts[offsets[:-1][offsets[:-1] < ids.size]] = True
    _need(bool(np.all(rising | starts[1:])), "a term's chunk ids do not ascend")
    lengths = _array(arrays, "chunk.length", np.int64, count)
    totals = np.bincount(ids, weights=frequencies, minlength=count)
    _need(bool(np.array_equal(totals.astype(np.int64), lengths)),
          "chunk lengths disagree with the postings")
    _need(count > 0, "the cache holds no paragraph")
    corpus = Corpus(
        chunks=chunks,
        df=dict(zip(rows, df.tolist(), strict=True)),
        postings=Postings(rows, readonly(offsets), readonly(ids), readonly(frequencies)),
        avg_len=int(lengths.sum()) / count,
        files=tuple(entries),
        bytes=sum(e.size for e in entries.values()),
        by_class=dict(sorted(Counter(columns[CHUNK_FIELDS.index("class_")]).items())),
    )
    return CachedIndex(root, corpus, entries)
