"""The warm command runner stands for a fresh interpreter: what its servers share (a
zygote's preload) never shows through to a command.

- A command reads git's global configuration from its own ``HOME``, though its server
  was forked from a zygote started under another one (libgit2 fixes its search paths
  when pygit2 loads; the fork guesses them again).
- A command started the way the MCP SDK starts a server (a bare environment with no
  locale, so Python adds ``LC_CTYPE`` at start) is forked from a warm server, not left
  to a fresh interpreter by an environment that no longer matches.
- A child's pid and exit code, sent back to back, are read as two messages, however
  they arrive.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2

from tests.integration import warm_cli


def _home(root: Path, name: str) -> Path:
    home = root / name
    home.mkdir()
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = {name}\n\temail = {name.lower()}@example.org\n", encoding="utf-8")
    return home


def test_each_command_reads_git_identity_from_its_own_home(tmp_path: Path) -> None:
    store = tmp_path / "store"
    base = {name: value for name, value in os.environ.items()
            if not name.startswith("GIT_") and name != "XDG_CONFIG_HOME"}
    authors, starts = [], set()
    for name in ("Ada", "Grace"):
        env = {**base, "HOME": str(_home(tmp_path, name))}
        starts.add(warm_cli._startup(env))
        if not store.exists():
            done = warm_cli.memhtml("init", str(store), env=env)
            assert done.returncode == 0, done.stderr
        done = warm_cli.memhtml("write", "--title", f"{name}'s note",
                                "--claim", f"{name} wrote this on a Tuesday.",
                                "--store", str(store), env=env)
        assert done.returncode == 0, done.stderr
        head = pygit2.Repository(str(store)).head.peel(pygit2.Commit)
        authors.append((head.author.name, head.author.email))
    assert authors == [("Ada", "ada@example.org"), ("Grace", "grace@example.org")]
    # Both commands' servers came from one zygote: their start-up part is the same.
    (start,) = starts
    assert (tuple(warm_cli.preload("memhtml")), start) in warm_cli._zygotes


def test_a_bare_environment_is_served_warm(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(warm_cli.REPO), *sys.path[:1]])}
    command, args = warm_cli.launcher(
        "memhtml", code="import os; print(os.getppid())", env=env)
    done = subprocess.run([command, *args], env=env, capture_output=True, text=True,
                          check=False, timeout=60)
    # Its output whole when it fails: it ended 1 once in a full run on three workers,
    # and ``check=True`` kept nothing but the exit code.
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    # A fresh interpreter would be the launcher itself (it execs), whose parent is us.
    assert int(done.stdout) != os.getpid(), done.stderr


def _frame(message: dict[str, int]) -> bytes:
    body = json.dumps(message).encode()
    return struct.pack("!I", len(body)) + body


def test_a_pid_and_an_exit_code_sent_together_are_read_one_at_a_time() -> None:
    """The server sends a child's pid and, when it ends, its exit code; a short child
    on a loaded machine ends before its launcher reads the pid, and both messages
    arrive in one read. The launcher (the MCP SDK's server process) and the test side
    each take exactly one message a read."""
    work = Path(tempfile.mkdtemp(prefix="memhtml-frames-"))  # a socket path stays short
    try:
        address = str(work / "socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(address)
            listener.listen(1)
            launcher = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", warm_cli.LAUNCH, address, "-c", "pass"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            conn, _ = listener.accept()
            with conn:
                request, fds = warm_cli._receive(conn, 3)
                for fd in fds:
                    os.close(fd)
                assert request["code"] == "pass" and len(fds) == 3, request
                conn.sendall(_frame({"pid": os.getpid()}) + _frame({"code": 3}))
                _, err = launcher.communicate(timeout=60)
        assert launcher.returncode == 3, err
    finally:
        shutil.rmtree(work, ignore_errors=True)

    left, right = socket.socketpair()
    with left, right:
        left.sendall(_frame({"pid": 7}) + _frame({"code": 0}))
        left.shutdown(socket.SHUT_WR)
        assert warm_cli._receive(right) == ({"pid": 7}, [])
        assert warm_cli._receive(right) == ({"code": 0}, [])
        assert warm_cli._receive(right) == ({}, [])
