"""A remote whose HEAD names a branch it does not have: ``git init --bare`` makes one
(its HEAD names ``master``, or whatever ``init.defaultBranch`` says), and a store
pushes ``main`` there.

``memhtml clone`` finds the store on the remote's branches all the same, says which
branch it took and why, and refuses (naming the branches) only when several carry a
store and none is preferred. ``memhtml sync`` points such a remote's HEAD at the
branch it pushed when the remote is a bare repository on this machine, and never
touches a HEAD that names a branch the remote has, nor one git cannot reach from
here (a remote over ssh).

Real repositories made by the git program, the real CLI, ``file://`` URLs.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text
from tests.integration.sync.sync_support import git

MARKER = ".memhtml/store.toml"


def bare_remote(path: Path, head: str = "master") -> str:
    """A bare repository made as a person makes one, HEAD naming ``head``; its URL."""
    subprocess.run(["git", "-c", f"init.defaultBranch={head}", "init", "-q", "--bare",
                    str(path)], check=True)
    return path.as_uri()


def remote_head(remote: Path) -> str:
    return git(remote, "symbolic-ref", "HEAD").strip()


def branches_of(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname:short) %(objectname)",
              "refs/heads/")
    return dict(line.split(" ", 1) for line in out.splitlines())


def store_on(capsys: pytest.CaptureFixture[str], root: Path, branch: str, url: str,
             names: str | None = None) -> None:
    """A store made by ``memhtml init`` on ``branch``, its marker naming ``names``
    (None: left as init wrote it), pushed to ``url`` by the person's own git, which
    leaves the remote's HEAD alone."""
    code, answer = call(capsys, "init", str(root), "--branch", branch, "--json")
    assert code == 0, answer
    if names is not None:
        (root / MARKER).write_text(f'format = 1\nbranch = "{names}"\n', encoding="utf-8")
        git(root, "add", "-f", MARKER)
        git(root, "commit", "-q", "-m", f"marker names {names}")
    git(root, "push", "-q", url, f"{branch}:{branch}")


def plain_branch(root: Path, branch: str, url: str) -> None:
    """A branch of a project's own (a README, no store) pushed to ``url``."""
    git(root.parent, "init", "-q", "-b", branch, str(root))
    (root / "README").write_text("not a store\n", encoding="utf-8")
    git(root, "add", "README")
    git(root, "commit", "-q", "-m", "readme")
    git(root, "push", "-q", url, f"{branch}:{branch}")


def cloned(capsys: pytest.CaptureFixture[str], url: str, target: Path,
           *options: str) -> dict[str, object]:
    code, answer = call(capsys, "clone", url, str(target), *options, "--json")
    assert code == 0, answer
    return dict(answer)


def works(capsys: pytest.CaptureFixture[str], clone: Path, branch: str) -> None:
    """The clone is ready: on ``branch`` with its files, recorded, tracking the remote's
    branch, and a write there syncs back."""
    assert git(clone, "symbolic-ref", "HEAD").strip() == f"refs/heads/{branch}"
    assert git(clone, "config", "memhtml.branch").strip() == branch
    assert git(clone, "rev-parse", "--abbrev-ref", f"{branch}@{{upstream}}").strip() \
        == f"origin/{branch}"
    assert (clone / MARKER).is_file()
    assert git(clone, "status", "--porcelain") == ""
    code, wrote = call(capsys, "write", "--title", "Deploys", "--claim",
                       "Deploys happen on Tuesdays.", "--store", str(clone), "--json")
    assert code == 0, wrote
    code, synced = call(capsys, "sync", "--store", str(clone), "--json")
    assert code == 0 and synced["pushed"] is True, synced


# -- the reported case ----------------------------------------------------------------------


