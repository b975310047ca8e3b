"""``python -m memhtml`` (or ``-m memhtml.mcp``) as its own process, forked from a warm
interpreter instead of started cold.

The tests that run the command line as a person does (its own process, working
directory, environment, exit code and output) and the MCP tests (a server process
under the SDK's stdio client) paid, for every process, an interpreter's start and the
import of memhtml and its libraries: about 0.4 s for a command, more for the MCP
server, often more than the command's own work. As the crash and kill suites do
(``write_faults``), a server process imports what the commands use and forks a child
per command. The child takes the command's standard streams (the caller's own file
descriptors, passed over a Unix socket), working directory, environment and argv,
and runs the module as ``python -m`` would (``runpy``, as ``__main__``); an uncaught
exception prints its traceback and exits 1, ``SystemExit`` exits with its code, and
the exit handlers run before the process ends, as at a fresh interpreter's exit (the
console entry point ends its process itself). A fork of an interpreter that has
imported the program and run none of it is the program as a fresh start would have
it: nothing of memhtml has run, so no cache is filled and no store is open.

What an interpreter reads once at start-up is read from the command's own environment:
a server is started with the environment its commands get, and a command with another
environment gets a server of its own (libgit2 fixes its configuration search path from
``HOME`` when pygit2 is imported; Python fixes the stream encodings and the hash seed
at start; OpenBLAS its thread count at load). Only memhtml's own variables
(``MEMHTML_*``) and pytest's name of the running test may differ between the commands
of one server: memhtml reads its own when a command runs, never on import, nothing
reads pytest's, and each child takes its command's environment whole. The commands of
one server share its hash seed, where fresh interpreters would each draw one. A server
forks only while it runs one thread (a fork copies only the calling thread); one that
cannot serve leaves the command to a fresh interpreter, the same command, only slower.

A server is itself forked from a zygote (``zygote``): one interpreter per start-up
environment that has done the preload (about 2 s of CPU) and forks a server for each
environment asked for. Tests give their commands their own ``HOME``, so a server per
test was a preload per test; servers that differ only in variables read after
start-up (``LATE``) or re-derived in the fork (``REGUESSED``: libgit2's search paths,
guessed again from the server's environment) share one zygote. The agent, web and
person's-git tests: 126-138 s against 159-161 s before (two pairs only, so no
speed-up is claimed; docs/benchmarks.md).

Two ways in: ``memhtml`` runs a command to its end and gives back what
``subprocess.run`` would; ``launcher`` is the command line of a small process (an
interpreter started with ``-I -S``, importing nothing of memhtml) that hands its own
standard streams to the server, forwards the signals it gets to the child and exits
as the child did: what the MCP SDK starts as its server process.

The tests that are about a cold process itself (start-up and exit, closed pipes, what
a command imports, input on stdin, resource limits, signals, the hash seed) keep a
fresh ``python -m memhtml``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import locale
import os
import pkgutil
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

REPO = Path(__file__).resolve().parents[2]
PRELOAD = ("numpy", "pygit2")
"""Libraries every command loads, besides the program's own modules (``preload``)."""
NOT_PRELOADED = ("memhtml.mcp", "memhtml.web", "memhtml.memory_tool",
                 "memhtml.agent.memory_tool")
"""The program's modules a server does not import unless its module asks for them: the
MCP and Anthropic SDKs and the web app's stack take seconds to import and only their
own processes use them (``PRELOAD_MODULE``)."""
PRELOAD_MODULE = {"memhtml.mcp": ("memhtml.mcp.server",)}
"""What a server for a module's processes imports besides ``PRELOAD``."""
POOL = 3
"""Servers kept per test process, the least recently used closed first: a test's
commands share one environment, and a few tests' worth is all that is ever reused."""
UNKEYED = ("MEMHTML_",)
"""Variables a server's commands may differ in (see the module's docstring)."""
REGUESSED = ("HOME", "XDG_CONFIG_HOME")
"""Variables a process reads at start-up only through libgit2, which fixes its
configuration search paths from them when pygit2 loads: a server forked from a zygote
has libgit2 guess the paths again from its own environment (``_become``), as a fresh
start would have guessed them."""
LATE = ("MEMHTML_", "GIT_", "FAULT_")
"""Prefixes of variables read only while a command runs (memhtml's own, git's, the
fault wrappers'), never at start-up: servers differing in them share a zygote."""
ZYGOTES = 3
"""Zygotes kept per test process, the least recently used closed first: the suite's
servers need one or two start-up environments per module."""


