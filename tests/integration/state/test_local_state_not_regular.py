"""Nothing in local state but a regular file is ever opened: no command waits on a FIFO.

Local state is ``<git-dir>/memhtml/`` (snapshots, write marks, vector files, the state
database and the files sqlite keeps beside it) and the markdown index cache. At each of
its paths, files and directories alike, a FIFO, a symbolic link to ``/dev/zero``, a
symbolic link to a file elsewhere, a directory or a socket is put in place, and a
command runs as a person runs it (``python -m memhtml``, its own process, forked from a
warm interpreter: ``warm_cli``). It must end with its normal answer or a clean ``ERR_``
error; the timeout only detects a hang (it is generous and never a measurement). A link
is never written through: the file it points at is as it was. ``doctor`` names whatever
odd entry is still there when it looks.

The cross-product (every path, every kind, every command that reads local state) is
``CASES``; the covering list runs every path and every kind with a command that reads
that path, and hypothesis draws more of the cross-product (many more under
``HYPOTHESIS_PROFILE=dev``). ``MEMHTML_TEST_LOCAL_STATE=all`` runs every case of the
cross-product in place of the covering list (about half an hour on two cores).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.compose.mdcache import index_cache_dir
from tests.integration import warm_cli
from tests.integration.store.checkout_support import clean_env
from tests.sockets import socket_at

HANG_SECONDS = 90
"""Far beyond any of these commands on a loaded machine: reaching it means a hang."""
KINDS = ("fifo", "dev-zero", "elsewhere", "directory", "socket")
MEMORY = "areas/inbox/deploy-window.html"
COMMANDS: dict[str, tuple[str, ...]] = {
    "status": ("status",),
    "search": ("search", "deploy"),
    "read": ("read", MEMORY),
    "write": ("write", "--title", "Another", "--claim", "Another claim holds."),
    "sleep-plan": ("sleep", "plan"),
    "doctor": ("doctor",),
    "sync": ("sync",),
    "embed": ("embed",),
}
STORE_COMMANDS = tuple(COMMANDS)


@dataclass(frozen=True)
class Target:
    """A local-state path: a glob under ``.git/memhtml`` (``""`` is the directory
    itself), or the markdown index cache (``mdcache``)."""

    pattern: str
    commands: tuple[str, ...] = STORE_COMMANDS
    directory: bool = False
    """A directory of local state: a directory put there is no odd entry."""


TARGETS: dict[str, Target] = {
    "state-dir": Target("", directory=True),
    "pending-dir": Target("pending", directory=True),
    "snapshots-dir": Target("snapshots", directory=True),
    "vectors-dir": Target("vectors", directory=True),
    "space-dir": Target("vectors/*", directory=True),
    "snapshot": Target("snapshots/*.snapshot"),
    "mark": Target("pending/*.json"),
    "state-db": Target("state.db"),
    "state-db-wal": Target("state.db-wal"),
    "state-db-shm": Target("state.db-shm"),
    "manifest": Target("vectors/*/manifest.json"),
    "hashes": Target("vectors/*/hashes-*.txt"),
    "matrix": Target("vectors/*/vectors-*.npy"),
    "mdcache": Target("mdcache", ("md-query",)),
}
CASES: tuple[tuple[str, str, str], ...] = tuple(
    (target, kind, command) for target, spec in TARGETS.items() for kind in KINDS
    for command in spec.commands)
COVERING: tuple[tuple[str, str, str], ...] = (
    ("snapshot", "fifo", "status"),
    ("snapshot", "socket", "read"),
    ("snapshot", "elsewhere", "doctor"),
    ("mark", "fifo", "write"),
    ("mark", "elsewhere", "sync"),
    ("state-db", "fifo", "read"),
    ("state-db-wal", "dev-zero", "search"),
    ("state-db-shm", "directory", "read"),
    ("manifest", "fifo", "search"),
    ("manifest", "directory", "embed"),
    ("hashes", "elsewhere", "embed"),
    ("matrix", "dev-zero", "status"),
    ("state-dir", "socket", "doctor"),
    ("pending-dir", "fifo", "write"),
    ("snapshots-dir", "dev-zero", "read"),
    ("vectors-dir", "directory", "status"),
    ("space-dir", "elsewhere", "sleep-plan"),
    ("mdcache", "fifo", "md-query"),
)
OUTSIDE = b"a file of someone else's\n"


def _run(env: dict[str, str], *tokens: str) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml <tokens>``: its own process, forked from a warm interpreter
    (``warm_cli``)."""
    return warm_cli.memhtml(*tokens, env=env, timeout=HANG_SECONDS)


