"""A version as plain arrays: what a snapshot stores, in a form that holds data only.

``encode_version`` turns a ``HeadVersion`` (less its commit, which the snapshot
names) into named numpy arrays of numbers and bytes; ``decode_version`` turns them
back into an equal version without parsing any HTML. Nothing in the arrays is an
object: the store writes them with ``np.save(allow_pickle=False)`` and reads them
back the same way, so a damaged or hostile file can give wrong data or none, never
run code.

One module over 600 lines, on purpose: the encoder and the decoder of each column sit
side by side, so a change to one is seen beside the other, and ``LAYOUT_KEY`` digests
the one layout they share (the deferred texts, read after the load, are apart in
``head.deferred_text``).

The layout, column by column:

* ``strings.*``: every distinct string the records, holders and segment paths use,
  once, as UTF-8. Everything else names a string by its index in this table,
  1-based, with 0 meaning ``None``. Short strings (``SHORT_STRING``) come first,
  NUL-separated, and decode with one ``str`` and one ``split``; the long ones (the
  article texts, mostly) follow with their end offsets and are sliced out one by
  one.
* ``record.html.*`` / ``record.body_text.*``: each file's text and article text,
  concatenated (``bytes``, with ``ends`` and a CRC-32 per text), kept out of the
  string table: a decoded record holds a deferred read of its slice
  (``head.deferred_text.TextColumnBytes``), checked when first used, so a snapshot
  read through a memory map leaves the long texts on disk for a command that never
  reads them (most never do: search, status and a gist read need the other fields).
* ``record.<field>``: per record, a table index (a string field) or a count of
  items (a tuple field, whose items follow in ``record.<field>.items``, or in the
  per-part arrays of links, facets and citations). Numbers and flags travel in the
  JSON ``meta`` column instead, where ``None``, ``bool``, ``int`` and ``float``
  keep their types.
* ``holders.hash`` / ``holders.path``: ``by_content_hash``, stored, because which
  twin holds a hash depends on the order records were inserted in: a version
  advanced from its parent keeps holders a fresh build would give to another path,
  and can leave a hash unheld while a twin stays. The other three maps depend only
  on which records are present and are rebuilt from them (``path_set_indexes``),
  which also keeps them consistent with the records whatever the file says.
* ``segment.*``: the lexical base segment's postings; its doc index is derived
  (``make_segment``).
* ``meta``: JSON for the small rest (numeric record fields, the lexical delta, the
  skipped files, the short-string count).

Records are rebuilt a column at a time (``operator.itemgetter`` over the table, then
``zip`` into rows), never with a Python loop per field per record: SciFact's 5,183
records hold 228,000 field values.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, Final, TypeAlias, cast

import numpy as np
import numpy.typing as npt
from immutables import Map
from returns.result import Failure, Result, Success

from memhtml.contracts.record import (
    RECORD_FIELDS,
    CitationValue,
    FacetValue,
    Link,
    MemoryRecord,
    deferred_key,
    records_from_rows,
)
from memhtml.head.deferred_text import RecoverBlob, TextColumnBytes
from memhtml.head.indexes import Indexes, PathSet, path_set_indexes_of
from memhtml.head.lazy_map import LazyMap, as_map
from memhtml.head.lexical import (
    STEMMER,
    LexicalIndex,
    Segment,
    TermCounts,
    make_segment,
    stemmer_release,
)
from memhtml.head.version import HeadVersion, SkippedFile

CODEC_VERSION: Final = 2
"""Bumped by hand when the meaning of a column changes in a way names cannot show
(2: the lexical index holds stems, ``lexical.STEMMER``, where it held words)."""

Arrays: TypeAlias = dict[str, npt.NDArray[Any]]

# How each record field travels. A field missing here cannot be encoded, so a
# record type that gains a field fails to snapshot (and says so in the codec
# tests) rather than losing the field silently.
_STR, _OPT_STR, _STRS, _LINKS, _FACETS, _CITATIONS, _TEXT = (
    "str", "str?", "strs", "links", "facets", "citations", "text")
_JSON_KINDS: Final[Mapping[str, tuple[type, ...]]] = {
    "bool": (bool,), "bool?": (bool, type(None)), "int?": (int, type(None)),
    "float?": (float, int, type(None)),
}
RECORD_KINDS: Final[Mapping[str, str]] = {
    "path": _STR, "blob_sha": _STR, "content_hash": _STR, "frame_key": _STR,
    "archived": "bool", "html": _TEXT, "title": _STR, "claim": _STR, "body_text": _TEXT,
    "memory_type": _STR, "status": _STR, "created_at": _STR, "updated_at": _STR,
    "event_at": _OPT_STR, "confidence": "float?", "importance": "int?", "author": _OPT_STR,
    "session_id": _OPT_STR, "prompt_id": _OPT_STR, "turn_uuid": _OPT_STR,
    "valid_from": _OPT_STR, "valid_until": _OPT_STR, "reprieves": "int?",
    "archived_at": _OPT_STR, "superseded_by": _OPT_STR, "needs_revision": "bool?",
    "task_status": _OPT_STR, "due_at": _OPT_STR, "stated_content_hash": _OPT_STR,
    "source": _OPT_STR, "source_sha256": _OPT_STR, "source_links": _OPT_STR,
    "source_shape": _OPT_STR,
    "entities": _STRS, "tags": _STRS, "aliases": _STRS, "links": _LINKS,
    "summary_texts": _STRS, "aside_texts": _STRS, "captions": _STRS,
    "defined_terms": _STRS, "code_langs": _STRS, "abbreviations": _STRS,
    "facets": _FACETS, "citations": _CITATIONS, "warnings": _STRS,
}

_INDEX = np.dtype("<i4")
_OFFSET = np.dtype("<i8")
_FLOAT = np.dtype("<f8")
_BYTES = np.dtype("u1")


def _layout_key() -> str:
    """A digest of the codec version, each record field's kind, the stemmer and its
    release (another release may stem a word differently, and a snapshot's terms must
    be the ones a query is stemmed to), and the field names of every class the codec
    builds: a snapshot whose key differs was written for other types and is refused
    before any of it is used."""
    spec = [f"codec={CODEC_VERSION}", f"record={RECORD_KINDS!r}",
            f"stemmer={STEMMER}:{stemmer_release()}"]
    for cls in (MemoryRecord, Link, FacetValue, CitationValue, Indexes, LexicalIndex,
                Segment, TermCounts, SkippedFile):
        names = ",".join(f.name for f in dataclasses.fields(cls))
        spec.append(f"{cls.__module__}.{cls.__qualname__}({names})")
    return hashlib.sha256("\n".join(spec).encode()).hexdigest()


LAYOUT_KEY: Final = _layout_key()


@dataclass(frozen=True, slots=True)
class CodecFailure:
    """A version that cannot be encoded, or arrays that do not decode to one."""

    reason: str


class _InvalidError(ValueError):
    """Arrays that load but do not add up."""


# --------------------------------------------------------------------------- encode


class _Table:
    """Distinct strings in first-use order; index 0 stands for ``None``.

    Indexes handed out while encoding are provisional: ``arrays`` renumbers the table
    so the short strings come first (see ``_Strings``) and rewrites every index
    column the encoder registered through ``column``.
    """

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.columns: dict[str, npt.NDArray[Any]] = {}

    def add(self, value: object, optional: bool = False) -> int:
        if value is None and optional:
            return 0
        if type(value) is not str:
            raise TypeError(f"expected a string, got {type(value).__name__}")
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index) + 1
        return found

    def column(self, name: str, values: Iterable[object], optional: bool = False) -> None:
        self.columns[name] = np.array([self.add(v, optional) for v in values], dtype=_INDEX)

    def arrays(self, meta: dict[str, Any]) -> Arrays:
        # surrogatepass: a string from a command line can hold a lone surrogate, and
        # the round trip must give it back unchanged.
        encoded = [s.encode("utf-8", "surrogatepass") for s in self.index]
        is_short = [len(b) <= SHORT_STRING and b"\0" not in b for b in encoded]
        short = [i for i, flag in enumerate(is_short) if flag]
        long = [i for i, flag in enumerate(is_short) if not flag]
        order = np.zeros(len(encoded) + 1, dtype=_INDEX)
        order[np.array(short + long, dtype=np.int64) + 1] = np.arange(1, len(encoded) + 1)
        ends = np.cumsum([len(encoded[i]) for i in long], dtype=_OFFSET)
        meta["short_strings"] = len(short)
        return {
            "strings.short": _bytes(b"\0".join(encoded[i] for i in short)),
            "strings.long": _bytes(b"".join(encoded[i] for i in long)),
            "strings.long_ends": ends.astype(_OFFSET),
            **{name: order[column] for name, column in self.columns.items()},
        }


SHORT_STRING = 256
"""Strings up to this many bytes, and free of NUL, are stored NUL-separated and
decoded with one ``str`` and one ``split``; longer ones are sliced out by offset.
A slice costs about half a microsecond of interpreter time per string, and three
quarters of SciFact's 41,000 distinct strings are short (paths, hashes, titles,
claims); splitting them took the table's decode from 20 to 14 ms."""


