"""Property: no sequence of pulled commits makes an acknowledged write land off the
store's branch.

A collaborator pushes commits that set ``branch`` in ``.memhtml/config.toml`` and in the
marker ``.memhtml/store.toml`` to anything at all (a sleep run's branch that exists in
this clone, one that does not, a branch of the person's that a store's too, ``HEAD``,
full ref names, malformed names, a value that is not a string), or delete them. This
clone pulls each one (``memhtml sync``, or the person's own ``git pull`` before memhtml
ever ran here) and writes after each pull. Whatever hypothesis draws, every sync and
every write succeeds, every acknowledged write is on ``main`` (and reaches the remote),
no other branch moves or appears, and after ``sleep abort`` deletes the run's branch
every write is still there.

Real repositories: a bare remote, the clone under test (the real CLI, in this process)
and the collaborator's clone (plain git). Each example starts from a copy of one
prepared set, so an example costs its pulls and writes, not a store's making.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.integration.sync.sync_support import git

CONFIG = ".memhtml/config.toml"
MARKER = ".memhtml/store.toml"
RUN = "@run"
"""Stands for the name of the sleep run's branch the prepared clone holds (the run is
named by the day it was cut)."""

NAMES = st.one_of(
    st.sampled_from([RUN, "sleep/2099-01-01", "Sleep/2026-12-06", "sleep", "other", "main",
                     "evil", "HEAD", "refs/heads/other", f"refs/heads/{RUN}", "refs/tags/v1",
                     "refs/remotes/origin/main", "", "-x", "../x", "x..y", "other.lock"]),
    st.text(alphabet="abz09._/-@{}", min_size=1, max_size=16),
)
Setting = str | int | None
"""A value for ``branch`` (an int is a value of the wrong type); None deletes the file."""


@dataclass(frozen=True)
class Pulled:
    """One collaborator commit: what it sets in each file (absent: left as it is)."""

    config: Setting | Literal["keep"]
    marker: Setting | Literal["keep"]


PULLED = st.builds(
    Pulled,
    config=st.one_of(st.just("keep"), st.none(), st.integers(0, 9), NAMES),
    marker=st.one_of(st.just("keep"), st.none(), NAMES),
)


@dataclass(frozen=True)
class Prepared:
    base: Path
    run_branch: str


def tip(root: Path, branch: str) -> str | None:
    found = pygit2.Repository(str(root)).references.get(f"refs/heads/{branch}")
    return None if found is None else str(found.target)


def branches(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split(" ", 1) for line in out.splitlines())


def on_main(root: Path, commit: str) -> bool:
    return subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", commit,
                           "refs/heads/main"], check=False).returncode == 0


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    """A remote, clone A (init, published, a sleep run cut, a branch ``other`` cut from
    the store and a tag) and clone B (a plain git clone), made once."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from memhtml.cli.app import app

    def memhtml(*tokens: str) -> int:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            return int(app([*tokens, "--json"], result_action="return_value"))

    base = tmp_path_factory.mktemp("branch-property")
    remote, a, b = base / "remote.git", base / "A", base / "B"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    assert memhtml("init", str(a)) == 0
    git(a, "remote", "add", "origin", str(remote))
    assert memhtml("sync", "--store", str(a)) == 0
    assert memhtml("write", "--title", "Seed", "--claim", "Seed holds.", "--store",
                   str(a)) == 0
    assert memhtml("sync", "--store", str(a)) == 0
    assert memhtml("sleep", "run", "--store", str(a)) in (0, 1)
    [run_branch] = [name for name in branches(a) if name.startswith("sleep/")]
    git(a, "branch", "other", "main")
    git(a, "tag", "v1", "main")
    git(base, "clone", "-q", str(remote), str(b))
    return Prepared(base, run_branch)


def copy_of(prepared: Prepared) -> tuple[Path, Path, Path]:
    """A fresh copy of the prepared set, its clones pointed at its own remote."""
    where = Path(tempfile.mkdtemp(dir=prepared.base.parent, prefix="example-"))
    for name in ("remote.git", "A", "B"):
        shutil.copytree(prepared.base / name, where / name, symlinks=True)
    remote, a, b = where / "remote.git", where / "A", where / "B"
    for clone in (a, b):
        git(clone, "remote", "set-url", "origin", str(remote))
    return remote, a, b


