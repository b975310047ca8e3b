"""The derived index: paragraphs of a markdown tree, their terms and posting lists.

The tree stays the only store: everything here is derived from its files.
``build`` derives it whole; a caller may hand ``build`` an ``Indexer`` that
keeps the previous result and re-derives only the files that changed
(``memhtml.mdindex.cache``), whose output equals a whole build's.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import numpy as np
import numpy.typing as npt
from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.mdindex.errors import EmptyCorpus, MdIndexError
from memhtml.mdindex.frontmatter import parse_frontmatter
from memhtml.mdindex.reader import CorpusReader, Exclude, list_visible
from memhtml.mdindex.text import normalize, tokenize_normalized

SCHEMA_VERSION: Final = "memhtml-mdindex/2"
"""Names the token space: normalizer, tokenizer and chunking rules together.

Anything that persists or compares index output keys it by this string, so a
change to any of the three can never mix silently with output of the old one.
"""

MIN_TERMS: Final = 3
"""Paragraphs with fewer terms are not indexed.

One or two terms is a heading fragment or a separator; indexing those buries
every rare-word query under stubs that match on one word.
"""

MARKDOWN_SUFFIX: Final = ".md"
ROOT_CLASS: Final = "."
NO_MARKDOWN: Final = "no markdown files found: wrong root, or everything excluded"

IdArray = npt.NDArray[np.int32]
_Scalar = TypeVar("_Scalar", bound=np.generic)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One indexed paragraph.

    ``text`` is the normalized paragraph; the raw bytes are not kept. A receipt
    quotes the normalized text, and ``file``:``para`` is the address a reader
    follows to the original.
    """

    file: str
    """Slash path relative to the corpus root."""
    para: int
    """Ordinal among the file's indexed paragraphs, from 0."""
    line: int
    """1-based line of the file where the paragraph starts: where an editor opens it."""
    class_: str
    """Top-level directory, ``"."`` for files at the root: the corpus classifies itself."""
    text: str
    length: int
    """Number of terms, repeats included."""
    fm_name: str | None
    fm_type: str | None

    @property
    def terms(self) -> Counter[str]:
        """Term frequencies, recomputed from the normalized text on each call.

        Not stored: the posting lists already hold every frequency the ranking
        reads, and a dict per chunk would cost the build a large share of its
        time for a view only diagnostics use.
        """
        return Counter(tokenize_normalized(self.text))


@dataclass(frozen=True, slots=True, eq=False)
class Postings:
    """For every term, the chunks holding it (ascending ids) and its frequency in each.

    Stored as one flat array with per-term offsets so a query reads a term's
    postings as two array slices, touching only its own terms and never the
    rest of the corpus.
    """

    rows: Mapping[str, int]
    offsets: npt.NDArray[np.int64]
    ids: IdArray
    frequencies: IdArray

    def chunk_ids(self, term: str) -> IdArray:
        """Ids of the chunks holding the term, ascending; empty for an unknown term."""
        row = self.rows.get(term)
        if row is None:
            return self.ids[:0]
        return self.ids[self.offsets[row] : self.offsets[row + 1]]

    def term_frequencies(self, term: str) -> IdArray:
        """The term's frequency in each chunk of ``chunk_ids(term)``, in the same order."""
        row = self.rows.get(term)
        if row is None:
            return self.frequencies[:0]
        return self.frequencies[self.offsets[row] : self.offsets[row + 1]]


@dataclass(frozen=True, slots=True, eq=False)
class Corpus:
    """The whole derived index, in a deterministic order.

    Files are sorted by path and chunks follow file order, so a chunk id means
    the same paragraph in every build of the same tree.
    """

    chunks: tuple[Chunk, ...]
    df: Mapping[str, int]
    """Document frequency: how many chunks hold each term."""
    postings: Postings
    avg_len: float
    files: tuple[str, ...]
    """Every markdown file seen, including those with no indexable paragraph."""
    bytes: int
    """Size of the files as read, before any normalization."""
    by_class: Mapping[str, int]
    """Chunk count per class."""


def class_of(path: str) -> str:
    """The top-level directory of a slash path, ``"."`` for a root file."""
    head, sep, _ = path.partition("/")
    return head if sep else ROOT_CLASS


def _readonly(array: npt.NDArray[_Scalar]) -> npt.NDArray[_Scalar]:
    array.flags.writeable = False
    return array


