"""The vector arm's wiring: the cache's coverage, and a query's vector.

Search turns hybrid only when the cache holds every passage of every active record
with text (``head.passages``): a partly filled cache would rank the embedded half
above the rest for no reason a reader could see. Both edges ask here, so the CLI and
the MCP server search the same way.

The cache is kept whole without a separate step (``top_up``): a door that lands a
memory embeds that memory's passages in the same command, and a search that finds a
few memories missing (written by git, a pull, an import) embeds them before it ranks.
Only a large gap, more than ``TOP_UP_PASSAGES``, is left to ``memhtml embed``, so no
command pays for a whole back-fill it did not ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import DocumentEmbedder, QueryEmbedder, Vector, VectorSpace

if TYPE_CHECKING:
    from typing import Never

    from memhtml.contracts.errors import EmbedFailure
    from memhtml.contracts.vectors import (
        Covering,
        LoadedVectors,
        VectorCache,
        VectorCacheFault,
        VectorCacheStore,
    )
    from memhtml.contracts.view import HeadView
    from memhtml.head.vectors import FillResult, PassageGap


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a version the cache covers, in one space; ``note`` says when the
    load behind it repaired the cache (see ``LoadedVectors``)."""

    embedder: str
    space: str | None
    have: int
    """Active memories with text whose every passage has a vector: what search reads."""
    total: int
    """Active memories with text."""
    note: str | None = None
    passages_have: int = 0
    passages_total: int = 0
    """Passages with a vector, and passages in all (``head.passages``)."""
    memory_vectors: int = 0
    """Memories with their own (opening) vector, which the sleep run compares by."""

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.have == self.total


@dataclass(frozen=True)
class Hybrid:
    """What the vector arm needs: the cache, and the query's vector."""

    cache: VectorCache
    query_vector: Vector


@dataclass(frozen=True)
class Arm:
    """The vector arm for one query, or why search stays lexical (``note``)."""

    hybrid: Hybrid | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ExtraMissing:
    """An embedder whose optional packages are not installed here; ``reason`` names
    them and the pip command that adds them."""

    embedder: str
    reason: str


def missing_extra(embedder: QueryEmbedder | None) -> ExtraMissing | None:
    """Why ``embedder`` cannot run on this machine (an optional package it imports is
    not installed); None when nothing is missing. Asked before any work starts, so a
    person gets the pip command rather than a failure halfway through."""
    if embedder is None:
        return None  # nothing to import the adapters for
    from memhtml.adapters.embedders import LocalEmbedder

    if not isinstance(embedder, LocalEmbedder):
        return None
    reason = embedder.missing_extra()
    return None if reason is None else ExtraMissing("local", reason)


def coverage_of(vectors: VectorCacheStore, embedder: QueryEmbedder | None, name: str,
                space: VectorSpace | None, view: HeadView
                ) -> IOResult[Coverage | None, VectorCacheFault]:
    """The cache's coverage of ``view`` in ``space``; None with no embedder."""
    from memhtml.head import coverage
    from memhtml.head.vectors import passage_coverage

    if embedder is None:
        return IOSuccess(None)
    if space is None:
        return IOSuccess(Coverage(name, None, 0, 0))

    def counted(loaded: LoadedVectors) -> Coverage | None:
        passages = passage_coverage(view, loaded.cache)
        memory_vectors, _ = coverage(view, loaded.cache)
        return Coverage(name, space.key, passages.covered, passages.memories, loaded.note,
                        passages.stored, passages.passages, memory_vectors)

    return vectors.load(space).map(counted)


Changed = Callable[[str, str], "tuple[str, ...] | None"]
"""The paths two commits' trees differ on (``GitService.changed_paths``), or None when
they cannot be had: what lets a coverage claim about one commit answer for another."""

CLAIM_PATHS = 256
"""The most changed paths a coverage claim is carried across (``gap_since`` reads
each one's record); past that, a walk over every record is about as cheap."""


