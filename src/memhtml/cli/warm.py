"""``memhtml recall`` and ``brief`` asked of a running server before anything heavy loads.

The ``memhtml`` command runs ``answer`` first. For ``recall`` and ``brief`` with
only the options they share with this path (``--store``, ``--json``, ``--hook
claude-code``, ``--limit``, ``--budget``, ``--items``), when a ``memhtml mcp`` or
``memhtml serve`` of the same clone listens on ``<git-dir>/memhtml/warm.sock``
(``memhtml.mcp.warm``), the server computes the answer from the head it holds and
this prints exactly what the cold command prints. Anything else (another command, an
option this path does not know, no server, a server that declines, a socket that is
not this user's) returns None, with stdin given back as it was, and the cold command
runs. Only the standard library is imported here: the point is a process that
answers in tens of milliseconds rather than most of a second.

``MEMHTML_WARM=0`` turns the path off (the cold command always runs);
``MEMHTML_WARM=only`` makes a recall or brief that no server answers fail (exit 1)
instead of running cold, to measure or check the warm path.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any, Final, TextIO

from memhtml.warm_protocol import SOCKET_NAME, settings_env

__all__ = ["answer"]

SOCKET: Final = Path("memhtml") / SOCKET_NAME
HOOK_INPUT_MAX: Final = 4 * 1024 * 1024
_INTS: Final = {"--limit": "limit", "--budget": "budget", "--items": "items"}
_DEFAULTS: Final = {"recall": {"limit": 5, "budget": 800},
                    "brief": {"items": 10, "budget": 1_500}}
_EVENTS: Final = {"brief": ("SessionStart", ("SessionStart",)),
                  "recall": ("UserPromptSubmit", ("UserPromptSubmit", "BeforeAgent"))}
_TIMEOUT: Final = 3.0
"""How long a server has to answer in all before the cold command runs instead: a
server answers in well under a second (docs/benchmarks.md), so one that takes
longer is stopped (``Ctrl-Z``) or stuck behind a sync, and a hook that waited longer
would hold up the person's prompt more than the cold command costs."""
ANSWER_MAX: Final = 64 * 1024 * 1024
"""The most a server's answer may hold; a longer one is left to the cold command."""


def _parsed(argv: list[str]) -> dict[str, Any] | None:
    """The request ``argv`` makes, or None when it is not one for this path."""
    if not argv or argv[0] not in _DEFAULTS:
        return None
    op = argv[0]
    found: dict[str, Any] = {"op": op, **_DEFAULTS[op], "json": False, "hook": False,
                             "store": None, "words": []}
    rest = argv[1:]
    given: set[str] = set()
    while rest:
        token = rest.pop(0)
        name, eq, value = token.partition("=")
        if name.startswith("-"):
            if name in given:  # the CLI refuses an option given twice
                return None
            given.add(name)
        if name in ("--store", "--hook", *_INTS) and not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if name == "--json" and not eq:
            found["json"] = True
        elif name == "--store":
            found["store"] = value
        elif name == "--hook" and value == "claude-code":
            found["hook"] = True
        elif name in _INTS and _INTS[name] in _DEFAULTS[op]:
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            found[_INTS[name]] = int(value)
        elif op == "recall" and not token.startswith("-"):
            found["words"].append(token)
        else:
            return None
    if found["hook"] and (found["json"] or found["words"]):
        return None
    return found


def _socket_path(store: str | None) -> Path | None:
    """``<git-dir>/memhtml/warm.sock`` for the store the command names; None where the
    repository is anything but a plain checkout or a bare repository."""
    chosen = store or os.environ.get("MEMHTML_STORE")
    if chosen:
        root = Path(chosen).expanduser()
    else:
        here = Path.cwd()
        root = next((p for p in (here, *here.parents) if (p / ".git").exists()), here)
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git / SOCKET
    if not dot_git.exists() and (root / "HEAD").is_file() and (root / "objects").is_dir():
        return root / SOCKET
    return None


def _ours(path: Path) -> bool:
    try:
        found = path.lstat()
    except OSError:
        return False
    return stat.S_ISSOCK(found.st_mode) and found.st_uid == os.getuid()


