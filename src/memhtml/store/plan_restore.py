"""Bringing a memory back: ``memhtml restore``'s steps over a plan.

``restore_step`` puts a deleted memory back at its path as a commit held it;
``unarchive_step`` brings an archived memory back live at its original path, with
every href to the archive path pointed back (the archive door's inverse);
``archived_source`` names the archived memory the latter brings back. Each checks
its path as every write does. Its own module because only the restore door takes
these steps, and they use the plan's naming and href rewriting without adding to
them.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from memhtml.contracts.ops import Put, Unarchive
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import MemoryRecord
from memhtml.format import remove_link, remove_meta, set_meta
from memhtml.head import IndexedView
from memhtml.head.record import is_archived_path
from memhtml.store.archived import archived_copy
from memhtml.store.errors import Refused, StoreError
from memhtml.store.layout import original_of_archived
from memhtml.store.paths import memory_path, tree_path, unshared
from memhtml.store.plan import Plan, Step, names_for, repoint_hrefs, stepped_as


def restore_step(plan: Plan, path: str, html: str, source: str) -> Step:
    """Put a deleted memory back at ``path``: the file as the commit ``source`` held
    it, byte for byte, checked as every write is. Refused where a memory or another
    file stands now, where the memory was archived rather than deleted (it is not
    lost: the archive holds it), and where the name twins another by case or Unicode
    normalization."""

    def free(tree: str) -> Result[str, StoreError]:
        if plan.view.get(tree) is not None:
            return Failure(Refused(f"{tree} holds a memory; there is nothing to restore"))
        if tree in plan.not_memories:
            return Failure(Refused(f"{tree} is a file that is not a memory "
                                   f"({plan.not_memories[tree]}); it is left alone"))
        moved = None if is_archived_path(tree) else archived_copy(plan.view.records(), tree)
        if moved is not None:
            return Failure(Refused(f"{tree} was archived at {moved.path}, not deleted: "
                                   f"memhtml restore {tree} (without --at) brings that one "
                                   "back live"))
        return Success(tree)

    def put(tree: str) -> Step:
        return plan.apply(Put(tree, html)).map(stepped_as(
            "restore", tree, tree, f"restored as commit {source[:12]} held it"))

    names = names_for(plan)
    return (memory_path(path).bind(free).bind(lambda tree: unshared(tree, names))
            .bind(put))


def archived_source(view: IndexedView, tree: str) -> MemoryRecord | None:
    """The archived memory ``memhtml restore`` brings back for ``tree``: the one at
    ``tree`` when it is an archive path, else the latest archive of the original path
    ``tree`` (the one ``read`` names); None when there is none (a deletion, then)."""
    if is_archived_path(tree):
        record = view.get(tree)
        return record if record is not None and original_of_archived(tree) else None
    return archived_copy(view.records(), tree)


def unarchive_step(plan: Plan, path: str) -> Step:
    """Bring an archived memory back live: the archive door's inverse.

    ``path`` is the archive path or the original one (then its latest archive, as
    ``read`` names it). The file goes back to its original path with status active,
    its ``memhtml-archived`` and ``memhtml-superseded-by`` gone and
    ``memhtml-updated`` stamped; every href to the archive path (an edge, another
    memory's ``memhtml-superseded-by``) points back at the original, and a
    ``supersedes`` edge to it is dropped: a memory back in the live set is not
    replaced by another. Refused where a live memory is at ``path`` already (restoring
    twice included), where the original path holds a memory or another file now, and
    where its name twins another by case or Unicode normalization."""

    def source(tree: str) -> Result[MemoryRecord, StoreError]:
        held_now = plan.view.get(tree)
        if held_now is not None and not is_archived_path(tree):
            return Failure(Refused(f"{tree} holds a memory, live; there is nothing to "
                                   "restore"))
        record = archived_source(plan.view, tree)
        if record is None:
            return Failure(Refused(f"no archived memory at {tree} to restore"))
        return Success(record)

    def target(record: MemoryRecord) -> Result[str, StoreError]:
        original = original_of_archived(record.path) or ""
        if plan.view.get(original) is not None:
            return Failure(Refused(
                f"{original} holds another memory now, so {record.path} cannot go back "
                f"there: move that one away first (memhtml move {original} TO), then "
                "restore"))
        if original in plan.not_memories:
            return Failure(Refused(f"{original} is a file that is not a memory "
                                   f"({plan.not_memories[original]}); {record.path} "
                                   "cannot go back there"))
        names = names_for(plan, leaving=record.path)
        return memory_path(original).bind(lambda tree: unshared(tree, names))

    def back(record: MemoryRecord, original: str) -> Step:
        old, new = to_document_path(record.path), to_document_path(original)
        withdrawn = [Put(r.path, remove_link(r.html, "supersedes", old))
                     for r in (plan.view.get(source) for source in plan.view.inbound(old))
                     if r is not None and r.path != record.path
                     and any(link.rel == "supersedes" and link.href == old for link in r.links)]

        def moved(rewritten: Plan) -> Step:
            current = rewritten.view.get(record.path)
            if current is None:
                return Failure(Refused(f"{record.path} vanished while rewriting its links"))
            html = set_meta(current.html, "memhtml-status", "active")
            html = remove_meta(html, "memhtml-archived")
            html = remove_meta(html, "memhtml-superseded-by")
            html = set_meta(html, "memhtml-updated", plan.now)
            return rewritten.apply(Unarchive(record.path, original, html)).map(stepped_as(
                "restore", original, original, f"restored from {record.path}"))

        return (plan.apply_all(withdrawn)
                .bind(lambda unlinked: repoint_hrefs(unlinked, old, new))
                .bind(moved))

    return (tree_path(path).bind(source)
            .bind(lambda record: target(record).bind(lambda original: back(record, original))))
