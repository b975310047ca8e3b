"""Merge: main fast-forwarded onto a reviewed run, or the run replayed onto a main that
moved, behind refusals that move nothing.

Refusals, each decided before anything moves, and each applying no mark:

- ``no-run``: no branch carries the run id (a lookup failure);
- ``empty``: the run's branch holds no commit (every phase failed or was refused before
  committing): main already "holds" its tip, and calling that merged would hide that
  nothing was curated;
- ``main-advanced``: main no longer holds the run's base (its history was rewritten),
  another sleep run landed on it since this one was cut, or it kept moving through
  ``MERGE_ATTEMPTS`` attempts;
- ``conflict``: main moved, and what landed there collides with the run (``replay``:
  a path both changed, or a link that would dangle); every such path is named;
- ``lost``: a memory of the base is neither active at the tip (at its path, or at
  the path the run moved it to: ``head.succession``) nor present at
  ``archive/<YYYY>/<path>``, or an archived one is gone. A deleted or broken file has
  no text left to search, so only this check names it;
- ``unrecorded``: a title or claim of a base memory changed by a commit that is not a
  decision of one of the run's phases (``sleep.loss``), each named with its commit;
- ``over-archived``: the run archives more of the base's live memories with nothing
  standing for them than ``SleepDeps.archive_share`` allows, each named;
- ``gate-failed``: the gate the caller passed (``SleepDeps.gate``; none by default)
  says the tip searches worse than the base, or finds no more a memory the base
  found (neither itself nor where it moved nor its keeper).

When main is where the run was cut, it is fast-forwarded. When writers moved it, the
run is replayed (``_replayed``): a merge commit on main's tip whose second parent is the
run's tip, so every phase commit and its trailers stay in main's history, and whose
tree is main's tip with the run's changed paths as the run left them (links into
memories the run archived followed there). It lands through the store's ``land``, as
every write does: derived against the tip it read, swapped in by compare-and-swap, and
derived again (at most ``MERGE_ATTEMPTS`` times) when a writer moved main first; each
derivation checks the collisions and the lost memories again. The gate judges the
first derivation's merged tree against main's tip; a later one differs from it only by
writers' own commits, which land ungated anyway.

On a fast-forward main is moved with ``move_ref`` (compare-and-swap on the base), the checkout is
brought up to date for every path that differs between base and tip (by the store's
own compare-and-set rules, marked durably first, so a kill in between is finished by
the next command), and the ledger, read as a blob of the run's tip commit and never
from the working tree, is applied to the state plane. A failed apply is reported, not
fatal: main has moved and the memories landed; the sessions it names stay
unconsolidated and are read again next time. A merge of a run main already holds
(one killed before its marks were applied) skips the refusals and applies the marks;
every apply is idempotent, so they are applied once. Performing the marks on the
state plane is ``sleep.ledger_apply``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import RefMoved
from memhtml.contracts.journals import Journal, PathStep
from memhtml.contracts.services import TreeEntry
from memhtml.head import HeadVersion, Succession, advance_head, is_active
from memhtml.sleep.contract import (
    MERGE_OP,
    TRAILER_BASE,
    TRAILER_MERGED,
    TRAILER_RUN,
    TRAILER_STAMP,
    ledger_path,
    stamp_text,
)
from memhtml.sleep.deps import GateVerdict, SleepDeps
from memhtml.sleep.errors import RunNotFound, SleepError, describe_sleep_error
from memhtml.sleep.history import RunHistory, read_history
from memhtml.sleep.ledger import Ledger, read_ledger
from memhtml.sleep.ledger_apply import apply_ledger
from memhtml.sleep.loss import Unrecorded, attribute, over_archived, rewrites, unrecorded_reason
from memhtml.sleep.replay import Clash, Replay, Sides, clash, links_clash, replay, shown
from memhtml.sleep.runner import versions_at
from memhtml.store.checkout import (
    Synced,
    bring_up_to_date,
    drop_journal,
    index_lock_free,
    mark_landed,
    write_journal,
)
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, Landed, land, moved_steps
from memhtml.store.layout import original_of_archived

Refusal: TypeAlias = Literal["no-run", "empty", "main-advanced", "conflict", "gate-failed",
                             "lost", "unrecorded", "over-archived"]
LOST_SHOWN = 20
MERGE_ATTEMPTS: Final = 16
"""Derivations of a replay before a merge that keeps losing the race to writers gives
up (``main-advanced``). Each loss means a writer landed between the read and the swap;
a derivation costs the paths main moved by, so it takes many writers a second to
exhaust this."""


@dataclass(frozen=True)
class MergeOutcome:
    """What merge did. A refusal reports neither mark count (both None)."""

    run_id: str
    merged: bool
    refusal: Refusal | None = None
    reason: str = ""
    base: str | None = None
    tip: str | None = None
    main_before: str | None = None
    fast_forwarded: bool = False
    """False when main already held the tip (a repeat merge)."""
    gate: GateVerdict | None = None
    lost: tuple[str, ...] = ()
    marks_pending: int | None = None
    marks_applied: int | None = None
    marks_unparsed: int | None = None
    marks_failed: str | None = None
    synced: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    """Checkout paths left as they were: a person's change is there."""
    checkout_pending: bool = False
    """git's index lock kept the checkout from following; the next command finishes."""
    notes: tuple[str, ...] = field(default=())
    merge_commit: str | None = None
    """The commit that landed a replayed run on main (None: a fast-forward)."""
    replayed_onto: str | None = None
    """main's tip the run was replayed onto."""
    conflicts: tuple[str, ...] = ()
    """The paths a ``conflict`` (or another run's landing) names."""
    attempts: int = 0
    """Derivations a replay took (each further one: a writer moved main first)."""
    followed: tuple[str, ...] = ()
    """Files whose links into a memory the other side archived or moved now point at
    where it went."""
    moved: tuple[tuple[str, str], ...] = ()
    """(old path, new path) of every memory the run moved, kept as what it was."""
    violations: tuple[str, ...] = ()
    """One line per memory an ``unrecorded``, ``over-archived`` or ``gate-failed``
    refusal names."""