def _ask(path: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """The server's answer, or None: none whole within ``_TIMEOUT`` seconds in all, or
    one past ``ANSWER_MAX`` bytes, is no answer (the cold command gives it)."""
    deadline = time.monotonic() + _TIMEOUT
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(_TIMEOUT)
            conn.connect(os.fspath(path))
            conn.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")
            data = bytearray()
            while not data.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or len(data) > ANSWER_MAX:
                    return None
                conn.settimeout(left)
                chunk = conn.recv(65536)
                if not chunk:
                    return None
                data += chunk
    except OSError:
        return None
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _prompt(found: dict[str, Any], stdin: bytes | None) -> tuple[str | None, str | None]:
    """The prompt to send and, for a hook, the event its input names."""
    if found["op"] == "brief":
        if not found["hook"]:
            return "", None
        try:
            given = json.loads(stdin.decode("utf-8")) if stdin and stdin.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None, None
        return ("", given.get("hook_event_name")) if isinstance(given, dict) else (None, None)
    if found["hook"]:
        try:
            given = json.loads(stdin.decode("utf-8")) if stdin and stdin.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None, None
        if not isinstance(given, dict) or not isinstance(given.get("prompt"), str):
            return None, None
        return given["prompt"], given.get("hook_event_name")
    if found["words"]:
        words = " ".join(found["words"])
        return (words if words.strip() else None), None
    try:
        text = (stdin or b"").decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    return (text if text.strip() else None), None


def _printed(found: dict[str, Any], payload: dict[str, Any], event: str | None) -> str:
    text = payload.get("text")
    text = text if isinstance(text, str) else ""
    if found["json"]:
        return json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if found["hook"]:
        if not text:
            return ""
        own, names = _EVENTS[found["op"]]
        return json.dumps({"hookSpecificOutput": {
            "hookEventName": event if event in names else own,
            "additionalContext": text}}, ensure_ascii=False) + "\n"
    if found["op"] == "recall" and not text:
        return "(nothing relevant)\n"
    return text + "\n"


def answer(argv: list[str]) -> int | None:
    """The exit code once the server's answer is printed; None: the cold command
    must run (stdin, if read, is put back for it)."""
    mode = os.environ.get("MEMHTML_WARM", "1")
    if mode == "0":
        return None
    found = _parsed(argv)
    if found is None:
        return None
    code = _answered(found)
    if code is None and mode == "only":
        sys.stderr.write(f"memhtml {found['op']}: no running server answered "
                         "(MEMHTML_WARM=only)\n")
        return 1
    return code


class _Replayed(io.RawIOBase):
    """The bytes already read from stdin, then the rest of it (the stream held, so
    dropping it as ``sys.stdin`` does not close it)."""

    def __init__(self, head: bytes, stdin: TextIO) -> None:
        super().__init__()
        self._head = head
        self._stdin = stdin

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._head:
            return self._stdin.buffer.readinto(buffer)  # type: ignore[attr-defined, no-any-return]
        size = min(len(buffer), len(self._head))
        buffer[:size] = self._head[:size]
        self._head = self._head[size:]
        return size


def _given_back(head: bytes, stdin: TextIO) -> TextIO:
    """stdin as the cold command would have found it: what was read, then what was
    not (a prompt past the warm path's limit), decoded as the original stream decodes."""
    return io.TextIOWrapper(io.BufferedReader(_Replayed(head, stdin)),
                            encoding=stdin.encoding, errors=stdin.errors, newline="\n",
                            line_buffering=bool(stdin.line_buffering))


def _answered(found: dict[str, Any]) -> int | None:
    path = _socket_path(found["store"])
    if path is None or not _ours(path):
        return None
    reads_stdin = found["hook"] or (found["op"] == "recall" and not found["words"])
    if reads_stdin and sys.stdin is None:
        return None  # no stdin at all (<&-): the cold command says so
    stdin = sys.stdin.buffer.read(HOOK_INPUT_MAX + 1) if reads_stdin else None

    def cold() -> None:
        if stdin is not None:
            sys.stdin = _given_back(stdin, sys.stdin)

    if stdin is not None and len(stdin) > HOOK_INPUT_MAX:
        cold()
        return None
    prompt, event = _prompt(found, stdin)
    if prompt is None:
        cold()
        return None
    request = {"op": found["op"], "prompt": prompt, "env": settings_env(os.environ),
               **{k: found[k] for k in _DEFAULTS[found["op"]]}}
    got = _ask(path, request)
    payload = None if got is None else got.get("payload")
    if not isinstance(payload, dict):
        cold()
        return None
    try:
        sys.stdout.write(_printed(found, payload, event))
        sys.stdout.flush()
    except (OSError, ValueError) as error:  # a full device, a closed stream
        # What the cold command says (``memhtml.cli.app``), without importing it.
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"memhtml: the output could not be written: {error}\n")
            sys.stderr.flush()
        return 1
    return 0