def _key(env: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items()
            if not name.startswith(UNKEYED) and name != "PYTEST_CURRENT_TEST"}


def _startup(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """What of ``env`` an interpreter fixes at start-up and a fork cannot change: the
    whole environment but ``REGUESSED``, ``LATE`` and pytest's name of the running test
    (Python's hash seed, stream encodings and path, OpenBLAS's threads, the TLS paths
    pygit2 reads when it loads all stay in it)."""
    return tuple(sorted((name, value) for name, value in env.items()
                        if name not in REGUESSED and name != "PYTEST_CURRENT_TEST"
                        and not name.startswith(LATE)))


def _send(sock: socket.socket, message: Mapping[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode("utf-8")
    socket.send_fds(sock, [struct.pack("!I", len(data)) + data], list(fds))


def _receive(sock: socket.socket, fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One message (and the descriptors sent with it); an empty one when the other end
    has gone. It reads exactly the message's length: the server sends a child's pid
    and, as soon as the child ends, its exit code, so a read of whatever is there could
    take the start of the second message with the first (a short child under load did,
    and its launcher failed to parse the pair)."""
    received: list[int] = []
    if fds:
        # The descriptors arrive with the first bytes of their message.
        data, received, _, _ = socket.recv_fds(sock, 4, fds)
    else:
        data = b""
    head = _exactly(sock, data, 4)
    if head is None:
        return {}, received
    body = _exactly(sock, b"", struct.unpack("!I", head)[0])
    if body is None:
        return {}, received
    return json.loads(body), received


def _exactly(sock: socket.socket, data: bytes, size: int) -> bytes | None:
    """``data`` read on to ``size`` bytes; None when the other end has gone first.
    ``LAUNCH`` holds the same few lines: it runs with ``-I -S`` and imports nothing of
    the tests."""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            return None
        data += more
    return data


# -- the server side: runs in the warm process -----------------------------------------------


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _exit_code(done: SystemExit) -> int:
    if done.code is None:
        return 0
    if isinstance(done.code, int):
        return done.code
    with contextlib.suppress(OSError, ValueError):
        print(done.code, file=sys.stderr)
    return 1


def _child(request: Mapping[str, Any], fds: Sequence[int]) -> None:
    """In the forked child: become ``python -m <module> <argv>`` (or ``python -c <code>
    <argv>``) and run it."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import runpy

        try:
            if "code" in request:  # ``python -c``: the working directory, as it is then
                sys.path[0] = ""
                sys.argv = ["-c", *request["argv"]]
                exec(compile(request["code"], "<string>", "exec"),
                     {"__name__": "__main__", "__builtins__": __builtins__})
            else:  # ``python -m``: the working directory as it was at the start
                sys.path[0] = os.getcwd()
                sys.argv = [request["module"], *request["argv"]]
                runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            code = _exit_code(done)
        except BaseException:  # the interpreter's own last resort: a traceback, exit 1
            traceback.print_exc()
            code = 1
        import atexit as exits

        exits._run_exitfuncs()
    except BaseException:  # the set-up itself failed
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def preload(module: str) -> list[str]:
    """What a server for ``module``'s processes imports before it forks: every module of
    the program but ``NOT_PRELOADED`` (and ``__main__``s, which run the program), the
    libraries of ``PRELOAD`` and what ``module`` asks for. A child then imports nothing
    the commands reach: a fixed list of the modules commands import went stale as the
    commands came to import more lazily, and every child of the crash suite imported a
    third of the program again (about a second of each command, in a profile of it)."""
    import memhtml

    def below(paths: Sequence[str], prefix: str) -> list[str]:
        # pkgutil.iter_modules reads the folders without importing anything (its
        # walk_packages imports each package, memhtml.mcp's SDK among them).
        found: list[str] = []
        for info in pkgutil.iter_modules(paths, prefix):
            if info.name.endswith("__main__") or info.name.startswith(NOT_PRELOADED):
                continue
            found.append(info.name)
            if info.ispkg:
                short = info.name.rsplit(".", 1)[-1]
                found.extend(below([os.path.join(p, short) for p in paths], info.name + "."))
        return found

    return [*PRELOAD, *below(list(memhtml.__path__), "memhtml."),
            *PRELOAD_MODULE.get(module, ())]


class _FrontDoor:
    """A warm process's way in: the Unix socket it takes requests on (each a message and
    three descriptors), and the pipe through which a child's exit (SIGCHLD) wakes its
    wait. Shared by the servers and the zygotes."""

    def __init__(self, address: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(address)
        self.listener.listen(16)
        self.woken, self.wake = os.pipe()
        os.set_blocking(self.woken, False)
        os.set_blocking(self.wake, False)
        signal.set_wakeup_fd(self.wake)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)

    def wait(self) -> bool | None:
        """Whether a request waits; None once stdin (a pipe from the test process) has
        closed, which ends the process."""
        ready, _, _ = select.select([self.listener, sys.stdin, self.woken], [], [])
        if sys.stdin in ready and not sys.stdin.readline():
            return None
        if self.woken in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self.woken, 4096)
        return self.listener in ready

    def take(self) -> tuple[socket.socket, dict[str, Any], list[int]]:
        conn, _ = self.listener.accept()
        request, fds = _receive(conn, 3)
        return conn, request, fds

    @staticmethod
    def refuse(conn: socket.socket, fds: Sequence[int], why: str) -> None:
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            _send(conn, {"refused": why})
        conn.close()

    def let_go(self, *conns: socket.socket) -> None:
        """In a forked child: the parent's signal set-up, pipe, socket and connections
        closed, so the child holds none of them."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in (self.woken, self.wake):
            os.close(fd)
        self.listener.close()
        for conn in conns:
            conn.close()


def serve(address: str, module: str) -> None:
    """The warm process: takes requests on the Unix socket ``address``, forks a child
    for each and tells the requester its pid, then its exit code. Ends when its stdin
    (a pipe from the test process) closes. OpenBLAS is held to one thread before numpy
    loads, as ``memhtml.cli.app.main`` holds it before a command's first import of
    numpy; each child's environment is its command's own."""
    own = _key(os.environ)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for name in preload(module):
        importlib.import_module(name)
    door = _FrontDoor(address)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}
    while (asked := door.wait()) is not None:
        if asked:
            conn, request, fds = door.take()
            threads = _threads()
            if not request or len(fds) != 3 or _key(request["env"]) != own or threads != 1:
                door.refuse(conn, fds, f"{threads} threads, or another environment")
            else:
                pid = os.fork()
                if pid == 0:
                    door.let_go(conn, *waiting.values())
                    _child(request, fds)
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    _send(conn, {"pid": pid})
                waiting[pid] = conn
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid)
            with contextlib.suppress(OSError):
                _send(conn, {"code": os.waitstatus_to_exitcode(status)})
            conn.close()
    door.listener.close()


# -- the zygote: one warm interpreter per start-up environment that forks the servers --------


def zygote(address: str, *imports: str) -> None:
    """A process that imports ``imports`` once and forks, for each request on the Unix
    socket ``address``, a process that becomes ``module:function(*args)`` under the
    request's environment with the three descriptors sent as its standard streams. A
    server's preload (about 2 s of CPU) is paid once per zygote rather than once per
    server, and a test's own ``HOME`` no longer starts a new interpreter. Ends when its
    stdin closes; reaps the processes it forked.

    Its first line out is its environment as the interpreter's start left it: Python
    adds ``LC_CTYPE`` where the locale is C (PEP 538), and a server forked for another
    environment with the same start-up part must hold what its own start would have
    added (``_Zygote.fork``)."""
    print(json.dumps(dict(os.environ)), flush=True)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for name in imports:
        importlib.import_module(name)
    door = _FrontDoor(address)
    print("ready", flush=True)
    while (asked := door.wait()) is not None:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not asked:
            continue
        conn, request, fds = door.take()
        threads = _threads()
        if not request or len(fds) != 3 or threads != 1:
            door.refuse(conn, fds, f"{threads} threads, or a short request")
            continue
        pid = os.fork()
        if pid == 0:
            door.let_go(conn)
            _become(request, fds)
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            _send(conn, {"pid": pid})
        conn.close()
    door.listener.close()


def _become(request: Mapping[str, Any], fds: Sequence[int]) -> None:
    """In a zygote's child: take the streams and the environment, have libgit2 guess
    its search paths again from that environment, run the target, exit."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        if "pygit2" in sys.modules:
            import pygit2
            from pygit2.enums import ConfigLevel

            paths: Any = pygit2.settings.search_path
            for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
                paths[level] = None  # libgit2's own guess, from the environment now
        module, function = str(request["target"]).split(":")
        getattr(importlib.import_module(module), function)(*request["args"])
        code = 0
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


# -- the launcher: a process of its own that the server's child stands behind -----------------

LAUNCH = r"""
import json, os, signal, socket, struct, sys
address, flag, target, *argv = sys.argv[1:]
def fresh():
    os.execv(sys.executable, [sys.executable, flag, target, *argv])
def exactly(sock, size):
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            return None
        data += more
    return data
def receive(sock):
    head = exactly(sock, 4)
    body = None if head is None else exactly(sock, struct.unpack("!I", head)[0])
    return {} if body is None else json.loads(body)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(address)
    body = json.dumps({"module" if flag == "-m" else "code": target, "argv": argv,
                       "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(sock, [struct.pack("!I", len(body)) + body], [0, 1, 2])
    answer = receive(sock)
except OSError:
    answer = {}
if "pid" not in answer:
    fresh()
pid = answer["pid"]
def forward(number, frame):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, forward)
code = receive(sock).get("code", 1)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


# -- the test side ---------------------------------------------------------------------------


class Process(Protocol):
    """What the tests use of a server process: a ``Popen``, or a zygote's ``Forked``."""

    @property
    def stdin(self) -> IO[str] | None: ...

    @property
    def stdout(self) -> IO[str] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class Forked:
    """A process a zygote forked for this test process, through a pidfd (it is the
    zygote's child, not ours): its stdin and stdout pipes, whether it has ended, a wait
    and a kill. Its exit status belongs to the zygote, so an ended one reports 0."""

    def __init__(self, pid: int, handle: int, stdin: IO[str], stdout: IO[str]) -> None:
        self.pid = pid
        self._handle = handle
        self.stdin: IO[str] | None = stdin
        self.stdout: IO[str] | None = stdout
        self.returncode: int | None = None

    def _ended(self, timeout: float | None) -> bool:
        if self.returncode is None:
            ended, _, _ = select.select([self._handle], [], [], timeout)
            if ended:
                self.returncode = 0
                os.close(self._handle)
        return self.returncode is not None

    def poll(self) -> int | None:
        return 0 if self._ended(0) else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        return 0

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._handle, signal.SIGKILL)


class _Zygote:
    """One warm interpreter that has imported a server's modules, forking servers."""

    def __init__(self, env: Mapping[str, str], imports: Sequence[str]) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="memhtml-zygote-"))
        self.address = str(self.work / "socket")
        with (self.work / "zygote.err").open("wb") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-c",
                 "import sys; from tests.integration.warm_cli import zygote; "
                 "zygote(*sys.argv[1:])", self.address, *imports],
                env=dict(env), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=errors, text=True)
        assert self.process.stdout is not None
        self.added: dict[str, str] = {}
        self.up = False
        ready, _, _ = select.select([self.process.stdout], [], [], 120)
        if ready:
            with contextlib.suppress(ValueError):
                started = json.loads(self.process.stdout.readline())
                self.added = {name: value for name, value in started.items()
                              if name not in env}
                ready, _, _ = select.select([self.process.stdout], [], [], 120)
                self.up = bool(ready) and self.process.stdout.readline().strip() == "ready"

    def fork(self, target: str, args: Sequence[str], env: Mapping[str, str],
             errors: Path) -> Forked | None:
        if not self.up or self.process.poll() is not None:
            return None
        into, stdin = os.pipe()
        stdout, out_of = os.pipe()
        log = os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.address)
            _send(sock, {"target": target, "args": list(args),
                         "env": {**self.added, **env}},
                  [into, out_of, log])
            answer, _ = _receive(sock)
        except OSError:
            answer = {}
        finally:
            sock.close()
            for fd in (into, out_of, log):
                os.close(fd)
        handle = None
        if "pid" in answer:
            with contextlib.suppress(OSError):
                handle = os.pidfd_open(int(answer["pid"]))
        if handle is None:
            os.close(stdin)
            os.close(stdout)
            return None
        return Forked(int(answer["pid"]), handle, os.fdopen(stdin, "w"),
                      os.fdopen(stdout, "r"))

    def close(self) -> None:
        close_server(self.process)
        shutil.rmtree(self.work, ignore_errors=True)