def lost_memories(base: HeadVersion, tip: HeadVersion,
                  succession: Succession | None = None) -> tuple[str, ...]:
    """Base memories the tip no longer holds: an active one neither active at the tip
    (at its path, or where it was moved) nor archived there, an archived one gone.
    Sorted."""
    moves = (succession or Succession.of(base, tip)).moves
    archived = {original for path in tip.paths()
                if (original := original_of_archived(path)) is not None}
    lost: list[str] = []
    for record in base.records():
        held = tip.get(record.path)
        if is_active(record):
            if ((held is not None and is_active(held)) or record.path in archived
                    or record.path in moves):
                continue
        elif held is not None or record.path in archived:
            continue
        lost.append(record.path)
    return tuple(sorted(lost))


def _refused(history: RunHistory, main: str, refusal: Refusal, reason: str, *,
             gate: GateVerdict | None = None, lost: tuple[str, ...] = (),
             conflicts: tuple[str, ...] = (), attempts: int = 0,
             violations: tuple[str, ...] = ()) -> MergeOutcome:
    return MergeOutcome(history.run_id, False, refusal, reason, history.base, history.tip,
                        main, gate=gate, lost=lost, conflicts=conflicts, attempts=attempts,
                        violations=violations)


def _over_refusal(deps: SleepDeps, history: RunHistory, main: str, base: HeadVersion,
                  succession: Succession, attempts: int = 0) -> MergeOutcome | None:
    """``over-archived`` when the run forgets more of ``base`` (what it lands on) than
    its share allows, else None."""
    over = over_archived(base, succession, deps.archive_share)
    if over is None:
        return None
    return _refused(history, main, "over-archived", over.reason(history.run_id),
                    violations=over.paths, attempts=attempts)