def vector_arm(vectors: VectorCacheStore, embedder: QueryEmbedder | None,
               space: VectorSpace | None, view: HeadView, query: str,
               changed: Changed | None = None) -> IOResult[Arm, VectorCacheFault]:
    """The vector arm's inputs when the cache covers ``view``, else the reason not.

    Never a failure: search always has its lexical arm, so a cache that does not
    load or a query the embedder refuses turns into a note, not a failed search.
    A search that finds the cache whole records so (``mark_covered``), so the next
    command at this version, or a few paths from it, need not walk every record.
    """
    if embedder is None:
        return IOSuccess(Arm(None))
    if space is None:
        return IOSuccess(Arm(None, "no vectors saved yet; run memhtml embed"))
    missing = missing_extra(embedder)
    if missing is not None:
        return IOSuccess(Arm(None, f"{missing.reason}; searched lexically"))

    def armed(loaded: LoadedVectors) -> IOResult[Arm, VectorCacheFault]:
        since = changed_since(view, loaded, changed)
        gap = gap_of(view, loaded.cache, since)
        if gap.missing and gap.passages is not None:
            # A few memories written since the last fill (by git, a pull, an import):
            # embed them now, so this search (and the next) is hybrid over every one.
            topping: IOResult[TopUp, VectorCacheFault] = filled(
                vectors, embedder, loaded, view, gap.paths, since)
            return topping.bind(lambda topped: ranked(
                topped.cache or loaded.cache, topped.note,
                gap_of(view, topped.cache or loaded.cache, since)))
        if gap.complete:
            return claim(vectors, loaded, view).bind(
                lambda _: ranked(loaded.cache, loaded.note, gap))
        return ranked(loaded.cache, loaded.note, gap)

    def ranked(cache: VectorCache, note: str | None, gap: PassageGap
               ) -> IOResult[Arm, VectorCacheFault]:
        if gap.memories == 0:
            return IOSuccess(Arm(None, note))  # nothing to rank: no advice to give
        if not gap.complete:
            if gap.memories is None:
                # A claim's gap counts no memories: the walk's count, so the advice
                # reads the same with or without a claim.
                from memhtml.head.vectors import passage_gap

                gap = passage_gap(view, cache, TOP_UP_PASSAGES)
            covered = (f"vectors cover {(gap.memories or 0) - gap.missing} of "
                       f"{gap.memories} memories; run memhtml embed")
            return IOSuccess(Arm(None, f"{note}; {covered}" if note else covered))
        return embedder.embed_query(query).map(
            lambda vector: Arm(Hybrid(cache, vector), note)).lash(
            lambda failure: IOSuccess(Arm(None, f"query not embedded ({failure.reason}); "
                                                "searched lexically")))

    return vectors.load(space).bind(armed).lash(
        lambda error: IOSuccess(Arm(None, f"{error.reason}; searched lexically")))


TOP_UP_PASSAGES = 64
"""The most passages a command embeds beyond what it wrote: about two seconds of the
local model on one core at its slowest (full 256-piece passages), a few hundred
milliseconds for short memories. A larger gap is a back-fill, left to ``memhtml
embed``, which shows its progress."""


WRITE_PASSAGES = 256
"""The most passages a door embeds for the memories it wrote: a memory of about 250 KB,
some eight seconds of the local model at its slowest. A longer one (a pasted log, a
whole document) is left to ``memhtml embed`` rather than holding the write."""


@dataclass(frozen=True, slots=True)
class TopUp:
    """What ``top_up`` did: passages embedded and saved, passages still without a
    vector, and ``note`` for the person when the cache is not whole (or could not be
    filled: the write stands, search stays lexical until ``memhtml embed``)."""

    embedded: int = 0
    remaining: int = 0
    note: str | None = None
    cache: VectorCache | None = None


