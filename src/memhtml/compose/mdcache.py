"""Where a markdown tree's index is remembered, and the build that uses it.

A markdown folder handed to ``memhtml md`` is usually not a store and may be
anything the user downloaded, so nothing is ever read from inside it: the cache
lives in the user's own cache directory, one subdirectory per folder named by a
digest of the folder's resolved path. ``MEMHTML_CACHE_DIR`` moves the whole
cache elsewhere (a test, a read-only home).

Folders are moved, renamed and deleted, and a cache keyed by a path nobody asks for
again would stay forever. So each time a cache is written, the others are pruned:
one whose folder no longer exists, or that no run has used for
``PRUNE_UNUSED_DAYS`` days, is removed (``adapters.mdcache.prune_index_caches``
says how carefully).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from returns.io import IOResult
from returns.result import Success

from memhtml.mdindex import Corpus, CorpusReader, Exclude, MdIndexError, build
from memhtml.mdindex.cache import CachedIndex, CachingIndexer, Reuse
from memhtml.mdindex.cache_codec import decode, encode

ENV_CACHE_DIR = "MEMHTML_CACHE_DIR"
"""Overrides ``$XDG_CACHE_HOME/memhtml`` (by default ``~/.cache/memhtml``)."""
INDEX_DIR = "mdindex"
PRUNE_UNUSED_DAYS = 30
"""A cache unused this long is removed when another is written. A month keeps the
cache of a folder queried now and then; a folder untouched longer pays one full
build (about a second on 11 MB) when it is queried again."""
_DAY_NS = 86_400 * 10**9
_UNUSED_NS = PRUNE_UNUSED_DAYS * _DAY_NS
_TEMPORARY_NS = _DAY_NS
"""A temporary file older than this is left from a write that never finished."""
_USE_RESOLUTION_NS = _DAY_NS
"""How often a cache only read has its last use recorded: far finer than the
month it is judged by, and seldom enough to cost no writes worth counting."""

_LAST: dict[Path, tuple[tuple[int, ...] | None, CachedIndex]] = {}
"""The last index this process built or loaded, with the stamp of its cache file.

A second query in the same process (a library caller, a test) then costs the
stat calls and the query, not a load; the cache file's stamp must still be the
one it had, so a file rewritten or damaged by anyone since is read (and judged)
again. One entry only: a long-lived process keeps one index, not one per folder.
"""


@dataclass(frozen=True, slots=True)
class MarkdownIndex:
    """A built index and, when the cache was used, what it reused."""

    corpus: Corpus
    reuse: Reuse | None
    cache_dir: Path | None


def cache_root(environ: Mapping[str, str]) -> Path:
    """The directory every memhtml cache of this user lives under."""
    chosen = environ.get(ENV_CACHE_DIR)
    if chosen:
        return Path(chosen)
    xdg = environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "memhtml"


def index_cache_dir(root: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The cache directory for one markdown folder, named by its resolved path."""
    resolved = str(root.resolve())
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_root(os.environ if environ is None else environ) / INDEX_DIR / digest


def index_markdown(reader: CorpusReader, root: Path, exclude: Exclude | None = None, *,
                   cache: bool = True, environ: Mapping[str, str] | None = None
                   ) -> IOResult[MarkdownIndex, MdIndexError]:
    """Build the index of the folder, from its cache where the files have not moved.

    With ``cache`` off this is exactly ``build``. Otherwise the cached index is
    loaded and checked, only changed files are read and indexed, and the result
    is written back when anything changed. A cache that cannot be read or
    written never fails the command: the index is built from the tree.
    """
    if not cache:
        return build(reader, exclude).map(lambda corpus: MarkdownIndex(corpus, None, None))
    from memhtml.adapters.mdcache import FileStamps, IndexCacheFile, prune_index_caches

    key = str(root.resolve())
    store = IndexCacheFile(index_cache_dir(root, environ))
    remembered = _LAST.get(store.path)
    cached: CachedIndex | None = None
    refusal: str | None = None
    if remembered is not None and remembered[0] == store.stamp():
        cached = remembered[1]
    else:
        loaded = store.load().bind(lambda found: decode(found[0], found[1], key))
        cached = loaded.value_or(None)
        refusal = None if cached is not None else loaded.swap().value_or("refused")
        if cached is not None:
            store.mark_used(time.time_ns(), _USE_RESOLUTION_NS)
    indexer = CachingIndexer(FileStamps(root), key, cached,
                             None if refusal == "miss" else refusal)

    def remember(corpus: Corpus) -> MarkdownIndex:
        built, reuse = indexer.built, indexer.reuse
        if built is not None and reuse is not None and (reuse.read or reuse.verified
                                                        or reuse.cache != "hit"):
            saved = encode(built).bind(lambda found: store.save(found[0], found[1]))
            if isinstance(saved, Success):
                prune_index_caches(store.directory.parent, store.directory.name,
                                   time.time_ns(), _UNUSED_NS, _TEMPORARY_NS)
        _LAST.clear()
        if built is not None:
            _LAST[store.path] = (store.stamp(), built)
        return MarkdownIndex(corpus, reuse, store.directory)

    return build(reader, exclude, indexer).map(remember)
