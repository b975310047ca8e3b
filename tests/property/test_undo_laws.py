"""Laws of the recovery step against a person's own git, for any door and any undo.

After a door lands, the person undoes it one of four ways: ``git revert`` (whose
message names the door's commit), checking the old versions out by hand
(``git checkout HEAD~1 -- path``, ``git rm`` for a path the door added) and
committing, a commit made from the index as it was before the door (what a
``git commit`` started just before the write commits), or a commit made in the
moment between the door's commit and its checkout following. The revert is the
person's choice: the next command leaves it, and adds no commit. Every other undo is
written back by the next command, which keeps the rest of that commit: a stale-index
commit cannot be told from one made by hand once its stray file is tidied away, and a
person's ``git commit`` must never silently undo a write. Either way the checkout
ends clean.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.io import IOResult

from memhtml.contracts.record import Link
from memhtml.store import (
    Landed,
    Store,
    StoreDeps,
    StoreError,
    WriteInput,
    archive,
    correct,
    finish_checkout,
    label,
    link,
    move,
    write,
)
from tests.integration.store.store_support import make_store, ok

PERSON = ("-c", "user.name=Person", "-c", "user.email=person@example.org")
Door = Callable[[Store, str, str], IOResult[Landed, StoreError]]

DOORS: dict[str, Door] = {
    "write": lambda s, _k, _l: write(s, WriteInput(title="Gate", claim="The gate sticks.")),
    "correct": lambda s, k, _l: correct(s, k, WriteInput(title="Kettle fixed",
                                                         claim="Descaled on Fridays.")),
    "archive": lambda s, k, _l: archive(s, k),
    "label": lambda s, k, _l: label(s, k, "person:ines-marechal"),
    "move": lambda s, k, _l: move(s, k, "areas/kitchen/"),
    "link": lambda s, k, lad: link(s, k, "relates_to", f"/{lad}"),
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *PERSON, *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _tree(root: Path) -> dict[str, str]:
    return _tree_at(root, "HEAD")


def _tree_at(root: Path, rev: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in _git(root, "ls-tree", "-r", "--full-tree", rev).splitlines():
        meta, path = line.split("\t", 1)
        found[path] = meta.split(" ")[2]
    return found


class _InTheWindow:
    """The store's git, with the person committing right after the door's commit moves
    the branch and before the checkout follows."""

    def __init__(self, real: object, root: Path, with_own_file: bool) -> None:
        self._real, self._root, self._own = real, root, with_own_file

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def commit(self, *args: object, **kwargs: object) -> object:
        landed = self._real.commit(*args, **kwargs)  # type: ignore[attr-defined]
        if self._own:
            (self._root / "notes").mkdir(exist_ok=True)
            (self._root / "notes" / "mine.txt").write_text("the person's own line\n",
                                                          encoding="utf-8")
            _git(self._root, "add", "notes/mine.txt")
        _git(self._root, "commit", "-q", "--allow-empty", "-m", "the person's, in the window")
        return landed


def _undo(root: Path, how: str, before: dict[str, str], after: dict[str, str],
          stale_index: bytes, with_own_file: bool) -> None:
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if with_own_file:
        (root / "notes").mkdir(exist_ok=True)
        (root / "notes" / "mine.txt").write_text("the person's own line\n", encoding="utf-8")
    if how == "stale":
        (root / ".git" / "index").write_bytes(stale_index)
    elif how == "revert":
        _git(root, "revert", "--no-edit", "HEAD")
        if with_own_file:
            _git(root, "add", "notes/mine.txt")
            _git(root, "commit", "-q", "--amend", "--no-edit")  # git's message stays
        return
    else:
        for path in changed:
            if path in before:
                _git(root, "checkout", "HEAD~1", "--", path)
            else:
                _git(root, "rm", "-q", "--", path)
    if with_own_file:
        _git(root, "add", "notes/mine.txt")
    _git(root, "commit", "-q", "--allow-empty", "-m", f"the person's {how}")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(door=st.sampled_from(sorted(DOORS)),
       how=st.sampled_from(["revert", "by hand", "stale", "window"]),
       with_own_file=st.booleans(), tidy=st.booleans())
def test_a_revert_stays_and_every_other_undo_is_written_back(
        door: str, how: str, with_own_file: bool, tidy: bool) -> None:
    """``tidy``: the person then stashes whatever the undo left in the checkout (the
    written file a stale-index commit leaves on disk, say)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "repo"
        store, _ = make_store(root)
        kettle = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
        ladder = ok(write(store, WriteInput(
            title="Ladder", claim="The ladder is in the shed.",
            links=(Link("relates_to", f"/{kettle.primary}"),))))
        assert kettle.primary is not None and ladder.primary is not None
        before = _tree(root)
        stale_index = (root / ".git" / "index").read_bytes()
        if how == "window":
            deps = store.deps
            racing = Store(StoreDeps(
                git=_InTheWindow(deps.git, root, with_own_file),  # type: ignore[arg-type]
                clock=deps.clock, author=deps.author, state_dir=deps.state_dir,
                worktree=deps.worktree))
            ok(DOORS[door](racing, kettle.primary, ladder.primary))
            after = _tree_at(root, "HEAD~1")  # the door's commit, under the person's
        else:
            ok(DOORS[door](store, kettle.primary, ladder.primary))
            after = _tree(root)
            _undo(root, how, before, after, stale_index, with_own_file)
        assert after != before
        if tidy:
            _git(root, "stash", "-q", "-u")
        undone = _tree(root)
        head = _git(root, "rev-parse", "HEAD")

        ok(finish_checkout(store.deps))

        now = _tree(root)
        own = {"notes/mine.txt"} if with_own_file else set()
        if how != "revert":
            assert {p: now.get(p) for p in after if p not in own} == {
                p: b for p, b in after.items() if p not in own}
            assert set(now) == set(after) | own
        else:
            assert now == undone
            assert _git(root, "rev-parse", "HEAD") == head
        assert own <= set(now)
        assert _git(root, "status", "--porcelain") == ""
