"""Fetch and push against real remotes: a bare repository reached by path, by
``file://`` and through ``git daemon`` on loopback, with clones made by git itself and
commits made through the adapter. Then the merge plumbing sync stands on
(``merge_base``, ``is_ancestor``, ``commit_merge``) on the adapter and its double."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from memhtml.adapters.git import PygitService
from memhtml.adapters.git_remote import GitRemotes
from memhtml.contracts.errors import (
    NotFound,
    PushRejected,
    RefMoved,
    RemoteMissing,
    TransportFailed,
)
from memhtml.contracts.services import GitService
from tests.contract.git_backends import AT, AUTHOR, err, make_backend, ok, put

TRANSPORTS = ["path", "file", "daemon"]


@pytest.fixture(autouse=True)
def _plain_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """git as installed, without the developer's own config."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_listening(port: int, daemon: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            pytest.fail(f"git daemon exited with status {daemon.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    pytest.fail("git daemon did not start listening")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A ``git daemon`` serving ``tmp_path/served`` read-write on a loopback port."""
    if shutil.which("git") is None or subprocess.run(
            ["git", "daemon", "--help"], capture_output=True, check=False).returncode != 0:
        pytest.skip("git daemon is not installed here")
    base = tmp_path / "served"
    base.mkdir()
    port = _free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
         f"--base-path={base}", f"--port={port}", "--listen=127.0.0.1", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port, daemon)
        yield f"git://127.0.0.1:{port}"
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


@dataclass(frozen=True)
class Clone:
    """One clone of the shared remote: its store handle and its remotes."""

    git: PygitService
    remotes: GitRemotes

    def commit(self, parent: str | None, name: str, text: str) -> str:
        return ok(self.git.commit("main", parent, [put(f"{name}.html", text)], f"add {name}",
                                  AUTHOR, AT))


@dataclass(frozen=True)
class World:
    """A bare remote (empty at first) and a way to clone it."""

    remote: pygit2.Repository
    url: str
    root: Path

    def clone(self, name: str) -> Clone:
        target = self.root / name
        subprocess.run(["git", "clone", "--quiet", self.url, str(target)], check=True,
                       capture_output=True)
        git_dir = target / ".git"
        return Clone(ok(PygitService.open(git_dir)), GitRemotes(git_dir, timeout_s=60))

    def tip(self) -> str | None:
        found = self.remote.references.get("refs/heads/main")
        return None if found is None else str(found.target)


@pytest.fixture(params=TRANSPORTS)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    if request.param == "daemon":
        url = request.getfixturevalue("served")
        bare_path = tmp_path / "served" / "remote.git"
        url = f"{url}/remote.git"
    else:
        bare_path = tmp_path / "remote.git"
        url = bare_path.as_uri() if request.param == "file" else str(bare_path)
    remote = pygit2.init_repository(str(bare_path), bare=True, initial_head="main")
    return World(remote, url, tmp_path)


def _commit_on(clone: Clone, fetched: str, name: str) -> str:
    """A commit on top of what ``clone`` fetched, on a branch of its own (its main is
    unborn: it was cloned while the remote was empty)."""
    ok(clone.git.create_branch("work", fetched))
    return ok(clone.git.commit("work", fetched, [put(f"{name}.html", name)], name, AUTHOR,
                               AT))


def _bob_pushed_after_base(world: World) -> tuple[Clone, Clone, str, str]:
    """alice pushes a root commit, bob fetches it and pushes one on top; alice has not
    fetched since. Returns the two clones, the root and bob's commit."""
    alice, bob = world.clone("alice"), world.clone("bob")
    base = alice.commit(None, "base", "base")
    ok(alice.remotes.push("origin", "main", base, None))
    assert ok(bob.remotes.fetch("origin", "main")) == base
    theirs = _commit_on(bob, base, "theirs")
    ok(bob.remotes.push("origin", "main", theirs, base))
    assert world.tip() == theirs
    return alice, bob, base, theirs


def test_a_branch_the_remote_lacks_is_none_and_a_push_expecting_none_creates_it(
        world: World) -> None:
    alice, bob = world.clone("alice"), world.clone("bob")
    assert ok(alice.remotes.remotes()) == ("origin",)
    assert ok(alice.remotes.fetch("origin", "main")) is None

    first = alice.commit(None, "first", "<mark>one</mark>")
    ok(alice.remotes.push("origin", "main", first, None))
    assert world.tip() == first
    assert ok(alice.git.resolve("refs/remotes/origin/main")) == first
    assert ok(bob.remotes.fetch("origin", "main")) == first
    assert ok(bob.git.resolve("refs/remotes/origin/main")) == first