def _gate_refused(history: RunHistory, main: str, verdict: GateVerdict, attempts: int = 0
                  ) -> MergeOutcome:
    return _refused(history, main, "gate-failed",
                    f"{verdict.summary}. Review the run (memhtml sleep review "
                    f"{history.run_id}); a run that loses what its base found cannot land: "
                    f"memhtml sleep abort {history.run_id} drops it",
                    gate=verdict, violations=verdict.violations, attempts=attempts)


def _unrecorded(deps: SleepDeps, history: RunHistory, base: HeadVersion, tip: HeadVersion
                ) -> IOResult[tuple[Unrecorded, ...], SleepError]:
    return attribute(deps, history, rewrites(base, Succession.of(base, tip)))


def _unrecorded_refusal(history: RunHistory, main: str, found: tuple[Unrecorded, ...],
                        attempts: int = 0) -> MergeOutcome:
    return _refused(history, main, "unrecorded", unrecorded_reason(history.run_id, found),
                    violations=tuple(u.line() for u in found), attempts=attempts)


def merge_run(deps: SleepDeps, run_id: str) -> IOResult[MergeOutcome, SleepError]:
    """Fast-forward main onto the run's tip when nothing refuses; then sync the checkout
    and apply the ledger."""
    git = deps.git

    def found(history: RunHistory) -> IOResult[MergeOutcome, SleepError]:
        main: IOResult[str, SleepError] = git.resolve(deps.main_ref)
        return main.bind(lambda at: decide(history, at))

    def decide(history: RunHistory, main: str) -> IOResult[MergeOutcome, SleepError]:
        if history.tip == history.base:
            return IOSuccess(_refused(history, main, "empty",
                                      f"run {run_id} made no commit: there is nothing to "
                                      f"merge (sleep abort {run_id} removes its branch)"))
        if main == history.tip:
            return _apply(deps, history, MergeOutcome(
                run_id, True, base=history.base, tip=history.tip, main_before=main,
                reason=f"{deps.main} already holds the run"))
        if main != history.base:
            held: IOResult[tuple[str, ...], SleepError] = git.commits_between(main, history.tip)
            return held.bind(lambda ahead: advanced(history, main, ahead))
        return versions_at(deps, history.base, history.tip).bind(
            lambda found: judged(history, main, found[0], found[1]))

    def advanced(history: RunHistory, main: str, ahead: tuple[str, ...]
                 ) -> IOResult[MergeOutcome, SleepError]:
        if not ahead:
            # main holds the tip (a merge killed before its marks, then a write on top).
            return _apply(deps, history, MergeOutcome(
                run_id, True, base=history.base, tip=history.tip, main_before=main,
                reason=f"{deps.main} already holds the run"))
        return _replayed(deps, history, main)

    def judged(history: RunHistory, main: str, base: HeadVersion, tip: HeadVersion
               ) -> IOResult[MergeOutcome, SleepError]:
        succession = Succession.of(base, tip)
        lost = lost_memories(base, tip, succession)
        if lost:
            shown = ", ".join(lost[:LOST_SHOWN]) + (" ..." if len(lost) > LOST_SHOWN else "")
            return IOSuccess(_refused(
                history, main, "lost",
                f"{len(lost)} memory(ies) of the base are neither active at the tip nor "
                f"archived there: {shown}", lost=lost))
        return _unrecorded(deps, history, base, tip).bind(
            lambda found: IOSuccess(_unrecorded_refusal(history, main, found)) if found
            else gated(history, main, base, tip, succession))

    def gated(history: RunHistory, main: str, base: HeadVersion, tip: HeadVersion,
              succession: Succession) -> IOResult[MergeOutcome, SleepError]:
        refused = _over_refusal(deps, history, main, base, succession)
        if refused is not None:
            return IOSuccess(refused)
        verdict = deps.gate(base, tip)
        if not verdict.passed:
            return IOSuccess(_gate_refused(history, main, verdict))
        return _fast_forward(deps, history, main, verdict, tuple(sorted(
            succession.moves.items())))

    def missing(error: SleepError) -> IOResult[MergeOutcome, SleepError]:
        if isinstance(error, RunNotFound):
            return IOSuccess(MergeOutcome(run_id, False, "no-run",
                                          f"no sleep run {run_id!r} (no branch sleep/{run_id})"))
        return IOFailure(error)

    return read_history(git, deps.main_ref, run_id).bind(found).lash(missing)


