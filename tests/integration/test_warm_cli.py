"""The warm command runner stands for a fresh interpreter: what its servers share (a
zygote's preload) never shows through to a command.

- A command reads git's global configuration from its own ``HOME``, though its server
  was forked from a zygote started under another one (libgit2 fixes its search paths
  when pygit2 loads; the fork guesses them again).
- A command started the way the MCP SDK starts a server (a bare environment with no
  locale, so Python adds ``LC_CTYPE`` at start) is forked from a warm server, not left
  to a fresh interpreter by an environment that no longer matches.
"""

from __future__ import annotations

import os
import subprocess
import sys
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