_zygotes: OrderedDict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], _Zygote] = (
    OrderedDict())


def forked(target: str, args: Sequence[str], env: Mapping[str, str],
           imports: Sequence[str], errors: Path) -> Forked | None:
    """``module:function(*args)`` in a process forked from a zygote that has imported
    ``imports`` under ``env``'s start-up part (``_startup``), with ``env`` whole as its
    environment, its stderr appended to ``errors``; None where no zygote can fork it
    (the caller then starts an interpreter of its own)."""
    if not hasattr(os, "pidfd_open"):
        return None
    found = _live(_zygotes, (tuple(imports), _startup(env)),
                  lambda: _Zygote(env, imports), ZYGOTES)
    return found.fork(target, args, env, errors)


def warm_process(target: str, args: Sequence[str], env: Mapping[str, str],
                 imports: Sequence[str], errors: Path) -> Process:
    """``module:function(*args)`` forked from a zygote (``forked``), or, where none can
    fork it, in an interpreter of its own under ``env``, its stderr written to
    ``errors``; its stdin and stdout are pipes to this process either way."""
    found = forked(target, args, env, imports, errors)
    if found is not None:
        return found
    module, function = target.split(":")
    with errors.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-c",
             f"import sys; from {module} import {function}; {function}(*sys.argv[1:])",
             *args],
            env=dict(env), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=log, text=True)


