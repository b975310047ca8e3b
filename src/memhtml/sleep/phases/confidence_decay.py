"""Phase 7, confidence-decay: ``memhtml-confidence`` lowered in every file nothing
reinforced since the last merged run. One commit.

A claim nobody has read and nothing new supports since the last night the store was
curated is weaker evidence than it was, and retention-triage (which runs after this
phase) should score it that way. So each such file's stated confidence takes one step
toward the floor (``domain.decay.decayed_stored``: a tenth of the remaining distance,
rounded down to the two decimals the file keeps, never past the floor).

Reinforced, and so left alone, is a file that since the last merged run

- was read: the state plane's access log holds a ``read`` of its path at or after
  that run's stamp (the moment it read the corpus), or
- gained an inbound ``supports`` link: an active, non-task memory now links
  ``supports`` to it and did not at that run's tip (a memory written since counts,
  as does a link an earlier phase of this run promoted).

The last merged run is the newest run whose report main held when this run was cut,
as ``sleep plan`` finds it: its stamp comes from the report commit's
``Memhtml-Stamp`` trailer (the commit's time if the trailer is missing). A store
with no merged run has no window for anything to be new in, so every eligible file is
un-reinforced: the first night decays each stated confidence one step, which is the
baseline later nights measure against.

Left out: tasks (their confidence is not evidence of anything), archived files,
files the head skipped (never touched), and a file stating no confidence (it is not
given one). A file at or below the floor is not rewritten. Only
``memhtml-confidence`` changes: ``memhtml-updated`` is not restamped, because
retention reads recency from it and a sweep restamping every file would make the
whole corpus look fresh. The rewrite is ``format.set_meta`` on the text the head
holds, so every other byte of the file stays as written.

Counts: ``scanned`` (eligible files), and a partition of them: ``no_confidence``,
``reinforced``, ``at_floor`` (nothing to lower), ``decayed`` (rewritten). ``last_run``
names the run the window starts at (null: none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from returns.io import IOResult, IOSuccess

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import AccessCount, GitService, PathChange, Signature, TreeEntry
from memhtml.domain.decay import decayed_stored
from memhtml.format import read_links, set_meta
from memhtml.head import HeadVersion, is_active
from memhtml.sleep.history import LastRun, RunLookup
from memhtml.sleep.history import last_merged_run as merged_run
from memhtml.sleep.phase import Counts, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import describe

CONFIDENCE_META = "memhtml-confidence"


def last_merged_run(git: GitService, at: str, now: datetime, committer: Signature | None
                    ) -> IOResult[RunLookup, PhaseFault]:
    """The newest run merged into ``at``'s history, read from the commits that landed
    it (``history.last_merged_run``): a run stamped after ``now`` (the run's stamp) is
    passed over, so a forged date cannot make every memory look unread since."""
    found: IOResult[RunLookup, PhaseFault] = merged_run(git, at, now, committer).alt(
        lambda error: PhaseFault(describe(error)))
    return found


def is_eligible(record: MemoryRecord) -> bool:
    """An active memory that is not a task: what decay may rewrite."""
    return is_active(record) and record.memory_type != "task"


def _supports(record: MemoryRecord) -> frozenset[str]:
    return frozenset(to_tree_path(link.href) for link in record.links if link.rel == "supports")


def newly_supported(
    version: HeadVersion, changed: Sequence[str], before: Mapping[str, bytes]
) -> frozenset[str]:
    """Paths an active non-task memory among ``changed`` supports now and did not in
    ``before`` (its bytes at the last run's tip; absent: it did not exist then)."""
    out: set[str] = set()
    for path in changed:
        record = version.get(path)
        if record is None or not is_eligible(record):
            continue
        now = _supports(record)
        if not now:
            continue
        old = before.get(path)
        then = (
            frozenset(
                to_tree_path(link.href)
                for link in read_links(old.decode("utf-8", errors="replace"))
                if link.rel == "supports"
            )
            if old is not None
            else frozenset()
        )
        # A memory cannot reinforce itself: its own supports link is not evidence.
        out |= now - then - {path}
    return frozenset(out)


def _new_supports(env: PhaseEnv, last: LastRun, tip: str) -> IOResult[frozenset[str], PhaseFault]:
    git = env.git
    version = env.version

    def sources(changed: tuple[str, ...]) -> IOResult[frozenset[str], PhaseFault]:
        # Only a changed file that links ``supports`` now can have gained such a link;
        # their bytes at the last run's tip are the one thing read from git.
        linking = [p for p in changed if (r := version.get(p)) is not None and _supports(r)]
        if not linking:
            return IOSuccess(frozenset())
        entries: IOResult[tuple[TreeEntry, ...], PhaseFault] = git.entries_at(
            last.commit, linking
        ).alt(lambda error: PhaseFault(describe(error)))
        return entries.bind(lambda found: then(linking, found))

    def then(linking: list[str], found: tuple[TreeEntry, ...]
             ) -> IOResult[frozenset[str], PhaseFault]:
        read: IOResult[Mapping[str, bytes], PhaseFault] = git.read_blobs(
            sorted({e.blob_id for e in found})
        ).alt(lambda error: PhaseFault(describe(error)))
        return read.map(lambda blobs: newly_supported(
            version, linking, {e.path: blobs[e.blob_id] for e in found if e.blob_id in blobs}))

    changed: IOResult[tuple[str, ...], PhaseFault] = git.changed_paths(last.commit, tip).alt(
        lambda error: PhaseFault(describe(error))
    )
    return changed.bind(sources)


def _read_since(env: PhaseEnv, last: LastRun) -> IOResult[frozenset[str], PhaseFault]:
    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        last.stamp, "read"
    ).alt(
        lambda error: PhaseFault(
            f"the state plane's access log cannot be read, so reinforcement cannot be told "
            f"apart: {error.reason}"
        )
    )
    return read.map(lambda counts: frozenset(p for p, c in counts.items() if c.count > 0))


def reinforced_paths(env: PhaseEnv) -> IOResult[tuple[RunLookup, frozenset[str]], PhaseFault]:
    """The last merged run and the paths reinforced since it (none without a run)."""
    tip = env.version.sha
    if tip is None:
        return IOSuccess((RunLookup(None), frozenset()))

    def since(found: RunLookup) -> IOResult[tuple[RunLookup, frozenset[str]], PhaseFault]:
        last = found.last
        if last is None:
            return IOSuccess((found, frozenset()))
        return _read_since(env, last).bind(
            lambda read: _new_supports(env, last, tip).map(lambda linked: (found, read | linked))
        )

    return last_merged_run(env.git, env.base, env.stamp, env.committer).bind(since)


@dataclass(frozen=True)
class DecaySweep:
    """What the sweep decided: the rewrites, sorted by path, and the tallies."""

    changes: tuple[PathChange, ...]
    scanned: int
    no_confidence: int
    reinforced: int
    at_floor: int
    warnings: tuple[str, ...]


def sweep(version: HeadVersion, reinforced: frozenset[str]) -> DecaySweep:
    """Every eligible record, in path order: its decayed confidence written, or why not."""
    changes: list[PathChange] = []
    warnings: list[str] = []
    scanned = no_confidence = kept = at_floor = 0
    for record in sorted((r for r in version.records() if is_eligible(r)), key=lambda r: r.path):
        scanned += 1
        if record.confidence is None:
            no_confidence += 1
            continue
        if record.path in reinforced:
            kept += 1
            continue
        after = decayed_stored(record.confidence)
        if after is None:
            at_floor += 1
            continue
        html = set_meta(record.html, CONFIDENCE_META, f"{after:.2f}")
        if html == record.html:
            warnings.append(f"{record.path}: {CONFIDENCE_META} could not be rewritten; "
                            "left as written")  # fmt: skip
            continue
        changes.append(PathChange(record.path, html.encode("utf-8")))
    return DecaySweep(tuple(changes), scanned, no_confidence, kept, at_floor, tuple(warnings))


def _result(found: RunLookup, done: DecaySweep) -> PhaseResult:
    last = found.last
    warnings = (*found.notes, *done.warnings)
    counts: Counts = {
        "scanned": done.scanned,
        "no_confidence": done.no_confidence,
        "reinforced": done.reinforced,
        "at_floor": done.at_floor,
        "decayed": len(done.changes),
        "last_run": None if last is None else last.run_id,
    }
    if not done.changes:
        return PhaseResult(counts=counts, warnings=warnings)
    since = f"since {last.run_id}" if last is not None else "no merged run before this one"
    commit = PhaseCommit(
        f"confidence decayed in {len(done.changes)} unreinforced file(s)",
        done.changes,
        f"Nothing read or newly supported ({since}); each stated confidence took one "
        "step toward the floor.",
    )
    return PhaseResult(counts=counts, commits=(commit,), warnings=warnings)


def confidence_decay(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    return reinforced_paths(env).map(
        lambda found: _result(found[0], sweep(env.version, found[1]))
    )
