"""``memhtml embed``: fill the vector cache for the configured embedder."""

from __future__ import annotations

from memhtml.cli.choices import EmbedderName
from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import CliError, Reply, print_err, respond, store_value, unwrap_io

_COMMON = Common()
EMBED_BATCH = 64
NO_EMBEDDER = ("no embedder configured: set embedder = \"hashing\", \"local\" or \"openai\" "
               "in .memhtml/config.toml (or MEMHTML_EMBEDDER), or pass --embedder")


def embed(*, limit: int | None = None, embedder: EmbedderName | None = None,
          batch: int = EMBED_BATCH, common: Common = _COMMON) -> int:
    """Embed the active memories the vector cache lacks and save them in this clone's
    own state (.git/memhtml/vectors/). Once every memory has a vector, search turns
    hybrid.

    Parameters
    ----------
    limit
        Embed at most this many texts in this run.
    embedder
        Override the configured embedder for this run.
    batch
        Texts sent to the embedder per call (the progress bar moves per batch).
    """

    def body() -> Reply:
        from returns.io import IOResult

        from memhtml.cli.progress import progress
        from memhtml.head import FillCounts, fill_vectors

        services = open_cli_services(common, embedder=embedder)
        store = services.store()
        chosen = unwrap_io(IOResult.from_result(services.embedder), lambda e: e.reason)
        space = unwrap_io(services.embedder_space(resolve=True), lambda e: e.reason)
        if chosen is None or space is None:
            raise CliError(NO_EMBEDDER)
        loaded = unwrap_io(services.vectors.load_noted(space), lambda e: e.reason)
        cache = loaded.cache
        if loaded.note:
            print_err(f"note: {loaded.note}")
        version = store_value(store.head())

        def fill_error(error: object) -> str:
            return f"embedder {getattr(error, 'model_id', '?')}: {getattr(error, 'reason', error)}"

        first = unwrap_io(fill_vectors(version, cache, chosen, limit=0), fill_error)
        wanted = first.remaining if limit is None else min(max(limit, 0), first.remaining)
        embedded = 0
        failure: CliError | None = None
        with progress(f"embedding ({space.key})", wanted, common.json) as bar:
            while embedded < wanted:
                step = min(max(batch, 1), wanted - embedded)
                try:
                    filled = unwrap_io(fill_vectors(version, cache, chosen, limit=step),
                                       fill_error)
                except CliError as error:
                    failure = error
                    break
                if filled.counts.embedded == 0:
                    break
                cache = filled.cache
                embedded += filled.counts.embedded
                bar.advance(filled.counts.embedded)
        if embedded:
            # Vectors already computed are kept even when a later batch failed.
            unwrap_io(services.vectors.save(cache), lambda e: e.reason)
        if failure is not None:
            raise CliError(f"{failure.message} (after {embedded} embedded and saved)")
        counts = FillCounts(first.counts.records, first.counts.reused, embedded,
                            first.counts.empty)
        remaining = first.remaining - embedded
        payload = {"space": space.key, "counts": counts, "remaining": remaining}
        text = (f"{space.key}: embedded {counts.embedded}, reused {counts.reused}, "
                f"empty {counts.empty}, of {counts.records} active memories; "
                f"remaining {remaining}")
        return Reply(payload, text)

    return respond(common.json, body)