def test_a_store_synced_to_a_fresh_bare_remote_clones_on_another_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue as reported: ``git init --bare``, ``memhtml sync``, ``memhtml clone``."""
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    a = tmp_path / "A"
    assert call(capsys, "init", str(a), "--json")[0] == 0
    git(a, "remote", "add", "origin", url)
    code, out, err = call_text(capsys, "sync", "--store", str(a))
    assert code == 0, err
    assert "HEAD" in out and "main" in out, out
    assert remote_head(remote) == "refs/heads/main"
    answer = cloned(capsys, url, tmp_path / "B")
    assert answer["branch"] == "main" and answer["branch_rule"] == "head", answer
    works(capsys, tmp_path / "B", "main")
    # The person's own git clone now checks the store out too.
    git(tmp_path, "clone", "-q", url, str(tmp_path / "C"))
    assert (tmp_path / "C" / MARKER).is_file()


# -- clone: the remote's HEAD names a missing branch, or one with no store --------------------


def test_clone_takes_the_store_s_branch_when_head_names_a_missing_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pushed by the person's own git (or to a remote memhtml cannot reach to set its
    HEAD): the remote's HEAD still names ``master``."""
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    store_on(capsys, tmp_path / "A", "main", url)
    assert remote_head(remote) == "refs/heads/master" and set(branches_of(remote)) == {"main"}
    code, out, err = call_text(capsys, "clone", url, str(tmp_path / "B"))
    assert code == 0, err
    assert "branch main" in out and "took main" in out and "master" in out, out
    assert remote_head(remote) == "refs/heads/master", "clone never changes the remote"
    works(capsys, tmp_path / "B", "main")
    assert remote_head(remote) == "refs/heads/main", "the clone's first sync points it"


