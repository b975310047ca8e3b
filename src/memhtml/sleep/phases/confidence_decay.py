"""Phase 7, confidence-decay: ``memhtml-confidence`` lowered in every file nothing
reinforced, one step per whole day nothing did. One commit.

A claim nobody has read and nothing new supports is weaker evidence the longer that
lasts, and retention-triage (which runs after this phase) should score it that way.
So each such file's stated confidence takes one step toward the floor
(``domain.decay.decayed_stored``: a tenth of the remaining distance, rounded down to
the two decimals the file keeps, never past the floor) for every whole day
(``DECAY_PERIOD``) of its own decay clock that ended since decay was last applied:
``domain.decay.decay_steps``.

Decay is counted in time, not in runs. Counting runs decayed a store curated three
times a day three times as fast as one curated daily, and on a store's first night
stepped a file written a minute ago exactly as far as one written a year ago. Counted
in whole days, three runs in one day step a file as far as one run, and since every
step is taken from the value the file stores, it lands on the very same confidence.

- **The clock's origin** is the latest of the file's ``memhtml-created``, its arrival
  on the store's branch (``sleep.arrivals``: the committer time of the first-parent
  commit that brought it) and its last read in the access log
  (``domain.decay.decay_origin``). A read restarts the clock; the arrival keeps the
  years a note spent before memhtml held it (an import, a clone, a file committed by
  hand) from being charged on its first night, since nothing could reinforce it then.
- **The last application** is the last merged run, the newest run whose report main
  held when this run was cut, as ``sleep plan`` finds it: its stamp comes from the
  report commit's ``Memhtml-Stamp`` trailer (the commit's time if the trailer is
  missing). That run applied the days that had ended by its stamp, so this one owes
  only the days that ended since. A store with no merged run owes every whole day
  since each file's origin. A run that was thrown away applied nothing, and is not
  counted: its branch never reached main. A merged run whose decay did not run (not
  selected, or failed) is counted all the same: the days that ended before it are
  forgiven, never charged twice.
- **A new inbound ``supports``** reinforces too: an active, non-task memory now links
  ``supports`` to the file and did not at the last merged run's tip (a memory
  written since counts, as does a link an earlier phase of this run promoted). When
  it came is not recorded, so the file is left alone this run (the days since the
  last run are forgiven).

Left out: tasks (their confidence is not evidence of anything), archived files,
files the head skipped (never touched), and a file stating no confidence (it is not
given one). A file at or below the floor is not rewritten. Only
``memhtml-confidence`` changes: ``memhtml-updated`` is not restamped, because
retention reads recency from it and a sweep restamping every file would make the
whole corpus look fresh. The rewrite is ``format.set_meta`` on the text the head
holds, so every other byte of the file stays as written.

Counts: ``scanned`` (eligible files), and a partition of them: ``no_confidence``,
``reinforced`` (a new ``supports``, or a read since the last run with no whole day
since it), ``at_floor`` (nothing to lower), ``not_due`` (no whole day ended since the
last application), ``decayed`` (rewritten); ``steps`` (the steps the rewrites took,
together); ``from_arrival`` (scanned files whose clock starts at their arrival, later
than both their creation and their last read). ``last_run`` names the run the window
starts at (null: none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from returns.io import IOResult, IOSuccess

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import (
    AccessCount,
    Arrival,
    PathChange,
    Repository,
    Signature,
    TreeEntry,
)
from memhtml.domain.decay import decay_origin, decay_steps, decayed_stored, stored_after
from memhtml.format import read_links, set_meta
from memhtml.head import HeadVersion, is_active
from memhtml.sleep.arrivals import arrived_at
from memhtml.sleep.contract import LOG_START
from memhtml.sleep.history import LastRun, RunLookup
from memhtml.sleep.history import last_merged_run as merged_run
from memhtml.sleep.phase import Counts, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases.retention_triage import moment
from memhtml.store.errors import describe

CONFIDENCE_META = "memhtml-confidence"


def last_merged_run(git: Repository, at: str, now: datetime, committer: Signature | None
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


def _last_reads(env: PhaseEnv) -> IOResult[Mapping[str, datetime], PhaseFault]:
    """Each path's latest read in the whole access log."""
    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read"
    ).alt(
        lambda error: PhaseFault(
            f"the state plane's access log cannot be read, so reinforcement cannot be told "
            f"apart: {error.reason}"
        )
    )
    return read.map(lambda counts: {p: c.last for p, c in counts.items() if c.count > 0})