def test_a_push_fast_forwards_from_the_sha_expected(world: World) -> None:
    alice, bob = world.clone("alice"), world.clone("bob")
    first = alice.commit(None, "first", "one")
    ok(alice.remotes.push("origin", "main", first, None))
    second = alice.commit(first, "second", "two")

    ok(alice.remotes.push("origin", "main", second, first))

    assert world.tip() == second
    assert ok(bob.remotes.fetch("origin", "main")) == second
    assert ok(bob.git.commits_between(None, "refs/remotes/origin/main")) == (first, second)


def test_a_push_after_the_remote_moved_is_rejected_and_changes_nothing(world: World) -> None:
    alice, _, base, bob_tip = _bob_pushed_after_base(world)

    mine = alice.commit(base, "mine", "a")
    moved = err(alice.remotes.push("origin", "main", mine, base))
    assert isinstance(moved, PushRejected)
    assert (moved.remote, moved.branch) == ("origin", "main")
    assert bob_tip in moved.reason
    assert world.tip() == bob_tip

    # A push claiming no branch exists is refused as well: it does.
    assert isinstance(err(alice.remotes.push("origin", "main", mine, None)), PushRejected)
    assert world.tip() == bob_tip


def test_a_push_that_is_not_a_fast_forward_is_refused_by_git(world: World) -> None:
    alice, _, base, theirs = _bob_pushed_after_base(world)

    # alice has fetched, so the lease she names holds; her commit does not descend from
    # it, and git itself refuses to move the branch back.
    assert ok(alice.remotes.fetch("origin", "main")) == theirs
    mine = alice.commit(base, "mine", "a")
    refused = err(alice.remotes.push("origin", "main", mine, theirs))
    assert isinstance(refused, PushRejected)
    assert "non-fast-forward" in refused.reason
    assert world.tip() == theirs
    assert ok(alice.git.resolve("refs/remotes/origin/main")) == theirs


def test_fetch_merge_push_lands_both_sides(world: World) -> None:
    alice, bob, base, theirs = _bob_pushed_after_base(world)
    mine = alice.commit(base, "mine", "a")

    fetched = ok(alice.remotes.fetch("origin", "main"))
    assert fetched == theirs
    assert ok(alice.git.merge_base(mine, theirs)) == base
    merged = ok(alice.git.commit_merge("main", mine, theirs, [put("theirs.html", "b")],
                                       "sync: merge origin/main", AUTHOR, AT))
    ok(alice.remotes.push("origin", "main", merged, fetched))

    assert world.tip() == merged
    assert ok(alice.git.commit_info(merged)).parents == (mine, theirs)
    assert ok(bob.remotes.fetch("origin", "main")) == merged
    assert sorted(e.path for e in ok(bob.git.list_tree(merged))) == [
        "base.html", "mine.html", "theirs.html"]


def test_progress_lines_reach_the_callback(world: World) -> None:
    alice, bob = world.clone("alice"), world.clone("bob")
    first = alice.commit(None, "first", "one")
    pushed: list[str] = []
    ok(alice.remotes.push("origin", "main", first, None, pushed.append))
    fetched: list[str] = []
    assert ok(bob.remotes.fetch("origin", "main", fetched.append)) == first
    assert any("objects" in line.lower() for line in pushed), pushed
    assert all(line == line.strip() and line for line in pushed + fetched)


def test_a_remote_not_configured_is_missing_and_names_git_remote_add(tmp_path: Path) -> None:
    clone = tmp_path / "lonely"
    ok(PygitService.init(clone))
    remotes = GitRemotes(clone / ".git")
    assert ok(remotes.remotes()) == ()
    for failed in (err(remotes.fetch("upstream", "main")),
                   err(remotes.push("upstream", "main", "0" * 40, None))):
        assert isinstance(failed, RemoteMissing)
        assert failed.remote == "upstream"
        assert "git remote add upstream <url>" in failed.reason


def test_a_commit_this_clone_lacks_is_not_pushed(world: World) -> None:
    alice = world.clone("alice")
    assert isinstance(err(alice.remotes.push("origin", "main", "1" * 40, None)), NotFound)
    assert world.tip() is None