def _bytes(data: bytes) -> npt.NDArray[Any]:
    return np.frombuffer(data, dtype=_BYTES)


def _text_bytes(value: object) -> bytes:
    if type(value) is not str:
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value.encode("utf-8", "surrogatepass")


def _json_value(kind: str, value: object) -> object:
    if type(value) not in _JSON_KINDS[kind]:
        raise TypeError(f"a {kind} field holds {type(value).__name__}")
    return value


def _encode_records(records: Sequence[MemoryRecord], table: _Table,
                    arrays: Arrays, meta: dict[str, Any]) -> None:
    columns: dict[str, list[object]] = {}
    for name in RECORD_FIELDS:
        kind = RECORD_KINDS.get(name)
        if kind is None:
            raise TypeError(f"the codec has no kind for record field {name!r}")
        values = list(map(attrgetter(name), records))
        key = f"record.{name}"
        if kind in (_STR, _OPT_STR):
            table.column(key, values, optional=kind == _OPT_STR)
        elif kind == _TEXT:
            encoded = [_text_bytes(v) for v in values]
            arrays[f"{key}.bytes"] = _bytes(b"".join(encoded))
            arrays[f"{key}.ends"] = np.cumsum([len(b) for b in encoded], dtype=_OFFSET)
            arrays[f"{key}.crc"] = np.array([zlib.crc32(b) for b in encoded], dtype=_OFFSET)
        elif kind in _JSON_KINDS:
            columns[name] = [_json_value(kind, v) for v in values]
        else:
            arrays[key] = np.array([len(v) for v in values], dtype=_INDEX)
            items = [item for v in values for item in v]
            if kind == _STRS:
                table.column(f"{key}.items", items)
            elif kind == _LINKS:
                table.column(f"{key}.rel", (link.rel for link in items))
                table.column(f"{key}.href", (link.href for link in items))
            elif kind == _FACETS:
                table.column(f"{key}.name", (facet.name for facet in items))
                table.column(f"{key}.value", (facet.value for facet in items))
                columns["facets.numeric_value"] = [
                    _json_value("float?", facet.numeric_value) for facet in items]
            else:
                table.column(f"{key}.text", (cite.text for cite in items))
                table.column(f"{key}.href", (cite.href for cite in items), optional=True)
    meta["records"] = columns


