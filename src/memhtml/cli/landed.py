"""How a landed commit reads: the short commit id, the subject, the paths, and what
happened to them: which path is the new memory, and which memory was archived where.

A correction touches three paths (the new file, the old one and its archive copy) and
a finished task two; listed bare they do not say which is which, so the door's new
memory and every archive move are named first, and the other paths follow as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memhtml.cli.output import Reply

if TYPE_CHECKING:
    from memhtml.store import Landed

NEW_BY = frozenset({"write", "correct", "task-add", "restore"})
"""The doors whose primary path is the memory they wrote."""
ARCHIVING = frozenset({"archive", "correct", "task-status", "batch"})
"""The doors that may move a memory under ``archive/`` (a publish writes index pages
under both trees, which are not moves)."""


def _op(subject: str) -> str:
    """The door named in a ``memhtml <op>: ...`` subject line."""
    head = subject.split(":", 1)[0]
    return head.removeprefix("memhtml ").strip()


def roles(landed: Landed) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The new memory's path (when the door wrote one) and each archive move as
    (original path, archive path), read off the commit's paths."""
    from memhtml.store.layout import original_of_archived

    subject = landed.message.splitlines()[0] if landed.message else ""
    op = _op(subject)
    new = (landed.primary,) if op in NEW_BY and landed.primary in landed.paths else ()
    moves: list[tuple[str, str]] = []
    if op in ARCHIVING:
        for path in landed.paths:
            original = original_of_archived(path)
            if original is not None and original in landed.paths:
                moves.append((original, path))
    return tuple(p for p in new if p is not None), tuple(moves)


def restored_from(landed: Landed) -> str | None:
    """The archive path a ``restore`` brought its memory back from, read off the
    commit's paths; None for any other commit, and for a restored deletion."""
    from memhtml.store.layout import original_of_archived

    subject = landed.message.splitlines()[0] if landed.message else ""
    if _op(subject) != "restore" or landed.primary is None:
        return None
    return next((path for path in landed.paths
                 if path != landed.primary and original_of_archived(path) == landed.primary),
                None)


def landed_reply(landed: Landed, nothing: str = "nothing to commit") -> Reply:
    """The reply for a door's commit (or for a door that had nothing to change)."""
    subject = landed.message.splitlines()[0] if landed.message else ""
    new, moves = roles(landed)
    source = restored_from(landed)
    payload = {
        "ok": True,
        "commit": landed.commit or None,
        "committed": bool(landed.paths),
        "subject": subject,
        "paths": list(landed.paths),
        "path": landed.primary,
        "new": list(new),
        "archived": [{"path": old, "archived_at": to} for old, to in moves],
        "restored_from": source,
        "unsynced": list(landed.unsynced),
        "pending": landed.pending,
        "off_branch": landed.off_branch,
    }
    if not landed.paths:
        return Reply(payload, f"{nothing} (at {landed.commit[:10] or 'an unborn branch'})")
    named = {*new, *(p for move in moves for p in move), *((source,) if source else ())}
    lines = [f"{landed.commit[:10]} {subject}"]
    if source is not None:
        lines += [f"  restored: {source} -> {landed.primary}"]
    else:
        lines += [f"  new: {path}" for path in new]
    lines += [f"  archived: {old} -> {to}" for old, to in moves]
    lines += [f"  {path}" for path in landed.paths if path not in named]
    notes = tuple(f"note: {path} has local changes in the checkout; left as it is"
                  for path in landed.unsynced)
    if landed.off_branch:
        notes += ("note: the checkout has another branch (or a detached HEAD) checked out, "
                  "so it was left as it is; the change is committed on the store's branch",)
    if landed.pending:
        notes += ("note: the commit landed, but git's index lock (another git command) kept "
                  "the checkout from following; the next memhtml command brings it up to date",)
    return Reply(payload, "\n".join(lines), notes=notes)