# -- a run replayed onto a main that moved ---------------------------------------------


@dataclass
class _Replaying:
    """What one replay carries from one derivation to the next: main's version as last
    read (advanced, never reloaded), the gate's verdict once given, the refusal a
    derivation reached, and how many derivations there were."""

    main: HeadVersion
    verdict: GateVerdict | None = None
    refused: MergeOutcome | None = None
    onto: str | None = None
    followed: tuple[str, ...] = ()
    moved: tuple[tuple[str, str], ...] = ()
    attempts: int = 0
    unrecorded: tuple[Unrecorded, ...] = ()
    """The run's rewrites no phase decided, read once before the first derivation (the
    run's own commits do not change between derivations) and refused in their turn."""


@dataclass(frozen=True, slots=True)
class _RunSide:
    """The run's side of a replay, read once: its changed paths, their entries at the
    tip and at the base, and the bytes of both."""

    paths: frozenset[str]
    at_tip: dict[str, TreeEntry | None]
    at_base: dict[str, str | None]
    blobs: dict[str, bytes]


def _run_side(deps: SleepDeps, history: RunHistory) -> IOResult[_RunSide, SleepError]:
    git = deps.git
    changed: IOResult[tuple[str, ...], SleepError] = git.changed_paths(history.base,
                                                                       history.tip)

    def entries(paths: tuple[str, ...]) -> IOResult[_RunSide, SleepError]:
        tip: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(history.tip, paths)
        base: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(history.base, paths)
        return tip.bind(lambda now: base.bind(lambda then: read(paths, now, then)))

    def read(paths: tuple[str, ...], now: tuple[TreeEntry, ...], then: tuple[TreeEntry, ...]
             ) -> IOResult[_RunSide, SleepError]:
        at_tip = {e.path: e for e in now}
        at_base = {e.path: e.blob_id for e in then}
        ids = sorted({e.blob_id for e in (*now, *then)})
        return git.read_blobs(ids).map(lambda blobs: _RunSide(
            frozenset(paths), {p: at_tip.get(p) for p in paths},
            {p: at_base.get(p) for p in paths}, dict(blobs)))

    return changed.bind(entries)


def _replayed(deps: SleepDeps, history: RunHistory, main: str
              ) -> IOResult[MergeOutcome, SleepError]:
    """Land the run on a main that moved past its base, as one merge commit, unless
    what landed there collides with it (see ``replay``); refusals move nothing."""
    git = deps.git
    holds: IOResult[bool, SleepError] = git.is_ancestor(history.base, main)

    def started(held: bool) -> IOResult[MergeOutcome, SleepError]:
        if not held:
            return IOSuccess(_refused(history, main, "main-advanced", _rewritten(deps, history)))
        found: IOResult[tuple[HeadVersion, ...], SleepError] = versions_at(
            deps, history.base, history.tip, main)
        return _run_side(deps, history).bind(lambda side: found.bind(
            lambda versions: recorded(side, versions)))

    def recorded(side: _RunSide, versions: tuple[HeadVersion, ...]
                 ) -> IOResult[MergeOutcome, SleepError]:
        # What the run rewrote is the same whatever main it lands on: the replay
        # lays the run's paths as its tip holds them.
        return _unrecorded(deps, history, versions[0], versions[1]).bind(
            lambda found: _land_replay(deps, history, main, side, versions[0], versions[1],
                                       _Replaying(versions[2], unrecorded=found)))

    return holds.bind(started)


