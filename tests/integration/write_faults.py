"""Write-point fault injection for the crash and kill suites, served warm.

Both suites run the real ``memhtml`` command line with a wrapper around every call
that writes (the file-system calls below, the git adapter's mutating methods, and for
the sleep run the state plane's) and end the command with ``os._exit(77)`` just before
its k-th such call, or just after a call that moves a branch returns. A failure names
its point: each event is logged with the memhtml line that made it.

**Why a warm interpreter.** A point costs the killed command and the command a person
runs next; started as fresh interpreters, each pays the import of memhtml and its
dependencies (about 0.4 s) before it writes anything, which was most of the suites'
time. Here one server process imports everything and installs the wrappers once, then
forks a child per command. A fork of an interpreter that has imported the program and
run none of it is the program as a fresh start would have it: its own process, its own
file descriptors, its own exit, the store read from disk as the command opens it. The
server refuses to fork while it runs more than one thread (a fork copies only the
calling thread), and each child gets the environment the command would have had.

A call made inside another wrapped call (``Path.write_text``'s ``os.write``) is the
same write point, not a second one; the git adapter's methods are not such calls (the
writes inside ``update_index`` are each a point of their own, labelled ``[in ...]``).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import json
import os
import pathlib
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TypeVar

CRASHED = 77
REPO = Path(__file__).resolve().parents[2]
PROFILES = ("checkout", "sleep")
"""``checkout``: the store's doors (a branch moves by ``commit``, ``commit_merge`` or
``move_ref``). ``sleep``: the sleep run and merge (also the state plane's writes, and
the clock pinned to ``FAULT_CLOCK``)."""

_F = TypeVar("_F", bound=Callable[..., Any])


# -- the server side: runs in the warm process ---------------------------------------------


class _Faults:
    """The events one command made, and the point it is to die at (0: never)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.crash_at = 0
        self.trace: str | None = None
        self.seen: list[str] = []
        self.local = threading.local()

    def begin(self, crash_at: int, trace: str | None) -> None:
        self.crash_at, self.trace, self.seen = crash_at, trace, []

    def where(self) -> str:
        frame: FrameType | None = sys._getframe(3)
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(self.source):
                return f"{name[len(self.source) + 1:]}:{frame.f_lineno}"
            frame = frame.f_back
        return "?"

    def save(self) -> None:
        if self.trace is not None:
            with open(self.trace, "w", encoding="utf-8") as out:
                out.write("".join(line + "\n" for line in self.seen))

    def event(self, label: str) -> None:
        inside = getattr(self.local, "inside", "")
        self.seen.append(f"{label} at {self.where()}" + (f" [in {inside}]" if inside else ""))
        if len(self.seen) == self.crash_at:
            self.save()
            os._exit(CRASHED)

    def low(self, label: str, real: _F) -> _F:
        """A low-level write: one point, however many wrapped calls it makes inside."""

        @functools.wraps(real)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self.local, "depth", 0)
            if depth == 0:
                self.event(label)
            self.local.depth = depth + 1
            try:
                return real(*args, **kwargs)
            finally:
                self.local.depth = depth

        return wrapped  # type: ignore[return-value]

    def method(self, label: str, real: _F, after: bool) -> _F:
        """An adapter's mutating method: a point before it, and after it when it moves a
        branch (the ref moved, nothing after it done)."""

        @functools.wraps(real)
        def wrapped(instance: object, *args: Any, **kwargs: Any) -> Any:
            self.event(label)
            self.local.inside = label
            try:
                result = real(instance, *args, **kwargs)
            finally:
                self.local.inside = ""
            if after:
                self.event(label + " returned")
            return result

        return wrapped  # type: ignore[return-value]


def _install(profile: str) -> tuple[_Faults, Callable[[dict[str, str]], None]]:
    """Import what the commands use (so a command's own writes are counted, not an
    import's: the program's every module, as ``warm_cli`` preloads them), wrap the
    writes, and return the per-command set-up."""
    from tests.integration.warm_cli import preload

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for name in preload("memhtml"):
        importlib.import_module(name)
    import memhtml.adapters.clock as adapters_clock
    import memhtml.adapters.git as adapters_git
    import memhtml.adapters.state_db as adapters_state
    import memhtml.store

    faults = _Faults(os.path.dirname(os.path.dirname(memhtml.store.__file__)))
    for name in ("replace", "rename", "unlink", "rmdir", "mkdir", "fsync", "write"):
        setattr(os, name, faults.low("os." + name, getattr(os, name)))
    setattr(shutil, "copyfile", faults.low("shutil.copyfile", shutil.copyfile))  # noqa: B010
    for name in ("write_bytes", "write_text", "unlink"):
        setattr(pathlib.Path, name, faults.low("Path." + name, getattr(pathlib.Path, name)))
    service = adapters_git.PygitService
    lands = ("commit", "commit_merge", "move_ref") if profile == "checkout" else (
        "commit", "move_ref")
    for name in (*lands, "update_index", "set_config", "create_branch", "delete_branch"):
        setattr(service, name, faults.method("PygitService." + name, getattr(service, name),
                                             name in lands))
    if profile == "checkout":
        return faults, lambda env: None
    plane = adapters_state.SqliteStatePlane
    for name in ("bump", "mark_consolidated", "append_access"):
        setattr(plane, name, faults.method("SqliteStatePlane." + name, getattr(plane, name),
                                           False))

    import tests.integration.sleep.kill_support  # noqa: F401 - the busy bodies' imports

    def per_command(env: dict[str, str]) -> None:
        at = datetime.fromisoformat(env["FAULT_CLOCK"])
        setattr(adapters_clock.SystemClock, "now", lambda self: at)  # noqa: B010
        if env.get("FAULT_BUSY"):
            from tests.integration.sleep.kill_support import install_busy_bodies
            install_busy_bodies()

    return faults, per_command


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _command(faults: _Faults, per_command: Callable[[dict[str, str]], None],
             argv: list[str]) -> int:
    """Run ``memhtml <argv>`` behind the wrappers; its exit code."""
    per_command(dict(os.environ))
    faults.begin(int(os.environ.get("FAULT_AT", "0")), os.environ.get("FAULT_TRACE"))
    from memhtml.cli.app import main

    code = 0
    try:
        main(argv)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            code = done.code or 0
        else:
            print(done.code, file=sys.stderr)
            code = 1
    faults.save()
    return code


