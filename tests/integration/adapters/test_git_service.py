"""What only a real repository shows about ``PygitService``: git's own command line
reading what it wrote, tags and rev-parse, packed refs, ref lock files and merges.

Everything that is the ``GitService`` contract runs on this adapter and on
``InMemoryGit`` alike, in ``tests/contract``.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pygit2
import pytest

from memhtml.adapters.git import PygitService
from memhtml.contracts.errors import GitFailure, NotFound, RefMoved
from memhtml.contracts.services import PathChange
from tests.contract.git_backends import (
    AT,
    AUTHOR,
    GOLDEN_ROOT_SHA,
    err,
    golden_history,
    ok,
    put,
)
from tests.contract.test_repository_contract import NESTED


def git(repo: PygitService, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo.path, *args],
        input=stdin,
        capture_output=True,
        check=True,
    ).stdout


@pytest.fixture
def service(tmp_path: Path) -> PygitService:
    return ok(PygitService.init(tmp_path / "store.git", bare=True))


def commit(
    svc: PygitService,
    parent: str | None,
    changes: list[PathChange],
    message: str = "write",
    ref: str = "main",
) -> str:
    return ok(svc.commit(ref, parent, changes, message, AUTHOR, AT))


# -- opening ----------------------------------------------------------------------


def test_open_and_init(tmp_path: Path) -> None:
    failure = err(PygitService.open(tmp_path / "missing"))
    assert isinstance(failure, GitFailure)
    assert failure.operation == "open"

    checkout = tmp_path / "checkout"
    ok(PygitService.init(checkout, initial_branch="trunk"))
    reopened = ok(PygitService.open(checkout))
    assert Path(reopened.path) == checkout / ".git"
    assert git(reopened, "symbolic-ref", "HEAD").strip() == b"refs/heads/trunk"

    (checkout / "sub").mkdir()
    assert isinstance(err(PygitService.open(checkout / "sub")), GitFailure)


# -- what git's command line makes and reads ---------------------------------------------


def test_tags_and_rev_parse_expressions_resolve(service: PygitService) -> None:
    first = commit(service, None, [put("a.html", "one")])
    second = commit(service, first, [put("a.html", "two")])
    git(service, "tag", "light", first)
    git(service, "-c", "user.name=t", "-c", "user.email=t@example.org",
        "tag", "-a", "-m", "annotated", "heavy", first)
    # A tag named like a branch must not shadow the branch.
    git(service, "tag", "main", first)

    assert ok(service.resolve("main")) == second
    assert ok(service.resolve("light")) == first
    assert ok(service.resolve("heavy")) == first
    assert ok(service.resolve("refs/tags/heavy")) == first
    assert ok(service.resolve("refs/heads/main~1")) == first
    tree = git(service, "rev-parse", f"{first}^{{tree}}").decode().strip()
    assert isinstance(err(service.resolve(tree)), GitFailure)


def test_list_tree_agrees_with_git_ls_tree_and_hash_object(service: PygitService) -> None:
    sha = commit(service, None, [put(path, text) for path, text in NESTED.items()])
    entries = ok(service.list_tree(sha))

    listed = git(service, "ls-tree", "-r", "-z", sha).split(b"\0")
    from_git = {}
    for line in filter(None, listed):
        meta, path = line.split(b"\t", 1)
        mode, kind, blob_id = meta.split(b" ")
        assert kind == b"blob"
        from_git[path.decode("utf-8")] = (blob_id.decode(), int(mode, 8))
    assert from_git == {entry.path: (entry.blob_id, entry.mode) for entry in entries}

    for entry in entries:
        data = NESTED[entry.path].encode("utf-8")
        hashed = git(service, "hash-object", "--stdin", stdin=data).decode().strip()
        assert hashed == entry.blob_id


@pytest.mark.parametrize(
    "path",
    ["../escape.html", "/abs.html", "a\\b.html", ".git/config", "a/.GIT/x", "a//b", "a/./b", ""],
)
def test_refused_paths_write_no_object(service: PygitService, path: str) -> None:
    first = commit(service, None, [put("a.html", "a")])
    objects_before = git(service, "count-objects", "-v")
    failure = err(
        service.commit("main", first, [put("fine.html", "x"), put(path, "bad")], "m", AUTHOR, AT)
    )
    assert isinstance(failure, GitFailure)
    assert git(service, "count-objects", "-v") == objects_before


def test_commit_ids_match_git_commit_tree(tmp_path: Path) -> None:
    first_run = golden_history(ok(PygitService.init(tmp_path / "one.git", bare=True)))
    second_run = golden_history(ok(PygitService.init(tmp_path / "two.git", bare=True)))
    assert first_run == second_run
    assert first_run[0] == GOLDEN_ROOT_SHA

    # git itself, given the same tree, identity, time and message, names the same commit.
    svc = ok(PygitService.open(tmp_path / "one.git"))
    tree = git(svc, "rev-parse", f"{GOLDEN_ROOT_SHA}^{{tree}}").decode().strip()
    when = "2026-03-01T12:30:15+02:00"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "GIT_AUTHOR_NAME": AUTHOR.name,
        "GIT_AUTHOR_EMAIL": AUTHOR.email,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_NAME": AUTHOR.name,
        "GIT_COMMITTER_EMAIL": AUTHOR.email,
        "GIT_COMMITTER_DATE": when,
    }
    by_git = subprocess.run(
        ["git", "--git-dir", svc.path, "commit-tree", tree],
        input=b"memory: add rollback\n\nMemhtml-Op: put\n",
        capture_output=True,
        check=True,
        env=env,
    )
    assert by_git.stdout.decode().strip() == GOLDEN_ROOT_SHA


def test_commit_on_the_checked_out_branch_leaves_the_working_tree(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    svc = ok(PygitService.init(checkout))
    sha = commit(svc, None, [put("a.html", "a")], ref="HEAD")
    assert ok(svc.resolve("main")) == sha
    assert git(svc, "symbolic-ref", "HEAD").strip() == b"refs/heads/main"
    assert sorted(p.name for p in checkout.iterdir()) == [".git"]


# -- the ref on disk --------------------------------------------------------------


def test_compare_and_swap_on_a_packed_ref(service: PygitService) -> None:
    base = commit(service, None, [put("a.html", "a")])
    git(service, "pack-refs", "--all")
    assert not (Path(service.path) / "refs" / "heads" / "main").exists()
    moved = commit(service, base, [put("b.html", "b")])
    assert err(service.commit("main", base, [put("c.html", "c")], "m", AUTHOR, AT)) == RefMoved(
        "main", base, moved
    )
    git(service, "pack-refs", "--all")
    assert commit(service, moved, [put("c.html", "c")]) != moved
    assert len(ok(service.commits_between(None, "main"))) == 3


@pytest.mark.slow  # waits out the adapter's two-second lock timeout once
def test_a_held_ref_lock_is_waited_for_then_reported(service: PygitService) -> None:
    base = commit(service, None, [put("a.html", "a")])
    lock = Path(service.path) / "refs" / "heads" / "main.lock"

    lock.write_text("another writer\n")
    releaser = threading.Timer(0.2, lock.unlink)
    releaser.start()
    after_wait = commit(service, base, [put("b.html", "b")])
    releaser.join()
    assert ok(service.resolve("main")) == after_wait

    lock.write_text("a crashed writer\n")
    stuck = err(service.commit("main", after_wait, [put("c.html", "c")], "m", AUTHOR, AT))
    assert isinstance(stuck, GitFailure)
    assert "lock" in stuck.reason
    lock.unlink()
    assert ok(service.resolve("main")) == after_wait


def test_a_missing_branch_after_delete_is_gone_for_git_too(service: PygitService) -> None:
    root = commit(service, None, [put("a.html", "a")])
    ok(service.create_branch("sleep/run", root))
    assert git(service, "rev-parse", "refs/heads/sleep/run").decode().strip() == root
    ok(service.delete_branch("sleep/run"))
    assert isinstance(err(service.resolve("sleep/run")), NotFound)
    listed = git(service, "for-each-ref", "--format=%(refname)").decode().split()
    assert listed == ["refs/heads/main"]


# -- history git made -------------------------------------------------------------


def test_commits_between_orders_a_merge_after_both_sides(service: PygitService) -> None:
    base = commit(service, None, [put("base.html", "b")])
    left = commit(service, base, [put("left.html", "l")])
    ok(service.create_branch("side", base))
    right = commit(service, base, [put("right.html", "r")], ref="side")
    repo = pygit2.Repository(service.path)
    merged_tree = repo.merge_commits(left, right).write_tree(repo)
    sig = pygit2.Signature("t", "t@example.org", 2_000_000_000, 0)
    merge = str(
        repo.create_commit("refs/heads/main", sig, sig, "merge", merged_tree, [left, right])
    )

    order = ok(service.commits_between(None, "main"))
    assert set(order) == {base, left, right, merge}
    assert order[0] == base
    assert order[-1] == merge
    assert ok(service.commits_between(left, "main")) == (right, merge)


def test_worktree_changes_list_what_git_status_lists(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    service = ok(PygitService.init(root))

    def run_git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), "-c", "user.name=P", "-c",
                        "user.email=p@example.org", *args], check=True, capture_output=True)

    (root / "tracked.txt").write_text("one\n")
    (root / ".gitignore").write_text("ignored.txt\n")
    run_git("add", "tracked.txt", ".gitignore")
    run_git("commit", "-q", "-m", "files")
    assert ok(service.worktree_changes()) == ()
    (root / "tracked.txt").write_text("changed\n")
    (root / "staged.txt").write_text("two\n")
    run_git("add", "staged.txt")
    (root / "untracked.txt").write_text("new\n")
    (root / "ignored.txt").write_text("ignored\n")
    assert ok(service.worktree_changes()) == ("staged.txt", "tracked.txt", "untracked.txt")


# -- who wrote a commit ---------------------------------------------------------------


def test_commit_info_reads_the_committer_git_wrote(service: PygitService) -> None:
    from memhtml.contracts.services import Signature

    program = Signature("memhtml", "memhtml@localhost")
    ours = ok(service.with_committer(program).commit("main", None, [put("a.html", "a")],
                                                     "by a door", AUTHOR, AT))
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@example.org",
           "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": "ann@example.org"}
    tree = git(service, "rev-parse", f"{ours}^{{tree}}").decode().strip()
    theirs = subprocess.run(
        ["git", "--git-dir", service.path, "commit-tree", tree, "-p", ours, "-m", "by hand"],
        capture_output=True, check=True, env=env).stdout.decode().strip()
    git(service, "update-ref", "refs/heads/main", theirs, ours)
    assert git(service, "log", "-1", "--format=%an|%cn", ours).decode().strip() == \
        f"{AUTHOR.name}|memhtml"
    mine = ok(service.commit_info(ours))
    assert (mine.author, mine.committer) == (AUTHOR, program)
    hand = ok(service.commit_info(theirs))
    assert hand.author == hand.committer == Signature("Ann", "ann@example.org")
    assert [i.sha for i in ok(service.commits_mentioning("main", "by ", 5))] == [theirs, ours]


def test_local_config_value_reads_the_repository_s_own_levels_as_git_does(
        tmp_path: Path) -> None:
    """The user's global config may set a key too; only the repository's own file (and
    what it includes) answers, and the last value there wins, as ``git config --local``."""
    from pygit2.enums import ConfigLevel

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[memhtml]\n\tbranch = from-the-user\n")
    saved = pygit2.settings.search_path[ConfigLevel.GLOBAL]
    pygit2.settings.search_path[ConfigLevel.GLOBAL] = str(home)
    try:
        root = tmp_path / "checkout"
        ok(PygitService.init(root))
        svc = ok(PygitService.open(root / ".git"))
        assert ok(svc.config_value("memhtml.branch")) == "from-the-user"
        assert ok(svc.local_config_value("memhtml.branch")) is None
        local = ["git", "-C", str(root), "config", "--local"]
        subprocess.run([*local, "--add", "memhtml.branch", "first"], check=True)
        subprocess.run([*local, "--add", "memhtml.branch", "second"], check=True)
        (tmp_path / "extra.cfg").write_text("[memhtml]\n\tother = included\n")
        subprocess.run([*local, "include.path", str(tmp_path / "extra.cfg")], check=True)
        svc = ok(PygitService.open(root / ".git"))
        env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
        assert subprocess.run([*local, "--get", "memhtml.branch"], env=env, check=True,
                              capture_output=True, text=True).stdout.strip() == "second"
        assert ok(svc.local_config_value("memhtml.branch")) == "second"
        assert ok(svc.local_config_value("memhtml.other")) == "included"
    finally:
        pygit2.settings.search_path[ConfigLevel.GLOBAL] = saved
