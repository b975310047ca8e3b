"""Laws of the recovery step against a person's own git, for any door and any undo.

After a door lands (a write door, or a sleep merge as a fast-forward or as a replay's
merge commit), the person undoes it one of five ways: ``git revert`` (of the door's
commit, of one of a merged run's commits, or ``-m 1`` of a replay's merge commit),
checking the old versions out by hand (``git checkout <before> -- path``, ``git rm``
for a path the door added) and committing, ``git mv`` of what the door added,
a commit made from the index as it was before the door (what a ``git commit``
started just before the write commits), or a commit made in the moment between the
door's commit and its checkout following.

Only the last two are a race, and only while the checkout proves it: the write never
reached the index (the window), or the written files are still on disk over an index
as the commit left it (a stale index, not tidied). Those are written back by the next
command, which keeps the rest of that commit. Every other undo is the person's: the
next command leaves it, adds no commit, and neither does a write after it. A stale
commit whose written files the person then stashed away reads as chosen too. Either
way the checkout ends clean.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.io import IOResult

from memhtml.adapters.clock import FixedClock
from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.record import Link
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
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
from tests.integration.store.store_support import CLOCK, make_store, ok

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
UNDOS = ("revert", "by hand", "mv", "stale", "window")
RACES = frozenset({"stale", "window"})


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
    """The store's git, with the person committing right after the door's commit (or a
    merge's move of main) lands and before the checkout follows."""

    def __init__(self, real: object, root: Path, with_own_file: bool) -> None:
        self._real, self._root, self._own = real, root, with_own_file
        self._fired = False

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def _person(self) -> None:
        """Once: the landing's commit, not the write-back that follows it."""
        if self._fired:
            return
        self._fired = True
        if self._own:
            (self._root / "notes").mkdir(exist_ok=True)
            (self._root / "notes" / "mine.txt").write_text("the person's own line\n",
                                                          encoding="utf-8")
            _git(self._root, "add", "notes/mine.txt")
        _git(self._root, "commit", "-q", "--allow-empty", "-m", "the person's, in the window")

    def commit(self, *args: object, **kwargs: object) -> object:
        landed = self._real.commit(*args, **kwargs)  # type: ignore[attr-defined]
        self._person()
        return landed

    def commit_merge(self, *args: object, **kwargs: object) -> object:
        landed = self._real.commit_merge(*args, **kwargs)  # type: ignore[attr-defined]
        self._person()
        return landed

    def move_ref(self, *args: object, **kwargs: object) -> object:
        moved = self._real.move_ref(*args, **kwargs)  # type: ignore[attr-defined]
        self._person()
        return moved


def _undo(root: Path, how: str, before_rev: str, revert: tuple[str, ...],
          stale_index: bytes, with_own_file: bool) -> None:
    """The person's undo of everything between ``before_rev`` and HEAD (``revert``: the
    ``git revert`` arguments for it), committed."""
    before, after = _tree_at(root, before_rev), _tree(root)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    added = [p for p in changed if p not in before]
    if with_own_file:
        (root / "notes").mkdir(exist_ok=True)
        (root / "notes" / "mine.txt").write_text("the person's own line\n", encoding="utf-8")
    if how == "stale":
        (root / ".git" / "index").write_bytes(stale_index)
    elif how == "revert":
        _git(root, "revert", "--no-edit", *revert)
        if with_own_file:
            _git(root, "add", "notes/mine.txt")
            _git(root, "commit", "-q", "--amend", "--no-edit")  # git's message stays
        return
    elif how == "mv":
        (root / "mine").mkdir(exist_ok=True)
        for path in added:
            _git(root, "mv", "--", path, f"mine/{path.replace('/', '--')}")
    else:
        for path in changed:
            if path in before:
                _git(root, "checkout", before_rev, "--", path)
            else:
                _git(root, "rm", "-q", "--", path)
    if with_own_file:
        _git(root, "add", "notes/mine.txt")
    _git(root, "commit", "-q", "--allow-empty", "-m", f"the person's {how}")


def _judged(root: Path, store: Store, how: str, tidy: bool, after: dict[str, str],
            with_own_file: bool) -> None:
    """Run the recovery and hold it to the law; then a write changes nothing of it."""
    if tidy:
        _git(root, "stash", "-q", "-u")
    undone = _tree(root)
    head = _git(root, "rev-parse", "HEAD")

    ok(finish_checkout(store.deps))

    now = _tree(root)
    own = {"notes/mine.txt"} if with_own_file else set()
    written_back = how == "window" or (how == "stale" and not tidy)
    if written_back:
        assert {p: now.get(p) for p in after if p not in own} == {
            p: b for p, b in after.items() if p not in own}
        assert set(now) == set(after) | own
    else:
        assert now == undone
        assert _git(root, "rev-parse", "HEAD") == head
    assert own <= set(now)
    assert _git(root, "status", "--porcelain") == ""

    later = ok(write(store, WriteInput(title="Later note", claim="A note written after.")))
    assert {p: b for p, b in _tree(root).items() if p not in later.paths} == now
    assert _git(root, "status", "--porcelain") == ""


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(door=st.sampled_from(sorted(DOORS)), how=st.sampled_from(UNDOS),
       with_own_file=st.booleans(), tidy=st.booleans())
def test_a_persons_undo_stays_and_only_a_proven_race_is_written_back(
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
        start = _git(root, "rev-parse", "HEAD").strip()
        stale_index = (root / ".git" / "index").read_bytes()
        if how == "window":
            deps = store.deps
            racing = Store(StoreDeps(
                git=_InTheWindow(deps.git, root, with_own_file),  # type: ignore[arg-type]
                clock=deps.clock, author=deps.author, snapshots=deps.snapshots, local=deps.local,
                worktree=deps.worktree, journals=deps.journals))
            ok(DOORS[door](racing, kettle.primary, ladder.primary))
            # The door's commit, under the person's (and the write-back the door's own
            # check made at once).
            after = _tree_at(root, _git(root, "rev-list", "--reverse", "--first-parent",
                                        f"{start}..HEAD").split()[0])
        else:
            ok(DOORS[door](store, kettle.primary, ladder.primary))
            after = _tree(root)
            _undo(root, how, "HEAD~1", ("HEAD",), stale_index, with_own_file)
        assert after != before
        _judged(root, store, how, tidy, after, with_own_file)


# -- the sleep merge ------------------------------------------------------------------------

RUN_AT = CLOCK.now() + timedelta(days=1)
TWICE = "Deploys to checkout-api happen on Tuesdays."


_KEPT: list[tempfile.TemporaryDirectory[str]] = []


@functools.cache
def _run_store() -> Path:
    """A store a sleep run has something to do in (two memories with one claim, which
    dedup-merge folds; a link to a memory the person deleted, which integrity drops;
    filler), with the run made and not merged: built once, copied per example."""
    folder = tempfile.TemporaryDirectory(prefix="undo-laws-")
    _KEPT.append(folder)  # removed when the session ends (its finalizer)
    root = Path(folder.name) / "repo"
    store, _ = make_store(root)
    ok(write(store, WriteInput(title="Deploy day", claim=TWICE)))
    ok(write(store, WriteInput(title="Deploy day again", claim=TWICE), allow_duplicate=True))
    kettle = ok(write(store, WriteInput(title="Kettle", claim="Descaled on Mondays.")))
    ok(write(store, WriteInput(title="Ladder", claim="The ladder is in the shed.",
                               links=(Link("relates_to", f"/{kettle.primary}"),))))
    for n in range(12):
        # Other memories, so the run's one fold is a small share of the live set.
        ok(write(store, WriteInput(title=f"Room {n}",
                                   claim=f"Meeting room {n} seats {n + 4} people.")))
    _git(root, "rm", "-q", "--", str(kettle.primary))
    _git(root, "commit", "-q", "-m", "no more kettle")
    report = value_of(run_sleep(_sleep(root)))
    assert report.ok and report.head_sha != report.base_sha, report
    return root


def _sleep(root: Path) -> SleepDeps:
    services = value_of(open_services(Settings(store=root), clock=FixedClock(RUN_AT)))
    return sleep_deps(services, head_gate).unwrap()


def _store(root: Path) -> Store:
    deps = _sleep(root).main_deps()
    return Store(replace(deps, clock=FixedClock(RUN_AT + timedelta(hours=1))))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(landing=st.sampled_from(["fast-forward", "replay"]), how=st.sampled_from(UNDOS),
       with_own_file=st.booleans(), tidy=st.booleans(), which=st.integers(0, 7))
def test_a_persons_undo_of_a_sleep_merge_stays_and_only_a_proven_race_is_written_back(
        landing: str, how: str, with_own_file: bool, tidy: bool, which: int) -> None:
    """``which`` picks the run commit a revert of a fast-forward reverts (a merge
    lands several; reverting any one of them is the person's choice)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "repo"
        shutil.copytree(_run_store(), root, symlinks=True)
        run_id = RUN_AT.date().isoformat()
        if landing == "replay":
            ok(write(_store(root), WriteInput(title="Main moved", claim="Main moved on.")))
        main_before = _git(root, "rev-parse", "HEAD").strip()
        stale_index = (root / ".git" / "index").read_bytes()
        deps = _sleep(root)
        if how == "window":
            deps = replace(deps, git=_InTheWindow(  # type: ignore[arg-type]
                deps.git, root, with_own_file))
        outcome = value_of(merge_run(deps, run_id))
        assert outcome.merged, outcome
        assert (outcome.merge_commit is not None) is (landing == "replay"), outcome
        if how == "window":
            after = _tree_at(root, outcome.merge_commit or outcome.tip or "")
        else:
            after = _tree(root)
            run_commits = _git(root, "rev-list", "--no-merges", f"{main_before}..HEAD",
                               "--", "areas", "archive").split()
            revert = (("-m", "1", "HEAD") if landing == "replay"
                      else (run_commits[which % len(run_commits)],))
            _undo(root, how, main_before, revert, stale_index, with_own_file)
        assert after != _tree_at(root, main_before)
        _judged(root, _store(root), how, tidy, after, with_own_file)
