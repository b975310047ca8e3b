"""The index of a markdown tree, remembered between runs and rebuilt only where files changed.

A command is a fresh process, and deriving the whole index again costs about a
second on a tree of 11 MB; most runs find the tree as the last run left it. So
the built index is kept as plain arrays, each file's share of it keyed by the
file's path, size, modification and change times and inode. A run stats every
chosen file, re-reads and re-indexes only those whose key moved, keeps the other
files' paragraphs and postings as they were, and merges the two. The result is
the index a full build of the same tree gives: the same paragraphs in the same
order, the same posting lists and document frequencies, so every query ranks
the same (only the internal numbering of terms may differ, which nothing reads).

The cache is a convenience, never a source of truth. What is read back is
checked for shape and consistency before any of it is used (``cache_codec``); a
file that fails is ignored and the index built from the tree. Its key includes
``CODE_DIGEST``, a digest of this package's own source, so a change to how text
is normalized, tokenized or chunked can never meet paragraphs cut by the old
rules. A file modified within ``RACY_NS`` of being read could change again with
the same timestamps, so such an entry is trusted only after its content digest
is checked again.

Pure like the rest of the package: the stat calls, the clock and the cache file
arrive through ``Stamper`` and the encode/decode pair; the composition root
does the I/O.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
from returns.io import IOResult
from returns.result import Result, Success

from memhtml.mdindex.corpus import SCHEMA_VERSION, Chunk, Corpus, Postings, index_documents
from memhtml.mdindex.errors import MdIndexError, ReadFailure
from memhtml.mdindex.reader import CorpusReader

CACHE_FORMAT: Final = 1
"""Bumped by hand when the arrays or the file table change meaning."""

RACY_NS: Final = 2_000_000_000
"""How close to the moment it was read a file's timestamps may be before a matching
stat is not enough. File systems stamp times from a coarse clock (and FAT in steps
of two seconds), so a file written twice within one step keeps its stamps."""


def _code_digest() -> str:
    """A digest of every module of this package, read once at import.

    The text rules (``text``), the chunking (``corpus``) and the frontmatter
    parse decide what a file's index holds; digesting the whole package's source
    means no hand-bumped constant can be forgotten, at the price of a rebuild
    after any edit to the package.
    """
    digest = hashlib.sha256(f"{SCHEMA_VERSION}\n{CACHE_FORMAT}\n".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


CODE_DIGEST: Final = _code_digest()

CHUNK_FIELDS: Final = tuple(field.name for field in dataclasses.fields(Chunk))

Arrays = dict[str, npt.NDArray[Any]]


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a stat says about one file: the cache key besides its path.

    The change time cannot be set by a user program the way ``touch -d`` sets
    the modification time, and the inode moves when an editor replaces a file by
    renaming a new one over it, so both catch edits that keep size and mtime.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file's share of a cached index: its key, its content digest, its paragraphs."""

    path: str
    stamp: Stamp
    digest: str
    """BLAKE2b-128 of the bytes indexed, hex."""
    checked_ns: int
    """When the content was last read or verified; with the stamp it says whether
    a matching stat can be trusted (``trusted``)."""
    size: int
    """Bytes as read (counted into ``Corpus.bytes``)."""
    start: int
    count: int
    """The file's paragraphs are ``corpus.chunks[start : start + count]``."""

    def trusted(self, stamp: Stamp) -> bool:
        """Whether a file stamped ``stamp`` now still holds what was indexed."""
        settled = max(self.stamp.mtime_ns, self.stamp.ctime_ns) < self.checked_ns - RACY_NS
        return settled and stamp == self.stamp


@dataclass(frozen=True, slots=True, eq=False)
class CachedIndex:
    """A built index and, per file, what it was built from."""

    root: str
    corpus: Corpus
    entries: Mapping[str, FileEntry]


@dataclass(frozen=True, slots=True)
class Reuse:
    """What one cached build did: files kept from the cache and files (re)read."""

    kept: int
    read: int
    """Files read and indexed again (changed, added, or never cached)."""
    verified: int
    """Files kept after their bytes were read and found unchanged (``RACY_NS``)."""
    cache: str
    """``"hit"``, ``"partial"``, ``"miss"`` (no cache), or why the cache was refused."""


class Stamper(Protocol):
    """The stat calls and the clock a cached build needs, from the composition root."""

    def stamps(self, paths: Sequence[str]) -> IOResult[tuple[Stamp, ...], ReadFailure]:
        """Each path's stamp, in the order asked."""
        ...

    def now_ns(self) -> int:
        """Wall-clock time in nanoseconds, on the scale of file timestamps."""
        ...


