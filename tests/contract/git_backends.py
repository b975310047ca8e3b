"""The two ``GitService`` implementations, each with the few things a test does to a
repository from outside the Protocol (a chmod commit, reading config and index back).

Every step outside the Protocol is done with the same author, time and message on
both, so the contract tests can ask for identical shas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

import pygit2
from pygit2.enums import FileMode
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.services import GitService, PathChange, Signature, TreeEntry

T = TypeVar("T")
E = TypeVar("E")

AUTHOR = Signature("Memory Writer", "writer@example.org")
AT = datetime(2026, 3, 1, 12, 30, 15, tzinfo=timezone(timedelta(hours=2)))
CHMOD_MESSAGE = "chmod"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's id for the empty tree, which every repository with an empty commit holds."""
GOLDEN_ROOT_SHA = "80c90a42dafbf36acde0a5ba054dd8ae85ca2b0a"
"""The root commit of ``golden_history``: ``tests/integration/adapters`` has git's own
command line name it too, so both implementations are pinned to git, not each other."""
GOLDEN_SECOND_SHA = "cd276472d5d7d2a9f3e3c730525f7e500544e9cc"


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


def put(path: str, text: str) -> PathChange:
    return PathChange(path, text.encode("utf-8"))


def drop(path: str) -> PathChange:
    return PathChange(path, None)


def golden_history(git: GitService) -> tuple[str, str]:
    """Two commits whose ids are pinned: a change to how commits are built shows."""
    first = ok(git.commit(
        "main", None,
        [put("areas/deploy/rollback.html", "<mark>Roll back first.</mark>"), put("ü.html", "ü")],
        "memory: add rollback\n\nMemhtml-Op: put\n", AUTHOR, AT))
    return first, ok(git.commit("main", first, [drop("ü.html")], "memory: drop ü", AUTHOR, AT))


@dataclass(frozen=True)
class Backend:
    """One repository behind the Protocol, plus what a test reaches around it for."""

    kind: str
    git: GitService
    chmod: Callable[[str, str, int], str]
    """Commit ``mode`` for the file at ``path`` on top of ``parent``, moving main."""
    config: Callable[[str], str | None]
    """A config value by git's normalized key, as the repository now holds it."""
    index: Callable[[], tuple[TreeEntry, ...]]
    """The checkout's index, sorted by path."""
    writer: Callable[[], GitService]
    """Another handle on the same repository, for a concurrent writer."""
    person_writes: Callable[[str, bytes | None], None]
    """A person's editor writes (or, for None, deletes) a working-tree file."""
    person_locks: Callable[[bool], None]
    """A person's git takes (True) or releases the index lock."""
    person_leaves: Callable[[str], None]
    """A person's git leaves an operation waiting (``MERGE_HEAD``, ``rebase-merge``)."""

    def commit(self, parent: str | None, changes: list[PathChange], message: str = "write",
               ref: str = "main") -> str:
        return ok(self.git.commit(ref, parent, changes, message, AUTHOR, AT))

    def tree_bytes(self, sha: str) -> dict[str, bytes]:
        entries = ok(self.git.list_tree(sha))
        blobs = ok(self.git.read_blobs([entry.blob_id for entry in entries]))
        return {entry.path: blobs[entry.blob_id] for entry in entries}


def pygit_backend(root: Path, *, bare: bool) -> Backend:
    svc = ok(PygitService.init(root, bare=bare))

    def chmod(parent: str, path: str, mode: int) -> str:
        repo = pygit2.Repository(svc.path)
        base = repo[parent].peel(pygit2.Commit)
        index = pygit2.Index()
        index.read_tree(base.tree)
        index.add(pygit2.IndexEntry(path, index[path].id, FileMode(mode)))
        offset = AT.utcoffset()
        assert offset is not None
        sig = pygit2.Signature(AUTHOR.name, AUTHOR.email, math.floor(AT.timestamp()),
                               int(offset.total_seconds()) // 60)
        tree = index.write_tree(repo)
        return str(repo.create_commit("refs/heads/main", sig, sig, CHMOD_MESSAGE, tree,
                                      [base.id]))

    def config(key: str) -> str | None:
        values = pygit2.Repository(svc.path).config
        return str(values[key]) if key in values else None

    def index() -> tuple[TreeEntry, ...]:
        entries = pygit2.Repository(svc.path).index
        return tuple(sorted((TreeEntry(e.path, str(e.id), int(e.mode)) for e in entries),
                            key=lambda entry: entry.path))

    workdir = Path(svc.path).parent

    def person_writes(path: str, data: bytes | None) -> None:
        target = workdir / path
        if data is None:
            target.unlink()
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def person_locks(held: bool) -> None:
        lock = Path(svc.path) / "index.lock"
        if held:
            lock.write_bytes(b"")
        else:
            lock.unlink()

    def person_leaves(marker: str) -> None:
        where = Path(svc.path) / marker
        if marker.startswith("rebase-"):
            where.mkdir(parents=True)
        else:
            where.write_text("0" * 40 + "\n", encoding="utf-8")

    return Backend("pygit", svc, chmod, config, index,
                   lambda: ok(PygitService.open(svc.path)), person_writes, person_locks,
                   person_leaves)


def memory_backend(*, bare: bool) -> Backend:
    mem = InMemoryGit(bare=bare)

    def chmod(parent: str, path: str, mode: int) -> str:
        return ok(mem.chmod("main", parent, {path: mode}, CHMOD_MESSAGE, AUTHOR, AT))

    def config(key: str) -> str | None:
        return mem.config.get(key)  # read now: ``config`` is a snapshot

    return Backend("memory", mem, chmod, config, lambda: mem.index, lambda: mem,
                   mem.person_writes, mem.person_holds_index_lock, mem.person_leaves)


def make_backend(kind: str, root: Path, *, bare: bool) -> Backend:
    return pygit_backend(root, bare=bare) if kind == "pygit" else memory_backend(bare=bare)