def _child(faults: _Faults, per_command: Callable[[dict[str, str]], None],
           request: dict[str, Any]) -> None:
    """In the forked child: become the command, run it, exit with its code."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        os.close(null)
        code = _command(faults, per_command, list(request["argv"]))
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> int:
    """The child's exit code; killed (``-SIGKILL``) past ``timeout``. A pidfd wakes the
    wait the moment the child ends, where polling oversleeps by up to its 20 ms pause."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3 or later: poll
        return _poll(pid, timeout)
    try:
        ended, _, _ = select.select([handle], [], [], timeout)
    finally:
        os.close(handle)
    if not ended:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return -signal.SIGKILL if not ended else os.waitstatus_to_exitcode(status)


def _poll(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -signal.SIGKILL
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def serve() -> None:
    """The warm process: one request per line on stdin, one reply per line on stdout."""
    profile = os.environ["FAULT_PROFILE"]
    faults, per_command = _install(profile)
    reply = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        threads = _threads()
        if threads != 1:
            reply.write(json.dumps({"refused": f"{threads} threads running; no fork"}) + "\n")
            reply.flush()
            return
        pid = os.fork()
        if pid == 0:
            _child(faults, per_command, request)
        code = _wait(pid, float(request["timeout"]))
        reply.write(json.dumps({"code": code}) + "\n")
        reply.flush()


# -- the test side --------------------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    """One command: where it was asked to die, how it ended, the events it saw."""

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
        """The event the command died before (its last), or the end of the run."""
        return self.events[-1] if self.code == CRASHED and self.events else "(ran to the end)"


class WarmCli:
    """A warm server for one environment: ``run`` is ``memhtml <tokens>`` as a forked
    child of it, behind the wrappers of ``profile``."""

    def __init__(self, env: dict[str, str], work: Path, profile: str,
                 extra: dict[str, str] | None = None) -> None:
        assert profile in PROFILES, profile
        self.work = work
        self.env = dict(env)
        work.mkdir(parents=True, exist_ok=True)
        self.extra = dict(extra or {})
        self.count = 0
        self.log = work / "warm-server.err"
        from tests.integration.warm_cli import preload, warm_process

        imports = [*preload("memhtml"), *(() if profile == "checkout" else (
            "tests.integration.sleep.kill_support",))]
        self.process = warm_process("tests.integration.write_faults:serve", [],
                                    {**env, "FAULT_PROFILE": profile}, imports, self.log)

    def run(self, *tokens: str, at: int = 0, timeout: float = 120,
            env: dict[str, str] | None = None) -> Ran:
        """``memhtml <tokens>``, dying before write ``at`` (0: never)."""
        self.count += 1
        stem = self.work / f"command-{self.count}"
        trace = stem.with_suffix(".trace")
        out, err = stem.with_suffix(".out"), stem.with_suffix(".err")
        request: dict[str, object] = {
            "argv": list(tokens), "cwd": str(REPO), "timeout": timeout,
            "stdout": str(out), "stderr": str(err),
            "env": {**self.extra, **(env or {}), "FAULT_AT": str(at),
                    "FAULT_TRACE": str(trace)}}
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout + 30)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            raise AssertionError("the warm server gave no reply: "
                                 + self.log.read_text(encoding="utf-8", errors="replace"))
        reply = json.loads(line)
        if "refused" in reply:
            raise AssertionError(f"the warm server refused to fork: {reply['refused']}")
        events = tuple(trace.read_text(encoding="utf-8").splitlines()) if trace.exists() else ()
        ran = Ran(at, int(reply["code"]), events, out.read_text(encoding="utf-8"),
                  err.read_text(encoding="utf-8"))
        for path in (trace, out, err):
            path.unlink(missing_ok=True)
        return ran

    def close(self) -> None:
        from tests.integration.warm_cli import close_server

        close_server(self.process)

    def __enter__(self) -> WarmCli:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def once() -> None:
    """One command in this fresh interpreter (``argv`` after ``-c``), no server: for the
    tests that start commands at the same moment."""
    faults, per_command = _install(os.environ["FAULT_PROFILE"])
    sys.exit(_command(faults, per_command, sys.argv[1:]))


def run_once(env: dict[str, str], profile: str, *tokens: str, at: int = 0,
             trace: Path, timeout: float = 120) -> Ran:
    """``memhtml <tokens>`` as a fresh interpreter behind the wrappers of ``profile``."""
    done = subprocess.run(
        [sys.executable, "-c", "from tests.integration.write_faults import once; once()",
         *tokens],
        env={**env, "FAULT_PROFILE": profile, "FAULT_AT": str(at), "FAULT_TRACE": str(trace)},
        capture_output=True, text=True, timeout=timeout, check=False, cwd=REPO)
    events = tuple(trace.read_text(encoding="utf-8").splitlines()) if trace.exists() else ()
    trace.unlink(missing_ok=True)
    return Ran(at, done.returncode, events, done.stdout, done.stderr)