def _term_counts(delta: Map[str, TermCounts]) -> list[list[object]]:
    return [[path, tc.length, dict(tc.counts)] for path, tc in sorted(delta.items())]


def _encode_lexical(lexical: LexicalIndex, table: _Table, arrays: Arrays,
                    meta: dict[str, Any]) -> None:
    base = lexical.base
    tokens = list(base.vocab)
    # Tokens are runs of word characters, so a newline can separate them; checked,
    # because the decoder splits on it.
    if any("\n" in t or not t for t in tokens):
        raise ValueError("a vocabulary token holds a newline or is empty")
    spans = [base.vocab[t] for t in tokens]
    table.column("segment.paths", base.paths)
    arrays.update({
        "segment.lengths": np.ascontiguousarray(base.lengths, dtype=_FLOAT),
        "segment.vocab": _bytes("\n".join(tokens).encode("utf-8")),
        "segment.starts": np.array([s for s, _ in spans], dtype=_OFFSET),
        "segment.ends": np.array([e for _, e in spans], dtype=_OFFSET),
        "segment.doc_ids": np.ascontiguousarray(base.doc_ids, dtype=_INDEX),
        "segment.tfs": np.ascontiguousarray(base.tfs, dtype=_INDEX),
    })
    meta["lexical"] = {
        "base_total_length": base.total_length, "documents": lexical.documents,
        "total_length": lexical.total_length, "removed": _term_counts(lexical.removed),
        "added": _term_counts(lexical.added),
    }