def _rewritten(deps: SleepDeps, history: RunHistory) -> str:
    return (f"{deps.main} no longer holds the commit the run was cut at "
            f"({history.base[:10]}): its history was rewritten; run sleep again")


def _land_replay(deps: SleepDeps, history: RunHistory, main: str, side: _RunSide,
                 base: HeadVersion, tip: HeadVersion, state: _Replaying
                 ) -> IOResult[MergeOutcome, SleepError]:
    git = deps.git
    run_id = history.run_id

    def refuse(outcome: MergeOutcome) -> IOResult[Draft, StoreError]:
        state.refused = outcome
        return IOFailure(Refused(outcome.reason, outcome.conflicts or outcome.lost))

    def derive() -> IOResult[Draft, StoreError]:
        state.attempts += 1
        at: IOResult[str, StoreError] = git.resolve(deps.main_ref)
        return at.bind(derive_at)

    def derive_at(now: str) -> IOResult[Draft, StoreError]:
        ahead: IOResult[tuple[str, ...], StoreError] = git.commits_between(now, history.tip)
        held: IOResult[bool, StoreError] = git.is_ancestor(history.base, now)
        return ahead.bind(lambda shas: held.bind(
            lambda ok: based(now, ok)) if shas else IOSuccess(held_already(now)))

    def held_already(now: str) -> Draft:
        state.onto = None
        return _held(now)

    def based(now: str, ok: bool) -> IOResult[Draft, StoreError]:
        if not ok:
            return refuse(_refused(history, now, "main-advanced", _rewritten(deps, history),
                                   attempts=state.attempts))
        changed: IOResult[tuple[str, ...], StoreError] = git.changed_paths(history.base, now)
        return changed.bind(lambda paths: judged(now, frozenset(paths)))

    def judged(now: str, main_paths: frozenset[str]) -> IOResult[Draft, StoreError]:
        found = clash(side.paths, main_paths, deps.main)
        if found is not None:
            return refuse(_refused(history, now, found.kind, found.reason,
                                   conflicts=found.paths, attempts=state.attempts))
        moved: IOResult[HeadVersion, StoreError] = advance_head(git, state.main, now)
        return moved.bind(lambda version: sided(now, Sides(base, tip, version, side.paths,
                                                           main_paths)))

    def sided(now: str, sides: Sides) -> IOResult[Draft, StoreError]:
        state.main = sides.main
        found, moves = links_clash(sides, deps.main)
        if found is not None:
            return refuse(_refused(history, now, found.kind, found.reason,
                                   conflicts=found.paths, attempts=state.attempts))
        theirs = sorted(p for p in moves if p not in side.paths)
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(now, theirs)

        def read(found: tuple[TreeEntry, ...]) -> IOResult[dict[str, bytes], StoreError]:
            blobs: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs(
                sorted({e.blob_id for e in found}))
            return blobs.map(lambda got: {e.path: got[e.blob_id] for e in found
                                          if e.blob_id in got})

        return entries.bind(read).bind(lambda held: drafted(
            now, sides, replay(sides, side.at_tip, side.blobs, held, moves), held))

    def drafted(now: str, sides: Sides, made: Replay | Clash, held: dict[str, bytes]
                ) -> IOResult[Draft, StoreError]:
        if isinstance(made, Clash):
            return refuse(_refused(history, now, made.kind, made.reason,
                                   conflicts=made.paths, attempts=state.attempts))
        succession = Succession.of(sides.main, made.version)
        lost = lost_memories(sides.main, made.version, succession)
        if lost:
            return refuse(_refused(
                history, now, "lost", f"{len(lost)} memory(ies) of {deps.main} would be "
                f"neither active nor archived once the run landed: {shown(lost)}",
                lost=lost, attempts=state.attempts))
        if state.unrecorded:
            return refuse(_unrecorded_refusal(history, now, state.unrecorded, state.attempts))
        over = _over_refusal(deps, history, now, sides.main, succession, state.attempts)
        if over is not None:
            return refuse(over)
        if state.verdict is None:
            state.verdict = deps.gate(sides.main, made.version)
        if not state.verdict.passed:
            return refuse(_gate_refused(history, now, state.verdict, state.attempts))
        state.onto, state.followed = now, made.followed
        state.moved = tuple(sorted(succession.moves.items()))
        before = {c.path: (held.get(c.path) if c.path not in side.paths
                           else side.blobs.get(side.at_base[c.path] or "")) for c in made.changes}
        commits = f"{deps.main} moved past the run's base {history.base[:10]} to {now[:10]}"
        body = (f"{commits}, by commits touching none of the run's {len(side.paths)} path(s)"
                + (f"; links followed to archived memories in {shown(made.followed)}"
                   if made.followed else ""))
        stamp = stamp_text(history.stamp) if history.stamp is not None else ""
        trailers = ((TRAILER_RUN, run_id), (TRAILER_BASE, history.base),
                    *(((TRAILER_STAMP, stamp),) if stamp else ()), (TRAILER_MERGED, history.tip))
        return IOSuccess(Draft(
            parent=now, changes=made.changes, ops=(MERGE_OP,),
            subject=f"run {run_id} onto {deps.main} ({len(made.changes)} path(s))",
            body=body, before=before, label=MERGE_OP, trailers=trailers,
            merge_parent=history.tip))

    def landed(done: Landed) -> IOResult[MergeOutcome, SleepError]:
        if not done.paths and state.onto is None:
            # main came to hold the run meanwhile (another merge of it): nothing to land.
            return _apply(deps, history, MergeOutcome(
                run_id, True, base=history.base, tip=history.tip, main_before=main,
                reason=f"{deps.main} already holds the run", attempts=state.attempts))
        synced = () if deps.worktree is None else tuple(
            p for p in done.paths if p not in done.unsynced)
        return _apply(deps, history, MergeOutcome(
            run_id, True, base=history.base, tip=history.tip, main_before=main,
            reason=f"replayed onto {deps.main} at {(state.onto or '')[:10]}, which moved past "
                   f"the run's base {history.base[:10]} by commits touching none of its paths",
            gate=state.verdict, merge_commit=done.commit, replayed_onto=state.onto,
            synced=synced, kept=done.unsynced, checkout_pending=done.pending,
            attempts=state.attempts, followed=state.followed, moved=state.moved))

    def lost_race(error: SleepError) -> IOResult[MergeOutcome, SleepError]:
        if state.refused is not None:
            return IOSuccess(state.refused)
        if isinstance(error, RefMoved):
            return IOSuccess(_refused(
                history, main, "main-advanced", f"{deps.main} moved under the merge "
                f"{state.attempts} times in a row; run sleep merge again",
                attempts=state.attempts))
        return IOFailure(error)

    result: IOResult[Landed, SleepError] = land(deps.main_deps(), derive,
                                                attempts=MERGE_ATTEMPTS)
    return result.bind(landed).lash(lost_race)


