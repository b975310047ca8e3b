"""A person's git running beside memhtml's writes: neither loses the other's work.

One thread is the person: ``git status``, then ``git add`` and ``git commit`` of a hand
edit to their own notes, over and over, with one tracked file left modified and
unstaged throughout. Eight processes each make 25 memhtml writes meanwhile. In the end
the branch holds every write and every hand edit, the checkout is as the branch has
it (but for the person's unstaged file), and ``doctor`` finds nothing behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
import pytest

from tests.integration import warm_cli
from tests.integration.store.checkout_support import (
    PERSON,
    LostWorkError,
    checkout_findings,
    clean_environment,
    git,
    hand_commit,
    memhtml,
    porcelain,
)

pytestmark = pytest.mark.slow

WRITERS = 8
WRITES = 25
RETRIES = 20
DRAFT = "notes/draft.txt"
DRAFT_TEXT = "the person's draft, modified and never staged\n"

# A writer: the CLI's main in a loop (one interpreter start-up per writer, not per
# write), one JSON line per attempt. A refused write is retried; first it looks at the
# branch, where a refused write must have left nothing.
WRITER = r'''
import contextlib, io, json, subprocess, sys
from memhtml.cli.app import main

store, writer, count, retries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for i in range(count):
    path = f"areas/inbox/w{writer}-{i:02d}.html"
    claim = f"Writer {writer} wrote note {i}."
    for attempt in range(1, retries + 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main(["write", "--title", f"Writer {writer} note {i}", "--claim", claim,
                      "--path", path, "--store", store, "--json"])
            except SystemExit as done:
                code = done.code
        try:
            answer = json.loads(out.getvalue())
        except ValueError:
            answer = {"error": out.getvalue()}
        line = {"writer": writer, "i": i, "path": path, "claim": claim, "attempt": attempt,
                "code": code, "answer": answer}
        if code != 0:
            line["present"] = subprocess.run(
                ["git", "cat-file", "-e", f"refs/heads/main:{path}"], cwd=store,
                capture_output=True).returncode == 0
        print(json.dumps(line), flush=True)
        if code == 0:
            break
'''


@dataclass
class Person:
    """The person's loop and what it saw."""

    root: Path
    env: dict[str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    committed: list[str] = field(default_factory=list)
    retried: int = 0
    errors: list[str] = field(default_factory=list)

    def _retry(self, *args: str) -> bool:
        """A git command, retried while another git command (memhtml's) holds a lock
        or moved the branch under it, as a person would."""
        for _ in range(200):
            done = git(self.root, self.env, *args, check=False)
            if done.returncode == 0:
                return True
            self.retried += 1
            if "lock" not in done.stderr:
                self.errors.append(f"git {' '.join(args)}: {done.stderr.strip()}")
                return False
            time.sleep(0.01)
        self.errors.append(f"git {' '.join(args)} never got its lock")
        return False

    def run(self) -> None:
        i = 0
        while not self.stop.is_set() and not self.errors:
            status = git(self.root, self.env, "status", "--porcelain", check=False)
            if status.returncode != 0:
                self._retry("status", "--porcelain")
            path = f"notes/n-{i}.txt"
            (self.root / path).write_text(f"hand edit {i}\n", encoding="utf-8")
            if self._retry("add", "--", path) and self._retry(
                    *PERSON, "commit", "-q", "-m", f"hand edit {i}"):
                self.committed.append(path)
            i += 1


# A write with a commit made beside it at one chosen moment (from inside the writer, so
# the interleaving is certain): the person's ``git commit`` of what they staged (or, with
# RACE_BY=memhtml, another memhtml write), fired once in the window RACE_WINDOW names.
RACING = r'''
import os, subprocess, sys
import memhtml.adapters.git as adapters_git
from memhtml.cli.app import main

WINDOW = os.environ["RACE_WINDOW"]
ROOT = os.environ["PERSON_ROOT"]
state = {"committed": False, "fired": False}


def fire():
    if state["fired"]:
        return
    state["fired"] = True
    if os.environ.get("RACE_BY") == "memhtml":
        subprocess.run([sys.executable, "-m", "memhtml", "write", "--title", "Toaster",
                        "--claim", "The toaster is cleaned on Fridays.", "--path",
                        "areas/inbox/toaster.html", "--store", ROOT],
                       check=True, capture_output=True)
    else:
        subprocess.run(["git", "-c", "user.name=Person", "-c", "user.email=person@example.org",
                        "commit", "-q", "-m", f"the person's commit, {WINDOW}"],
                       cwd=ROOT, check=True)


Service = adapters_git.PygitService
real_commit, real_resolve, real_update = Service.commit, Service.resolve, Service.update_index


def commit(self, *args, **kwargs):
    landed = real_commit(self, *args, **kwargs)
    state["committed"] = True
    if WINDOW == "after the write's commit":
        fire()
    return landed


def resolve(self, ref):
    found = real_resolve(self, ref)
    if WINDOW == "between HEAD and the branch" and ref == "HEAD" and state["committed"]:
        fire()
    return found


def update_index(self, updates, tip=None):
    if WINDOW == "before the index update":
        fire()
    return real_update(self, updates, tip)


Service.commit, Service.resolve, Service.update_index = commit, resolve, update_index
main(sys.argv[1:])
'''
WINDOWS = ("after the write's commit", "before the index update", "between HEAD and the branch")
"""Right after the write's commit moved the branch (the person's git reads HEAD after
it and takes the index lock before the follow); after the follow read the tip and
before it took git's index lock; between the follow's reads of HEAD and of the branch
(which must not make the checkout look like one on another branch)."""


def _racing_write(root: Path, env: dict[str, str], window: str, path: str,
                  by: str = "person") -> None:
    written = subprocess.run(
        [sys.executable, "-c", RACING, "write", "--title", "Kettle", "--claim",
         "The kettle is descaled on Mondays.", "--path", path, "--store", str(root)],
        env={**env, "PERSON_ROOT": str(root), "RACE_WINDOW": window, "RACE_BY": by},
        capture_output=True, text=True, timeout=120, check=False)
    assert written.returncode == 0, written.stderr


def _writer(root: Path, env: dict[str, str], writer: int) -> subprocess.Popen[str]:
    """A writer process, forked from a warm interpreter (``warm_cli``): the eight start
    together instead of each importing memhtml first."""
    command, args = warm_cli.launcher("memhtml", str(root), str(writer), str(WRITES),
                                      str(RETRIES), env=env, code=WRITER)
    return subprocess.Popen([command, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_persons_git_beside_eight_writers_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    done = memhtml(env, "init", str(root))
    assert done.returncode == 0, done.stderr
    hand_commit(root, env, DRAFT, "the person's draft\n", "my draft")
    (root / DRAFT).write_text(DRAFT_TEXT, encoding="utf-8")

    person = Person(root, env)
    thread = threading.Thread(target=person.run, daemon=True)
    thread.start()
    started = time.monotonic()
    writers = [_writer(root, env, w) for w in range(WRITERS)]
    outputs = [proc.communicate(timeout=300) for proc in writers]
    writing = time.monotonic() - started
    person.stop.set()
    thread.join(timeout=60)
    assert not thread.is_alive()

    lines = [json.loads(line) for out, _ in outputs for line in out.splitlines() if line]
    crashed = [(w, proc.returncode, err) for w, (proc, (_, err))
               in enumerate(zip(writers, outputs, strict=True)) if proc.returncode != 0]
    assert crashed == []
    landed = [line for line in lines if line["code"] == 0]
    refused = [line for line in lines if line["code"] != 0]
    lock_refusals = [r for r in refused if "index lock" in str(r["answer"].get("error"))]
    pending = [line for line in landed if line["answer"].get("pending")]
    summary = (f"{len(landed)} writes landed in {writing:.1f} s, {len(lock_refusals)} refused "
               f"for git's index lock and retried, {len(pending)} left pending; the person "
               f"committed {len(person.committed)} hand edits and retried git "
               f"{person.retried} times")

    assert person.errors == [], summary
    other = [r for r in refused if r not in lock_refusals]
    assert other == [], (summary, [(r["path"], r["answer"].get("code"),
                                    r["answer"].get("error")) for r in other])
    assert [r for r in lock_refusals if r["present"]] == [], (
        f"a refused write committed; {summary}")
    assert sorted((line["writer"], line["i"]) for line in landed) == [
        (w, i) for w in range(WRITERS) for i in range(WRITES)], summary
    assert len(person.committed) > 0, summary

    # The documented contract: the next memhtml command finishes a pending write and
    # restores one that a commit made from a stale index undid (the person's last
    # commit may have come after the last write's own check).
    status = memhtml(env, "status", "--store", str(root))
    assert status.returncode == 0, status.stderr

    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single("refs/heads/main").peel(pygit2.Commit).tree

    def holds(path: str, text: str) -> bool:
        try:
            found = tree[path]
        except KeyError:
            return False
        return isinstance(found, pygit2.Blob) and text.encode("utf-8") in found.data

    def who_removed(path: str) -> str:
        return git(root, env, "log", "--format=%h %s", "-1", "--diff-filter=D",
                   "refs/heads/main", "--", path).stdout.strip()

    lost = [f"{line['path']} (removed by: {who_removed(line['path']) or 'never added'})"
            for line in landed if not holds(line["path"], line["claim"])]
    if lost:
        raise LostWorkError(f"memhtml writes missing from the branch: {lost}; {summary}")
    edits = [path for path in person.committed
             if not holds(path, f"hand edit {path.removeprefix('notes/n-').split('.')[0]}\n")]
    assert edits == [], f"hand edits missing from the branch: {edits}; {summary}"

    assert porcelain(root, env) == [f" M {DRAFT}"], summary
    assert (root / DRAFT).read_text(encoding="utf-8") == DRAFT_TEXT
    assert checkout_findings(root) == [], summary


@pytest.mark.parametrize("window", WINDOWS)
def test_a_persons_commit_racing_a_write_reverts_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str) -> None:
    """A person's commit of an index read before the write reached it, landing in any
    of the follow's windows, is written back before the write's command ends."""
    env = clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    done = memhtml(env, "init", str(root))
    assert done.returncode == 0, done.stderr
    hand_commit(root, env, DRAFT, "the person's draft\n", "my draft")
    (root / "notes" / "n-0.txt").write_text("hand edit 0\n", encoding="utf-8")
    git(root, env, "add", "--", "notes/n-0.txt")

    path = "areas/inbox/kettle.html"
    _racing_write(root, env, window, path)

    tree = git(root, env, "ls-tree", "-r", "--name-only", "refs/heads/main").stdout.split()
    assert "notes/n-0.txt" in tree
    if path not in tree:
        raise LostWorkError(
            "the person's commit reverted the write: "
            + git(root, env, "log", "--format=%h %s", "--stat", "-2", "refs/heads/main").stdout
            + "git status --porcelain: " + repr(porcelain(root, env)))
    assert porcelain(root, env) == []
    assert checkout_findings(root) == []


def test_a_persons_commit_caught_before_it_puts_its_index_in_place_is_judged_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git commit`` reads the index before it takes git's lock, moves the branch while
    holding the lock and only then puts the index it committed in place. A command that
    looks in between sees the branch without the write over an index still holding it
    (the follow set it): that must not pass for the person's own undo. The command leaves
    the mark; once the lock is gone, the next one writes the write back."""
    env = clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    done = memhtml(env, "init", str(root))
    assert done.returncode == 0, done.stderr
    path = "areas/inbox/kettle.html"
    done = memhtml(env, "write", "--title", "Kettle", "--claim",
                   "The kettle is descaled on Mondays.", "--path", path, "--store", str(root))
    assert done.returncode == 0, done.stderr
    git_dir = root / ".git"
    assert path in git(root, env, "ls-files").stdout.split()

    # The person's commit, as git makes it from the index it read before the write's
    # follow: the tree without the write, the branch moved, the index still in the lock.
    stale = tmp_path / "stale-index"
    person = {**env, "GIT_INDEX_FILE": str(stale)}
    git(root, person, "read-tree", "HEAD")
    git(root, person, "rm", "--cached", "-q", "--", path)
    tree = git(root, person, "write-tree").stdout.strip()
    undo = git(root, env, *PERSON, "commit-tree", tree, "-p", "HEAD", "-m",
               "hand edit").stdout.strip()
    git(root, env, "update-ref", "refs/heads/main", undo)
    (git_dir / "index.lock").write_bytes(stale.read_bytes())

    caught = memhtml(env, "status", "--json", "--store", str(root))
    assert caught.returncode == 0, caught.stderr
    assert path not in git(root, env, "ls-tree", "-r", "--name-only", "HEAD").stdout.split()

    (git_dir / "index.lock").replace(git_dir / "index")
    after = memhtml(env, "status", "--store", str(root))
    assert after.returncode == 0, after.stderr
    held = git(root, env, "ls-tree", "-r", "--name-only", "refs/heads/main").stdout.split()
    if path not in held:
        raise LostWorkError(
            "the person's stale commit was kept as their own undo: "
            + git(root, env, "log", "--format=%h %s", "-3", "refs/heads/main").stdout)
    assert porcelain(root, env) == []


def test_a_write_whose_branch_another_writer_moved_follows_the_new_tip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another write landing while this one's follow runs moves the branch: the follow
    starts again against the new tip, so the index holds both writes (not a staged
    deletion of this one) and the checkout is clean."""
    env = clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    done = memhtml(env, "init", str(root))
    assert done.returncode == 0, done.stderr
    _racing_write(root, env, "before the index update", "areas/inbox/kettle.html",
                  by="memhtml")
    held = git(root, env, "ls-tree", "-r", "--name-only", "refs/heads/main").stdout.split()
    assert {"areas/inbox/kettle.html", "areas/inbox/toaster.html"} <= set(held)
    assert porcelain(root, env) == []
    assert checkout_findings(root) == []
