"""``memhtml`` as its own process, forked from a warm interpreter instead of started cold.

The tests that run the command line as a person does (``python -m memhtml``: its own
process, working directory, environment, exit code and output) paid, for every
command, an interpreter's start and the import of memhtml and its libraries: about
0.4 s, often more than the command's own work. As the crash and kill suites do
(``write_faults``), a server process imports what the commands use and forks a child
per command. The child takes the command's working directory, environment, argv and
standard streams (stdin from ``/dev/null``, stdout and stderr into files the caller
reads) and runs the console entry point itself (``memhtml.cli.app.console``, which
ends the process with ``os._exit``); a crash prints its traceback and exits 1, as a
fresh interpreter does. A fork of an interpreter that has imported the program and run
none of it is the program as a fresh start would have it: nothing of memhtml has run,
so no cache is filled and no store is open.

What an interpreter reads once at start-up is read from the command's own environment:
a server is started with the environment its commands get, and a command with another
environment gets a server of its own (libgit2 fixes its configuration search path from
``HOME`` when pygit2 is imported; Python fixes the stream encodings and the hash seed
at start; OpenBLAS its thread count at load). Only memhtml's own variables
(``MEMHTML_*``) and pytest's name of the running test may differ between the commands
of one server: memhtml reads its own when a command runs, never on import, nothing
reads pytest's, and each child takes its command's environment whole.
The commands of one server share its hash seed, where fresh interpreters would each
draw one. A server forks only while it runs one thread (a fork copies only the calling
thread); one that cannot serve leaves the command to a fresh ``python -m memhtml``,
the same command, only slower.

The tests that are about a cold process itself (start-up and exit, closed pipes, what
a command imports, input on stdin, resource limits, signals) keep ``python -m
memhtml``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import json
import locale
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PRELOAD = (
    "memhtml.cli.app", "memhtml.cli.common", "memhtml.cli.output", "memhtml.cli.progress",
    "memhtml.compose", "memhtml.compose.services", "memhtml.compose.status",
    "memhtml.compose.search", "memhtml.compose.run", "memhtml.compose.mdcache",
    "memhtml.compose.vectors", "memhtml.store", "memhtml.store.layout",
    "memhtml.store.listing", "memhtml.store.reads", "memhtml.store.merge_driver",
    "memhtml.store.settings_file", "memhtml.head", "memhtml.head.vectors", "memhtml.mdindex",
    "memhtml.sync.door", "memhtml.adapters.git", "memhtml.format", "numpy", "pygit2",
)
"""What the store's commands import (measured with ``-X importtime`` over ``status``,
``search``, ``write``, ``read``, ``log``, ``doctor``, ``publish`` and ``sync``), so a
child does not import it again; anything else a command needs it imports itself."""
POOL = 3
"""Servers kept per test process, the least recently used closed first: a test's
commands share one environment, and a few tests' worth is all that is ever reused."""


# -- the server side: runs in the warm process -----------------------------------------------


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _child(request: Mapping[str, Any], main: str) -> None:
    """In the forked child: become ``python -m memhtml <argv>`` and run it."""
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = os.getcwd()  # where ``python -m`` puts the working directory
        sys.argv = [main, *request["argv"]]
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        from memhtml.cli.app import console

        console()  # ends the process itself
    except BaseException:  # the interpreter's own last resort: a traceback, exit 1
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(1)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    """The child's exit code, and whether it was killed for running past ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -signal.SIGKILL, True
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def serve() -> None:
    """The warm process: one request per line on stdin, one reply per line on stdout.
    OpenBLAS is held to one thread before numpy loads, as ``memhtml.cli.app.main`` holds
    it before a command's first import of numpy; each child's environment is its
    command's own, without that default unless the command set it."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for name in PRELOAD:
        importlib.import_module(name)
    spec = importlib.util.find_spec("memhtml.__main__")
    main = spec.origin if spec is not None and spec.origin else "memhtml"
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
            _child(request, main)
        code, late = _wait(pid, float(request["timeout"]))
        reply.write(json.dumps({"code": code, "timed_out": late}) + "\n")
        reply.flush()


# -- the test side ---------------------------------------------------------------------------


class _Server:
    """One warm process serving commands under one environment."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="memhtml-warm-"))
        self.count = 0
        self.log = self.work / "server.err"
        with self.log.open("wb") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from tests.integration.warm_cli import serve; serve()"],
                env=dict(env), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=errors, text=True)

    def run(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
            ) -> subprocess.CompletedProcess[str] | None:
        """The command's outcome, or None when this server could not run it."""
        self.count += 1
        out = self.work / f"command-{self.count}.out"
        err = self.work / f"command-{self.count}.err"
        request = {"argv": list(argv), "cwd": str(cwd), "env": dict(env), "timeout": timeout,
                   "stdout": str(out), "stderr": str(err)}
        stdin, stdout = self.process.stdin, self.process.stdout
        if stdin is None or stdout is None or self.process.poll() is not None:
            return None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except OSError:
            return None
        ready, _, _ = select.select([stdout], [], [], timeout + 60)
        line = stdout.readline() if ready else ""
        reply = json.loads(line) if line else {"refused": "no reply"}
        if "refused" in reply:
            return None
        encoding = locale.getpreferredencoding(False)
        texts = [path.read_text(encoding=encoding) if path.exists() else ""
                 for path in (out, err)]
        for path in (out, err):
            path.unlink(missing_ok=True)
        command = [sys.executable, "-m", "memhtml", *argv]
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired(command, timeout, texts[0], texts[1])
        return subprocess.CompletedProcess(command, int(reply["code"]), texts[0], texts[1])

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        shutil.rmtree(self.work, ignore_errors=True)


_servers: OrderedDict[tuple[tuple[str, str], ...], _Server] = OrderedDict()


def _server(env: Mapping[str, str]) -> _Server:
    key = tuple(sorted((name, value) for name, value in env.items()
                       if not name.startswith("MEMHTML_") and name != "PYTEST_CURRENT_TEST"))
    found = _servers.pop(key, None)
    if found is None or found.process.poll() is not None:
        if found is not None:
            found.close()
        found = _Server(env)
    _servers[key] = found
    while len(_servers) > POOL:
        _servers.popitem(last=False)[1].close()
    return found


@atexit.register
def _close_all() -> None:
    while _servers:
        _servers.popitem()[1].close()


def memhtml(*tokens: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml <tokens>`` in ``cwd`` under ``env`` (this process's when not
    given), as ``subprocess.run(..., capture_output=True, text=True)`` gives it back:
    its exit code (negative: killed by that signal), stdout and stderr, and
    ``subprocess.TimeoutExpired`` past ``timeout``."""
    environment = dict(os.environ if env is None else env)
    where = Path.cwd() if cwd is None else cwd
    done = _server(environment).run(tokens, where, environment, timeout)
    if done is not None:
        return done
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens], env=environment,
                          cwd=where, capture_output=True, text=True, timeout=timeout,
                          check=False)
