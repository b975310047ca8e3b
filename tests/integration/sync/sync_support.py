"""What the many-clone sync tests share: reading a clone's branch through pygit2, the
remote's reflog as a list of updates, and a worker one clone runs in a process of its
own (``python -m tests.integration.sync.sync_support STORE CLONE WRITES``).

The worker calls the app in-process in a loop rather than starting ``python -m
memhtml`` once per write: a process start costs more than the write, and what the
test needs is one process per clone, racing the others for the remote."""

from __future__ import annotations

import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pygit2

SITE_DIR = "memhtml-site/"
"""Published pages live here (and as ``index.html`` files); they repeat claims, so
they are not memory files."""

SYNC_EVERY = 10
"""Writes between two syncs in a worker: often enough that clones race each other
through the run, not only at its end."""

SYNC_TRIES = 4
"""Sync attempts a worker makes at each sync point. A sync that loses the push race
``MAX_ROUNDS`` times in a row fails on purpose; the writes stay local and a later sync
carries them, so the worker tries again a few times and then moves on."""


IDENTITY = ("-c", "user.name=Test Person", "-c", "user.email=person@example.org")
"""A person's commits in these tests carry a fixed identity, whatever the machine's
git config holds (a fresh machine holds none)."""


def git(root: Path, *args: str, check: bool = True) -> str:
    """The git command line in ``root``, as the person beside memhtml runs it."""
    return subprocess.run(["git", *IDENTITY, "-C", str(root), *args], check=check,
                          capture_output=True, text=True).stdout


def init_remote(bare: Path) -> None:
    """An empty bare remote whose reflog records every update of its branch."""
    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    git(bare, "config", "core.logAllRefUpdates", "always")


def main_tree(root: Path) -> str:
    """The tree id at the tip of ``main`` in a clone (or a bare repository)."""
    repo = pygit2.Repository(str(root))
    commit = repo.revparse_single("refs/heads/main").peel(pygit2.Commit)
    return str(commit.tree_id)


def is_memory_path(path: str) -> bool:
    return (path.endswith(".html") and not path.startswith(SITE_DIR)
            and path.rsplit("/", 1)[-1] != "index.html")


def memory_claims(root: Path) -> dict[str, str]:
    """Every valid memory at the tip of ``main`` that is not a review task a merge
    opened, path -> its claim: where a fact is held. A review task quotes the claims
    it is about, so counting text would count it too."""
    from memhtml.head import record_from

    claims: dict[str, str] = {}
    for path, text in memory_texts(root).items():
        record = record_from(text, path).value_or(None)
        if record is not None and "sync-conflict" not in record.tags:
            claims[path] = record.claim
    return claims


def memory_texts(root: Path) -> dict[str, str]:
    """Every memory file at the tip of ``main``, path -> text."""
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single("refs/heads/main").peel(pygit2.Tree)
    found: dict[str, str] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            path = prefix + str(entry.name)
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, path + "/")
            elif isinstance(obj, pygit2.Blob) and is_memory_path(path):
                found[path] = obj.data.decode("utf-8")

    walk(tree, "")
    return found


def reflog_updates(bare: Path) -> list[tuple[str, str]]:
    """The remote's updates of ``main``, oldest first: (new value, reflog message)."""
    out = git(bare, "reflog", "show", "--format=%H%x09%gs", "refs/heads/main")
    pairs = [line.partition("\t") for line in out.splitlines() if line]
    return [(sha, message) for sha, _, message in reversed(pairs)]


def forced_updates(bare: Path) -> list[str]:
    """Each remote update that was not a fast-forward of the one before: named by
    git ("forced-update") or found by ancestry. Empty when history only grew."""
    updates = reflog_updates(bare)
    bad = [f"{sha[:12]} {message}" for sha, message in updates if "forced" in message]
    for (old, _), (new, message) in pairwise(updates):
        descends = subprocess.run(["git", "-C", str(bare), "merge-base", "--is-ancestor",
                                   old, new], check=False, capture_output=True)
        if descends.returncode != 0:
            bad.append(f"{old[:12]} -> {new[:12]} ({message}) does not descend")
    return bad


def worker_claim(clone: int, number: int) -> str:
    """A claim no other write in the run makes, with nothing HTML would escape."""
    return f"Clone {clone} recorded fact number {number} for the crowd."


def _worker(store: str, clone: int, writes: int) -> int:
    from memhtml.cli.app import app

    def synced() -> bool:
        for _ in range(SYNC_TRIES):
            if app(["sync", "--store", store, "--json"], result_action="return_value") == 0:
                return True
            time.sleep(0.05 * (clone + 1))
        return False

    gave_up = 0
    for number in range(writes):
        # Titles repeat across clones on purpose: the same file name is born in every
        # clone, and the merge must keep each fact once under its own name.
        code = app(["write", "--title", f"Fact {number}", "--claim",
                    worker_claim(clone, number), "--store", store, "--json"],
                   result_action="return_value")
        if code != 0:
            print(f"write {number} failed with {code}", file=sys.stderr)
            return 1
        if (number + 1) % SYNC_EVERY == 0 and not synced():
            gave_up += 1
    if not synced():
        gave_up += 1
    print(f"sync points given up: {gave_up}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
