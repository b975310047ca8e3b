"""The checkout never falls behind silently.

A write commits in memory and moves the branch by compare-and-swap; the checkout's
index and working tree follow. These tests take away each thing that step relies
on (git's index lock, the process itself) and check that nothing a person does next
with plain git can revert a landed memory, and that their own edits are kept.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.adapters.journal_files import JournalFiles
from memhtml.store import (
    Refused,
    Store,
    StoreDeps,
    WriteInput,
    checkout_behind,
    finish_checkout,
    fix_behind,
    label,
    move,
    write,
)
from memhtml.store.errors import UncommittedEdits
from tests.integration.store.store_support import err, git_cli, make_store, ok, tip


def _status(root: Path) -> list[str]:
    return [line for line in git_cli(root, "status", "--porcelain").splitlines() if line]


def _hand_commit(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    git_cli(root, "add", path)
    git_cli(root, "-c", "user.name=Person", "-c", "user.email=p@example.org",
            "commit", "-q", "-m", f"hand edit {path}")


def _system_clock(store: Store) -> Store:
    """The same store with a clock that really waits (the lock tests need time)."""
    deps = store.deps
    return Store(StoreDeps(git=deps.git, clock=SystemClock(), author=deps.author,
                           branch=deps.branch, snapshots=deps.snapshots, local=deps.local,
                           worktree=deps.worktree, journals=deps.journals))


def test_a_write_leaves_a_clean_checkout_and_a_landed_mark(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    root = tmp_path / "repo"
    assert _status(root) == []
    mark = JournalFiles(root / ".git").read_all()[-1]
    assert (mark.commit, mark.synced) == (landed.commit, True)


@pytest.mark.parametrize("door", ["write", "move"])
def test_a_file_where_the_write_s_folder_belongs_refuses_the_write_naming_it(
        tmp_path: Path, door: str) -> None:
    """A person's untracked ``areas/todo`` file, and a write into ``areas/todo/``: the
    commit would land while the checkout cannot hold the file, and the person's next
    ``git commit -a`` would delete the memory. Refused before anything is committed,
    the file in the way named and left as it is."""
    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    (root / "areas" / "todo").write_bytes(b"the person's list\n")
    before = tip(store)
    refused = err(write(store, WriteInput(title="Ladder", claim="In the shed.",
                                          directory="areas/todo"))
                  if door == "write" else move(store, landed.primary, "areas/todo/kettle.html"))
    assert isinstance(refused, UncommittedEdits) and refused.paths == ("areas/todo",), refused
    assert "move it aside" in refused.violations[0]
    assert tip(store) == before
    assert (root / "areas" / "todo").read_bytes() == b"the person's list\n"
    assert _status(root) == ["?? areas/todo"]


def test_a_memory_a_person_made_executable_stays_executable_when_a_door_rewrites_it(
        tmp_path: Path) -> None:
    """A door rewrites the file as ``git checkout`` would: with the tree entry's mode,
    so the person's ``git commit -a`` finds no mode change to commit."""
    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    (root / landed.primary).chmod(0o755)
    git_cli(root, "-c", "user.name=Person", "-c", "user.email=p@example.org",
            "commit", "-q", "-am", "executable, for a reason of the person's")
    ok(label(store, landed.primary, "topic:kitchen"))
    assert _status(root) == []
    assert git_cli(root, "ls-files", "-s", landed.primary).startswith("100755 ")
    assert (root / landed.primary).stat().st_mode & 0o111


