"""How a landed commit reads: the short commit id, the subject, the paths."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memhtml.cli.output import Reply

if TYPE_CHECKING:
    from memhtml.store import Landed


def landed_reply(landed: Landed, nothing: str = "nothing to commit") -> Reply:
    """The reply for a door's commit (or for a door that had nothing to change)."""
    subject = landed.message.splitlines()[0] if landed.message else ""
    payload = {
        "ok": True,
        "commit": landed.commit or None,
        "committed": bool(landed.paths),
        "subject": subject,
        "paths": list(landed.paths),
        "path": landed.primary,
        "unsynced": list(landed.unsynced),
        "pending": landed.pending,
    }
    if not landed.paths:
        return Reply(payload, f"{nothing} (at {landed.commit[:10] or 'an unborn branch'})")
    lines = [f"{landed.commit[:10]} {subject}"]
    lines += [f"  {path}" for path in landed.paths]
    notes = tuple(f"note: {path} has local changes in the checkout; left as it is"
                  for path in landed.unsynced)
    if landed.pending:
        notes += ("note: the commit landed, but git's index lock (another git command) kept "
                  "the checkout from following; the next memhtml command brings it up to date",)
    return Reply(payload, "\n".join(lines), notes=notes)
