"""What the store's history says about an earlier markdown import: who archived a
memory imported from a note.

A memory the import archived because its note had gone from the folder, and one the
person archived with ``memhtml archive``, are the same file under ``archive/``; the
commits tell them apart. Every import commit carries a ``Memhtml-Import`` trailer
naming the directory it imports into, so an archived memory was archived by an
import when the commit that put it at its archive path carries the trailer, and by a
person (or another door) otherwise. Only the archived memories whose note is in the
folder with no live memory are looked up, each by a walk from the tip back to the
commit that made its archive path (the cost is the commits since; a walk that does
not reach it within ``HISTORY_DEPTH`` commits touching the path answers "the
person's", which keeps the memory archived).

The trailer is committed text, so a collaborator could forge one; what it buys is
only what a plain re-import did before: a person's archive read as the import's, and
the note imported again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import CommitInfo
from memhtml.store.errors import StoreError, widen
from memhtml.store.layout import normalize_directory
from memhtml.store.session import Store

IMPORT_TRAILER = "Memhtml-Import"
"""The trailer an import commit carries, its value the store directory imported into."""
HISTORY_DEPTH = 64
"""The most commits touching one archive path read, looking for the one that made it."""

__all__ = [
    "HISTORY_DEPTH",
    "IMPORT_TRAILER",
    "ImportHistory",
    "ImportNeeds",
    "import_home",
    "import_trailers",
    "read_import_history",
]


def import_home(directory: str) -> str:
    """The store directory an import writes under, as its trailer names it."""
    stripped = directory.strip("/")
    return normalize_directory(stripped) if stripped else ""


def import_trailers(directory: str) -> tuple[tuple[str, str], ...]:
    """The trailers an import of ``directory`` commits with."""
    return ((IMPORT_TRAILER, import_home(directory) or "/"),)


@dataclass(frozen=True, slots=True)
class ImportNeeds:
    """The paths whose history a re-import reads."""

    archives: tuple[str, ...] = ()
    """Archived memories whose note is in the folder: who archived them."""


@dataclass(frozen=True, slots=True)
class ImportHistory:
    """What the history answered."""

    by_import: frozenset[str] = frozenset()
    """Archive paths an import put there (their note had gone from the folder)."""


def _is_import(info: CommitInfo, home: str) -> bool:
    return (IMPORT_TRAILER, home or "/") in info.trailers


def _archived_by_import(store: Store, home: str, path: str, limit: int = 1
                        ) -> IOResult[bool, StoreError]:
    """Whether the commit that put ``path`` (an archive path) there was an import's:
    the newest commit touching it whose first parent lacks it.

    The walk asks for one commit touching the path first, since an archive is
    usually touched once (by the commit that made it), and the walk back to that one
    commit is all it costs; when that commit only edited the archived file, it asks
    again for more, up to ``HISTORY_DEPTH``."""
    git = store.deps.git

    def first_of(commits: tuple[CommitInfo, ...]) -> IOResult[bool, StoreError]:
        step: IOResult[bool | None, StoreError] = IOSuccess(None)
        for info in commits:
            step = step.bind(_then_added(store, path, info, home))

        def settled(found: bool | None) -> IOResult[bool, StoreError]:
            if found is None and len(commits) == limit and limit < HISTORY_DEPTH:
                return _archived_by_import(store, home, path, min(limit * 8, HISTORY_DEPTH))
            return IOSuccess(bool(found))

        return step.bind(settled)

    return git.commits_touching(store.deps.ref, path, limit).alt(widen).bind(first_of)


def _then_added(store: Store, path: str, info: CommitInfo, home: str
                ) -> Callable[[bool | None], IOResult[bool | None, StoreError]]:
    """The step that, when no earlier commit settled it, asks whether ``info`` added
    ``path`` and answers whether it is an import commit if so."""

    def step(settled: bool | None) -> IOResult[bool | None, StoreError]:
        if settled is not None:
            return IOSuccess(settled)
        if not info.parents:
            return IOSuccess(_is_import(info, home))
        return store.deps.git.entries_at(info.parents[0], [path]).alt(widen).map(
            lambda before: None if before else _is_import(info, home))

    return step


def read_import_history(store: Store, directory: str, needs: ImportNeeds
                        ) -> IOResult[ImportHistory, StoreError]:
    """Answer ``needs`` from the commits on the store's branch (see the module)."""
    home = import_home(directory)
    archives: IOResult[frozenset[str], StoreError] = IOSuccess(frozenset())
    for path in needs.archives:
        archives = archives.bind(_with_archive(store, home, path))
    return archives.map(ImportHistory)


def _with_archive(store: Store, home: str, path: str
                  ) -> Callable[[frozenset[str]], IOResult[frozenset[str], StoreError]]:
    def step(found: frozenset[str]) -> IOResult[frozenset[str], StoreError]:
        return _archived_by_import(store, home, path).map(
            lambda yes: found | {path} if yes else found)

    return step

