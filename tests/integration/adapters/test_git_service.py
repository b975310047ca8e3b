"""PygitService against real repositories in temporary directories."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import subprocess
import tempfile
import threading
from datetime import UTC, datetime, timedelta, timezone
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import TypeVar

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import FixedClock, SystemClock
from memhtml.adapters.git import PygitService
from memhtml.contracts.errors import GitFailure, NotFound, RefMoved
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    FILE_MODE_EXECUTABLE,
    Clock,
    GitService,
    PathChange,
    Signature,
    TreeEntry,
)

T = TypeVar("T")
E = TypeVar("E")

AUTHOR = Signature("Memory Writer", "writer@example.org")
CLOCK = FixedClock(datetime(2026, 3, 1, 12, 30, 15, tzinfo=timezone(timedelta(hours=2))))
AT = CLOCK.now()

GOLDEN_ROOT_SHA = "80c90a42dafbf36acde0a5ba054dd8ae85ca2b0a"
"""The root commit of ``_golden_commit``: pinned so a change to how commits are built shows."""


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


def git(repo: PygitService, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo.path, *args],
        input=stdin,
        capture_output=True,
        check=True,
    ).stdout


def put(path: str, text: str) -> PathChange:
    return PathChange(path, text.encode("utf-8"))


def drop(path: str) -> PathChange:
    return PathChange(path, None)


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


def tree_bytes(svc: PygitService, sha: str) -> dict[str, bytes]:
    entries = ok(svc.list_tree(sha))
    blobs = ok(svc.read_blobs([entry.blob_id for entry in entries]))
    return {entry.path: blobs[entry.blob_id] for entry in entries}


# -- the Protocol -----------------------------------------------------------------


def test_pygit_service_is_a_git_service(service: PygitService) -> None:
    as_protocol: GitService = service
    clock: Clock = CLOCK
    assert as_protocol is service
    assert clock.now() == AT


def test_clocks() -> None:
    now = SystemClock().now()
    assert now.utcoffset() == timedelta(0)
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)
    with pytest.raises(ValueError, match="timezone-aware"):
        FixedClock(datetime(2026, 1, 1))


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


# -- resolve ----------------------------------------------------------------------


def test_resolve_names_of_every_kind(service: PygitService) -> None:
    assert err(service.resolve("main")) == NotFound("commit 'main'")
    assert isinstance(err(service.resolve("HEAD")), NotFound)

    first = commit(service, None, [put("a.html", "one")])
    second = commit(service, first, [put("a.html", "two")])
    git(service, "tag", "light", first)
    git(
        service,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.org",
        "tag",
        "-a",
        "-m",
        "annotated",
        "heavy",
        first,
    )
    # A tag named like a branch must not shadow the branch.
    git(service, "tag", "main", first)

    assert ok(service.resolve("main")) == second
    assert ok(service.resolve("refs/heads/main")) == second
    assert ok(service.resolve("HEAD")) == second
    assert ok(service.resolve("light")) == first
    assert ok(service.resolve("heavy")) == first
    assert ok(service.resolve("refs/tags/heavy")) == first
    assert ok(service.resolve(first[:10])) == first
    assert ok(service.resolve(second.upper())) == second
    assert ok(service.resolve("refs/heads/main~1")) == first

    assert isinstance(err(service.resolve("nope")), NotFound)
    assert isinstance(err(service.resolve("0" * 40)), NotFound)
    tree = git(service, "rev-parse", f"{first}^{{tree}}").decode().strip()
    not_commit = err(service.resolve(tree))
    assert isinstance(not_commit, GitFailure)
    assert "tree" in not_commit.reason
    assert isinstance(err(service.resolve("a..b")), GitFailure)


# -- list_tree and read_blobs ------------------------------------------------------


NESTED = {
    "top.html": "<p>top</p>",
    "areas/deploy/rollback.html": "<p>rollback</p>",
    "areas/deploy/z/deep/er.html": "<p>deep</p>",
    "areas/dépôt/日本語.html": "<p>ünïcödé 日本語 🚀</p>",
    "areas/a-b.html": "<p>dash sorts before slash in git, not here</p>",
    "archive/2026/old.html": "<p>old</p>",
}


def test_list_tree_nested_and_multibyte(service: PygitService) -> None:
    sha = commit(service, None, [put(path, text) for path, text in NESTED.items()])
    entries = ok(service.list_tree(sha))

    assert [entry.path for entry in entries] == sorted(NESTED)
    assert all(entry.mode == FILE_MODE_BLOB for entry in entries)
    assert tree_bytes(service, sha) == {p: t.encode("utf-8") for p, t in NESTED.items()}

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


def test_list_tree_of_empty_and_missing_commits(service: PygitService) -> None:
    root = commit(service, None, [])
    assert ok(service.list_tree(root)) == ()
    assert isinstance(err(service.list_tree("1" * 40)), NotFound)


def test_read_blobs_batches_and_skips_what_git_lacks(service: PygitService) -> None:
    sha = commit(service, None, [put("a.html", "alpha"), put("b/c.html", "γάμμα")])
    entries = {entry.path: entry.blob_id for entry in ok(service.list_tree(sha))}
    tree_id = git(service, "rev-parse", f"{sha}^{{tree}}").decode().strip()
    missing = "f" * 40

    blobs = ok(service.read_blobs([entries["a.html"], missing, entries["b/c.html"], tree_id]))
    assert blobs == {entries["a.html"]: b"alpha", entries["b/c.html"]: "γάμμα".encode()}
    assert ok(service.read_blobs([])) == {}
    assert isinstance(err(service.read_blobs(["abc123"])), GitFailure)


# -- changed_paths ----------------------------------------------------------------


def test_changed_paths_lists_both_sides_of_a_rename(service: PygitService) -> None:
    first = commit(
        service,
        None,
        [put("keep.html", "same"), put("a/old.html", "moving"), put("edit.html", "v1")],
    )
    second = commit(
        service,
        first,
        [
            drop("a/old.html"),
            put("b/new.html", "moving"),
            put("edit.html", "v2"),
            put("added/ü.html", "new"),
        ],
    )
    expected = ("a/old.html", "added/ü.html", "b/new.html", "edit.html")
    assert ok(service.changed_paths(first, second)) == expected
    assert ok(service.changed_paths(second, first)) == expected
    assert ok(service.changed_paths(second, second)) == ()
    assert isinstance(err(service.changed_paths(first, "2" * 40)), NotFound)


def test_changed_paths_sees_a_mode_change(service: PygitService) -> None:
    first = commit(service, None, [put("run.sh", "#!/bin/sh\n")])
    repo = pygit2.Repository(service.path)
    parent = repo[first].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    blob = index["run.sh"].id
    index.add(pygit2.IndexEntry("run.sh", blob, pygit2.enums.FileMode.BLOB_EXECUTABLE))
    sig = pygit2.Signature("t", "t@example.org", 0, 0)
    second = repo.create_commit(None, sig, sig, "chmod", index.write_tree(repo), [parent.id])
    assert ok(service.changed_paths(first, str(second))) == ("run.sh",)


# -- commit -----------------------------------------------------------------------


def test_commit_builds_on_the_parent_tree(service: PygitService) -> None:
    first = commit(service, None, [put("a.html", "a"), put("d/b.html", "b")], "first")
    second = commit(service, first, [put("d/c.html", "c"), drop("a.html")], "second")

    assert ok(service.resolve("main")) == second
    assert tree_bytes(service, second) == {"d/b.html": b"b", "d/c.html": b"c"}
    info = ok(service.commit_info(second))
    assert info.parents == (first,)
    assert info.author == AUTHOR
    assert info.time == AT
    assert info.time.utcoffset() == timedelta(hours=2)


def test_commit_with_nothing_to_change_returns_the_parent(service: PygitService) -> None:
    first = commit(service, None, [put("a.html", "a")])
    assert commit(service, first, []) == first
    assert commit(service, first, [drop("never/was.html"), drop("a.html/x")]) == first
    assert commit(service, first, [put("a.html", "a")]) == first
    assert ok(service.commits_between(None, "main")) == (first,)


def test_empty_change_set_on_a_moved_ref_is_still_refused(service: PygitService) -> None:
    first = commit(service, None, [put("a.html", "a")])
    second = commit(service, first, [put("a.html", "b")])
    assert err(service.commit("main", first, [], "noop", AUTHOR, AT)) == RefMoved(
        "main", first, second
    )


def test_later_change_to_the_same_path_wins(service: PygitService) -> None:
    sha = commit(service, None, [put("x.html", "1"), put("x.html", "2")])
    assert tree_bytes(service, sha) == {"x.html": b"2"}
    again = commit(service, sha, [drop("x.html"), put("x.html", "3")])
    assert tree_bytes(service, again) == {"x.html": b"3"}


def test_a_write_keeps_the_mode_of_the_file_it_replaces(service: PygitService) -> None:
    first = commit(service, None, [put("run.sh", "v1")])
    repo = pygit2.Repository(service.path)
    parent = repo[first].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    index.add(
        pygit2.IndexEntry("run.sh", index["run.sh"].id, pygit2.enums.FileMode.BLOB_EXECUTABLE)
    )
    sig = pygit2.Signature("t", "t@example.org", 0, 0)
    chmod = str(
        repo.create_commit("refs/heads/main", sig, sig, "x", index.write_tree(repo), [first])
    )

    rewritten = commit(service, chmod, [put("run.sh", "v2"), put("new.sh", "n")])
    modes = {entry.path: entry.mode for entry in ok(service.list_tree(rewritten))}
    assert modes == {"new.sh": FILE_MODE_BLOB, "run.sh": FILE_MODE_EXECUTABLE}


@pytest.mark.parametrize(
    "changes",
    [
        [put("areas", "a file where a directory is")],
        [put("areas/deploy/x.html/inner.html", "a directory where a file is")],
    ],
)
def test_file_directory_collisions_are_refused(
    service: PygitService, changes: list[PathChange]
) -> None:
    first = commit(service, None, [put("areas/deploy/x.html", "x")])
    failure = err(service.commit("main", first, changes, "collide", AUTHOR, AT))
    assert isinstance(failure, GitFailure)
    assert "collides" in failure.reason
    assert ok(service.resolve("main")) == first


def test_a_collision_cleared_earlier_in_the_same_commit_is_fine(service: PygitService) -> None:
    first = commit(service, None, [put("notes", "a file")])
    second = commit(service, first, [drop("notes"), put("notes/one.html", "now a directory")])
    assert tree_bytes(service, second) == {"notes/one.html": b"now a directory"}


@pytest.mark.parametrize(
    "path",
    ["../escape.html", "/abs.html", "a\\b.html", ".git/config", "a/.GIT/x", "a//b", "a/./b", ""],
)
def test_refused_paths_commit_nothing(service: PygitService, path: str) -> None:
    first = commit(service, None, [put("a.html", "a")])
    objects_before = git(service, "count-objects", "-v")
    failure = err(
        service.commit("main", first, [put("fine.html", "x"), put(path, "bad")], "m", AUTHOR, AT)
    )
    assert isinstance(failure, GitFailure)
    assert failure.operation == "commit"
    assert ok(service.resolve("main")) == first
    assert git(service, "count-objects", "-v") == objects_before
    assert isinstance(err(service.commit("main", first, [drop(path)], "m", AUTHOR, AT)), GitFailure)


def test_a_naive_time_is_refused(service: PygitService) -> None:
    naive = datetime(2026, 1, 1, 0, 0)
    failure = err(service.commit("main", None, [put("a.html", "a")], "m", AUTHOR, naive))
    assert isinstance(failure, GitFailure)
    assert isinstance(err(service.resolve("main")), NotFound)


def test_invalid_ref_name_is_refused(service: PygitService) -> None:
    failure = err(service.commit("bad name", None, [put("a.html", "a")], "m", AUTHOR, AT))
    assert isinstance(failure, GitFailure)


def test_commit_on_a_nested_branch_name(service: PygitService) -> None:
    sha = commit(service, None, [put("a.html", "a")], ref="sleep/run-1")
    assert ok(service.resolve("sleep/run-1")) == sha
    assert ok(service.resolve("refs/heads/sleep/run-1")) == sha


def _golden_commit(root: Path) -> tuple[str, str]:
    svc = ok(PygitService.init(root, bare=True))
    first = ok(
        svc.commit(
            "main",
            None,
            [
                put("areas/deploy/rollback.html", "<mark>Roll back first.</mark>"),
                put("ü.html", "ü"),
            ],
            "memory: add rollback\n\nMemhtml-Op: put\n",
            AUTHOR,
            CLOCK.now(),
        )
    )
    second = ok(svc.commit("main", first, [drop("ü.html")], "memory: drop ü", AUTHOR, CLOCK.now()))
    return first, second


def test_commit_ids_are_deterministic(tmp_path: Path) -> None:
    first_run = _golden_commit(tmp_path / "one.git")
    second_run = _golden_commit(tmp_path / "two.git")
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


# -- compare-and-swap -------------------------------------------------------------


def test_second_writer_from_the_same_parent_gets_ref_moved(service: PygitService) -> None:
    base = commit(service, None, [put("base.html", "base")])
    first = commit(service, base, [put("one.html", "1")], "writer one")

    lost = err(service.commit("main", base, [put("two.html", "2")], "writer two", AUTHOR, AT))
    assert lost == RefMoved("main", base, first)
    assert ok(service.resolve("main")) == first
    history = ok(service.commits_between(None, "main"))
    assert history == (base, first)
    assert "two.html" not in tree_bytes(service, first)
    assert all(
        "writer two" not in ok(service.commit_info(sha)).message
        for sha in git(service, "rev-list", "--all").decode().split()
    )

    retried = commit(service, first, [put("two.html", "2")], "writer two")
    assert ok(service.commits_between(None, "main")) == (base, first, retried)
    assert set(tree_bytes(service, retried)) == {"base.html", "one.html", "two.html"}


def test_ref_moved_covers_a_missing_ref_and_an_unexpected_one(service: PygitService) -> None:
    root = commit(service, None, [put("a.html", "a")])
    assert err(service.commit("main", None, [put("b.html", "b")], "m", AUTHOR, AT)) == RefMoved(
        "main", None, root
    )
    assert err(service.commit("other", root, [put("b.html", "b")], "m", AUTHOR, AT)) == RefMoved(
        "other", root, None
    )
    assert isinstance(err(service.resolve("other")), NotFound)
    missing_parent = err(service.commit("main", "3" * 40, [put("b.html", "b")], "m", AUTHOR, AT))
    assert isinstance(missing_parent, NotFound)
    assert ok(service.resolve("main")) == root


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


WRITERS = 4
COMMITS_EACH = 25


def _race_writer(git_dir: str, writer: int, start: Barrier, retries: Queue[int]) -> None:
    svc = ok(PygitService.open(git_dir))
    lost = 0
    start.wait()
    for n in range(COMMITS_EACH):
        change = [put(f"w{writer}/c{n:02d}.html", f"writer {writer} commit {n}")]
        while True:
            tip = ok(svc.resolve("main"))
            result = svc.commit("main", tip, change, f"w{writer} c{n}", AUTHOR, AT)
            if is_successful(result):
                break
            assert isinstance(unsafe_perform_io(result.failure()), RefMoved), result
            lost += 1
    retries.put(lost)


@pytest.mark.slow
def test_racing_processes_lose_no_commit(service: PygitService) -> None:
    root = commit(service, None, [put("root.html", "root")])
    # spawn, not fork: a forked child would inherit libgit2's state from this process.
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(WRITERS)
    retries: Queue[int] = context.Queue()
    writers = [
        context.Process(target=_race_writer, args=(service.path, w, start, retries))
        for w in range(WRITERS)
    ]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=120)
    assert [process.exitcode for process in writers] == [0] * WRITERS
    lost = sum(retries.get(timeout=5) for _ in writers)
    print(f"{lost} lost compare-and-swaps retried")

    history = ok(service.commits_between(None, "main"))
    assert len(history) == 1 + WRITERS * COMMITS_EACH
    assert history[0] == root
    for older, newer in itertools.pairwise(history):
        assert ok(service.commit_info(newer)).parents == (older,)
    expected = {"root.html"} | {
        f"w{w}/c{n:02d}.html" for w in range(WRITERS) for n in range(COMMITS_EACH)
    }
    assert set(tree_bytes(service, history[-1])) == expected
    fsck = subprocess.run(
        ["git", "--git-dir", service.path, "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr
    assert b"error" not in fsck.stdout + fsck.stderr


# -- branches ---------------------------------------------------------------------


def test_create_and_delete_branches(service: PygitService) -> None:
    root = commit(service, None, [put("a.html", "a")])
    ok(service.create_branch("sleep/run", root))
    assert ok(service.resolve("sleep/run")) == root

    exists = err(service.create_branch("sleep/run", "main"))
    assert isinstance(exists, GitFailure)
    assert "exists" in exists.reason
    assert isinstance(err(service.create_branch("x", "4" * 40)), NotFound)
    assert isinstance(err(service.create_branch("bad name", root)), GitFailure)

    ok(service.delete_branch("sleep/run"))
    assert isinstance(err(service.resolve("sleep/run")), NotFound)
    missing = err(service.delete_branch("sleep/run"))
    assert isinstance(missing, GitFailure)
    checked_out = err(service.delete_branch("main"))
    assert isinstance(checked_out, GitFailure)
    assert ok(service.resolve("main")) == root


# -- history ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "trailers"),
    [
        (
            "memory: put x\n\nBody text.\n\nMemhtml-Op: put\nMemhtml-Path: a/x.html\n",
            (("Memhtml-Op", "put"), ("Memhtml-Path", "a/x.html")),
        ),
        ("Memhtml-Op: put\n", ()),
        ("subject\n\nJust prose: not a trailer block\nsecond line\n", ()),
        (
            "subject\n\nReason: a long reason\n  that wraps\nSigned-off-by: A <a@example.org>",
            (("Reason", "a long reason that wraps"), ("Signed-off-by", "A <a@example.org>")),
        ),
        ("subject\n\nKey: one\nKey: two\n", (("Key", "one"), ("Key", "two"))),
        ("subject\n\n\n\nAfter:  gaps  \n\n", (("After", "gaps"),)),
        ("subject\n\nbody\n\n  indented: no\n", ()),
    ],
)
def test_commit_info_parses_trailers_in_order(
    service: PygitService, message: str, trailers: tuple[tuple[str, str], ...]
) -> None:
    sha = commit(service, None, [put("x.html", "x")], message)
    info = ok(service.commit_info(sha))
    assert info.sha == sha
    assert info.message == message
    assert info.parents == ()
    assert info.trailers == trailers


def test_commits_between_is_oldest_first(service: PygitService) -> None:
    shas: list[str] = []
    parent: str | None = None
    for n in range(5):
        parent = commit(service, parent, [put(f"{n}.html", str(n))], f"c{n}")
        shas.append(parent)
    assert ok(service.commits_between(None, shas[-1])) == tuple(shas)
    assert ok(service.commits_between(shas[1], "main")) == tuple(shas[2:])
    assert ok(service.commits_between(shas[-1], shas[-1])) == ()
    assert ok(service.commits_between(shas[-1], shas[1])) == ()
    assert isinstance(err(service.commits_between("5" * 40, "main")), NotFound)


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


def test_commits_touching_is_newest_first_and_limited(service: PygitService) -> None:
    c1 = commit(service, None, [put("a/x.html", "1"), put("b.html", "b")], "c1")
    c2 = commit(service, c1, [put("b.html", "b2")], "c2")
    c3 = commit(service, c2, [put("a/x.html", "3")], "c3")
    c4 = commit(service, c3, [drop("a/x.html")], "c4")
    c5 = commit(service, c4, [put("b.html", "b3")], "c5")

    def touching(path: str, limit: int = 10) -> list[str]:
        return [info.sha for info in ok(service.commits_touching("main", path, limit))]

    assert touching("a/x.html") == [c4, c3, c1]
    assert touching("a/x.html", 2) == [c4, c3]
    assert touching("a") == [c4, c3, c1]
    assert touching("b.html") == [c5, c2, c1]
    assert touching("never.html") == []
    assert touching("a/x.html", 0) == []
    assert [i.message for i in ok(service.commits_touching(c3, "b.html", 5))] == ["c2", "c1"]
    assert isinstance(err(service.commits_touching("main", "../x", 5)), GitFailure)
    assert isinstance(err(service.commits_touching("nope", "b.html", 5)), NotFound)


# -- the model law ----------------------------------------------------------------

_DIRS = ["", "a/", "a/b/", "ü/ñ/", "日本/"]
_NAMES = ["x.html", "y.html", "é.html", "z"]
_PATHS = [d + n for d in _DIRS for n in _NAMES]

_steps = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(_PATHS),
            st.none() | st.text(max_size=20).map(lambda text: text.encode("utf-8")),
        ),
        max_size=8,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_steps)
def test_list_tree_after_commits_equals_the_model(
    steps: list[list[tuple[str, bytes | None]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        svc = ok(PygitService.init(Path(tmp) / "model.git", bare=True))
        model: dict[str, bytes] = {}
        tip: str | None = None
        for number, step in enumerate(steps):
            tip = ok(
                svc.commit(
                    "main",
                    tip,
                    [PathChange(path, data) for path, data in step],
                    f"step {number}",
                    AUTHOR,
                    AT,
                )
            )
            for path, data in step:
                if data is None:
                    model.pop(path, None)
                else:
                    model[path] = data
            assert tip is not None
            assert tree_bytes(svc, tip) == model
            entries = ok(svc.list_tree(tip))
            assert list(entries) == sorted(entries, key=lambda entry: entry.path)
            assert all(isinstance(entry, TreeEntry) for entry in entries)