def _held(now: str) -> Draft:
    """No change to land: ``now`` already holds the run (``land`` returns at once)."""
    return Draft(parent=now, changes=(), ops=(MERGE_OP,), subject="", body="")


# -- moving main, and the checkout with it ---------------------------------------------


def _steps(deps: SleepDeps, base: str, tip: str) -> IOResult[tuple[PathStep, ...], SleepError]:
    found: IOResult[tuple[PathStep, ...], SleepError] = moved_steps(deps.git, base, tip)
    return found


def _fast_forward(deps: SleepDeps, history: RunHistory, main: str, verdict: GateVerdict,
                  moved: tuple[tuple[str, str], ...] = ()
                  ) -> IOResult[MergeOutcome, SleepError]:
    main_deps = deps.main_deps()
    git_dir, journals = main_deps.checkout_git_dir, main_deps.journals
    outcome = MergeOutcome(history.run_id, True, base=history.base, tip=history.tip,
                           main_before=main, fast_forwarded=True, gate=verdict, moved=moved)

    def moved_or_refused(journal: Journal | None) -> IOResult[MergeOutcome, SleepError]:
        swapped: IOResult[None, SleepError] = deps.git.move_ref(
            deps.main_ref, history.base, history.tip)

        def lost_race(error: SleepError) -> IOResult[MergeOutcome, SleepError]:
            dropped: IOResult[None, SleepError] = drop_journal(journals, journal)
            if isinstance(error, RefMoved):
                return dropped.map(lambda _: _refused(
                    history, main, "main-advanced",
                    f"{deps.main} moved while merging; run sleep again", gate=verdict))
            return dropped.bind(lambda _: IOFailure(error))

        return swapped.map(lambda _: outcome).bind(
            lambda done: _follow(deps, done, journal)).lash(lost_race)

    if git_dir is None or journals is None:
        return moved_or_refused(None).bind(lambda done: _apply(deps, history, done))
    at = deps.clock.now().timestamp()
    marked: IOResult[Journal, SleepError] = _steps(deps, history.base, history.tip).bind(
        lambda steps: index_lock_free(deps.git, git_dir, deps.clock.sleep).bind(
            lambda _: write_journal(journals, deps.main_ref, history.base, steps, at,
                                    target=history.tip)))
    return marked.bind(moved_or_refused).bind(
        lambda done: _apply(deps, history, done) if done.merged else IOSuccess(done))