def test_a_held_index_lock_refuses_the_write_and_commits_nothing(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    store = _system_clock(store)
    root = tmp_path / "repo"
    before = tip(store)
    marks = JournalFiles(root / ".git").read_all()
    (root / ".git" / "index.lock").write_bytes(b"")
    started = time.monotonic()
    failure = err(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert time.monotonic() - started >= 1.5, "the lock is waited for before refusing"
    assert isinstance(failure, Refused)
    assert "index lock" in failure.reason
    assert tip(store) == before
    assert JournalFiles(root / ".git").read_all() == marks, "a refused write leaves no mark"


def test_a_lock_released_while_waiting_lets_the_write_through(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    store = _system_clock(store)
    root = tmp_path / "repo"
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    release = threading.Timer(0.3, lock.unlink)
    release.start()
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    release.join()
    assert not landed.pending
    assert _status(root) == []


def test_a_lock_taken_after_the_commit_leaves_a_mark_the_next_command_finishes(
        tmp_path: Path) -> None:
    store, git = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    lock = root / ".git" / "index.lock"

    class LockAfterCommit:
        """git that is grabbed by a person's git right after the branch moves."""

        def __getattr__(self, name: str) -> object:
            return getattr(git, name)

        def commit(self, *args: object, **kwargs: object) -> object:
            landed = git.commit(*args, **kwargs)  # type: ignore[arg-type]
            lock.write_bytes(b"")
            return landed

    deps = store.deps
    racing = Store(StoreDeps(git=LockAfterCommit(), clock=deps.clock,  # type: ignore[arg-type]
                             author=deps.author, snapshots=deps.snapshots, local=deps.local,
                             worktree=deps.worktree, journals=deps.journals))
    landed = ok(write(racing, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.pending
    mark = JournalFiles(root / ".git").read_all()[-1]
    assert (mark.commit, mark.synced) == (landed.commit, False)
    lock.unlink()
    # The person's git sees the index as it was: a staged deletion of the memory.
    assert any("kettle.html" in line for line in _status(root))
    fixed = ok(finish_checkout(store.deps))
    assert fixed.synced == (landed.primary,)
    assert _status(root) == []
    mark = JournalFiles(root / ".git").read_all()[-1]
    assert mark.synced


def test_an_interrupted_sync_is_found_by_doctor_and_fixed_without_touching_edits(
        tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    _hand_commit(root, "notes/mine.txt", "a person's file\n")
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    # What a kill between the branch moving and the checkout following leaves, with
    # the mark lost too: index and file as they were before the memhtml commit.
    git_cli(root, "read-tree", "HEAD~1")
    (root / landed.primary).unlink()
    # ... and the person's own uncommitted work, staged and unstaged.
    (root / "notes" / "mine.txt").write_text("edited, not staged\n", encoding="utf-8")
    (root / "notes" / "staged.txt").write_text("staged, new\n", encoding="utf-8")
    git_cli(root, "add", "notes/staged.txt")

    behind = ok(checkout_behind(store.deps))
    assert [(b.path, b.index, b.file) for b in behind] == [(landed.primary, True, True)]
    assert behind[0].commit == landed.commit

    synced = ok(fix_behind(store.deps.git, store.deps.ref, behind))
    assert synced.paths == (landed.primary,)
    assert ok(checkout_behind(store.deps)) == ()
    assert set(_status(root)) == {"A  notes/staged.txt", " M notes/mine.txt"}
    assert (root / "notes" / "mine.txt").read_text(encoding="utf-8") == "edited, not staged\n"

    git_cli(root, "-c", "user.name=Person", "-c", "user.email=p@example.org",
            "commit", "-qam", "the person's commit")
    tree = git_cli(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert landed.primary in tree
    assert "notes/staged.txt" in tree


def test_a_persons_modified_file_is_kept_and_the_door_refuses_it(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    first = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert first.primary is not None
    (root / first.primary).write_text("my own draft\n", encoding="utf-8")
    from memhtml.store import label
    from memhtml.store.errors import UncommittedEdits

    before = tip(store)
    refused = err(label(store, first.primary, "topic:kitchen"))
    assert isinstance(refused, UncommittedEdits)
    assert refused.paths == (first.primary,)
    assert tip(store) == before
    assert (root / first.primary).read_text(encoding="utf-8") == "my own draft\n"
    assert [j for j in JournalFiles(root / ".git").read_all() if j.commit is None] == []


def test_a_commit_made_from_a_stale_index_is_undone_by_the_next_command(
        tmp_path: Path) -> None:
    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    stale_index = (root / ".git" / "index").read_bytes()
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    # A person's git commit that read the index before the write: it commits that
    # index (without the memory) on top of the memhtml commit.
    (root / ".git" / "index").write_bytes(stale_index)
    (root / "notes").mkdir()
    (root / "notes" / "mine.txt").write_text("mine\n", encoding="utf-8")
    git_cli(root, "add", "notes/mine.txt")
    git_cli(root, "-c", "user.name=Person", "-c", "user.email=p@example.org",
            "commit", "-qm", "my notes")
    assert landed.primary not in git_cli(root, "ls-tree", "-r", "--name-only", "HEAD")
    person = git_cli(root, "rev-parse", "HEAD").strip()

    recovered = ok(finish_checkout(store.deps))
    assert recovered.restored == (landed.primary,)
    assert recovered.reverted_by == (person,)
    tree = git_cli(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert landed.primary in tree and "notes/mine.txt" in tree
    assert _status(root) == []
    subject = git_cli(root, "log", "-1", "--format=%s")
    assert subject.startswith(f"memhtml rewrite-stale: 1 path(s) undone by {person[:10]}")
    # Nothing more to do on the next command.
    assert ok(finish_checkout(store.deps)) == type(recovered)()


def test_a_deliberate_archive_is_not_read_as_an_undo(tmp_path: Path) -> None:
    from memhtml.store import archive

    store, _ = make_store(tmp_path / "repo")
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    ok(archive(store, landed.primary))
    recovered = ok(finish_checkout(store.deps))
    assert recovered.restored == ()
    assert landed.primary not in git_cli(tmp_path / "repo", "ls-tree", "-r", "--name-only",
                                         "HEAD").split()


class Killed(BaseException):
    """The process dying: nothing after it runs, nothing catches it."""


def test_a_write_killed_before_its_checkout_followed_is_restored_after_a_stale_commit(
        tmp_path: Path) -> None:
    """Killed after the branch moved and before any file was written: the person's
    next commit (from their index, which never held the memory) undoes the write with
    the file absent, as a deliberate ``git rm`` would leave it. The mark says the
    checkout never followed, so that is no sign of a chosen undo: restored."""
    store, git = make_store(tmp_path / "repo")
    root = tmp_path / "repo"

    class DiesAfterCommit:
        def __getattr__(self, name: str) -> object:
            return getattr(git, name)

        def commit(self, *args: object, **kwargs: object) -> object:
            raise Killed(git.commit(*args, **kwargs))  # type: ignore[arg-type]

    deps = store.deps
    dying = Store(StoreDeps(git=DiesAfterCommit(), clock=deps.clock,  # type: ignore[arg-type]
                            author=deps.author, snapshots=deps.snapshots, local=deps.local,
                            worktree=deps.worktree, journals=deps.journals))
    with pytest.raises(Killed):
        write(dying, WriteInput(title="Kettle", claim="Descaled on Mondays."))
    written = git_cli(root, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert len(written) == 1 and not (root / written[0]).exists()
    assert not JournalFiles(root / ".git").read_all()[-1].synced
    _hand_commit(root, "notes/mine.txt", "mine\n")
    assert written[0] not in git_cli(root, "ls-tree", "-r", "--name-only", "HEAD").split()

    recovered = ok(finish_checkout(store.deps))
    assert recovered.restored == (written[0],)
    assert written[0] in git_cli(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert _status(root) == []


def test_a_half_written_mark_a_kill_left_is_swept_once_abandoned(tmp_path: Path) -> None:
    import os

    from memhtml.adapters.journal_files import ABANDONED_TEMPORARY_SECONDS, pending_dir

    store, _ = make_store(tmp_path / "repo")
    system = _system_clock(store)
    folder = pending_dir(tmp_path / "repo" / ".git")
    folder.mkdir(parents=True, exist_ok=True)
    old, young = folder / "4242-0123456789ab.tmp", folder / "4243-0123456789ab.tmp"
    old.write_bytes(b"")
    young.write_bytes(b"{\"ref\": ")
    long_ago = time.time() - ABANDONED_TEMPORARY_SECONDS - 5
    os.utime(old, (long_ago, long_ago))
    ok(finish_checkout(system.deps))
    assert not old.exists()
    assert young.exists(), "a mark being written right now is left alone"


def test_a_mark_whose_parent_is_gone_is_dropped_and_blocks_nothing(tmp_path: Path) -> None:
    """A killed write's mark names a parent the person later amended away and pruned:
    that write never landed, and the marks after it are still settled and watched."""
    from memhtml.contracts.journals import PathStep
    from memhtml.store.checkout import write_journal

    store, _ = make_store(tmp_path / "repo")
    root = tmp_path / "repo"
    marks = JournalFiles(root / ".git")
    gone = ok(write_journal(marks, store.deps.ref, "1" * 40,
                            [PathStep("areas/inbox/never.html", None, "2" * 40)], 0.0))
    stale_index = (root / ".git" / "index").read_bytes()
    landed = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    assert landed.primary is not None
    (root / ".git" / "index").write_bytes(stale_index)
    git_cli(root, "-c", "user.name=Person", "-c", "user.email=p@example.org",
            "commit", "-q", "--allow-empty", "-m", "from a stale index")
    recovered = ok(finish_checkout(store.deps))
    assert recovered.restored == (landed.primary,)
    assert not marks.path_of(gone).exists()
    assert _status(root) == []