def encode_version(version: HeadVersion) -> Result[Arrays, CodecFailure]:
    """The version's records, holders, lexical index and skips as named arrays, every
    one numeric or bytes (never an object array). The commit is not among them: the
    snapshot that stores the arrays names it."""
    try:
        return Success(_encode(version))
    except (TypeError, ValueError, AttributeError, UnicodeError, OverflowError) as exc:
        return Failure(CodecFailure(f"not encodable: {type(exc).__name__}: {exc}"))


def _encode(version: HeadVersion) -> Arrays:
    indexes = version.indexes
    table = _Table()
    arrays: Arrays = {}
    meta: dict[str, Any] = {}
    paths = sorted(indexes.records.keys())
    records = [indexes.records[p] for p in paths]
    for path, record in zip(paths, records, strict=True):
        if record.path != path:
            raise ValueError(f"the record at {path!r} names {record.path!r}")
    _encode_records(records, table, arrays, meta)
    holders = sorted(indexes.by_content_hash.items())
    table.column("holders.hash", (h for h, _ in holders))
    table.column("holders.path", (p for _, p in holders))
    _encode_lexical(indexes.lexical, table, arrays, meta)
    meta["skipped"] = [[_json_str(s.path), _json_str(s.reason)]
                       for s in version.skipped_files]
    strings = table.arrays(meta)
    text = json.dumps(meta, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return {"meta": _bytes(text.encode("ascii")), **strings, **arrays}


def _json_str(value: object) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------- decode


def _array(arrays: Mapping[str, npt.NDArray[Any]], name: str, dtype: np.dtype[Any]
           ) -> npt.NDArray[Any]:
    array = arrays.get(name)
    if array is None:
        raise _InvalidError(f"no {name} array")
    if array.dtype != dtype or array.ndim != 1:
        raise _InvalidError(f"{name} is {array.dtype} {array.shape}, expected 1-d {dtype}")
    return array


def _check(ok: bool, reason: str) -> None:
    if not ok:
        raise _InvalidError(reason)


class _Strings:
    """The decoded string table, with the index checks every column needs."""

    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], short_count: object) -> None:
        short = _array(arrays, "strings.short", _BYTES)
        blob = _array(arrays, "strings.long", _BYTES)
        ends = _array(arrays, "strings.long_ends", _OFFSET)
        if type(short_count) is not int or short_count < 0 or (len(short) and not short_count):
            raise _InvalidError("meta does not count the short strings")
        table: list[str | None] = [None]
        if short_count:
            table.extend(str(short.data, "utf-8", "surrogatepass").split("\0"))
        _check(len(table) == 1 + short_count, "the short strings do not add up")
        if len(ends):
            _check(int(ends[0]) >= 0 and bool(np.all(ends[1:] >= ends[:-1]))
                   and int(ends[-1]) == len(blob), "string offsets do not add up")
        else:
            _check(len(blob) == 0, "string bytes without offsets")
        stops = ends.tolist()
        view = blob.data  # sliced in place: no copy of the 18 MB of long strings
        table.extend(str(view[start:stop], "utf-8", "surrogatepass")
                     for start, stop in zip([0, *stops], stops, strict=False))
        self.table = table

    def pick(self, arrays: Mapping[str, npt.NDArray[Any]], name: str, *,
             optional: bool = False, count: int | None = None) -> tuple[Any, ...]:
        """The strings a column of table indexes names, as one tuple."""
        column = _array(arrays, name, _INDEX)
        if count is not None:
            _check(len(column) == count, f"{name} has {len(column)} rows, expected {count}")
        if not len(column):
            return ()
        low = 0 if optional else 1
        _check(int(column.min()) >= low and int(column.max()) < len(self.table),
               f"{name} names a string outside the table")
        indexes = column.tolist()
        if len(indexes) == 1:
            return (self.table[indexes[0]],)
        return itemgetter(*indexes)(self.table)  # type: ignore[no-any-return]