def _follow(deps: SleepDeps, outcome: MergeOutcome, journal: Journal | None
            ) -> IOResult[MergeOutcome, SleepError]:
    """Bring the checkout up to date; what it cannot do is reported, never a failure
    (the mark stays for the next command)."""
    if journal is None or deps.worktree is None:
        return IOSuccess(outcome)
    tip = outcome.tip or ""
    synced: IOResult[Synced, StoreError] = bring_up_to_date(
        deps.git, deps.main_ref, journal.steps).lash(
        lambda _: IOSuccess(Synced((), tuple(s.path for s in journal.steps), False)))
    return synced.bind(lambda done: mark_landed(deps.journals, journal, tip, done).map(
        lambda _: replace(outcome, synced=done.paths, kept=done.kept,
                          checkout_pending=not done.index_updated)))


# -- the ledger -------------------------------------------------------------------------


def _ledger_at(deps: SleepDeps, history: RunHistory) -> IOResult[Ledger, SleepError]:
    git = deps.git
    path = ledger_path(history.run_id)
    found: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(history.tip, [path])

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[Ledger, SleepError]:
        if not entries or entries[0].is_symlink:
            return IOSuccess(Ledger())
        blob = entries[0].blob_id
        return git.read_blobs([blob]).map(lambda blobs: read_ledger(blobs.get(blob)))

    return found.bind(read)


def _apply(deps: SleepDeps, history: RunHistory, outcome: MergeOutcome
           ) -> IOResult[MergeOutcome, SleepError]:
    def applied(ledger: Ledger) -> IOResult[MergeOutcome, SleepError]:
        return apply_ledger(deps, history.run_id, ledger).map(lambda done: replace(
            outcome, marks_pending=len(ledger.marks), marks_applied=done.applied,
            marks_unparsed=ledger.unparsed, marks_failed=done.failed))

    def unread(error: SleepError) -> IOResult[MergeOutcome, SleepError]:
        reason = describe_sleep_error(error)
        return IOSuccess(replace(outcome, marks_pending=0, marks_applied=0,
                                 marks_failed=f"the ledger could not be read: {reason}"))

    return _ledger_at(deps, history).bind(applied).lash(unread)