def _git(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with every kind of local state on disk (a snapshot, write marks, a
    vector file set, the state database), a bare remote it tracks, and a markdown
    folder; built once, copied for each case."""
    top = tmp_path_factory.mktemp("local-state")
    env = clean_env(top / "home")
    store = top / "store"
    for tokens in (("init", str(store)),
                   ("write", "--title", "Deploy window", "--claim", "Deploys happen on Tuesdays.",
                    "--store", str(store)),
                   ("write", "--title", "Rollback", "--claim", "Rollbacks take ten minutes.",
                    "--store", str(store)),
                   ("embed", "--embedder", "hashing", "--store", str(store)),
                   ("read", MEMORY, "--store", str(store))):
        done = _run(env, *tokens)
        assert done.returncode == 0, done.stdout + done.stderr
    _git(top, env, "clone", "-q", "--bare", str(store), str(top / "origin.git"))
    _git(store, env, "remote", "add", "origin", str(top / "origin.git"))
    _git(store, env, "fetch", "-q", "origin")
    _git(store, env, "branch", "-q", "-u", "origin/main")
    state = store / ".git" / "memhtml"
    for spec in TARGETS.values():
        if spec.pattern and spec.pattern != "mdcache":
            assert list(state.glob(spec.pattern)), f"no {spec.pattern} to put things at"
    notes = top / "notes"
    notes.mkdir()
    (notes / "deploys.md").write_text("# Deploys\n\nDeploys happen on Tuesdays.\n",
                                      encoding="utf-8")
    return top


def _plant(path: Path, kind: str, outside: Path) -> None:
    """Put ``kind`` at ``path`` in place of whatever is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "elsewhere":
        outside.write_bytes(OUTSIDE)
        path.symlink_to(outside)
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_bytes(OUTSIDE)
    else:
        socket_at(path)


def _odd_still(path: Path, kind: str) -> bool:
    """Whether what was put at ``path`` is still there."""
    if kind == "directory":
        return path.is_dir() and not path.is_symlink()
    if kind in ("dev-zero", "elsewhere"):
        return path.is_symlink()
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    return stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISSOCK(mode)


def check_case(template: Path, scratch: Path, target: str, kind: str, command: str) -> None:
    case = scratch / "case"
    if case.exists():
        shutil.rmtree(case)
    case.mkdir(parents=True)
    # The cases share the template's home (nothing writes there), so their commands
    # share one warm interpreter; each has its own cache folder.
    env = clean_env(template / "home")
    env["MEMHTML_CACHE_DIR"] = str(case / "cache")
    outside = case / "outside.bin"
    notes = template / "notes"
    store = case / "store"
    tip = ""
    if target == "mdcache":
        path = index_cache_dir(notes, env) / "index.npys"
        tokens: tuple[str, ...] = ("md", "query", "deploys", "--root", str(notes), "--json")
    else:
        shutil.copytree(template / "store", store, symlinks=True)
        _git(store, env, "remote", "set-url", "origin", str(template / "origin.git"))
        state = store / ".git" / "memhtml"
        pattern = TARGETS[target].pattern
        path = state if not pattern else sorted(state.glob(pattern))[0]
        tokens = (*COMMANDS[command], "--store", str(store), "--json")
        tip = _git(store, env, "rev-parse", "main").strip()
    _plant(path, kind, outside)

    try:
        done = _run(env, *tokens)
    except subprocess.TimeoutExpired:
        pytest.fail(f"memhtml {command} hung with {kind} at {path} ({target})")
    where = f"{command} with {kind} at {target}: {done.stdout[-600:]}{done.stderr[-900:]}"
    assert "Traceback" not in done.stderr, where
    assert done.returncode in (0, 1), where
    answer: Any = json.loads(done.stdout)
    if done.returncode == 1 and command != "doctor":
        assert answer["ok"] is False and answer["code"].startswith("ERR_"), where
        assert answer["error"], where
    if kind == "elsewhere":
        # Never written through: the file the link names is as it was.
        assert outside.read_bytes() == OUTSIDE, where
    if target == "mdcache":
        # A cache refused is a cache rebuilt: the answer is whole.
        assert done.returncode == 0, where
        assert [hit["file"] for hit in answer["hits"]] == ["deploys.md"], where
        return
    if command == "write" and done.returncode == 1:
        assert _git(store, env, "rev-parse", "main").strip() == tip, where
    odd = not (kind == "directory" and TARGETS[target].directory)
    if command == "doctor" and odd and _odd_still(path, kind):
        named = path.relative_to(store).as_posix()
        assert any(f["kind"] == "local-state" and f["path"] == named
                   for f in answer["findings"]), where


RUN = CASES if os.environ.get("MEMHTML_TEST_LOCAL_STATE") == "all" else COVERING


@pytest.mark.parametrize(("target", "kind", "command"), RUN,
                         ids=["-".join(case) for case in RUN])
def test_every_local_state_path_and_kind_leaves_the_command_unheld(
        template: Path, tmp_path: Path, target: str, kind: str, command: str) -> None:
    check_case(template, tmp_path, target, kind, command)


def test_the_covering_list_covers_every_path_kind_and_command() -> None:
    assert {case[0] for case in COVERING} == set(TARGETS)
    assert {case[1] for case in COVERING} == set(KINDS)
    assert {case[2] for case in COVERING} == {*COMMANDS, "md-query"}
    assert set(COVERING) <= set(CASES)


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES))
def test_any_case_of_the_cross_product_leaves_the_command_unheld(
        template: Path, tmp_path: Path, case: tuple[str, str, str]) -> None:
    check_case(template, tmp_path, *case)
