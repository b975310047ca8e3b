"""Phase 1, preflight: the preconditions every later commit rests on. It commits nothing.

Each check guards against a night that is corrupt while its report is green, which no
per-phase isolation can catch:

- **The head is at the base.** The base version is the base commit's, and the branch
  tip the phases build on descends from it. The spec's stale-index check has no
  counterpart: a version is a function of its commit and cannot be half rebuilt.
- **The state plane reads.** An unreadable database, or one a newer memhtml wrote, is
  refused with the file named (its counters decide promotions).
- **The configured vector space is the cached one.** A set saved for the embedder's
  model in another width is a half-migrated space: every vector well formed, every
  cosine meaningless.
- **Vector coverage.** With an embedder bound, the base's missing vectors are filled
  first (not in a dry run) and coverage is measured after: below
  ``VECTOR_COVERAGE_HARD_FLOOR`` the run is refused (every cosine pass would compare a
  sample against itself), below the floor it warns and goes on. An embedder that
  embedded nothing is refused and the remedy, ``MEMHTML_EMBEDDER=none``, named. With
  no embedder the run is lexical-only and the check does not apply.
- **The checkout's changes are counted**, not refused: commits are built in memory
  from the tree, so a person's uncommitted bytes can never ride in a sleep commit.

The counts are the run's baseline, a function of the base: memories, archived,
skipped, tasks and, when vectors are in use, ``vector_coverage``. What only this
invocation saw (the checkout's changed paths, the counters' totals, vectors embedded
now) is ``observed``: shown by the CLI, never written into the report, so a resumed
run's report is the uninterrupted run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Counter, DocumentEmbedder
from memhtml.contracts.vectors import VectorCacheFault, VectorCacheStore, widest_space
from memhtml.domain.thresholds import VECTOR_COVERAGE_HARD_FLOOR
from memhtml.head import FillResult, HeadVersion, VectorCache, coverage, fill_vectors, is_active
from memhtml.sleep.phase import CountValue, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import describe

_OBSERVED = frozenset({"embedded", "would_embed"})
"""Vector readings of this invocation only (a resume finds the vectors already there)."""
LEXICAL_REMEDY = "set MEMHTML_EMBEDDER=none to run without vectors"


@dataclass(frozen=True)
class _Vectors:
    counts: dict[str, CountValue]
    warnings: tuple[str, ...]
    cache: VectorCache | None


def _state_reason(error: object) -> str:
    reason = getattr(error, "reason", repr(error))
    path = getattr(error, "path", "")
    return f"the state database {path} cannot be read: {reason}" if path else str(reason)


def preflight(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    base = env.base_version
    if base.sha != env.base:
        return IOFailure(PhaseFault(f"the version read is at {base.sha}, not the base "
                                    f"{env.base}"))

    def at_base(_: None) -> IOResult[PhaseResult, PhaseFault]:
        return _counters(env).bind(lambda counters: _changes(env).bind(
            lambda changed: _vectors(env, base).map(
                lambda vectors: _result(base, counters, changed, vectors))))

    return _descends(env).bind(at_base)


def _descends(env: PhaseEnv) -> IOResult[None, PhaseFault]:
    tip = env.version.sha
    if tip is None:
        return IOFailure(PhaseFault("the branch has no commit"))
    if tip == env.base:
        return IOSuccess(None)
    ahead: IOResult[tuple[str, ...], PhaseFault] = env.git.commits_between(tip, env.base).alt(
        lambda error: PhaseFault(describe(error)))
    return ahead.bind(lambda shas: IOFailure(PhaseFault(
        f"the branch tip {tip} does not descend from the base {env.base}")) if shas
        else IOSuccess(None))


def _counters(env: PhaseEnv) -> IOResult[dict[str, int], PhaseFault]:
    def total(counters: tuple[Counter, ...]) -> int:
        return len(counters)

    def both(entities: int, edges: int) -> dict[str, int]:
        return {"entity_counters": entities, "edge_counters": edges}

    entity = env.state.counters("entity").map(total)
    return entity.bind(lambda entities: env.state.counters("edge").map(total).map(
        lambda edges: both(entities, edges))).alt(
        lambda error: PhaseFault(_state_reason(error)))


def _changes(env: PhaseEnv) -> IOResult[int, PhaseFault]:
    if not env.worktree:
        return IOSuccess(0)
    return env.git.worktree_changes().map(len).alt(
        lambda error: PhaseFault(f"cannot read the checkout's changes: {describe(error)}"))


def _vectors(env: PhaseEnv, base: HeadVersion) -> IOResult[_Vectors, PhaseFault]:
    embedder, store = env.embedder, env.vector_store
    if env.embedder_problem is not None:
        return IOFailure(PhaseFault(f"the embedder {env.embedder_name!r} cannot be used: "
                                    f"{env.embedder_problem}; {LEXICAL_REMEDY}"))
    if embedder is None or store is None:
        others = store.saved_spaces() if store is not None else ()
        notes = (f"vectors saved for {', '.join(s.key for s in others)} are not read: no "
                 "embedder is configured, so this run is lexical-only",) if others else ()
        return IOSuccess(_Vectors({"vector_check": "off"}, notes, None))
    space = embedder.space
    saved = widest_space(store.saved_spaces(), space.model_id)
    if saved is not None and saved != space:
        return IOFailure(PhaseFault(
            f"the configured vector space {space.key} is not the cached one {saved.key} "
            f"(the same model at another width): a half-migrated space makes every cosine "
            f"meaningless; move the old set aside and run memhtml embed, or "
            f"{LEXICAL_REMEDY}"))
    loaded: IOResult[VectorCache, PhaseFault] = store.load(space).map(
        lambda found: found.cache).alt(
        lambda fault: PhaseFault(f"the vector cache cannot be read: {fault.reason}"))
    return loaded.bind(lambda cache: _filled(env, base, embedder, store, cache))


def _filled(env: PhaseEnv, base: HeadVersion, embedder: DocumentEmbedder,
            store: VectorCacheStore, cache: VectorCache) -> IOResult[_Vectors, PhaseFault]:
    have, total = coverage(base, cache)
    missing = total - have
    if env.dry_run or missing == 0:
        return _judged(env, cache, embedded=0, would_embed=missing if env.dry_run else 0,
                       failure=None)

    def saved(filled: FillResult) -> IOResult[_Vectors, PhaseFault]:
        stored: IOResult[str | None, VectorCacheFault] = store.save(filled.cache).map(
            _no_problem)
        return stored.lash(lambda fault: IOSuccess(fault.reason)).bind(
            lambda problem: _judged(env, filled.cache, filled.counts.embedded, 0, None,
                                    (f"the filled vectors could not be saved: {problem}",)
                                    if problem else ()))

    def unfilled(reason: str) -> IOResult[_Vectors, PhaseFault]:
        return _judged(env, cache, 0, 0, reason)

    attempt: IOResult[FillResult, EmbedFailure] = fill_vectors(base, cache, embedder)
    outcome: IOResult[FillResult | str, PhaseFault] = attempt.map(_as_outcome).lash(
        lambda failure: IOSuccess(failure.reason))
    return outcome.bind(lambda got: unfilled(got) if isinstance(got, str) else saved(got))


def _no_problem(_: int) -> str | None:
    return None


def _as_outcome(filled: FillResult) -> FillResult | str:
    return filled


def _judged(env: PhaseEnv, cache: VectorCache, embedded: int, would_embed: int,
            failure: str | None, notes: tuple[str, ...] = ()) -> IOResult[_Vectors, PhaseFault]:
    have, total = coverage(env.base_version, cache)
    share = 1.0 if total == 0 else have / total
    counts: dict[str, CountValue] = {
        "vector_space": cache.space.key, "vectors_have": have, "vectors_total": total,
        "vector_coverage": round(share, 4), "embedded": embedded,
    }
    if env.dry_run:
        counts["would_embed"] = would_embed
    why = f" (the embedder failed: {failure})" if failure else ""
    if total > 0 and have == 0:
        return IOFailure(PhaseFault(
            f"the embedder {env.embedder_name!r} is set but nothing is embedded{why}; run "
            f"memhtml embed, or {LEXICAL_REMEDY}"))
    if share < VECTOR_COVERAGE_HARD_FLOOR:
        return IOFailure(PhaseFault(
            f"vectors cover {have} of {total} memories ({share:.1%}), below the hard floor "
            f"{VECTOR_COVERAGE_HARD_FLOOR}{why}: every cosine pass would compare a sample of "
            f"the store with itself; run memhtml embed, or {LEXICAL_REMEDY}"))
    warnings = list(notes)
    if share < env.coverage_floor:
        counts["vector_check"] = "warned"
        warnings.append(f"vectors cover {have} of {total} memories ({share:.1%}), below "
                        f"vector_coverage_floor {env.coverage_floor}{why}")
    else:
        counts["vector_check"] = "ok"
    return IOSuccess(_Vectors(counts, tuple(warnings), cache))


def _result(base: HeadVersion, counters: dict[str, int], changed: int, vectors: _Vectors
            ) -> PhaseResult:
    active = archived = tasks = 0
    for record in base.records():
        if is_active(record):
            active += 1
            tasks += record.memory_type == "task"
        else:
            archived += 1
    counts: dict[str, CountValue] = {
        "memories": active, "archived": archived, "tasks": tasks, "skipped": base.skipped,
        **{k: v for k, v in vectors.counts.items() if k not in _OBSERVED},
    }
    observed: dict[str, CountValue] = {
        "worktree_changes": changed, **counters,
        **{k: v for k, v in vectors.counts.items() if k in _OBSERVED},
    }
    return PhaseResult(counts=counts, warnings=vectors.warnings, vectors=vectors.cache,
                       observed=observed)
