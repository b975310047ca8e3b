"""``memhtml sync`` among many clones of one bare remote.

First a stateful model: three clones write, correct, archive, move, label and publish
in any order, syncing now and then; at the end every clone syncs twice and all of them
must hold one tree that contains every claim any of them wrote, pass ``doctor``, and
have left the remote's history only ever growing. Then a crowd: eight clones, each in
a process of its own, write and sync at once through ``git daemon`` on loopback, and
every fact must land exactly once."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from memhtml.format import content_hash, set_meta
from tests.integration import warm_cli
from tests.integration.cli.cli_support import call
from tests.integration.sync.sync_support import (
    forced_updates,
    git,
    init_remote,
    main_tree,
    memory_claims,
    memory_texts,
    worker_claim,
)
from tests.integration.sync.test_remote import served  # noqa: F401  (the daemon fixture)

REPO_ROOT = Path(__file__).resolve().parents[3]
CLONES = 3
TITLES = ("Deploy day", "Lunch", "On-call rota")
"""Few titles, so clones often give two different facts the same file name."""
MOVE_TARGETS = ("areas/moved/", "areas/elsewhere/")
ENTITIES = ("person:ines", "service:checkout-api", "team:platform")

clone_ids = st.integers(0, CLONES - 1)
picks = st.integers(0, 10_000)


def _ok(capsys: pytest.CaptureFixture[str], *tokens: str) -> dict[str, object]:
    code, answer = call(capsys, *tokens)
    assert code == 0, (tokens, answer)
    return dict(answer)


class SyncMany(RuleBasedStateMachine):
    """Three clones of one remote. The model is the set of claims written anywhere:
    sync may merge, rename and link, but never drop one."""

    capture: ClassVar[pytest.CaptureFixture[str]]

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="memhtml-sync-many-"))
        self.remote = self.root / "remote.git"
        init_remote(self.remote)
        self.clones = [self.root / f"clone{i}" for i in range(CLONES)]
        self.claims: set[str] = set()
        self.serial = 0
        first = self.clones[0]
        self.run("init", str(first))
        git(first, "remote", "add", "origin", str(self.remote))
        self.run("sync", "--store", str(first))
        for other in self.clones[1:]:
            self.run("clone", str(self.remote), str(other))

    def run(self, *tokens: str) -> dict[str, object]:
        return _ok(self.capture, *tokens, "--json")

    def fresh_claim(self, clone: int) -> str:
        self.serial += 1
        claim = f"Clone {clone} noted fact {self.serial} in the model."
        self.claims.add(claim)
        return claim

    def active(self, clone: int) -> list[str]:
        """The clone's active memories a person would work on (review tasks that
        sync opens are left alone), in a stable order."""
        return sorted(p for p in memory_texts(self.clones[clone])
                      if p.startswith("areas/") and not p.startswith("areas/tasks/"))

    def pick(self, clone: int, pick: int) -> str | None:
        found = self.active(clone)
        return found[pick % len(found)] if found else None

    def store(self, clone: int) -> tuple[str, str]:
        return "--store", str(self.clones[clone])

    @rule(clone=clone_ids, title=st.sampled_from(TITLES))
    def write(self, clone: int, title: str) -> None:
        self.run("write", "--title", title, "--claim", self.fresh_claim(clone),
                 *self.store(clone))

    @rule(clone=clone_ids, pick=picks)
    def correct(self, clone: int, pick: int) -> None:
        path = self.pick(clone, pick)
        if path is not None:
            self.run("correct", path, "--title", "Corrected", "--claim",
                     self.fresh_claim(clone), *self.store(clone))

    @rule(clone=clone_ids, pick=picks)
    def archive(self, clone: int, pick: int) -> None:
        path = self.pick(clone, pick)
        if path is not None:
            self.run("archive", path, *self.store(clone))

    @rule(clone=clone_ids, pick=picks, to=st.sampled_from(MOVE_TARGETS))
    def move(self, clone: int, pick: int, to: str) -> None:
        path = self.pick(clone, pick)
        # A move onto a name the directory already holds is refused, rightly: skip it.
        if (path is not None and not path.startswith(to) and to + path.rsplit("/", 1)[-1]
                not in memory_texts(self.clones[clone])):
            self.run("move", path, to, *self.store(clone))

    @rule(clone=clone_ids, pick=picks, entity=st.sampled_from(ENTITIES))
    def label(self, clone: int, pick: int, entity: str) -> None:
        path = self.pick(clone, pick)
        if path is not None:
            self.run("label", path, entity, *self.store(clone))

    @rule(clone=clone_ids)
    def publish(self, clone: int) -> None:
        self.run("publish", *self.store(clone))

    @rule(clone=clone_ids)
    def sync(self, clone: int) -> None:
        self.run("sync", *self.store(clone))

    def converge(self) -> None:
        """Every clone syncs twice, in order: after the first pass the last clone
        holds everything, after the second every clone does.

        A site published earlier is stale once anything is written after it, merged or
        not, and doctor rightly says so; so when the store has one, the first clone
        brings itself up to date and publishes again between the passes, as a person
        would, and the second pass carries the new pages everywhere."""
        for clone in range(CLONES):
            self.sync(clone)
        if any("sitemap.xml" in git(c, "ls-tree", "--name-only", "main")
               for c in self.clones):
            self.sync(0)
            self.publish(0)
        for clone in range(CLONES):
            self.sync(clone)
        trees = {str(c.name): main_tree(c) for c in self.clones}
        assert len(set(trees.values())) == 1, trees
        assert main_tree(self.remote) == trees["clone0"]
        texts = "\n".join(memory_texts(self.clones[0]).values())
        lost = sorted(c for c in self.claims if c not in texts)
        assert not lost, lost
        for store in self.clones:
            code, doctor = call(self.capture, "doctor", "--store", str(store), "--json")
            assert code == 0, (store.name, doctor)
        forced = forced_updates(self.remote)
        assert not forced, forced

    def teardown(self) -> None:
        try:
            self.converge()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def test_three_clones_converge_on_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    class Bound(SyncMany):
        capture = capsys

    # settings() inherits the loaded profile, so CI stays derandomized.
    run_state_machine_as_test(Bound, settings=settings(
        max_examples=8, stateful_step_count=15, deadline=None))


WRITES = 50
"""Writes per clone in the crowd test: with eight clones the whole test took about
35 s on two cores, inside the minute it may take, so the full count stays."""
CROWD = 8


@pytest.mark.slow
def test_a_crowd_of_clones_over_git_daemon_lands_every_fact_once(
        tmp_path: Path, served: str, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    bare = tmp_path / "served" / "remote.git"
    init_remote(bare)
    url = f"{served}/remote.git"
    clones = [tmp_path / f"clone{i}" for i in range(CROWD)]
    _ok(capsys, "init", str(clones[0]), "--json")
    git(clones[0], "remote", "add", "origin", url)
    _ok(capsys, "sync", "--store", str(clones[0]), "--json")
    for clone in clones[1:]:
        _ok(capsys, "clone", url, str(clone), "--json")

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    # Each worker is its own process, forked from a warm interpreter (``warm_cli``) so
    # that eight of them do not each import memhtml first.
    command, args = warm_cli.launcher("tests.integration.sync.sync_support", env=env)
    workers = [subprocess.Popen(
        [command, *args, str(clone), str(i), str(WRITES)], cwd=REPO_ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for i, clone in enumerate(clones)]
    reports = [(w.communicate(timeout=300)[1], w.returncode) for w in workers]
    assert all(code == 0 for _, code in reports), reports

    for _ in range(2):
        for clone in clones:
            _ok(capsys, "sync", "--store", str(clone), "--json")
    trees = {main_tree(clone) for clone in clones}
    assert trees == {main_tree(bare)}, trees

    forced = forced_updates(bare)
    assert not forced, forced
    claims = memory_claims(clones[0])
    holding = {worker_claim(i, n): sorted(p for p, c in claims.items()
                                          if c == worker_claim(i, n))
               for i in range(CROWD) for n in range(WRITES)}
    wrong = {claim: paths for claim, paths in holding.items() if len(paths) != 1}
    assert not wrong, (f"{len(wrong)} of {len(holding)} facts not held exactly once", wrong,
                       _arrivals(clones[0], [p for ps in wrong.values() for p in ps]))


def _arrivals(store: Path, paths: list[str]) -> dict[str, str]:
    """For a failure's message: each path's history on the branch (the commits that
    touched it, with their parents and the merge's notes), so a rare interleaving can
    be read back from the one run that showed it."""
    return {path: git(store, "log", "--format=%h %p %s%n%b", "main", "--", path)[:4000]
            for path in paths}


def _rewrite_claim(store: Path, path: str, old: str, new: str, stamp: str) -> None:
    """A person's edit of one memory's claim in place, committed by git, with the
    content hash and the updated stamp kept true."""
    text = (store / path).read_text(encoding="utf-8").replace(old, new)
    text = set_meta(set_meta(text, "memhtml-content-hash", content_hash(text)),
                    "memhtml-updated", stamp)
    (store / path).write_text(text, encoding="utf-8")
    git(store, "commit", "-qam", "claim rewritten by hand")


def test_a_memory_labelled_in_two_clones_and_rewritten_in_a_third_lands_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The smallest sequence found that puts one fact in the tree twice. The crowd
    test reaches the same state through path collisions alone: a merge that keeps
    both versions of a path moves one memory to a new name, and a later merge against
    a side that only changed that memory's head keeps both again, under a third name.
    """
    bare = tmp_path / "remote.git"
    init_remote(bare)
    a, b, c = (tmp_path / name for name in ("a", "b", "c"))
    _ok(capsys, "init", str(a), "--json")
    git(a, "remote", "add", "origin", str(bare))
    original, rewritten = "Deploys happen on Tuesdays.", "Deploys moved to Thursdays."
    path = str(_ok(capsys, "write", "--title", "Deploy day", "--claim", original,
                   "--store", str(a), "--json")["path"])
    _ok(capsys, "sync", "--store", str(a), "--json")
    for clone in (b, c):
        _ok(capsys, "clone", str(bare), str(clone), "--json")

    # b and a each add an entity to the memory (its head only); c rewrites its claim.
    _ok(capsys, "label", path, "person:ines", "--store", str(b), "--json")
    _rewrite_claim(c, path, original, rewritten, "2030-01-02T00:00:00Z")
    _ok(capsys, "label", path, "team:platform", "--store", str(a), "--json")
    for clone in (b, c, a, b, c):
        _ok(capsys, "sync", "--store", str(clone), "--json")

    assert main_tree(a) == main_tree(b) == main_tree(c) == main_tree(bare)
    claims = memory_claims(a)
    holding = sorted(p for p, c in claims.items() if c == original)
    assert sum(c == rewritten for c in claims.values()) == 1
    assert len(holding) == 1, holding