class _Server:
    """One warm process serving commands under one environment, forked from a zygote
    (started as its own interpreter where none can fork it)."""

    def __init__(self, env: Mapping[str, str], module: str) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="memhtml-warm-"))
        self.address = str(self.work / "socket")
        self.log = self.work / "server.err"
        self.process = warm_process("tests.integration.warm_cli:serve",
                                    [self.address, module], env, preload(module), self.log)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 120)
        self.up = bool(ready) and self.process.stdout.readline().strip() == "ready"

    def start(self, module: str, argv: Sequence[str], cwd: Path, env: Mapping[str, str],
              fds: Sequence[int]) -> tuple[socket.socket, int] | None:
        """The child's connection and pid, or None when this server cannot run it."""
        if not self.up or self.process.poll() is not None:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.address)
            _send(sock, {"module": module, "argv": list(argv), "cwd": str(cwd),
                         "env": dict(env)}, fds)
            answer, _ = _receive(sock)
        except OSError:
            answer = {}
        if "pid" not in answer:
            sock.close()
            return None
        return sock, int(answer["pid"])

    def close(self) -> None:
        close_server(self.process)
        shutil.rmtree(self.work, ignore_errors=True)


def close_server(process: Process) -> None:
    """End a server process that serves until its stdin closes: close it, wait (kill
    after ten seconds), and close its stdout. The warm interpreter here and the fault
    server of the crash and kill suites (``write_faults``) both end this way."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


_servers: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], _Server] = OrderedDict()


def _server(env: Mapping[str, str], module: str = "memhtml") -> _Server:
    return _live(_servers, (module, tuple(sorted(_key(env).items()))),
                 lambda: _Server(env, module), POOL)


class _Pooled(Protocol):
    @property
    def process(self) -> Process: ...

    def close(self) -> None: ...


_K = TypeVar("_K")
_P = TypeVar("_P", bound=_Pooled)


def _live(pool: OrderedDict[_K, _P], key: _K, make: Callable[[], _P], limit: int) -> _P:
    """``pool``'s process for ``key``, started by ``make`` when there is none or it has
    ended; the newest of the pool, whose oldest are closed past ``limit``."""
    found = pool.pop(key, None)
    if found is None or found.process.poll() is not None:
        if found is not None:
            found.close()
        found = make()
    pool[key] = found
    while len(pool) > limit:
        pool.popitem(last=False)[1].close()
    return found


@atexit.register
def _close_all() -> None:
    while _servers:
        _servers.popitem()[1].close()
    while _zygotes:
        _zygotes.popitem()[1].close()


def memhtml(*tokens: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml <tokens>`` in ``cwd`` under ``env`` (this process's when not
    given), as ``subprocess.run(..., capture_output=True, text=True)`` gives it back:
    its exit code (negative: killed by that signal), stdout and stderr (stdin is
    ``/dev/null``), and ``subprocess.TimeoutExpired`` past ``timeout``."""
    environment = dict(os.environ if env is None else env)
    where = Path.cwd() if cwd is None else cwd
    command = [sys.executable, "-m", "memhtml", *tokens]
    server = _server(environment)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(os.devnull, "rb") as null:
        started = server.start("memhtml", tokens, where, environment,
                               [null.fileno(), out.fileno(), err.fileno()])
        if started is None:
            return subprocess.run(command, env=environment, cwd=where, capture_output=True,
                                  text=True, timeout=timeout, check=False)
        sock, pid = started
        with sock:
            sock.settimeout(timeout)
            try:
                answer, _ = _receive(sock)
                late = False
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                sock.settimeout(None)
                answer, _ = _receive(sock)
                late = True
        encoding = locale.getpreferredencoding(False)
        texts = []
        for stream in (out, err):
            stream.seek(0)
            # As ``text=True`` reads a pipe: the locale's encoding, universal newlines.
            texts.append(stream.read().decode(encoding).replace("\r\n", "\n")
                         .replace("\r", "\n"))
    if late:
        raise subprocess.TimeoutExpired(command, timeout, texts[0], texts[1])
    return subprocess.CompletedProcess(command, int(answer.get("code", 1)), texts[0], texts[1])


def launcher(module: str, *argv: str, env: Mapping[str, str], code: str | None = None
             ) -> tuple[str, list[str]]:
    """The command and arguments of a process that runs ``python -m <module> <argv>``
    (with ``code``: ``python -c <code> <argv>``, the server preloading as for
    ``module``) forked from a warm server for ``env`` (the environment it will be
    started with), standing behind it until it exits: its streams are the child's, the
    signals it gets are forwarded, and it exits with the child's code. Where no server
    can run it, it becomes a fresh interpreter itself."""
    server = _server(env, module)
    target = ("-m", module) if code is None else ("-c", code)
    return sys.executable, ["-I", "-S", "-c", LAUNCH, server.address, *target, *argv]