def _grouped(counts: npt.NDArray[Any], items: Sequence[object], name: str
             ) -> list[tuple[Any, ...]]:
    """Split ``items`` into one tuple per record by the records' item counts."""
    _check(not len(counts) or int(counts.min()) >= 0, f"{name} has a negative count")
    _check(int(counts.sum()) == len(items), f"{name} counts do not match its items")
    if not items:
        return [()] * len(counts)
    flat = tuple(items)
    stops = np.cumsum(counts).tolist()
    return [flat[start:stop] for start, stop in zip([0, *stops], stops, strict=False)]


def _json_column(values: object, kind: str, count: int, name: str) -> list[object]:
    if not isinstance(values, list) or len(values) != count:
        raise _InvalidError(f"{name} is not a list of {count} values")
    _check(set(map(type, values)) <= set(_JSON_KINDS[kind]),
           f"{name} holds a value of another type")
    return values


def _decode_records(arrays: Mapping[str, npt.NDArray[Any]], strings: _Strings,
                    meta: Mapping[str, Any], recover: RecoverBlob | None
                    ) -> list[Sequence[object]]:
    """Every record field as a column, in ``RECORD_FIELDS`` order, each value checked
    as it is decoded: a record is then only its row of these."""
    count = len(_array(arrays, "record.path", _INDEX))
    columns = meta["records"]
    _check(isinstance(columns, dict), "meta has no record columns")
    values: list[Sequence[object]] = []
    for name in RECORD_FIELDS:
        kind = RECORD_KINDS[name]
        key = f"record.{name}"
        if kind in (_STR, _OPT_STR):
            values.append(strings.pick(arrays, key, optional=kind == _OPT_STR, count=count))
            continue
        if kind in _JSON_KINDS:
            values.append(_json_column(columns.get(name), kind, count, key))
            continue
        if kind == _TEXT:
            column = _text_column(arrays, key, name, count, recover)
            values.append(list(zip(repeat(column), range(count), strict=False)))
            continue
        counts = _array(arrays, key, _INDEX)
        _check(len(counts) == count, f"{key} has {len(counts)} rows, expected {count}")
        items: Sequence[object]
        if kind == _STRS:
            items = strings.pick(arrays, f"{key}.items")
        elif kind == _LINKS:
            rels = strings.pick(arrays, f"{key}.rel")
            hrefs = strings.pick(arrays, f"{key}.href", count=len(rels))
            items = [Link(rel, href) for rel, href in zip(rels, hrefs, strict=True)]
        elif kind == _FACETS:
            names = strings.pick(arrays, f"{key}.name")
            texts = strings.pick(arrays, f"{key}.value", count=len(names))
            numbers = _json_column(columns.get("facets.numeric_value"), "float?", len(names),
                                   "facets.numeric_value")
            items = [FacetValue(n, v, x) for n, v, x in  # type: ignore[arg-type]
                     zip(names, texts, numbers, strict=True)]
        else:
            texts = strings.pick(arrays, f"{key}.text")
            hrefs = strings.pick(arrays, f"{key}.href", optional=True, count=len(texts))
            items = [CitationValue(t, h) for t, h in zip(texts, hrefs, strict=True)]
        values.append(_grouped(counts, items, key))
    _check(all(len(column) == count for column in values), "a record column is short")
    return values


def _record_at(columns: Sequence[Sequence[object]], row: int) -> MemoryRecord:
    # A text field's column holds (column, row) pairs, placed under the field's
    # deferred key: the record reads the text on first use (``MemoryRecord``).
    return records_from_rows([tuple(column[row] for column in columns)], _RESTORED_NAMES)[0]


_RESTORED_NAMES = tuple(deferred_key(name) if RECORD_KINDS[name] == _TEXT else name
                        for name in RECORD_FIELDS)


def _text_column(arrays: Mapping[str, npt.NDArray[Any]], key: str, field: str, count: int,
                 recover: RecoverBlob | None) -> TextColumnBytes:
    """The text column ``key`` names, its offsets and checksums checked (they are read
    with the checksummed arrays); its bytes are not touched."""
    data = _array(arrays, f"{key}.bytes", _BYTES)
    ends = _array(arrays, f"{key}.ends", _OFFSET)
    crcs = _array(arrays, f"{key}.crc", _OFFSET)
    _check(len(ends) == len(crcs) == count,
           f"{key} has {len(ends)} offsets and {len(crcs)} checksums, expected {count}")
    if count:
        _check(int(ends[0]) >= 0 and bool(np.all(ends[1:] >= ends[:-1]))
               and int(ends[-1]) == len(data), f"{key} offsets do not add up")
    else:
        _check(len(data) == 0, f"{key} bytes without offsets")
    return TextColumnBytes(data, ends, crcs, field, recover)