def test_clone_leaves_a_head_naming_a_project_branch_for_the_store_s(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The remote's HEAD names ``docs``, a branch it has that holds no store: the clone
    takes ``main``, the store's, and sync leaves the remote's HEAD on ``docs``."""
    remote = tmp_path / "R.git"
    url = bare_remote(remote, head="docs")
    plain_branch(tmp_path / "project", "docs", url)
    store_on(capsys, tmp_path / "A", "main", url)
    answer = cloned(capsys, url, tmp_path / "B")
    assert answer["branch"] == "main" and answer["branch_rule"] == "marker", answer
    assert "docs" in str(answer["branch_reason"]), answer
    works(capsys, tmp_path / "B", "main")
    assert not (tmp_path / "B" / "README").exists(), "the checkout is the store's"
    git(tmp_path / "A", "remote", "add", "origin", url)
    assert call(capsys, "sync", "--store", str(tmp_path / "A"), "--json")[0] == 0
    assert remote_head(remote) == "refs/heads/docs", "a HEAD naming a branch is never moved"


@pytest.mark.parametrize(("stores", "taken", "rule"), [
    # Each branch's marker names itself: main is preferred.
    ({"main": None, "notes": None}, "main", "main"),
    # A branch cut from the store: both markers name the store's branch.
    ({"memory": None, "topic": "memory"}, "memory", "marker"),
    # One store, however its branch is called.
    ({"memory": None}, "memory", "marker"),
], ids=["main-preferred", "marker-names-one", "single"])
def test_clone_picks_among_marked_branches_by_the_rule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], stores: dict[str, str | None],
        taken: str, rule: str) -> None:
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    for n, (branch, names) in enumerate(stores.items()):
        store_on(capsys, tmp_path / f"S{n}", branch, url, names)
    answer = cloned(capsys, url, tmp_path / "B")
    assert (answer["branch"], answer["branch_rule"]) == (taken, rule), answer
    works(capsys, tmp_path / "B", taken)


def test_clone_refuses_two_stores_it_cannot_choose_between_and_names_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    store_on(capsys, tmp_path / "S1", "alpha", url)
    store_on(capsys, tmp_path / "S2", "beta", url)
    target = tmp_path / "B"
    code, answer = call(capsys, "clone", url, str(target), "--json")
    assert code == 1 and answer["code"] == "ERR_SEVERAL_STORES", answer
    message = answer["error"]
    for word in (url, "alpha", "beta", "master", "--branch"):
        assert word in message, (word, message)
    assert not target.exists(), "a refused clone leaves nothing behind"
    # An empty directory given is left empty, so the same command can run again.
    target.mkdir()
    assert call(capsys, "clone", url, str(target), "--json")[0] == 1
    assert target.is_dir() and not any(target.iterdir())
    answer = cloned(capsys, url, target, "--branch", "beta")
    assert answer["branch"] == "beta" and answer["branch_rule"] == "option", answer
    works(capsys, target, "beta")


def test_clone_of_a_remote_with_no_store_names_its_branches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    plain_branch(tmp_path / "project", "docs", url)
    target = tmp_path / "B"
    code, answer = call(capsys, "clone", url, str(target), "--json")
    assert code == 1 and answer["code"] == "ERR_NOT_A_STORE", answer
    for word in (url, "docs", "master", MARKER):
        assert word in answer["error"], (word, answer)
    assert not target.exists()


def test_clone_on_a_branch_with_no_store_names_the_ones_with_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote = tmp_path / "R.git"
    url = bare_remote(remote)
    plain_branch(tmp_path / "project", "docs", url)
    store_on(capsys, tmp_path / "A", "main", url)
    code, answer = call(capsys, "clone", url, str(tmp_path / "B"), "--branch", "docs",
                        "--json")
    assert code == 1 and answer["code"] == "ERR_NOT_A_STORE", answer
    for word in (url, "docs", "main", "--branch"):
        assert word in answer["error"], (word, answer)
    assert not (tmp_path / "B").exists()


def test_clone_of_an_empty_remote_says_it_has_no_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = bare_remote(tmp_path / "R.git")
    code, answer = call(capsys, "clone", url, str(tmp_path / "B"), "--json")
    assert code == 1 and answer["code"] == "ERR_NOT_A_STORE", answer
    assert "no branch" in answer["error"] and url in answer["error"], answer
    assert not (tmp_path / "B").exists()


# -- sync: only a local bare remote's missing HEAD is pointed --------------------------------


def test_sync_leaves_a_checkout_s_head_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A remote with a working tree: its HEAD is what its checkout is on, the person's
    there, even unborn."""
    remote = tmp_path / "R"
    git(tmp_path, "-c", "init.defaultBranch=master", "init", "-q", str(remote))
    a = tmp_path / "A"
    assert call(capsys, "init", str(a), "--json")[0] == 0
    git(a, "remote", "add", "origin", str(remote))
    code, answer = call(capsys, "sync", "--store", str(a), "--json")
    assert code == 0 and answer["pushed"] is True and answer["remote_head"] is None, answer
    assert remote_head(remote) == "refs/heads/master"


def test_sync_points_a_relative_remote_s_head_as_git_resolves_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    remote = tmp_path / "R.git"
    bare_remote(remote)
    a = tmp_path / "A"
    assert call(capsys, "init", str(a), "--json")[0] == 0
    git(a, "remote", "add", "origin", "../R.git")
    monkeypatch.chdir(tmp_path / "A" / "areas")
    code, answer = call(capsys, "sync", "--store", str(a), "--json")
    assert code == 0 and answer["remote_head"] == "master", answer
    assert remote_head(remote) == "refs/heads/main"
    # Up to date afterwards: nothing more to point.
    code, answer = call(capsys, "sync", "--store", str(a), "--json")
    assert code == 0 and answer["remote_head"] is None, answer


def _fake_ssh(tmp_path: Path) -> Path:
    """An ssh that runs the remote command on this machine: a transport git treats as
    a network one, with no daemon or port."""
    script = tmp_path / "fake-ssh"
    script.write_text('#!/bin/sh\n# $1 is the host, $2 the command git asks it to run.\n'
                      'exec sh -c "$2"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_remote_over_ssh_keeps_its_head_and_still_clones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """git cannot set a remote's HEAD by pushing, so a remote reached over ssh keeps
    its HEAD naming ``master``; clone finds the store on ``main`` regardless."""
    monkeypatch.setenv("GIT_SSH_COMMAND", str(_fake_ssh(tmp_path)))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    remote = tmp_path / "R.git"
    bare_remote(remote)
    url = f"ssh://machine{os.fspath(remote)}"
    a = tmp_path / "A"
    assert call(capsys, "init", str(a), "--json")[0] == 0
    git(a, "remote", "add", "origin", url)
    code, answer = call(capsys, "sync", "--store", str(a), "--json")
    assert code == 0 and answer["pushed"] is True and answer["remote_head"] is None, answer
    assert remote_head(remote) == "refs/heads/master"
    answer = cloned(capsys, url, tmp_path / "B")
    assert answer["branch"] == "main" and answer["branch_rule"] == "marker", answer
    works(capsys, tmp_path / "B", "main")
