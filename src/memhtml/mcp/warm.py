"""Recall and brief answered by a running server, for a hook's process that cannot wait.

A coding agent's hook starts ``memhtml recall`` for every prompt. A cold process
spends most of a second importing and opening the store (docs/benchmarks.md, "The
agent's loop"), while ``memhtml mcp`` and ``memhtml serve`` already hold the parsed
head. So a server listens on a Unix socket in this clone's state directory
(``<git-dir>/memhtml/warm.sock``) and answers the two reads; ``memhtml.cli.warm``,
which the ``memhtml`` command runs before importing anything heavy, asks it first and
prints what the cold command would print, or, when no server answers, runs the cold
command as before.

The socket answers only this user: it is made with mode 0600 under the git
directory, and each connection's peer credentials must be this process's user. A
server started on another branch than the clone's recorded one (``--branch``) does
not listen, and a request whose ``MEMHTML_*`` settings, ``HOME`` or
``XDG_CONFIG_HOME`` differ from the server's is declined, so an answer is always
the one the cold command would give. A socket already answered by another server is
left to it; one nobody answers is taken over. Reads go through the server's store
gate, so a commit made meanwhile is seen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import struct
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from returns.io import IOResult
from returns.result import Failure, Success

from memhtml.compose import Services, explain
from memhtml.mcp.gate import StoreGate
from memhtml.store import Store, StoreError
from memhtml.warm_protocol import SOCKET_NAME, settings_env

__all__ = ["REQUEST_MAX", "SOCKET_NAME", "WarmAnswers", "settings_env"]

REQUEST_MAX: Final = 4 * 1024 * 1024 + 4096
"""The most a request may hold: a hook's prompt (4 MiB, as the cold command reads)
and its options."""
_PATH_MAX: Final = 100
"""Longer socket paths do not fit ``sockaddr_un`` on every system: none is made."""


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


class WarmAnswers:
    """The socket beside a server's gate; ``start`` listens, ``close`` takes it down."""

    def __init__(self, services: Services, gate: StoreGate,
                 env: Mapping[str, str] | None = None) -> None:
        self._services = services
        self._gate = gate
        self._env = settings_env(os.environ if env is None else env)
        state = services.state_dir
        self.path = None if state is None else state / SOCKET_NAME
        self._listener: socket.socket | None = None
        self._inode: int | None = None

    def start(self) -> bool:
        """Listen, on a thread of its own; False (and nothing made) when the path is too
        long, another server answers there, or the socket cannot be made."""
        path = self.path
        if path is None or len(os.fsencode(path)) > _PATH_MAX or not path.parent.is_dir():
            return False
        if _answered(path):
            return False
        with contextlib.suppress(FileNotFoundError):
            if path.is_socket():
                path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(os.fspath(path))
        except OSError:
            listener.close()
            return False
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        listener.listen(16)
        self._listener = listener
        self._inode = path.stat().st_ino
        threading.Thread(target=self._serve, name="memhtml-warm-answers", daemon=True).start()
        return True

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is None or self.path is None:
            return
        listener.close()
        with contextlib.suppress(OSError):
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()

    def _serve(self) -> None:
        while (listener := self._listener) is not None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                if _peer_uid(conn) != os.getuid():
                    return
                request = _read_line(conn)
                answer = self.answer(request) if request is not None else {
                    "fallback": "the request was not one line of JSON"}
                conn.sendall(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
            except OSError:
                return

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The payload the cold command would print as JSON, or why the cold command
        should answer instead (``fallback``)."""
        if request.get("env") != self._env:
            return {"fallback": "the client's settings differ from the server's"}
        from memhtml.compose.scopes import configured_scopes

        if configured_scopes(os.environ):
            # A spanning read opens every scope's store, which this process does not
            # hold; the cold command does it.
            return {"fallback": "scopes are configured"}
        op = request.get("op")
        limit, budget, items = (_count(request.get(k)) for k in ("limit", "budget", "items"))
        if op == "recall":
            prompt = request.get("prompt")
            if not isinstance(prompt, str) or limit is None or budget is None:
                return {"fallback": "malformed recall request"}
            from memhtml.compose.agent import recall_of

            return self._run(lambda store: recall_of(store, prompt, limit=limit,
                                                     budget=budget))
        if op == "brief":
            if items is None or budget is None:
                return {"fallback": "malformed brief request"}
            from memhtml.compose.agent import brief_of

            return self._run(lambda store: brief_of(self._services, store, budget=budget,
                                                    items=items))
        return {"fallback": f"unknown op {op!r}"}

    def _run(self, door: Callable[[Store], IOResult[Any, StoreError]]) -> dict[str, Any]:
        match self._gate.run(door):
            case Success(found):
                return {"payload": _plain(found)}
            case Failure(error):
                return {"fallback": explain(error)}
        return {"fallback": "no answer"}  # pragma: no cover - exhaustive above


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 1 else None


def _peer_uid(conn: socket.socket) -> int | None:
    """The connecting process's user (Linux ``SO_PEERCRED``); None where unknown."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return None
    raw = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def _read_line(conn: socket.socket) -> dict[str, Any] | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_MAX:
            return None
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def _answered(path: Path) -> bool:
    """Whether a live server already answers at ``path``."""
    if not path.is_socket():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1)
    try:
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
