"""``memhtml embed``: fill the vector cache, and record the embedder a run was told to use.

The embedder is a store setting (it names the vector space every clone searches in),
so ``--embedder NAME`` is committed into the store's ``.memhtml/config.toml`` once its
vectors are saved: the next ``search`` turns hybrid without another flag. What sends
data elsewhere (an endpoint's address, the variable holding its key) is never written
there; those stay the user's own settings.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memhtml.cli.choices import EmbedderName
from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import CliError, Reply, print_err, respond, store_value, unwrap_io

if TYPE_CHECKING:
    from memhtml.compose import Services
    from memhtml.store.settings_file import SettingRecorded

_COMMON = Common()
EMBED_BATCH = 64
NO_EMBEDDER = ("no embedder configured: pass --embedder hashing, local or openai (recorded "
               "in the store's .memhtml/config.toml for later runs and searches), or set "
               "MEMHTML_EMBEDDER")
EMBEDDER_KEY = "embedder"


def record_choice(services: Services, name: str
                  ) -> tuple[SettingRecorded | None, str | None, tuple[str, ...]]:
    """Commit ``embedder = name`` into the store's config: what was recorded, why it
    was not, and notes for the person (a variable that overrides the recorded value)."""
    from memhtml.compose import CONFIG_FILE
    from memhtml.compose.run import perform
    from memhtml.store import describe
    from memhtml.store.settings_file import record_setting

    line = f'{EMBEDDER_KEY} = "{name}"'
    if services.worktree is None:
        return None, (f"not recorded: a bare store has no checkout whose {CONFIG_FILE.as_posix()} "
                      f"is read; set MEMHTML_EMBEDDER={name} or {line} in "
                      "~/.config/memhtml/config.toml"), ()
    outcome = perform(record_setting(services.store().deps, CONFIG_FILE.as_posix(),
                                     EMBEDDER_KEY, name))
    override = os.environ.get("MEMHTML_EMBEDDER")
    notes = (f"note: MEMHTML_EMBEDDER={override} is set and wins over the recorded value "
             "in this environment",) if override and override != name else ()
    recorded = outcome.value_or(None)
    if recorded is None:
        return None, f"not recorded: {describe(outcome.failure())}", notes
    return recorded, None, notes


def recorded_line(recorded: SettingRecorded) -> str:
    line = f'{recorded.key} = "{recorded.value}"'
    if recorded.commit is None:
        return f"{line} is already recorded in {recorded.path}"
    return (f"recorded {line} in {recorded.path} ({recorded.commit[:10]}): later searches "
            "use it")


def embed(*, limit: int | None = None, embedder: EmbedderName | None = None,
          batch: int = EMBED_BATCH, common: Common = _COMMON) -> int:
    """Embed what the vector cache lacks (each memory's passages, which search reads,
    and its own vector, which the sleep run compares by) and save it in this clone's
    own state (.git/memhtml/vectors/). Once every memory's passages are in, search
    turns hybrid.

    Parameters
    ----------
    limit
        Embed at most this many texts in this run.
    embedder
        The embedder to use: hashing, local or openai. Recorded (committed) in the
        store's .memhtml/config.toml, so later searches and clones use it too.
    batch
        Texts sent to the embedder per call (the progress bar moves per batch).
    """

    def body() -> Reply:
        from returns.io import IOResult

        from memhtml.cli.progress import progress
        from memhtml.compose import error_code
        from memhtml.compose.vectors import missing_extra
        from memhtml.head import FillCounts, fill_vectors
        from memhtml.head.vectors import fill_passages

        # The vectors are the scope clone's own state, not a write to its memories.
        services = open_cli_services(common, embedder=embedder, writes=False)
        store = services.store()
        chosen = unwrap_io(IOResult.from_result(services.embedder), lambda e: e.reason)
        missing = missing_extra(chosen)
        if missing is not None:
            raise CliError(missing.reason, code=error_code(missing))
        space = unwrap_io(services.embedder_space(resolve=True), lambda e: e.reason)
        if chosen is None or space is None:
            raise CliError(NO_EMBEDDER)
        loaded = unwrap_io(services.vectors.load(space), lambda e: e.reason)
        cache = loaded.cache
        if loaded.note:
            print_err(f"note: {loaded.note}")
        version = store_value(store.head())

        def fill_error(error: object) -> str:
            return f"embedder {getattr(error, 'model_id', '?')}: {getattr(error, 'reason', error)}"

        fills = (("passages", fill_passages), ("memories", fill_vectors))
        firsts = {kind: unwrap_io(fill(version, cache, chosen, limit=0), fill_error)
                  for kind, fill in fills}
        pending = sum(first.remaining for first in firsts.values())
        wanted = pending if limit is None else min(max(limit, 0), pending)
        embedded = {kind: 0 for kind, _ in fills}
        failure: CliError | None = None
        with progress(f"embedding ({space.key})", wanted, common.json) as bar:
            # Passages first: they are what search reads. A memory's own vector is
            # what the sleep run compares memories by.
            for kind, fill in fills:
                while sum(embedded.values()) < wanted and failure is None:
                    step = min(max(batch, 1), wanted - sum(embedded.values()))
                    try:
                        filled = unwrap_io(fill(version, cache, chosen, limit=step),
                                           fill_error)
                    except CliError as error:
                        failure = error
                        break
                    if filled.counts.embedded == 0:
                        break
                    cache = filled.cache
                    embedded[kind] += filled.counts.embedded
                    bar.advance(filled.counts.embedded)
        done = sum(embedded.values())
        if done:
            # Vectors already computed are kept even when a later batch failed.
            unwrap_io(services.vectors.save(cache), lambda e: e.reason)
        if failure is not None:
            raise CliError(f"{failure.message} (after {done} embedded and saved)")
        first = firsts["memories"]
        counts = FillCounts(first.counts.records, first.counts.reused, embedded["memories"],
                            first.counts.empty)
        passages = firsts["passages"]
        passage_counts = FillCounts(passages.counts.records, passages.counts.reused,
                                    embedded["passages"], passages.counts.empty)
        remaining = first.remaining - embedded["memories"]
        passages_remaining = passages.remaining - embedded["passages"]
        recorded, problem, notes = record_choice(services, embedder) if embedder \
            else (None, None, ())
        payload = {"space": space.key, "counts": counts, "remaining": remaining,
                   "passages": passage_counts, "passages_remaining": passages_remaining,
                   "recorded": recorded, "not_recorded": problem}
        text = (f"{space.key}: embedded {counts.embedded}, reused {counts.reused}, "
                f"empty {counts.empty}, of {counts.records} active memories; "
                f"remaining {remaining}\n"
                f"passages: embedded {passage_counts.embedded} (memories reused "
                f"{passage_counts.reused}); remaining {passages_remaining}")
        said = f"\n{recorded_line(recorded)}" if recorded is not None else ""
        return Reply(payload, text + said,
                     notes=(*((f"note: {problem}",) if problem else ()), *notes))

    return respond(common.json, body)
