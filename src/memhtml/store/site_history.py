"""A memory page's history: the versions of the fact the tree holds, newest first.

The page lists what the memory went through as the store itself records it: when it
was written and by whom, its last update, its archiving and what superseded it, and
each earlier version it corrects (the ``supersedes`` chain, archived files the site
also publishes), with the claim each one made. So a reader sees how the fact changed
without leaving the site.

Commits are not listed. A page is generated from a version of the tree, and some
commits edit a memory and regenerate its page at once (the integrity phase of a sleep
run repairs an href and rewrites the site in one commit): such a page could never
name the commit it lands in, and would be stale the moment it landed. The lineage is
a function of the tree alone, so a page is current exactly when its memory is.
``memhtml log PATH`` lists every commit, following moves and archives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.format import escape_text

LINEAGE_LIMIT: Final = 20
"""Earlier versions listed at most: a chain longer than this is a loop of edits a
person can read in full with ``memhtml log``."""

Time = Callable[[str], str]
"""Renders an instant as a ``<time>`` element."""
Target = Callable[[str], str]
"""Renders a document-form href as a link to its page, or as text with the reason."""


@dataclass(frozen=True, slots=True)
class Event:
    """One line of a history: when, and what happened, as escaped markup."""

    at: str
    what: str


def _quoted(claim: str) -> str:
    return f"\u201c{escape_text(' '.join(claim.split()))}\u201d"


def earlier_versions(view: HeadView, record: MemoryRecord) -> list[MemoryRecord]:
    """The versions ``record`` corrects, nearest first: its ``supersedes`` targets the
    view holds, then theirs, each once, at most ``LINEAGE_LIMIT``."""
    found: list[MemoryRecord] = []
    seen = {record.path}
    frontier = [record]
    while frontier and len(found) < LINEAGE_LIMIT:
        current = frontier.pop(0)
        for link in sorted(current.links, key=lambda link: link.href):
            target = to_tree_path(link.href)
            older = view.get(target) if link.rel == "supersedes" else None
            if older is not None and target not in seen and len(found) < LINEAGE_LIMIT:
                seen.add(target)
                found.append(older)
                frontier.append(older)
    return found


def history_events(view: HeadView, record: MemoryRecord, time: Time, target: Target
                   ) -> list[Event]:
    """The page's history of ``record``, newest first (ties: the order written)."""
    events: list[Event] = []
    if record.archived_at is not None:
        then = (f", superseded by {target(record.superseded_by)}"
                if record.superseded_by is not None else "")
        events.append(Event(record.archived_at, f"{time(record.archived_at)} archived{then}"))
    if record.updated_at != record.created_at:
        events.append(Event(record.updated_at, f"{time(record.updated_at)} last updated"))
    by = f" by {escape_text(record.author)}" if record.author else ""
    events.append(Event(record.created_at, f"{time(record.created_at)} written{by}"))
    for older in earlier_versions(view, record):
        href = "/" + older.path
        events.append(Event(older.created_at,
                            f"{time(older.created_at)} an earlier version "
                            f"{target(href)} said {_quoted(older.claim)}"))
    return sorted(events, key=lambda event: event.at, reverse=True)
