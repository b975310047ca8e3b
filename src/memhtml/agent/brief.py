"""Brief: what a new session should know before its first prompt, in a few hundred
tokens.

Four parts, in this order, because a budget cuts from the end: the open tasks
(overdue first, then by due date; a task is what the agent may be asked about next),
the memories changed last, the memories read most (the access log of this clone's
state plane; none when the log is empty), and the store's top folders with their
counts (where to look). Each line of a memory ends with its path, so the agent can
``memory_read`` it. Parts stop at ``BRIEF_ITEMS`` lines each, and lines stop before
the token budget (``agent.tokens``), the tasks first in line for it; a part that
was cut says how many more it held.

Read from columns where it can: the recent and the tasks are found in a pass over
a few fields of every record (``field_rows``) and only the ones shown are built, so a
brief at 100,000 memories reads 100,000 rows, not 100,000 records.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, cast

from memhtml.agent.tokens import count_tokens, shortened
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import OWN_SCOPE
from memhtml.head import IndexedView
from memhtml.store.tasks import is_overdue

BRIEF_TOKENS: Final = 1_500
BRIEF_ITEMS: Final = 10
CLAIM_CHARS: Final = 240


@dataclass(frozen=True, slots=True)
class Part:
    heading: str
    lines: tuple[str, ...]
    more: int
    """Lines this part held that the item cap or the budget left out."""


@dataclass(frozen=True, slots=True)
class Brief:
    memories: int
    parts: tuple[Part, ...]
    text: str
    tokens: int


def _where(record: MemoryRecord, scope: str) -> str:
    return record.path if scope == OWN_SCOPE else f"{record.path} in scope {scope}"


def _memory_line(record: MemoryRecord, scope: str = OWN_SCOPE) -> str:
    return (f"- {record.title}: {shortened(record.claim, CLAIM_CHARS)} "
            f"({_where(record, scope)})")


def _task_line(record: MemoryRecord, now: str, scope: str = OWN_SCOPE) -> str:
    status = record.task_status or "todo"
    due = ""
    if record.due_at is not None:
        due = (f", due {record.due_at[:10]}"
               + (", OVERDUE" if is_overdue(record.due_at, now, status) else ""))
    return f"- [{status}{due}] {record.title} ({_where(record, scope)})"


def _live_rows(view: IndexedView, fields: tuple[str, ...]) -> Iterable[tuple[object, ...]]:
    rows = cast(Iterable[tuple[object, ...]],
                view.field_rows(("status", "archived", *fields)))
    return (row[2:] for row in rows if row[0] == "active" and not row[1])


def open_tasks(view: IndexedView, now: str) -> list[MemoryRecord]:
    """The live tasks not done: overdue first, then by due date (undated last), then
    by path, as ``memhtml tasks`` orders them."""
    paths = [cast(str, path) for path, kind, status in _live_rows(
        view, ("path", "memory_type", "task_status")) if kind == "task" and status != "done"]
    found = [r for p in paths if (r := view.get(p)) is not None]
    found.sort(key=lambda r: (not is_overdue(r.due_at, now, r.task_status),
                              r.due_at is None, r.due_at or "", r.path))
    return found


def recent(view: IndexedView, count: int) -> list[MemoryRecord]:
    """The ``count`` live memories changed last (ties by path), tasks left out (they
    have their own part)."""
    rows = ((cast(str, updated), cast(str, path)) for updated, path, kind
            in _live_rows(view, ("updated_at", "path", "memory_type")) if kind != "task")
    newest = heapq.nlargest(count, rows)
    return [r for _, p in newest if (r := view.get(p)) is not None]


def most_read(view: IndexedView, reads: Mapping[str, int], count: int,
              skip: set[str]) -> list[MemoryRecord]:
    """The live memories read most (``reads``: path -> reads), ties by path."""
    ranked = sorted(((-n, p) for p, n in reads.items() if n > 0 and p not in skip))
    found: list[MemoryRecord] = []
    for _, path in ranked:
        record = view.get(path)
        if record is not None and record.status == "active" and not record.archived:
            found.append(record)
            if len(found) == count:
                break
    return found


def folders(view: IndexedView) -> list[tuple[str, int]]:
    """Live memories per top folder (two levels: ``areas/checkout``), most first."""
    counts: Counter[str] = Counter()
    for (path,) in _live_rows(view, ("path",)):
        parts = cast(str, path).split("/")
        counts["/".join(parts[:2]) if len(parts) > 2 else parts[0] if len(parts) > 1
               else "(top)"] += 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def brief(view: IndexedView, now: str, reads: Mapping[str, int] | None = None, *,
          budget: int = BRIEF_TOKENS, items: int = BRIEF_ITEMS,
          scope: str = OWN_SCOPE) -> Brief:
    """The session brief of ``view`` at ``now`` (see the module docstring); a
    ``scope`` other than ``own`` names itself in the heading and in each line's path."""
    tasks = open_tasks(view, now)
    changed = recent(view, items)
    shown = {r.path for r in changed}
    used = most_read(view, reads or {}, items, shown)
    places = folders(view)
    live = sum(n for _, n in places)
    candidates = [
        ("Open tasks, overdue first", [_task_line(r, now, scope) for r in tasks]),
        ("Changed last", [_memory_line(r, scope) for r in changed]),
        ("Read most", [_memory_line(r, scope) for r in used]),
        ("Folders", [f"- {name}/ ({n})" for name, n in places]),
    ]
    heading = (f"memhtml brief: {live} live memories; memory_search finds more, "
               "memory_read reads one by its path." if scope == OWN_SCOPE else
               f"Scope {scope}: {live} live memories (memory_read with scope {scope}).")
    spent = count_tokens(heading)
    parts: list[Part] = []
    for title, lines in candidates:
        if not lines:
            continue
        kept: list[str] = []
        # The heading as it reads when the part is cut, so a cut part still fits.
        cost = count_tokens(f"{title} (and {len(lines)} more):")
        for line in lines[:items]:
            tokens = count_tokens(line)
            if spent + cost + tokens > budget:
                break
            kept.append(line)
            cost += tokens
        if kept:
            parts.append(Part(title, tuple(kept), len(lines) - len(kept)))
            spent += cost
    blocks = [heading]
    for part in parts:
        more = f" (and {part.more} more)" if part.more else ""
        blocks.append(f"{part.heading}{more}:\n" + "\n".join(part.lines))
    text = "\n\n".join(blocks)
    return Brief(live, tuple(parts), text, count_tokens(text))


__all__ = ["BRIEF_ITEMS", "BRIEF_TOKENS", "Brief", "Part", "brief"]
