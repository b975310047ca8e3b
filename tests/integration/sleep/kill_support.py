"""The sleep kill test's child process and what it compares.

The child runs the real ``memhtml`` command line behind the fault-injecting wrapper
of ``write_faults`` (profile ``sleep``): every mutating method of ``PygitService`` and
``SqliteStatePlane`` and every file-system write is a numbered write event, and the
child ends itself with ``os._exit(77)`` just before the k-th (and, for ``commit`` and
``move_ref``, just after the call returns: the ref moved, nothing after it done). A
write made inside another counted call (``Path.write_text``'s ``os.write``, the file
writes of ``update_index``) is the same point, not a second one; each event is logged
with the memhtml line that made it, so a failure names its point.

The run is stamped by one clock read; the child pins ``SystemClock.now`` to
``FAULT_CLOCK`` (the CLI has no setting for the time), so the crashed run, its
resume and the uninterrupted run all carry the same stamp and make the same commits.

With ``FAULT_BUSY`` set, three phases that are not built yet get stand-in bodies
(the same in every child), so the run also exercises what the frame phases do not
yet: a counter bumped at phase time (``SqliteStatePlane.bump``, once per run id), a
phase of two commits (resume drops a half-landed one), a memory moved under
``archive/<YYYY>/`` (merge's ``lost`` check, integrity's href repair) and pending
marks in the ledger, which merge applies (``mark_consolidated``).
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tests.integration.write_faults import CRASHED, Ran, WarmCli, run_once

__all__ = ["CRASHED"]

CLOCK = "2026-11-30T04:00:00+00:00"
RUN_ID = "2026-11-30"
SESSIONS = ("session-kill-1", "session-kill-9")
BUSY_KEY = "kill-test|counter"
ARCHIVED_BY_COMPRESS = "areas/checkout/sakura-auth-timeout-8s.html"


def install_busy_bodies() -> None:
    """Stand-in bodies for three phases not built yet (in the child, before the CLI
    runs): dedup-merge bumps a counter and commits; compress lands two commits, the
    second moving a base memory under ``archive/<YYYY>/``; trace-consolidation earns
    marks only. Every child installs the same ones, so the uninterrupted run and a
    resume run the same phases."""
    from returns.io import IOResult, IOSuccess
    from returns.unsafe import unsafe_perform_io

    from memhtml.contracts.services import CounterKey, PathChange
    from memhtml.sleep import runner
    from memhtml.sleep.contract import SleepPhase
    from memhtml.sleep.ledger import PendingMark
    from memhtml.sleep.phase import PhaseBody, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
    from memhtml.sleep.phases import body_for

    counter = CounterKey("edge", BUSY_KEY)

    def dedup(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        detection = unsafe_perform_io(env.state.bump(counter, env.run_id, 2, env.stamp).unwrap())
        return IOSuccess(PhaseResult(
            counts={"detections": detection.detections},
            commits=(PhaseCommit("fold", (PathChange("notes/dedup.txt", b"folded\n"),)),),
            marks=(PendingMark.of("edge-promoted", key=counter.key, detections=1),)))

    def compress(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        sha = env.version.sha or env.base
        entry = unsafe_perform_io(env.git.entries_at(sha, [ARCHIVED_BY_COMPRESS]).unwrap())[0]
        blobs = unsafe_perform_io(env.git.read_blobs([entry.blob_id]).unwrap())
        moved = (PathChange(ARCHIVED_BY_COMPRESS, None),
                 PathChange(f"archive/{env.year}/{ARCHIVED_BY_COMPRESS}", blobs[entry.blob_id]))
        return IOSuccess(PhaseResult(
            counts={"batches": 2},
            commits=(PhaseCommit("batch 1", (PathChange("notes/c1.txt", b"1\n"),)),
                     PhaseCommit("batch 2", moved)),
            marks=(PendingMark.of("session-consolidated", session=SESSIONS[1]),)))

    def trace(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(marks=(
            PendingMark.of("session-consolidated", session=SESSIONS[0]),
            PendingMark.of("commitment-below-floor", statement="call <Ines>", confidence=0.5,
                           session=SESSIONS[0], done=False))))

    bodies: dict[SleepPhase, PhaseBody] = {
        "dedup-merge": dedup, "compress": compress, "trace-consolidation": trace}

    def chosen(phase: SleepPhase) -> PhaseBody:
        return bodies.get(phase) or body_for(phase)

    setattr(runner, "body_for", chosen)  # noqa: B010 - runner binds it at import


Child = Ran


def _extra(busy: bool) -> dict[str, str]:
    return {"FAULT_CLOCK": CLOCK, **({"FAULT_BUSY": "1"} if busy else {})}


def child(root: Path, k: int, env: dict[str, str], trace: Path, *tokens: str,
          busy: bool) -> Child:
    """``memhtml <tokens> --store root`` behind the wrapper, dying at write ``k`` (0:
    never), as a fresh interpreter (for commands started at the same moment)."""
    return run_once({**env, **_extra(busy)}, "sleep", *tokens, "--store", str(root), at=k,
                    trace=trace)


def warm_child(warm: WarmCli, root: Path, k: int, *tokens: str, busy: bool) -> Child:
    """``child`` forked from a warm server (see ``write_faults``): the same command
    without an interpreter's start-up."""
    return warm.run(*tokens, "--store", str(root), at=k, env=_extra(busy))


def fresh(prepared: Path, where: Path) -> Path:
    shutil.copytree(prepared, where, symlinks=True)
    return where


@dataclass(frozen=True)
class PlaneRows:
    """The state plane's rows, as comparable values (the access log's times kept: a
    read is logged once and never again by a sleep command)."""

    corroboration: tuple[tuple[object, ...], ...]
    corroboration_runs: tuple[tuple[object, ...], ...]
    consolidations: tuple[tuple[object, ...], ...]
    accesses: tuple[tuple[object, ...], ...]


def plane_rows(root: Path) -> PlaneRows:
    """The rows of the checkout ``root``'s state plane."""
    return rows_at(root / ".git" / "memhtml" / "state.db")


def rows_at(path: Path) -> PlaneRows:
    """The rows of the state database at ``path``; none while no plane exists (a read
    never creates one, and neither does this)."""
    if not path.exists():
        return PlaneRows((), (), (), ())
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        def rows(sql: str) -> tuple[tuple[object, ...], ...]:
            return tuple(tuple(row) for row in db.execute(sql).fetchall())

        return PlaneRows(
            rows("SELECT kind, key, detections, first_at, last_at FROM corroboration "
                 "ORDER BY kind, key"),
            rows("SELECT kind, key, run_id, detection, at FROM corroboration_runs "
                 "ORDER BY kind, key, run_id"),
            rows("SELECT session_id, run_id, at FROM consolidations ORDER BY session_id"),
            rows("SELECT path, at, kind FROM accesses ORDER BY path, at, kind"))
    finally:
        db.close()