@dataclass(frozen=True, slots=True)
class Reinforcement:
    """What reinforced the corpus: the last merged run (where the owed days start),
    each path's latest read, and the paths newly supported since that run; and when
    each memory came onto the branch (``arrivals``, with the run's ``stamp`` for a
    path the base does not hold)."""

    last: LastRun | None
    last_read: Mapping[str, datetime]
    supported: frozenset[str]
    notes: tuple[str, ...] = ()
    """What the search for the last run passed over, and why (a run stamped in the
    future, a report no run's commit wrote)."""
    arrivals: Mapping[str, Arrival] | None = None
    """None: not read (every file counts from its creation or read, as if it arrived
    when it was written)."""
    stamp: datetime | None = None

    def arrived(self, path: str) -> datetime | None:
        if self.arrivals is None or self.stamp is None:
            return None
        return arrived_at(self.arrivals, path, self.stamp)

    def origin(self, record: MemoryRecord) -> datetime | None:
        """Where the file's decay clock starts (``decay_origin``): the latest of its
        creation, its arrival and its last read. None when the creation stamp cannot
        be read (then nothing is owed)."""
        return decay_origin(moment(record.created_at), self.arrived(record.path),
                            self.last_read.get(record.path))

    def from_arrival(self, record: MemoryRecord) -> bool:
        """Whether the file's clock starts at its arrival, after its creation and its
        last read."""
        arrived = self.arrived(record.path)
        created = moment(record.created_at)
        read = self.last_read.get(record.path)
        return (arrived is not None and created is not None and arrived > created
                and (read is None or arrived > read))

    def read_since_last_run(self, path: str) -> bool:
        read = self.last_read.get(path)
        return read is not None and (self.last is None or read >= self.last.stamp)


def reinforcement(env: PhaseEnv) -> IOResult[Reinforcement, PhaseFault]:
    """The last merged run, the latest reads, the paths newly supported since, and
    each memory's arrival on the branch."""
    tip = env.version.sha

    def since(found: RunLookup, arrivals: Mapping[str, Arrival]
              ) -> IOResult[Reinforcement, PhaseFault]:
        last = found.last

        def linked(reads: Mapping[str, datetime]) -> IOResult[Reinforcement, PhaseFault]:
            if last is None or tip is None:
                return IOSuccess(Reinforcement(last, reads, frozenset(), found.notes,
                                               arrivals, env.stamp))
            return _new_supports(env, last, tip).map(
                lambda supported: Reinforcement(last, reads, supported, found.notes,
                                                arrivals, env.stamp))

        return _last_reads(env).bind(linked)

    arrived: IOResult[Mapping[str, Arrival], PhaseFault] = env.arrival_book().read().alt(
        lambda reason: PhaseFault(
            f"git could not say when each memory came onto the branch: {reason}"))
    return arrived.bind(lambda arrivals: last_merged_run(
        env.git, env.base, env.stamp, env.committer).bind(
            lambda found: since(found, arrivals)))


@dataclass(frozen=True)
class DecaySweep:
    """What the sweep decided: the rewrites, sorted by path, and the tallies."""

    changes: tuple[PathChange, ...]
    scanned: int
    no_confidence: int
    reinforced: int
    at_floor: int
    not_due: int
    steps: int
    warnings: tuple[str, ...]
    from_arrival: int = 0


def sweep(version: HeadVersion, found: Reinforcement, stamp: datetime) -> DecaySweep:
    """Every eligible record, in path order: its decayed confidence written, or why not."""
    changes: list[PathChange] = []
    warnings: list[str] = []
    scanned = no_confidence = kept = at_floor = not_due = steps = arrived = 0
    applied = None if found.last is None else found.last.stamp
    for record in sorted((r for r in version.records() if is_eligible(r)), key=lambda r: r.path):
        scanned += 1
        arrived += found.from_arrival(record)
        if record.confidence is None:
            no_confidence += 1
            continue
        if record.path in found.supported:
            kept += 1
            continue
        if decayed_stored(record.confidence) is None:
            at_floor += 1
            continue
        origin = found.origin(record)
        owed = 0 if origin is None else decay_steps(origin, applied, stamp)
        after = stored_after(record.confidence, owed)
        if after is None:
            if found.read_since_last_run(record.path):
                kept += 1
            else:
                not_due += 1
            continue
        html = set_meta(record.html, CONFIDENCE_META, f"{after:.2f}")
        if html == record.html:
            warnings.append(f"{record.path}: {CONFIDENCE_META} could not be rewritten; "
                            "left as written")  # fmt: skip
            continue
        steps += owed
        changes.append(PathChange(record.path, html.encode("utf-8")))
    return DecaySweep(tuple(changes), scanned, no_confidence, kept, at_floor, not_due, steps,
                      tuple(warnings), arrived)


def _result(found: Reinforcement, done: DecaySweep) -> PhaseResult:
    last = found.last
    warnings = (*found.notes, *done.warnings)
    counts: Counts = {
        "scanned": done.scanned,
        "no_confidence": done.no_confidence,
        "reinforced": done.reinforced,
        "at_floor": done.at_floor,
        "not_due": done.not_due,
        "decayed": len(done.changes),
        "steps": done.steps,
        "from_arrival": done.from_arrival,
        "last_run": None if last is None else last.run_id,
    }
    if not done.changes:
        return PhaseResult(counts=counts, warnings=warnings)
    since = f"since {last.run_id}" if last is not None else "no merged run before this one"
    commit = PhaseCommit(
        f"confidence decayed in {len(done.changes)} unreinforced file(s)",
        done.changes,
        f"Nothing read or newly supported ({since}); each stated confidence took one "
        "step toward the floor per whole day nothing reinforced it since decay was last "
        "applied (or since it was written, came onto the branch, or was last read).",
    )
    return PhaseResult(counts=counts, commits=(commit,), warnings=warnings)


def confidence_decay(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    return reinforcement(env).map(
        lambda found: _result(found, sweep(env.version, found, env.stamp))
    )
