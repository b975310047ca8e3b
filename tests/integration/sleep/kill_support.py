"""The sleep kill test's child process and what it compares.

The child runs the real ``memhtml`` command line in-process behind a fault-injecting
wrapper: every mutating method of ``PygitService`` and ``SqliteStatePlane`` and every
file-system write is a numbered write event, and the child ends itself with
``os._exit(77)`` just before the k-th (and, for ``commit`` and ``move_ref``, just after
the call returns: the ref moved, nothing after it done). A write made inside another
counted call (``Path.write_text``'s ``os.write``, the file writes of ``update_index``)
is the same point, not a second one; each event is logged with the memhtml line that
made it, so a failure names its point.

The run is stamped by one clock read; the child pins ``SystemClock.now`` to
``SLEEP_KILL_CLOCK`` (the CLI has no setting for the time), so the crashed run, its
resume and the uninterrupted run all carry the same stamp and make the same commits.

With ``SLEEP_KILL_BUSY`` set, three phases that are not built yet get stand-in bodies
(the same in every child), so the run also exercises what the frame phases do not
yet: a counter bumped at phase time (``SqliteStatePlane.bump``, once per run id), a
phase of two commits (resume drops a half-landed one), a memory moved under
``archive/<YYYY>/`` (merge's ``lost`` check, integrity's href repair) and pending
marks in the ledger, which merge applies (``mark_consolidated``).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CRASHED = 77
CLOCK = "2026-11-30T04:00:00+00:00"
RUN_ID = "2026-11-30"
SESSIONS = ("session-kill-1", "session-kill-9")
BUSY_KEY = "kill-test|counter"
ARCHIVED_BY_COMPRESS = "areas/checkout/sakura-auth-timeout-8s.html"
REPO = Path(__file__).resolve().parents[3]

CHILD = r'''
import functools, os, pathlib, shutil, sys, threading
from datetime import datetime
import memhtml.adapters.clock as adapters_clock
import memhtml.adapters.git as adapters_git
import memhtml.adapters.state_db as adapters_state
import memhtml.cli.app as cli_app
import memhtml.cli.read_cmds, memhtml.cli.sleep_cmds, memhtml.cli.store_cmds
import memhtml.compose, memhtml.compose.sleep, memhtml.store, memhtml.store.recovery
import memhtml.sleep.merge, memhtml.sleep.plan, memhtml.sleep.resume
import memhtml.sleep.review, memhtml.sleep.runner, memhtml.sleep.runs

CRASH_AT = int(os.environ["SLEEP_KILL_AT"])
TRACE = os.environ["SLEEP_KILL_TRACE"]
AT = datetime.fromisoformat(os.environ["SLEEP_KILL_CLOCK"])
SOURCE = os.path.dirname(os.path.dirname(memhtml.store.__file__))
seen = []
local = threading.local()


def where():
    frame = sys._getframe(3)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(SOURCE):
            return f"{name[len(SOURCE) + 1:]}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def save():
    with open(TRACE, "w", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in seen))


def event(label):
    inside = getattr(local, "inside", "")
    seen.append(f"{label} at {where()}" + (f" [in {inside}]" if inside else ""))
    if len(seen) == CRASH_AT:
        save()
        os._exit(77)


def low(label, real):
    @functools.wraps(real)
    def wrapped(*args, **kwargs):
        depth = getattr(local, "depth", 0)
        if depth == 0:
            event(label)
        local.depth = depth + 1
        try:
            return real(*args, **kwargs)
        finally:
            local.depth = depth
    return wrapped


def method(label, real, after):
    @functools.wraps(real)
    def wrapped(self, *args, **kwargs):
        event(label)
        local.inside = label
        try:
            result = real(self, *args, **kwargs)
        finally:
            local.inside = ""
        if after:
            event(label + " returned")
        return result
    return wrapped


adapters_clock.SystemClock.now = lambda self: AT

if os.environ.get("SLEEP_KILL_BUSY"):
    from tests.integration.sleep.kill_support import install_busy_bodies
    install_busy_bodies()

for name in ("replace", "rename", "unlink", "rmdir", "mkdir", "fsync", "write"):
    setattr(os, name, low("os." + name, getattr(os, name)))
shutil.copyfile = low("shutil.copyfile", shutil.copyfile)
for name in ("write_bytes", "write_text", "unlink"):
    setattr(pathlib.Path, name, low("Path." + name, getattr(pathlib.Path, name)))
service = adapters_git.PygitService
for name in ("commit", "move_ref", "create_branch", "delete_branch", "update_index",
             "set_config"):
    setattr(service, name, method("PygitService." + name, getattr(service, name),
                                  name in ("commit", "move_ref")))
plane = adapters_state.SqliteStatePlane
for name in ("bump", "mark_consolidated", "append_access"):
    setattr(plane, name, method("SqliteStatePlane." + name, getattr(plane, name), False))

try:
    cli_app.main(sys.argv[1:])
except SystemExit as done:
    code = done.code
else:
    code = 0
save()
sys.stdout.flush()
sys.exit(code if isinstance(code, int) else 1)
'''


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


@dataclass(frozen=True)
class Child:
    """One child: where it was asked to die, how it ended, the events it saw."""

    k: int
    code: int
    events: tuple[str, ...]
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def point(self) -> str:
        return self.events[-1] if self.code == CRASHED and self.events else "(ran to the end)"


def child(root: Path, k: int, env: dict[str, str], trace: Path, *tokens: str,
          busy: bool) -> Child:
    """``memhtml <tokens> --store root`` behind the wrapper, dying at write ``k`` (0:
    never)."""
    extra = {"SLEEP_KILL_AT": str(k), "SLEEP_KILL_TRACE": str(trace),
             "SLEEP_KILL_CLOCK": CLOCK}
    if busy:
        extra["SLEEP_KILL_BUSY"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, *tokens, "--store", str(root)],
                          env={**env, **extra}, capture_output=True, text=True, timeout=120,
                          check=False, cwd=REPO)
    events = tuple(trace.read_text(encoding="utf-8").splitlines()) if trace.exists() else ()
    trace.unlink(missing_ok=True)
    return Child(k, done.returncode, events, done.stdout, done.stderr)


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