def _delta(entries: object, name: str) -> Map[str, TermCounts]:
    if not isinstance(entries, list):
        raise _InvalidError(f"lexical {name} is not a list")
    out: dict[str, TermCounts] = {}
    for entry in entries:
        _check(isinstance(entry, list) and len(entry) == 3, f"lexical {name} entry malformed")
        path, length, counts = entry
        _check(type(path) is str and type(length) is int and isinstance(counts, dict)
               and all(type(tf) is int for tf in counts.values()),
               f"lexical {name} entry malformed")
        out[path] = TermCounts(counts, length)
    return Map(out)


def _decode_lexical(arrays: Mapping[str, npt.NDArray[Any]], strings: _Strings,
                    meta: Mapping[str, Any]) -> LexicalIndex:
    paths = strings.pick(arrays, "segment.paths")
    lengths = _array(arrays, "segment.lengths", _FLOAT)
    vocab_bytes = _array(arrays, "segment.vocab", _BYTES).tobytes()
    starts = _array(arrays, "segment.starts", _OFFSET)
    ends = _array(arrays, "segment.ends", _OFFSET)
    doc_ids = _array(arrays, "segment.doc_ids", _INDEX)
    tfs = _array(arrays, "segment.tfs", _INDEX)
    tokens = vocab_bytes.decode("utf-8").split("\n") if vocab_bytes else []
    _check(len(lengths) == len(paths), "segment lengths do not match its paths")
    _check(len(starts) == len(ends) == len(tokens), "segment spans do not match its vocab")
    _check(len(tfs) == len(doc_ids), "segment frequencies do not match its doc ids")
    if len(starts):
        _check(int(starts.min()) >= 0 and bool(np.all(ends >= starts))
               and int(ends.max()) <= len(doc_ids), "a segment span is out of range")
    if len(doc_ids):
        _check(int(doc_ids.min()) >= 0 and int(doc_ids.max()) < len(paths),
               "a segment doc id is out of range")
    lexical = meta["lexical"]
    _check(isinstance(lexical, dict), "meta has no lexical part")
    base_total, documents, total = (lexical.get(k) for k in
                                    ("base_total_length", "documents", "total_length"))
    _check(all(type(v) is int for v in (base_total, documents, total)),
           "lexical totals are not integers")
    vocab = dict(zip(tokens, zip(starts.tolist(), ends.tolist(), strict=True), strict=True))
    _check(len(vocab) == len(tokens), "the segment vocabulary repeats a token")
    segment = make_segment(paths, lengths, vocab, doc_ids, tfs, base_total)
    return LexicalIndex(segment, _delta(lexical.get("removed"), "removed"),
                        _delta(lexical.get("added"), "added"), documents, total)


def _all_records(columns: Sequence[Sequence[object]]) -> list[MemoryRecord]:
    # Built later than the decode, but as many objects, none in a cycle: the same
    # pause of the collector (``decode_version``).
    with _collector_paused():
        return records_from_rows(zip(*columns, strict=True), _RESTORED_NAMES)


def _path_set_maps(field: Mapping[str, Sequence[object]], active: Sequence[bool]
                   ) -> Map[int, Map[str, PathSet]]:
    """The three path-set maps of the records these columns hold, by position."""
    rows = zip(field["path"], active, field["frame_key"], field["links"], field["entities"],
               strict=True)
    with _collector_paused():
        return Map(enumerate(path_set_indexes_of(rows)))  # type: ignore[arg-type]


