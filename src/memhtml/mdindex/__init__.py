"""The markdown corpus indexer: "do I already know this?" as a lookup, not a scan.

A mind that keeps its memory as markdown and answers that question by
re-reading everything pays O(m) per new learning, and m grows daily, so a fixed
budget buys fewer learnings every day while every step still looks like work.
Here the index narrows m to k receipts, the reader judges only those, and
nothing in this package ever writes the corpus.

Pure: the tree is read through a ``CorpusReader`` handed in by the caller.
"""

from memhtml.mdindex.bm25 import BM25_B, BM25_K1, BM25Channel
from memhtml.mdindex.channel import Channel, Scored, top_k
from memhtml.mdindex.corpus import (
    MIN_TERMS,
    SCHEMA_VERSION,
    Chunk,
    Corpus,
    Postings,
    build,
    corpus_to_json,
    index_documents,
)
from memhtml.mdindex.errors import (
    BadGlob,
    ChannelRefused,
    EmptyCheck,
    EmptyCorpus,
    MdIndexError,
    ReadFailure,
)
from memhtml.mdindex.frontmatter import Frontmatter, parse_frontmatter
from memhtml.mdindex.fusion import (
    CHANNELS,
    DEFAULT_CHANNELS,
    FUSION_DEPTH_FACTOR,
    FUSION_MIN_DEPTH,
    RANKING_VERSION,
    RRF_K,
    SNIPPET_BYTES,
    FileHit,
    fusion_depth,
    make_channels,
    retrieve,
)
from memhtml.mdindex.globs import compile_glob, glob_files
from memhtml.mdindex.reader import CorpusReader, Exclude, is_hidden, list_visible
from memhtml.mdindex.receipts import format_receipt, to_dict, to_json
from memhtml.mdindex.text import normalize, tokenize, truncate
from memhtml.mdindex.trigram import TrigramChannel, trigrams
from memhtml.mdindex.verify import (
    Finding,
    FindingKind,
    coverage,
    frontmatter_present,
    wikilink_target,
    wikilinks,
)

__all__ = [
    "BM25_B",
    "BM25_K1",
    "CHANNELS",
    "DEFAULT_CHANNELS",
    "FUSION_DEPTH_FACTOR",
    "FUSION_MIN_DEPTH",
    "MIN_TERMS",
    "RANKING_VERSION",
    "RRF_K",
    "SCHEMA_VERSION",
    "SNIPPET_BYTES",
    "BM25Channel",
    "BadGlob",
    "Channel",
    "ChannelRefused",
    "Chunk",
    "Corpus",
    "CorpusReader",
    "EmptyCheck",
    "EmptyCorpus",
    "Exclude",
    "FileHit",
    "Finding",
    "FindingKind",
    "Frontmatter",
    "MdIndexError",
    "Postings",
    "ReadFailure",
    "Scored",
    "TrigramChannel",
    "build",
    "compile_glob",
    "corpus_to_json",
    "coverage",
    "format_receipt",
    "frontmatter_present",
    "fusion_depth",
    "glob_files",
    "index_documents",
    "is_hidden",
    "list_visible",
    "make_channels",
    "normalize",
    "parse_frontmatter",
    "retrieve",
    "to_dict",
    "to_json",
    "tokenize",
    "top_k",
    "trigrams",
    "truncate",
    "wikilink_target",
    "wikilinks",
]
