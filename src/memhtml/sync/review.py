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
from memhtml.sync.memories import Version

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
    return f"updated {updated}" if updated else "with no readable update stamp"


def _quoted(text: str, limit: int = 200) -> str:
    """A claim as a person reads it in a task: quoted, on one line, cut at ``limit``."""
    flat = " ".join(text.split())
    cut = flat if len(flat) <= limit else flat[:limit - 1] + "\u2026"
    return f"\u201c{cut}\u201d"


def describe(version: Version) -> str:
    """What one version holds, in words a person can act on: its claim, its author
    and when it was last updated (or that the file is not a readable memory). Two
    versions stamped in the same second still read apart, by their claims."""
    if version.doc is None:
        return f"a file that is not a valid memory ({_said(version.updated)})"
    author = version.doc.metas.author
    by = f" by {author}" if author else ""
    return f"{_quoted(version.doc.article.gist)}{by}, {_said(version.updated)}"


def review_task(path: str, kept: Version, moved: str, other: Version) -> bytes:
    """A task memory naming both copies, what each says and which one kept the path.

    The sides are described by their versions (claim, author, update stamp), never as
    this clone's and the other's: the same merge run on either machine writes the
    same task. Its stamp is the later of the two versions', for the same reason."""
    links = tuple(Link(KEPT_REL, href) for href in (to_document_path(path),
                                                    to_document_path(moved))
                  if is_root_relative_href(href))
    doc = new_memory_doc(NewMemoryInput(
        title=f"Review two versions of {path}",
        claim=(f"Two clones changed {path} in different ways, so both versions are kept: "
               f"one at {path}, the other at {moved}."),
        memory_type="task",
        at=_stamp((kept.updated, other.updated)),
        body=(f"At {path}: {describe(kept)}.",
              f"At {moved}: {describe(other)}.",
              f"Read both, then keep the one that holds and archive the other "
              f"(memhtml archive PATH), or keep both as separate memories and close this "
              f"task (memhtml task status {task_path_for(path)} done)."),
        tags=(SYNC_TAG,),
        links=links,
        author=SYNC_AUTHOR,
    ))
    return serialize_memory(doc).encode("utf-8")


def rival_corrections_task(task: str, corrected: str, kept: tuple[str, Version],
                           archived: tuple[tuple[str, Version], ...]) -> bytes:
    """The task a merge opens when clones corrected one memory differently: the live
    correction, each archived one, and the commands that swap them."""
    keeper, keeper_version = kept
    first, *_ = archived
    links = tuple(Link(KEPT_REL, href) for href in
                  (to_document_path(keeper), *(to_document_path(p) for p, _ in archived))
                  if is_root_relative_href(href))
    others = tuple(f"Archived at {p}: {describe(v)}." for p, v in archived)
    doc = new_memory_doc(NewMemoryInput(
        title=f"Choose between corrections of {corrected}",
        claim=(f"Clones corrected {corrected} in {len(archived) + 1} different ways; "
               f"the latest correction is live at {keeper} and the others are archived."),
        memory_type="task",
        at=_stamp((keeper_version.updated, *(v.updated for _, v in archived))),
        body=(f"Live at {keeper}: {describe(keeper_version)}.",
              *others,
              f"If an archived correction is the right one, bring it back and retire the "
              f"live one: memhtml restore {first[0]} then memhtml archive {keeper}. If the "
              f"live one holds, close this task: memhtml task status {task} done."),
        tags=(SYNC_TAG,),
        links=links,
        author=SYNC_AUTHOR,
    ))
    return serialize_memory(doc).encode("utf-8")
