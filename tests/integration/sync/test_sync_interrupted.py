"""Killing ``memhtml sync`` at any moment never leaves a clone or the remote worse off:
whatever the kill interrupted, the repositories stay consistent, no commit the remote
had is lost, and the next sync completes with every fact in both clones."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from tests.integration.cli.cli_support import call
from tests.integration.sync.sync_support import git

KILL_POINTS = (("fetch", "before"), ("fetch", "after"), ("ls-remote", "after"),
               ("push", "before"), ("push", "after"))
"""Where the sync process is killed: just before, or just after, the git program runs
each of its steps (after the fetch the merge commit is made; after the push the
tracking ref is moved). A stand-in ``git`` first on PATH kills its parent there."""
KILL_AFTER_S = (0.05, 0.15, 0.25)
"""And at moments of a sync's life (about 0.4 s as a process here)."""

_WRAPPER = """#!/bin/sh
set -u
sub=""
skip=0
for arg in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$arg" in
    --git-dir|-C) skip=1 ;;
    -*) ;;
    *) sub="$arg"; break ;;
  esac
done
if [ "$sub" = "{sub}" ] && [ "{when}" = before ]; then kill -9 $PPID; exit 1; fi
"{real}" "$@"
status=$?
if [ "$sub" = "{sub}" ] && [ "{when}" = after ]; then kill -9 $PPID; fi
exit $status
"""


def _killing_path(tmp_path: Path, sub: str, when: str) -> str:
    """A PATH whose ``git`` kills its caller at ``sub``/``when``."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(_WRAPPER.format(sub=sub, when=when, real=real), encoding="utf-8")
    wrapper.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def _write(capsys: pytest.CaptureFixture[str], store: Path, claim: str) -> None:
    code, answer = call(capsys, "write", "--title", claim[:20], "--claim", claim,
                        "--store", str(store), "--json")
    assert code == 0, answer


def _claims(root: Path) -> str:
    return "\n".join(git(root, "show", f"main:{p}") for p in
                     git(root, "ls-tree", "-r", "--name-only", "main").split()
                     if p.endswith(".html"))


@pytest.mark.parametrize("kill", [*KILL_POINTS, *KILL_AFTER_S])
def test_a_killed_sync_is_finished_by_the_next(tmp_path: Path, kill: tuple[str, str] | float,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    first, second = tmp_path / "first", tmp_path / "second"
    assert call(capsys, "init", str(first), "--json")[0] == 0
    git(first, "remote", "add", "origin", str(remote))
    assert call(capsys, "sync", "--store", str(first), "--json")[0] == 0
    assert call(capsys, "clone", str(remote), str(second), "--json")[0] == 0
    claims = [f"Fact {i} from the {name} clone." for name in ("first", "second")
              for i in range(3)]
    for claim in claims[:3]:
        _write(capsys, first, claim)
    for claim in claims[3:]:
        _write(capsys, second, claim)
    assert call(capsys, "sync", "--store", str(first), "--json")[0] == 0
    remote_before = git(remote, "rev-parse", "main").strip()
    # The second clone's sync must merge and push: it is the one killed.
    env = dict(os.environ)
    if isinstance(kill, tuple):
        env["PATH"] = _killing_path(tmp_path, *kill)
    proc = subprocess.Popen([sys.executable, "-m", "memhtml", "sync", "--store", str(second),
                             "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    if isinstance(kill, tuple):
        assert proc.wait(timeout=60) == -signal.SIGKILL, "the stand-in git killed the sync"
    else:
        time.sleep(kill)
        with contextlib.suppress(ProcessLookupError):  # it may have finished already
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for repo in (remote, second):
        git(repo, "fsck", "--no-progress")
    remote_now = git(remote, "rev-parse", "main").strip()
    git(remote, "merge-base", "--is-ancestor", remote_before, remote_now)
    for store in (second, first, second):
        code, answer = call(capsys, "sync", "--store", str(store), "--json")
        assert code == 0, answer
    assert git(first, "rev-parse", "main") == git(second, "rev-parse", "main")
    every = _claims(first)
    assert all(claim in every for claim in claims), every
    for store in (first, second):
        code, doctor = call(capsys, "doctor", "--store", str(store), "--json")
        assert code == 0, doctor