def top_up(vectors: VectorCacheStore, embedder: QueryEmbedder | None,
           space: VectorSpace | None, view: HeadView, paths: Collection[str] = (),
           changed: Changed | None = None) -> IOResult[TopUp, Never]:
    """Embed and save what ``view``'s passages lack after a door landed ``paths``.

    The memories at ``paths`` are embedded whatever else is missing, unless they are
    a back-fill (more than ``TOP_UP_PASSAGES`` memories, or more than
    ``WRITE_PASSAGES`` passages); every other missing memory too when all of them fit
    in ``TOP_UP_PASSAGES`` passages. Never a failure: the
    write it follows has landed, so what cannot be embedded here (an embedder that is
    not installed or refuses, a cache that cannot be written) is a note, and search
    stays lexical until ``memhtml embed`` fills the gap. With ``changed``, a cache
    that covered an earlier commit whole is asked only about the paths changed since
    (``gap_since``).
    """
    if embedder is None or space is None:
        return IOSuccess(TopUp())
    missing = missing_extra(embedder)
    if missing is not None:
        return IOSuccess(TopUp(note=f"vectors not embedded: {missing.reason}; search stays "
                                    "lexical"))

    def loaded_then(loaded: LoadedVectors) -> IOResult[TopUp, VectorCacheFault]:
        return filled(vectors, embedder, loaded, view, paths,
                      changed_since(view, loaded, changed))

    return vectors.load(space).bind(loaded_then).lash(
        lambda fault: IOSuccess(TopUp(note=f"vectors not embedded ({fault.reason}); "
                                            "search stays lexical until memhtml embed")))


def filled(vectors: VectorCacheStore, embedder: DocumentEmbedder, loaded: LoadedVectors,
           view: HeadView, paths: Collection[str], since: tuple[str, ...] | None
           ) -> IOResult[TopUp, Never]:
    """One top-up over a loaded cache (see ``top_up``): the memories at ``paths``
    first, then every other missing one when they fit in ``TOP_UP_PASSAGES``; the
    cache saved once when anything was embedded, with a coverage claim for ``view``
    when nothing is missing then. ``since``: the paths changed since the commit the
    loaded set covers (``changed_since``), None to walk every record."""
    from memhtml.head.vectors import FillCounts, FillResult, fill_passages

    cache, repaired = loaded.cache, loaded.note

    def own(cache: VectorCache) -> IOResult[FillResult, EmbedFailure | VectorCacheFault]:
        wanted = _own_records(view, cache, paths)
        if not wanted:
            return IOSuccess(FillResult(cache, FillCounts(0, 0, 0, 0), 0))
        mine: IOResult[FillResult, EmbedFailure | VectorCacheFault] = fill_passages(
            view, cache, embedder, paths=wanted)
        return mine

    def rest(first: FillResult) -> IOResult[TopUp, EmbedFailure | VectorCacheFault]:
        gap = gap_of(view, first.cache, since)
        if gap.missing == 0 or gap.passages is None:
            return saved(first.cache, _added(first), gap)
        more: IOResult[FillResult, EmbedFailure | VectorCacheFault] = fill_passages(
            view, first.cache, embedder, paths=gap.paths)
        return more.bind(lambda done: saved(
            done.cache, {**_added(first), **_added(done)}, gap_of(view, done.cache, since)))

    def saved(done: VectorCache, added: dict[str, Vector], gap: PassageGap
              ) -> IOResult[TopUp, EmbedFailure | VectorCacheFault]:
        note = _gap(gap.missing, repaired) if gap.missing else repaired
        top = TopUp(len(added), gap.missing, note, done)
        if not added:
            return claim(vectors, loaded, view).map(lambda _: top) if gap.complete \
                else IOSuccess(top)
        from immutables import Map

        from memhtml.contracts.vectors import VectorCache

        # Only the rows embedded here: a save merges with what the disk holds.
        return vectors.save(VectorCache(done.space, Map(added)),
                            covering_of(loaded, view) if gap.complete else None
                            ).map(lambda _: top)

    return own(cache).bind(rest).lash(lambda failure: IOSuccess(TopUp(
        note=f"vectors not embedded ({failure.reason}); search stays lexical until "
             "memhtml embed", cache=cache)))


def _added(fill: FillResult) -> dict[str, Vector]:
    return dict(fill.added.vectors.items()) if fill.added is not None else {}


def changed_since(view: HeadView, loaded: LoadedVectors, changed: Changed | None
                  ) -> tuple[str, ...] | None:
    """The paths ``view`` differs on from the commit the loaded set covers whole
    (``LoadedVectors.covers``): none when it is that commit; None when there is no
    such claim, it cannot be carried here (no git ancestry, no way to diff), or more
    than ``CLAIM_PATHS`` changed."""
    if loaded.covers is None or view.sha is None:
        return None
    if loaded.covers == view.sha:
        return ()
    found = changed(loaded.covers, view.sha) if changed is not None else None
    return found if found is not None and len(found) <= CLAIM_PATHS else None


