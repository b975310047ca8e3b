"""Second copies and the review task a kept-both merge leaves for a person.

Names are allocated by probing: ``<stem>-2.html``, ``-3``, ... until a name is free in
the ancestor, in both sides and in what this merge already placed. Checking the
ancestor too means a name one side deleted is not handed to an unrelated file, and
probing (``in``) is the only way to ask a tree handed in as a lazy mapping without
listing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format import (
    NewMemoryInput,
    is_root_relative_href,
    is_utc_instant,
    new_memory_doc,
    serialize_memory,
)
from memhtml.store.layout import TASKS, slug_of

SYNC_AUTHOR = "agent:sync"
"""Author of the review tasks a merge opens, so a person's queue tells them apart."""
SYNC_TAG = "sync-conflict"
REVIEW_PREFIX = "sync-"
EPOCH = "1970-01-01T00:00:00Z"
"""The stamp of a review task when neither version states a readable one: the merge
has no clock, and a fixed instant keeps its output a function of its inputs."""

KEPT_REL: Final[EdgeRel] = "relates_to"
"""The edge between two kept versions of one memory. Not ``contradicts``: the merge
cannot tell a contradiction from a refinement, and the sleep run treats a stated
contradiction as a finding. Not ``supersedes``: nothing is superseded until a person
decides. ``relates_to`` says only that the two belong together, which is all that is
known."""


@dataclass(slots=True)
class Names:
    """Name allocation over three trees and the paths this merge has placed."""

    trees: tuple[Mapping[str, bytes], ...]
    placed: set[str] = field(default_factory=set)

    def taken(self, path: str) -> bool:
        return path in self.placed or any(path in tree for tree in self.trees)

    def free(self, path: str) -> str:
        """The first of ``path``'s numbered siblings nobody holds; it is then held."""
        folder, _, name = path.rpartition("/")
        stem, dot, ext = name.rpartition(".")
        if not dot:
            stem, ext = name, ""
        prefix = f"{folder}/" if folder else ""
        suffix = f".{ext}" if dot else ""
        n = 2
        while self.taken(candidate := f"{prefix}{stem}-{n}{suffix}"):
            n += 1
        self.placed.add(candidate)
        return candidate

    def fresh(self, path: str) -> str:
        """``path`` itself when nobody holds it, else ``free(path)``."""
        if not self.taken(path):
            self.placed.add(path)
            return path
        return self.free(path)


def task_path_for(path: str) -> str:
    """``areas/tasks/sync-<stem>.html``, named from the memory's file name."""
    name = path.rsplit("/", 1)[-1]
    stem = name[:-5] if name.endswith(".html") else name
    return f"{TASKS}{REVIEW_PREFIX}{slug_of(stem)}.html"


def _stamp(candidates: Iterable[str]) -> str:
    valid = [value for value in candidates if is_utc_instant(value)]
    return max(valid) if valid else EPOCH


def _said(updated: str) -> str:
    return f"last updated {updated}" if updated else "with no readable update stamp"


def review_task(path: str, kept_updated: str, moved: str, moved_updated: str) -> bytes:
    """A task memory naming both copies and which one kept the path.

    The sides are described by their versions (the update stamps), never as this
    clone's and the other's: the same merge run on either machine writes the same
    task. Its stamp is the later of the two versions', for the same reason."""
    links = tuple(Link(KEPT_REL, href) for href in (to_document_path(path),
                                                    to_document_path(moved))
                  if is_root_relative_href(href))
    doc = new_memory_doc(NewMemoryInput(
        title=f"Review two versions of {path}",
        claim=(f"Two clones changed {path} in different ways, so both versions are kept: "
               f"one at {path}, the other at {moved}."),
        memory_type="task",
        at=_stamp((kept_updated, moved_updated)),
        body=(f"The version {_said(kept_updated)} keeps {path}; the version "
              f"{_said(moved_updated)} is now at {moved}.",
              "Read both, then keep the one that holds and archive the other, or keep "
              "both as separate memories and close this task."),
        tags=(SYNC_TAG,),
        links=links,
        author=SYNC_AUTHOR,
    ))
    return serialize_memory(doc).encode("utf-8")