def _invert(tokens: list[str], lengths: list[int]) -> tuple[Postings, dict[str, int]]:
    """Posting lists and document frequencies from every chunk's terms, concatenated.

    Grouped with one sort over (term, chunk) keys rather than a Python loop
    over postings, which took most of the build. The sort puts each term's
    chunk ids in ascending order; rankings break ties on that order.
    """
    vocabulary = list(dict.fromkeys(tokens))
    rows = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    chunk_count = len(lengths)
    codes = np.fromiter(map(rows.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    owners = np.repeat(np.arange(chunk_count, dtype=np.int64), lengths)
    keys, frequencies = np.unique(codes * chunk_count + owners, return_counts=True)
    df = np.bincount(keys // chunk_count, minlength=len(vocabulary))
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(df, out=offsets[1:])
    postings = Postings(
        rows,
        _readonly(offsets),
        _readonly((keys % chunk_count).astype(np.int32)),
        _readonly(frequencies.astype(np.int32)),
    )
    return postings, dict(zip(vocabulary, df.tolist(), strict=True))


def index_documents(documents: Iterable[tuple[str, bytes]]) -> Result[Corpus, EmptyCorpus]:
    """Index (path, bytes) pairs of markdown, in the order given.

    The pure half of ``build``: a caller holding blobs already (a git tree, a
    test) indexes them without a reader. Paths should arrive sorted for chunk
    ids to be stable; ``build`` sorts them.
    """
    chunks: list[Chunk] = []
    files: list[str] = []
    tokens: list[str] = []
    lengths: list[int] = []
    by_class: Counter[str] = Counter()
    size = 0
    for path, raw in documents:
        files.append(path)
        size += len(raw)
        # Line endings are unified once, before anything reads the text: the
        # paragraph split is on a literal blank line, and a CRLF file would
        # otherwise index as one giant chunk with a green build. ``utf-8-sig``
        # drops a byte-order mark, which would otherwise hide the frontmatter.
        text = raw.decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
        front = parse_frontmatter(text)
        klass = class_of(path)
        para = 0
        line = 1
        for paragraph in text.split("\n\n"):
            start = line + len(paragraph) - len(paragraph.lstrip("\n"))
            line += paragraph.count("\n") + 2
            normalized = normalize(paragraph)
            terms = tokenize_normalized(normalized)
            if len(terms) < MIN_TERMS:
                continue
            chunks.append(
                Chunk(path, para, start, klass, normalized, len(terms), front.name, front.type)
            )
            tokens += terms
            lengths.append(len(terms))
            para += 1
            by_class[klass] += 1
    if not files:
        return Failure(EmptyCorpus(0, NO_MARKDOWN))
    if not chunks:
        return Failure(
            EmptyCorpus(
                len(files),
                f"{len(files)} markdown file(s) but no paragraph of {MIN_TERMS} or more terms",
            )
        )
    postings, df = _invert(tokens, lengths)
    return Success(
        Corpus(
            chunks=tuple(chunks),
            df=df,
            postings=postings,
            avg_len=len(tokens) / len(chunks),
            files=tuple(files),
            bytes=size,
            by_class=dict(sorted(by_class.items())),
        )
    )


def markdown_paths(paths: Sequence[str], exclude: Exclude | None) -> tuple[str, ...]:
    """The markdown files among visible paths, sorted, with the caller's exclusions applied."""
    return tuple(
        sorted(
            p for p in paths if p.endswith(MARKDOWN_SUFFIX) and (exclude is None or not exclude(p))
        )
    )


Indexer = Callable[[CorpusReader, tuple[str, ...]], IOResult[Corpus, MdIndexError]]
"""Turns the chosen markdown paths of a tree into the index; ``build``'s last step."""


def read_and_index(reader: CorpusReader, wanted: tuple[str, ...]) -> IOResult[Corpus, MdIndexError]:
    """Read every chosen file and index them all: the build with nothing remembered."""
    blobs: IOResult[tuple[bytes, ...], MdIndexError] = reader.read_files(wanted)
    return blobs.bind_result(lambda raw: index_documents(zip(wanted, raw, strict=True)))


def build(
    reader: CorpusReader, exclude: Exclude | None = None, index: Indexer = read_and_index
) -> IOResult[Corpus, MdIndexError]:
    """Derive the whole index from the markdown files of a tree.

    ``exclude`` is this run's scope, asked about directories and files by
    slash path; nothing is excluded by default except ``.git``. An empty
    corpus, or one with no indexable paragraph, is an ``EmptyCorpus`` failure.
    ``index`` does the reading and indexing of the chosen paths; a caller with
    a cache of earlier builds hands in one that reads only what changed.
    """
    listed: IOResult[tuple[str, ...], MdIndexError] = list_visible(reader, exclude)

    def read(paths: tuple[str, ...]) -> IOResult[Corpus, MdIndexError]:
        wanted = markdown_paths(paths, exclude)
        if not wanted:
            return IOResult.from_failure(EmptyCorpus(0, NO_MARKDOWN))
        return index(reader, wanted)

    return listed.bind(read)


def corpus_to_json(corpus: Corpus) -> str:
    """The whole index as canonical JSON: keys sorted, postings per term in id order.

    Two builds of the same tree give identical bytes; the determinism tests
    compare these.
    """
    postings = corpus.postings
    document = {
        "schema": SCHEMA_VERSION,
        "files": list(corpus.files),
        "bytes": corpus.bytes,
        "avg_len": corpus.avg_len,
        "by_class": dict(corpus.by_class),
        "df": dict(corpus.df),
        "postings": {
            term: [
                postings.chunk_ids(term).tolist(),
                postings.term_frequencies(term).tolist(),
            ]
            for term in postings.rows
        },
        "chunks": [
            {
                "file": c.file,
                "para": c.para,
                "line": c.line,
                "class": c.class_,
                "text": c.text,
                "terms": dict(c.terms),
                "length": c.length,
                "fm_name": c.fm_name,
                "fm_type": c.fm_type,
            }
            for c in corpus.chunks
        ],
    }
    return json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