def _holders(arrays: Mapping[str, npt.NDArray[Any]], strings: _Strings,
             active_rows: Sequence[bool]) -> Map[str, str]:
    """``by_content_hash``, each holder checked to be an active record with that hash.

    Checked on the table indexes rather than the strings (both sides name each
    string by one index): a lookup per holder costs 5 ms on SciFact, this 1 ms. The
    map is a ``LazyMap`` of the hashes, built on first use: 87 ms at 100,000 holders,
    which only a write (a duplicate check) reads, never a search, a read or
    ``status``; an advance's few sets and deletes patch it without building it.
    """
    hashes = strings.pick(arrays, "holders.hash")
    paths = strings.pick(arrays, "holders.path", count=len(hashes))
    if hashes:
        path_column, hash_column = arrays["record.path"], arrays["record.content_hash"]
        row_of = np.full(len(strings.table), -1, dtype=np.int64)
        row_of[path_column] = np.arange(len(path_column))
        rows = row_of[arrays["holders.path"]]
        active = np.fromiter(active_rows, dtype=bool, count=len(active_rows))
        _check(bool(np.all(rows >= 0)), "a holder is not a record")
        _check(bool(np.all(hash_column[rows] == arrays["holders.hash"]))
               and bool(np.all(active[rows])), "a holder cannot hold its hash")
        # Equal strings share one table index, so equal indexes are equal hashes.
        # (Sorted and compared rather than np.unique, whose first call imports
        # numpy.ma: 9 ms of every cold command.)
        held = np.sort(arrays["holders.hash"])
        _check(bool(np.all(held[1:] != held[:-1])), "a hash has two holders")
    # Keys without their positions until one is asked for: an advance asks, a search
    # never does.
    return as_map(LazyMap(keys=hashes, value=paths.__getitem__, values=lambda: list(paths),
                          index_now=False))


def _skipped(entries: object) -> tuple[SkippedFile, ...]:
    if not isinstance(entries, list):
        raise _InvalidError("meta has no skipped list")
    out = []
    for entry in entries:
        _check(isinstance(entry, list) and len(entry) == 2
               and all(type(v) is str for v in entry), "a skipped entry is malformed")
        out.append(SkippedFile(entry[0], entry[1]))
    return tuple(out)


def decode_version(arrays: Mapping[str, npt.NDArray[Any]], sha: str,
                   recover: RecoverBlob | None = None) -> Result[HeadVersion, CodecFailure]:
    """The version ``encode_version`` was given, at ``sha``, or why the arrays do not
    make one. Equal to the encoded version in every record, index and array.

    Each record's text is read when first used; ``recover`` reads a blob from git for
    one whose bytes fail their checksum by then."""
    try:
        # Decoding allocates a few hundred thousand objects, none of them in a cycle;
        # the collector's passes over them cost a fresh process about 9 ms (8%) of
        # its first load, for nothing to collect.
        with _collector_paused():
            return Success(_decode(arrays, sha, recover))
    except (_InvalidError, KeyError, IndexError, TypeError, ValueError, AttributeError,
            OverflowError, MemoryError, RecursionError) as exc:
        return Failure(CodecFailure(f"{type(exc).__name__}: {exc}"))


@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode(arrays: Mapping[str, npt.NDArray[Any]], sha: str,
            recover: RecoverBlob | None) -> HeadVersion:
    meta = json.loads(_array(arrays, "meta", _BYTES).tobytes())
    _check(isinstance(meta, dict), "meta is not a JSON object")
    strings = _Strings(arrays, meta.get("short_strings"))
    columns = _decode_records(arrays, strings, meta, recover)
    field = {name: columns[i] for i, name in enumerate(RECORD_FIELDS)}
    paths = cast(Sequence[str], field["path"])
    _check(len(set(paths)) == len(paths), "two records share a path")
    active = [not archived and status == "active"
              for archived, status in zip(field["archived"], field["status"], strict=True)]
    # A record is built when it is first read, and the path-set maps when first used:
    # a command reading a few records never pays for the rest (``LazyMap``).
    # The plain fields double as columns for a tally over every record (``status``);
    # a text field's column holds (column, row) pairs, not the text, so it is left out.
    plain = {name: field[name] for name in RECORD_FIELDS if RECORD_KINDS[name] != _TEXT}
    records = LazyMap(keys=paths, value=lambda row: _record_at(columns, row),
                      values=lambda: _all_records(columns), fields=plain)
    path_sets = LazyMap(lambda: _path_set_maps(field, active))
    by_frame, inbound, by_entity = (
        as_map(LazyMap(lambda i=i: path_sets.whole()[i])) for i in range(3))  # type: ignore[misc]
    indexes = Indexes(as_map(records), _holders(arrays, strings, active), by_frame, inbound,
                      by_entity, _decode_lexical(arrays, strings, meta))
    return HeadVersion(indexes, sha, None, _skipped(meta.get("skipped")))
