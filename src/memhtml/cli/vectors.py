"""The configured embedder and its vector cache under ``.memhtml/vectors/``.

Settings name the embedder (``none``, ``hashing``, ``local``, ``openai``); the cache
on disk is keyed by its vector space. Search turns hybrid only when that cache holds
a vector for every active record with text: a partly filled cache would rank the
embedded half above the rest for no reason a reader could see.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memhtml.cli.output import CliError, unwrap_io

if TYPE_CHECKING:
    from memhtml.compose import Settings
    from memhtml.contracts.services import QueryEmbedder, VectorSpace
    from memhtml.contracts.view import HeadView
    from memhtml.head import VectorCache
    from memhtml.store import Store

VECTORS_DIR = "vectors"


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a version the cache covers, in one space."""

    embedder: str
    space: str | None
    have: int
    total: int

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.have == self.total


def vectors_root(store: Store, settings: Settings) -> Path:
    state = store.deps.state_dir
    return (state if state is not None else settings.store / ".memhtml") / VECTORS_DIR


def _saved_space(root: Path, model_id: str) -> VectorSpace | None:
    """The space of a file set already saved for ``model_id``, widest first when several."""
    from memhtml.contracts.services import VectorSpace

    found: list[VectorSpace] = []
    try:
        manifests = sorted(root.glob("*/manifest.json"))
    except OSError:
        return None
    for manifest in manifests:
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("model_id") == model_id \
                and isinstance(data.get("dimension"), int):
            found.append(VectorSpace(model_id, data["dimension"]))
    found.sort(key=lambda space: -space.dimension)
    return found[0] if found else None


def embedder_for(settings: Settings, root: Path, name: str | None = None
                 ) -> QueryEmbedder | None:
    """The embedder the settings (or ``name``) pick; None for ``none``. An endpoint's
    width is taken from a file set saved for its model under ``root``, when there is one."""
    chosen = name or settings.embedder
    if chosen == "none":
        return None
    if chosen == "hashing":
        from memhtml.adapters.embedders import HashingEmbedder

        return HashingEmbedder()
    if chosen == "local":
        from memhtml.adapters.embedders import LocalEmbedder

        return LocalEmbedder()
    if chosen == "openai":
        from memhtml.adapters.embedders import OpenAICompatibleEmbedder

        if not settings.embed_url or not settings.embed_model:
            raise CliError("the openai embedder needs embed_url and embed_model (in "
                             ".memhtml/config.toml or MEMHTML_EMBED_URL/MEMHTML_EMBED_MODEL)")
        saved = _saved_space(root, settings.embed_model)
        return OpenAICompatibleEmbedder(settings.embed_url, settings.embed_model,
                                        api_key=os.environ.get(settings.embed_key_env),
                                        dimension=saved.dimension if saved else None)
    raise CliError(f"unknown embedder {chosen!r} (none, hashing, local, openai)")


def space_of(embedder: QueryEmbedder, resolve: bool) -> VectorSpace | None:
    """The embedder's space. An endpoint of unknown width is asked once (``resolve``),
    or has no space yet."""
    from memhtml.adapters.embedders import OpenAICompatibleEmbedder

    if not isinstance(embedder, OpenAICompatibleEmbedder):
        return embedder.space
    try:
        return embedder.space
    except RuntimeError:
        if not resolve:
            return None
    return unwrap_io(embedder.resolve_space(), lambda e: f"embedder {e.model_id}: {e.reason}")


def load_cache(root: Path, space: VectorSpace) -> VectorCache:
    """The saved vectors of ``space``; a corrupt file set is a failure, not a guess."""
    from memhtml.adapters.vector_files import load_cache as load

    return unwrap_io(load(root, space), lambda e: f"vector cache {e.path}: {e.reason}")


def coverage_of(settings: Settings, store: Store, view: HeadView,
                name: str | None = None) -> Coverage | None:
    """The cache's coverage of ``view`` for the configured embedder; None for ``none``."""
    from memhtml.head import coverage

    root = vectors_root(store, settings)
    embedder = embedder_for(settings, root, name)
    if embedder is None:
        return None
    space = space_of(embedder, resolve=False)
    if space is None:
        return Coverage(name or settings.embedder, None, 0, 0)
    have, total = coverage(view, load_cache(root, space))
    return Coverage(name or settings.embedder, space.key, have, total)


@dataclass(frozen=True)
class Hybrid:
    """What the vector arm needs: the cache, and the query's vector."""

    cache: VectorCache
    query_vector: object


def hybrid_for(settings: Settings, store: Store, view: HeadView, query: str
               ) -> tuple[Hybrid | None, str | None]:
    """The vector arm's inputs when the cache covers ``view``, else None and why."""
    from memhtml.head import coverage

    root = vectors_root(store, settings)
    embedder = embedder_for(settings, root)
    if embedder is None:
        return None, None
    space = space_of(embedder, resolve=False)
    if space is None:
        return None, "no vectors saved yet; run memhtml embed"
    cache = load_cache(root, space)
    have, total = coverage(view, cache)
    if total == 0 or have < total:
        return None, f"vectors cover {have} of {total} memories; run memhtml embed"
    from returns.pipeline import is_successful
    from returns.unsafe import unsafe_perform_io

    queried = embedder.embed_query(query)
    if not is_successful(queried):
        failure = unsafe_perform_io(queried.failure())
        return None, f"query not embedded ({failure.reason}); searched lexically"
    return Hybrid(cache, unsafe_perform_io(queried.unwrap())), None