def content_digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


# --------------------------------------------------------------------------- build


def _ranges(corpus: Corpus | None) -> dict[str, tuple[int, int]]:
    """Each file's chunk range (start, count); a file without paragraphs is absent."""
    spans: dict[str, tuple[int, int]] = {}
    if corpus is None:
        return spans
    for number, chunk in enumerate(corpus.chunks):
        start, count = spans.get(chunk.file, (number, 0))
        spans[chunk.file] = (start, count + 1)
    return spans


def _term_rows(postings: Postings) -> npt.NDArray[np.int64]:
    """The term row of every posting, aligned with ``postings.ids``."""
    counts = np.diff(postings.offsets)
    return np.repeat(np.arange(counts.size, dtype=np.int64), counts)


def readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.flags.writeable = False
    return array


@dataclass(frozen=True, slots=True)
class _Part:
    """Where one file's paragraphs come from: a corpus and a range in it."""

    corpus: Corpus | None
    start: int
    count: int
    size: int


def _merge(files: Sequence[str], parts: Sequence[_Part]) -> Result[Corpus, MdIndexError]:
    """The corpus of ``files`` (sorted), file ``i``'s paragraphs taken from ``parts[i]``.

    Postings are re-numbered with one sort over (term, new chunk id), so each
    term's chunk ids ascend as a full build's do; a term no kept paragraph holds
    any more disappears from the vocabulary, as it would from a full build.
    """
    sources = list(dict.fromkeys(p.corpus for p in parts if p.corpus is not None and p.count))
    renumber = {id(c): np.full(len(c.chunks), -1, dtype=np.int64) for c in sources}
    chunks: list[Chunk] = []
    for part in parts:
        if part.corpus is None or not part.count:
            continue
        end = part.start + part.count
        renumber[id(part.corpus)][part.start : end] = np.arange(
            len(chunks), len(chunks) + part.count
        )
        chunks.extend(part.corpus.chunks[part.start : end])
    if not chunks:
        # Same failure, same words, as a full build of files with no paragraph.
        return index_documents((path, b"") for path in files)
    vocabulary: list[str] = []
    known: dict[str, int] = {}
    columns: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32]]]
    columns = []
    for corpus in sources:
        postings = corpus.postings
        for term in postings.rows:
            if term not in known:
                known[term] = len(vocabulary)
                vocabulary.append(term)
        mapped = np.fromiter(
            map(known.__getitem__, postings.rows), dtype=np.int64, count=len(postings.rows)
        )
        ids = renumber[id(corpus)][postings.ids]
        keep = ids >= 0
        columns.append((mapped[_term_rows(postings)][keep], ids[keep], postings.frequencies[keep]))
    codes = np.concatenate([c[0] for c in columns])
    owners = np.concatenate([c[1] for c in columns])
    frequencies = np.concatenate([c[2] for c in columns])
    order = np.lexsort((owners, codes))
    codes, owners, frequencies = codes[order], owners[order], frequencies[order]
    counts = np.bincount(codes, minlength=len(vocabulary))
    present = np.flatnonzero(counts)
    terms = [vocabulary[i] for i in present.tolist()]
    df = counts[present]
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(df, out=offsets[1:])
    classes = Counter(map(attrgetter("class_"), chunks))
    return Success(
        Corpus(
            chunks=tuple(chunks),
            df=dict(zip(terms, df.tolist(), strict=True)),
            postings=Postings(
                dict(zip(terms, range(len(terms)), strict=True)),
                readonly(offsets),
                readonly(owners.astype(np.int32)),
                readonly(frequencies.astype(np.int32)),
            ),
            avg_len=sum(c.length for c in chunks) / len(chunks),
            files=tuple(files),
            bytes=sum(p.size for p in parts),
            by_class=dict(sorted(classes.items())),
        )
    )


