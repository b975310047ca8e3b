"""What a folder holds: the read door behind ``memhtml list`` and ``memory_list``.

A folder's memories are the ones anywhere under it unless the caller asks for the
ones directly in it (``recursive=False``): a person or an agent that asks what
``areas/`` holds means the memories filed in its topic folders too, and an answer
of "0 memories" for a folder whose subfolders hold thirty reads as "empty". Each
immediate subfolder comes with the count of memories anywhere under it, so the
tree can be walked one level at a time either way. ``total`` always counts what
the listing covers, which is more than it shows when ``limit`` cuts it.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import NotFound
from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.store.errors import StoreError
from memhtml.store.reads import version_of
from memhtml.store.session import Store

__all__ = ["LIST_LIMIT", "Folder", "Listing", "folder_of", "listed", "listing", "listing_of",
           "status_of"]

LIST_LIMIT = 50
"""How many memories a listing shows unless told: a screen, or a few KB of a model's
context; ``total`` says how many more there are."""


@dataclass(frozen=True, slots=True)
class Folder:
    path: str
    """The subfolder, tree form with a trailing slash (``areas/ops/``)."""
    memories: int
    """Memories anywhere under it."""


@dataclass(frozen=True, slots=True)
class Listing:
    dir: str
    """The folder listed, tree form with a trailing slash; the root is ``""``."""
    recursive: bool
    dirs: tuple[Folder, ...]
    """Its immediate subfolders, by path."""
    memories: tuple[MemoryRecord, ...]
    """The memories it covers, by path, at most the limit."""
    total: int
    """How many memories it covers (under ``dir`` at any depth when ``recursive``,
    else directly in it): more than ``memories`` holds when the limit cut it."""


def folder_of(raw: str) -> str:
    """A folder as given (``/areas/x``, ``areas/x/``) in tree form with a trailing
    slash; the store's root is the empty string.

    >>> folder_of("/areas/ops"), folder_of("areas/ops/"), folder_of("")
    ('areas/ops/', 'areas/ops/', '')
    """
    tree = to_tree_path(raw.strip()).strip("/")
    return f"{tree}/" if tree else ""


def status_of(record: MemoryRecord) -> str:
    """One status word: a task's own status, else active or archived."""
    if record.memory_type == "task" and record.status == "active" and not record.archived:
        return record.task_status or "todo"
    return "archived" if record.archived else record.status


def listing_of(view: HeadView, folder: str, limit: int, recursive: bool = True
               ) -> Listing | None:
    """What ``folder`` (as ``folder_of`` gives it) holds in ``view``; None when no
    memory is under it at any depth."""
    covered: list[str] = []
    below: dict[str, int] = {}
    for path in view.paths():
        if not path.startswith(folder):
            continue
        head, sep, _ = path[len(folder):].partition("/")
        if sep:
            below[folder + head + "/"] = below.get(folder + head + "/", 0) + 1
        if recursive or not sep:
            covered.append(path)
    if not covered and not below:
        return None
    covered.sort()
    shown = (view.get(p) for p in covered[:limit])
    return Listing(
        dir=folder, recursive=recursive,
        dirs=tuple(Folder(p, n) for p, n in sorted(below.items())),
        memories=tuple(r for r in shown if r is not None),
        total=len(covered),
    )


def listed(view: HeadView, directory: str = "", *, recursive: bool = True,
           limit: int = LIST_LIMIT) -> Result[Listing, StoreError]:
    """What the folder ``directory`` holds in ``view``: ``NotFound`` when no memory is
    under it, the same answer a path that names nothing gets."""
    folder = folder_of(directory)
    found = listing_of(view, folder, limit, recursive)
    if found is None:
        return Failure(NotFound(f"memories under {folder or 'the root'}"))
    return Success(found)


def listing(store: Store, directory: str = "", *, recursive: bool = True,
            limit: int = LIST_LIMIT, at: str | None = None) -> IOResult[Listing, StoreError]:
    """``listed`` at the tip, or at the commit or ref ``at`` names."""
    return version_of(store, at).bind(lambda view: IOResult.from_result(
        listed(view, directory, recursive=recursive, limit=limit)))