def test_an_unreachable_or_silent_remote_fails_as_transport(tmp_path: Path) -> None:
    git = ok(PygitService.init(tmp_path / "clone"))
    repo = pygit2.Repository(git.path)
    closed = _free_port()  # nothing listens there
    repo.remotes.create("closed", f"git://127.0.0.1:{closed}/nothing.git")
    with socket.socket() as silent:
        # Listening but never accepting: the connection is made and then nothing is
        # said, which only the timeout ends.
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        repo.remotes.create("silent", f"git://127.0.0.1:{silent.getsockname()[1]}/x.git")
        remotes = GitRemotes(git.path, timeout_s=1)
        refused = err(remotes.fetch("closed", "main"))
        hung = err(remotes.fetch("silent", "main"))
    assert isinstance(refused, TransportFailed)
    assert refused.remote == "closed"
    assert isinstance(hung, TransportFailed)
    assert "timed out" in hung.reason


# -- merge plumbing, on the adapter and on its double ------------------------------------


def _diverged(git: GitService) -> tuple[str, str, str]:
    base = ok(git.commit("main", None, [put("base.html", "base")], "base", AUTHOR, AT))
    ok(git.create_branch("side", base))
    theirs = ok(git.commit("side", base, [put("theirs.html", "b")], "theirs", AUTHOR, AT))
    mine = ok(git.commit("main", base, [put("mine.html", "a")], "mine", AUTHOR, AT))
    return base, mine, theirs


@pytest.mark.parametrize("kind", ["pygit", "memory"])
def test_merge_base_and_ancestry(kind: str, tmp_path: Path) -> None:
    git = make_backend(kind, tmp_path / "store.git", bare=True).git
    base, mine, theirs = _diverged(git)
    assert ok(git.merge_base(mine, theirs)) == base
    assert ok(git.merge_base(base, mine)) == base
    assert ok(git.is_ancestor(base, mine))
    assert ok(git.is_ancestor(mine, mine))
    assert not ok(git.is_ancestor(mine, theirs))
    assert not ok(git.is_ancestor(mine, base))
    other_root = ok(git.commit("refs/heads/orphan", None, [put("x.html", "x")], "x", AUTHOR,
                               AT))
    assert ok(git.merge_base(mine, other_root)) is None
    assert isinstance(err(git.merge_base(mine, "f" * 40)), NotFound)


@pytest.mark.parametrize("kind", ["pygit", "memory"])
def test_commit_merge_records_two_parents_under_compare_and_swap(kind: str,
                                                                 tmp_path: Path) -> None:
    git = make_backend(kind, tmp_path / "store.git", bare=True).git
    base, mine, theirs = _diverged(git)

    stale = err(git.commit_merge("main", base, theirs, [], "merge", AUTHOR, AT))
    assert stale == RefMoved("main", base, mine)
    assert ok(git.resolve("main")) == mine

    # No change beside the first parent's tree still makes the merge commit.
    merged = ok(git.commit_merge("main", mine, theirs, [put("theirs.html", "b")], "merge",
                                 AUTHOR, AT))
    info = ok(git.commit_info(merged))
    assert info.parents == (mine, theirs)
    assert ok(git.resolve("main")) == merged
    assert ok(git.is_ancestor(theirs, merged))
    assert ok(git.merge_base(merged, theirs)) == theirs
    assert set(ok(git.commits_between(base, merged))) == {mine, theirs, merged}
    assert ok(git.changed_paths(mine, merged)) == ("theirs.html",)

    bare = ok(git.commit_merge("main", merged, theirs, [], "again", AUTHOR, AT))
    assert bare != merged
    assert ok(git.commit_info(bare)).parents == (merged, theirs)
    assert isinstance(err(git.commit_merge("main", bare, "e" * 40, [], "m", AUTHOR, AT)),
                      NotFound)


def test_the_double_writes_the_merge_commit_git_writes(tmp_path: Path) -> None:
    shas = []
    for kind in ("pygit", "memory"):
        git = make_backend(kind, tmp_path / kind, bare=True).git
        _, mine, theirs = _diverged(git)
        shas.append(ok(git.commit_merge("main", mine, theirs, [put("m.html", "m")], "merge",
                                        AUTHOR, AT)))
    assert shas[0] == shas[1]