def gap_of(view: HeadView, cache: VectorCache, since: tuple[str, ...] | None) -> PassageGap:
    """What ``cache`` lacks of ``view``: from the paths changed ``since`` a covering
    claim, else by walking every record. A claim's gap that lacks nothing is
    complete only when ``view`` holds a memory at all, as the walk's would be: a
    store whose every memory was archived searches lexically either way."""
    from memhtml.head.vectors import PassageGap, gap_since, has_memory, passage_gap

    if since is None:
        return passage_gap(view, cache, TOP_UP_PASSAGES)
    gap = gap_since(view, cache, since, TOP_UP_PASSAGES)
    return PassageGap(0, 0, 0) if gap.missing == 0 and not has_memory(view) else gap


def covering_of(loaded: LoadedVectors, view: HeadView) -> Covering | None:
    """The claim that the set ``loaded`` read (with what was saved on it since) holds
    every passage of ``view``; None when it cannot be made (a load that gave no stamp,
    a view with no commit)."""
    from memhtml.contracts.vectors import Covering

    if loaded.stamp is None or view.sha is None:
        return None
    return Covering(view.sha, loaded.stamp)


def claim(vectors: VectorCacheStore, loaded: LoadedVectors, view: HeadView
          ) -> IOResult[bool, VectorCacheFault]:
    """Record that the set ``loaded`` holds every passage of ``view``, unless it says
    so already; whether it was recorded. Never a failure: the claim is a hint for the
    next command (not recorded, it costs that command one walk), so a store that
    refuses it is not this command's failure."""
    covering = covering_of(loaded, view)
    if covering is None or loaded.covers == covering.commit:
        return IOSuccess(False)
    return vectors.mark_covered(loaded.cache.space, covering).lash(
        lambda _: IOSuccess(False))


def _own_records(view: HeadView, cache: VectorCache, paths: Collection[str]
                 ) -> tuple[str, ...]:
    """The landed paths a door embeds in its own command: its live memories the cache
    lacks, unless the landing is a back-fill's size (more memories than
    ``TOP_UP_PASSAGES``: an import) or their passages pass ``WRITE_PASSAGES``. Those
    wait for ``memhtml embed``, which shows its progress, and the gap note says so."""
    from memhtml.head.indexes import is_active
    from memhtml.head.passages import passages_of, stored_passages

    if len(paths) > TOP_UP_PASSAGES:
        return ()
    records = [record for path in sorted(set(paths))
               if (record := view.get(path)) is not None and is_active(record)
               and not stored_passages(record, cache) and record.body_text.strip()]
    if sum(len(passages_of(record)) for record in records) > WRITE_PASSAGES:
        return ()
    return tuple(record.path for record in records)


def _gap(missing: int, repaired: str | None) -> str:
    said = (f"{missing} memories have no vectors yet: search stays lexical until "
            "memhtml embed")
    return f"{repaired}; {said}" if repaired else said


def default_embedder(env: Mapping[str, str]) -> str:
    """The embedder a new store records: the one ``MEMHTML_EMBEDDER`` names in ``env``
    (what this environment searches with: ``none`` records nothing), else ``local``
    when its runtime (ONNX Runtime and ``tokenizers``, base dependencies) can be
    imported and the shipped model is installed, else ``none`` (search is lexical).
    Found without importing either."""
    from memhtml.adapters.embedders import shipped_model_dir
    from memhtml.adapters.extras import LOCAL_RUNTIME_MODULES, absent_modules
    from memhtml.compose.settings import EMBEDDERS

    named = env.get("MEMHTML_EMBEDDER", "").strip()
    if named in EMBEDDERS:
        return named
    model = shipped_model_dir() / "model.onnx"
    return "local" if not absent_modules(LOCAL_RUNTIME_MODULES) and model.is_file() else "none"


def settings_file(embedder: str) -> bytes | None:
    """A new store's ``.memhtml/config.toml`` recording ``embedder``; None for
    ``none``, the default, which needs no file."""
    if embedder == "none":
        return None
    return ("# This store's settings: every clone reads them. embedder names the model\n"
            "# search's vector arm uses (none: lexical search alone).\n"
            f'embedder = "{embedder}"\n').encode()