def named(value: str, run_branch: str) -> str:
    return value.replace(RUN, run_branch)


def push(b: Path, pulled: Pulled, run_branch: str, n: int) -> None:
    """The collaborator's commit, made with plain git on the remote's main and pushed."""
    git(b, "fetch", "-q", "origin")
    git(b, "reset", "-q", "--hard", "origin/main")
    for path, value, head in ((CONFIG, pulled.config, ""), (MARKER, pulled.marker,
                                                           "format = 1\n")):
        if value == "keep":
            continue
        if value is None:
            git(b, "rm", "-q", "--ignore-unmatch", path)
            continue
        text = json.dumps(named(value, run_branch)) if isinstance(value, str) else str(value)
        (b / path).parent.mkdir(parents=True, exist_ok=True)
        (b / path).write_text(f"{head}branch = {text}\n", encoding="utf-8")
        git(b, "add", "-f", path)
    git(b, "commit", "-q", "--allow-empty", "-m", f"pulled {n}")
    git(b, "push", "-q", "origin", "HEAD:main")


def git_pull(a: Path, head: str) -> None:
    """The person's own pull, before memhtml ran in this clone: main fast-forwarded to
    the remote's, the checkout following when it is on main."""
    git(a, "fetch", "-q", "origin")
    if head == "main":
        git(a, "merge", "-q", "--ff-only", "origin/main")
    else:
        git(a, "update-ref", "refs/heads/main", "refs/remotes/origin/main")


@settings(max_examples=8)
@given(pulls=st.lists(PULLED, min_size=1, max_size=3),
       head=st.sampled_from(["main", "other", "detached"]),
       recorded=st.booleans(), first_pull=st.sampled_from(["memhtml", "git"]))
def test_no_pulled_commit_moves_an_acknowledged_write_off_the_branch(
        prepared: Prepared, pulls: list[Pulled], head: str, recorded: bool,
        first_pull: str) -> None:
    remote, a, b = copy_of(prepared)
    run_branch = prepared.run_branch
    if head == "other":
        git(a, "switch", "-q", "other")
    elif head == "detached":
        git(a, "checkout", "-q", "--detach", "main")
    if not recorded:  # a clone from before records, or a plain git clone
        git(a, "config", "--unset", "memhtml.branch")
    before = {name: sha for name, sha in branches(a).items() if name != "main"}
    acknowledged: list[str] = []
    capsys = _Quiet()
    for n, pulled in enumerate(pulls):
        push(b, pulled, run_branch, n)
        if n == 0 and first_pull == "git" and not recorded:
            git_pull(a, head)
        code, synced = capsys.call("sync", "--store", str(a))
        assert code == 0, (pulled, synced)
        code, wrote = capsys.call("write", "--title", f"Fact {n}", "--claim",
                                  f"Fact {n} holds.", "--store", str(a))
        assert code == 0, (pulled, wrote)
        acknowledged.append(str(wrote["commit"]))
        assert all(on_main(a, commit) for commit in acknowledged), pulled
        assert {k: v for k, v in branches(a).items() if k != "main"} == before, pulled
    code, aborted = capsys.call("sleep", "abort", run_branch, "--store", str(a))
    assert code == 0, aborted
    assert all(on_main(a, commit) for commit in acknowledged)
    code, synced = capsys.call("sync", "--store", str(a))
    assert code == 0, synced
    assert tip(remote, "main") == tip(a, "main")
    assert git(a, "config", "--local", "memhtml.branch").strip() == "main"
    shutil.rmtree(remote.parent)


class _Quiet:
    """The CLI in this process with its output captured, for a hypothesis test (which
    cannot take pytest's function-scoped ``capsys``)."""

    def call(self, *tokens: str) -> tuple[int, dict[str, object]]:
        import io
        from contextlib import redirect_stderr, redirect_stdout

        from memhtml.cli.app import app

        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            code = app([*tokens, "--json"], result_action="return_value")
        text = out.getvalue()
        return int(code), dict(json.loads(text)) if text.strip() else {}
