"""A remote named by a relative path (``git remote add origin ../R.git``) works with
``memhtml sync`` and ``memhtml clone`` exactly when it works with git.

git resolves a relative URL against the directory it runs in: the top of a checkout
(it moves there from any folder of it), or a bare repository when run in it. memhtml
runs git from the same place, whatever the directory the command was started in, so a
remote that ``git fetch`` reaches is reached, and one git cannot reach is refused the
way git refuses it. Real repositories, the real CLI, the git command line beside it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from tests.integration.cli.cli_support import call
from tests.integration.sync.sync_support import git


def tip(root: Path, ref: str = "refs/heads/main") -> str | None:
    found = pygit2.Repository(str(root)).references.get(ref)
    return None if found is None else str(found.target)


def fetches(where: Path, remote: str = "origin") -> bool:
    """Whether the person's own ``git fetch`` in ``where`` reaches the remote."""
    return subprocess.run(["git", "-C", str(where), "fetch", "-q", remote],
                          capture_output=True, check=False).returncode == 0


@pytest.fixture
def scene(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """An empty bare remote ``R.git``, a store ``A`` beside it, and a directory elsewhere
    that every command is started from (so nothing resolves against the process's own
    directory by luck)."""
    remote = tmp_path / "R.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    store = tmp_path / "A"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    elsewhere = tmp_path / "far" / "away"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    return remote, store, elsewhere


def test_sync_and_clone_through_a_relative_remote(
        scene: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    remote, store, _ = scene
    git(store, "remote", "add", "origin", "../R.git")
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 0, answer
    assert answer["pushed"] is True and tip(remote) == tip(store)
    code, wrote = call(capsys, "write", "--title", "Deploys", "--claim",
                       "Deploys happen on Tuesdays.", "--store", str(store), "--json")
    assert code == 0, wrote
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 0 and answer["action"] == "ahead", answer
    assert tip(remote) == wrote["commit"]

    # memhtml clone takes the relative URL the way git clone does: from where it runs.
    monkeypatch.chdir(tmp_path)
    code, cloned = call(capsys, "clone", "R.git", "B", "--json")
    assert code == 0, cloned
    other = tmp_path / "B"
    assert cloned["store"] == str(other) and cloned["commit"] == wrote["commit"]
    monkeypatch.chdir(tmp_path / "far")
    code, second = call(capsys, "write", "--title", "Lunch", "--claim", "Lunch is at noon.",
                        "--store", str(other), "--json")
    assert code == 0, second
    assert call(capsys, "sync", "--store", str(other), "--json")[0] == 0
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 0 and answer["action"] == "fast-forward", answer
    assert tip(store) == tip(remote) == second["commit"]


@pytest.mark.parametrize(("url", "reached"), [
    ("../R.git", True), ("./../R.git", True), ("../R", True), ("../R.git/", True),
    (".git/../../R.git", True), ("../far/../R.git", True), ("R.git", False),
    ("../missing.git", False), ("file://../R.git", False), ("file:///nowhere/R.git", False),
])
def test_a_relative_remote_works_exactly_when_git_s_own_fetch_does(
        scene: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], url: str,
        reached: bool) -> None:
    """``.git/../../R.git`` reaches the remote only from the working tree's top; from
    inside ``.git``, where git used to run, ``../R.git`` would name ``A/R.git``. A
    ``file://`` URL must be absolute for git, and so it is here."""
    remote, store, _ = scene
    git(store, "remote", "add", "origin", url)
    # The person stands in a folder of the checkout: git moves to its top first.
    assert fetches(store / "areas" / "inbox") is reached
    before = tip(store)
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert (code == 0) is reached, answer
    if reached:
        assert answer["pushed"] is True and tip(remote) == tip(store) == before
    else:
        assert answer["code"] == "ERR_TRANSPORT_FAILED", answer
        assert tip(remote) is None and tip(store) == before


def test_a_bare_store_resolves_a_relative_remote_from_itself(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare repository has no working tree: git run in it (``git -C S.git fetch``, or
    ``cd S.git && git fetch``) resolves against the repository, and so does memhtml,
    wherever the command starts."""
    remote = tmp_path / "R.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    bare = tmp_path / "S.git"
    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    assert call(capsys, "init", str(bare), "--json")[0] == 0
    git(bare, "remote", "add", "origin", "../R.git")
    assert fetches(bare)
    monkeypatch.chdir(tmp_path / "R.git" / "refs")
    code, answer = call(capsys, "sync", "--store", str(bare), "--json")
    assert code == 0, answer
    assert answer["pushed"] is True and tip(remote) == tip(bare)
    code, wrote = call(capsys, "write", "--title", "Deploys", "--claim",
                       "Deploys happen on Tuesdays.", "--store", str(bare), "--json")
    assert code == 0, wrote
    assert call(capsys, "sync", "--store", str(bare), "--json")[0] == 0
    assert tip(remote) == wrote["commit"]