class CachingIndexer:
    """An ``Indexer`` for ``build`` that starts from a cached index and remembers the result.

    ``build`` lists and chooses the files as always; this reads and indexes
    only the chosen files whose stamps moved since ``cached`` was built, and
    leaves the new ``CachedIndex`` in ``built`` for the caller to store, with
    what it reused in ``reuse``.
    """

    def __init__(self, stamper: Stamper, root: str, cached: CachedIndex | None,
                 refusal: str | None = None) -> None:
        self._stamper = stamper
        self._root = root
        self._cached = cached if cached is not None and cached.root == root else None
        self._refusal = refusal
        self.built: CachedIndex | None = None
        self.reuse: Reuse | None = None

    def __call__(self, reader: CorpusReader, wanted: tuple[str, ...]
                 ) -> IOResult[Corpus, MdIndexError]:
        now = self._stamper.now_ns()
        stamped: IOResult[tuple[Stamp, ...], MdIndexError] = self._stamper.stamps(wanted)
        return stamped.bind(lambda stamps: self._with_stamps(reader, wanted, stamps, now))

    def _with_stamps(self, reader: CorpusReader, wanted: tuple[str, ...],
                     stamps: tuple[Stamp, ...], now: int) -> IOResult[Corpus, MdIndexError]:
        entries = self._cached.entries if self._cached is not None else {}
        kept: dict[str, FileEntry] = {}
        to_read: list[str] = []
        for path, stamp in zip(wanted, stamps, strict=True):
            entry = entries.get(path)
            if entry is not None and entry.trusted(stamp):
                kept[path] = entry
            else:
                to_read.append(path)
        if not to_read:
            return IOResult.from_result(self._finish(wanted, stamps, now, kept, {}))
        blobs: IOResult[tuple[bytes, ...], MdIndexError] = reader.read_files(to_read)
        return blobs.bind_result(
            lambda raw: self._finish(
                wanted, stamps, now, kept, dict(zip(to_read, raw, strict=True))
            )
        )

    def _finish(self, wanted: tuple[str, ...], stamps: tuple[Stamp, ...], now: int,
                kept: dict[str, FileEntry], read: dict[str, bytes]
                ) -> Result[Corpus, MdIndexError]:
        entries = self._cached.entries if self._cached is not None else {}
        digests = {path: content_digest(raw) for path, raw in read.items()}
        stamp_of = dict(zip(wanted, stamps, strict=True))
        # A file read only because its stamps were too recent to trust: the same
        # bytes as indexed keep their paragraphs, now checked at this moment.
        verified = {path: dataclasses.replace(entries[path], checked_ns=now)
                    for path in read if path in entries
                    and entries[path].stamp == stamp_of[path]
                    and entries[path].digest == digests[path]}
        kept.update(verified)
        fresh = [(path, raw) for path, raw in read.items() if path not in verified]
        old = self._cached.corpus if self._cached is not None else None
        result: Result[Corpus, MdIndexError]
        if not kept:
            result = index_documents(fresh)
        elif not fresh and old is not None and len(kept) == len(entries):
            result = Success(old)
        else:
            fresh_corpus = index_documents(fresh).value_or(None) if fresh else None
            fresh_ranges = _ranges(fresh_corpus)
            sizes = {path: len(raw) for path, raw in fresh}
            parts = []
            for path in wanted:
                if path in kept:
                    entry = kept[path]
                    parts.append(_Part(old, entry.start, entry.count, entry.size))
                else:
                    start, count = fresh_ranges.get(path, (0, 0))
                    parts.append(_Part(fresh_corpus, start, count, sizes[path]))
            result = _merge(wanted, parts)
        self.reuse = Reuse(len(kept), len(fresh), len(verified), self._verdict(kept, fresh))
        return result.map(lambda corpus: self._remember(corpus, wanted, stamps, now, kept,
                                                        read, digests))

    def _verdict(self, kept: Mapping[str, FileEntry], fresh: Sequence[object]) -> str:
        if self._refusal is not None:
            return self._refusal
        if self._cached is None:
            return "miss"
        return "partial" if fresh or len(kept) != len(self._cached.entries) else "hit"

    def _remember(self, corpus: Corpus, wanted: tuple[str, ...], stamps: tuple[Stamp, ...],
                  now: int, kept: Mapping[str, FileEntry], read: Mapping[str, bytes],
                  digests: Mapping[str, str]) -> Corpus:
        ranges = _ranges(corpus)
        entries: dict[str, FileEntry] = {}
        for path, stamp in zip(wanted, stamps, strict=True):
            start, count = ranges.get(path, (0, 0))
            old = kept.get(path)
            if old is not None:
                entries[path] = dataclasses.replace(old, start=start, count=count)
            else:
                entries[path] = FileEntry(path, stamp, digests[path], now, len(read[path]),
                                          start, count)
        self.built = CachedIndex(self._root, corpus, entries)
        return corpus
