"""A process killed between a merge commit landing and the checkout following leaves
a mark the next command finishes, as it does for a one-parent write.

The mark names the write's expected parent; a merge commit (``memhtml sync``) has two,
and the next command must still recognise it as the write the mark stands for.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from returns.io import IOResult, IOSuccess

from memhtml.adapters.journal_files import JournalFiles
from memhtml.contracts.services import PathChange
from memhtml.store import Store, StoreDeps, checkout_behind, finish_checkout
from memhtml.store.errors import StoreError
from memhtml.store.landing import Draft, land
from tests.integration.store.store_support import AUTHOR, CLOCK, git_cli, make_store, ok, tip


class Killed(BaseException):
    """The process dying: nothing after it runs, nothing catches it."""


class DiesAfterMerge:
    """The store's git, dying as soon as a merge commit has moved the branch."""

    def __init__(self, real: object) -> None:
        self._real = real

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def commit_merge(self, *args: object, **kwargs: object) -> object:
        landed = self._real.commit_merge(*args, **kwargs)  # type: ignore[attr-defined]
        raise Killed(landed)


def _status(root: Path) -> list[str]:
    return [line for line in git_cli(root, "status", "--porcelain").splitlines() if line]


def _side_commit(root: Path, parent: str, path: str, text: str) -> str:
    """A commit on ``parent`` that only a remote clone made: not on the branch."""
    repo = pygit2.Repository(str(root))
    base = repo[parent].peel(pygit2.Commit)
    builder = repo.TreeBuilder(base.tree)
    folder, name = path.split("/", 1)
    assert folder not in base.tree
    sub = repo.TreeBuilder()
    sub.insert(name, repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
    builder.insert(folder, sub.write(), pygit2.GIT_FILEMODE_TREE)
    who = pygit2.Signature("Other Clone", "other@example.org", 0, 0)
    return str(repo.create_commit(None, who, who, "memhtml write: elsewhere",
                                  builder.write(), [base.id]))


@pytest.mark.parametrize("deleting", [False, True])
def test_a_merge_killed_before_the_checkout_followed_is_finished(tmp_path: Path,
                                                                 deleting: bool) -> None:
    root = tmp_path / "repo"
    store, git = make_store(root)
    base = tip(store)
    assert base is not None
    theirs = _side_commit(root, base, "remote/theirs.txt", "from the other clone\n")
    ours_path = "notes/ours.txt"
    (root / "notes").mkdir()
    (root / ours_path).write_text("ours\n", encoding="utf-8")
    git_cli(root, "add", ours_path)
    git_cli(root, "-c", "user.name=P", "-c", "user.email=p@example.org", "commit", "-qm", "ours")
    ours = tip(store)
    assert ours is not None
    changes: tuple[PathChange, ...] = (PathChange("remote/theirs.txt", b"from the other clone\n"),)
    if deleting:
        changes += (PathChange(ours_path, None),)
    before = {"remote/theirs.txt": None, ours_path: b"ours\n"} if deleting else {
        "remote/theirs.txt": None}

    def derive() -> IOResult[Draft, StoreError]:
        return IOSuccess(Draft(parent=ours, changes=changes, ops=("sync",),
                               subject="merged", body="", merge_parent=theirs,
                               before=before))

    dying = Store(StoreDeps(git=DiesAfterMerge(git), clock=CLOCK,  # type: ignore[arg-type]
                            author=AUTHOR, snapshots=store.deps.snapshots, local=store.deps.local,
                            worktree=store.deps.worktree, journals=store.deps.journals))
    with pytest.raises(Killed):
        land(dying.deps, derive)
    merged = tip(store)
    assert merged != ours, "the merge landed before the process died"
    assert [m.commit for m in JournalFiles(root / ".git").read_all()][-1] is None
    assert _status(root), "the checkout is behind the merge"

    recovered = ok(finish_checkout(store.deps))
    assert "remote/theirs.txt" in recovered.synced
    assert _status(root) == []
    assert ok(checkout_behind(store.deps)) == ()
    assert (root / "remote" / "theirs.txt").read_text(encoding="utf-8") == (
        "from the other clone\n")
    assert (root / ours_path).exists() is not deleting
    mark = JournalFiles(root / ".git").read_all()[-1]
    assert (mark.commit, mark.synced) == (merged, True)
