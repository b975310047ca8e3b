"""What each page shows, as plain values built from one version of the store.

Every function here reads a ``HeadVersion`` (and, for history, the store's git through
its doors) and returns the context a template renders; none renders markup of its
own but a memory's article, which is the published site's reader of the checked tree
(``store.site_article.article_blocks``): only the elements and attributes it knows are
written back, escaped, so a file's raw markup never reaches the page.

Nothing here loads the whole store into a page: a folder shows one page of its own
memories (``PAGE``) and its subfolders as counts, an entity or tag page at most
``LABEL_LIMIT`` memories, the timeline ``TIMELINE`` commits at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast
from urllib.parse import quote

from markupsafe import Markup, escape
from returns.io import IOResult, IOSuccess
from returns.result import Success

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES, TASK_STATUSES
from memhtml.head import HeadVersion, IndexedView
from memhtml.mcp.render import brief, expired
from memhtml.store import Store, StoreError
from memhtml.store.listing import Listing, listed, status_of
from memhtml.store.reads import TIERS, log, tier_text
from memhtml.store.reads import status_of as store_status
from memhtml.store.recovery import commit_ops
from memhtml.store.site_article import article_blocks
from memhtml.store.site_history import history_events
from memhtml.store.stamps import now_stamp
from memhtml.store.tasks import TaskRow, task_rows
from memhtml.web.pictures import neighbourhood, overview

PAGE: Final = 50
"""Memories a folder page lists at once."""
LABEL_LIMIT: Final = 200
"""Memories an entity or tag page lists at most."""
TIMELINE: Final = 30
"""Commits the activity page shows at once."""
TOUCHED: Final = 8
"""Paths a timeline entry names before ``and N more``."""
HISTORY: Final = 30
"""Commits a memory page lists."""


def memory_url(path: str) -> str:
    return "/memory/" + quote(path, safe="/")


def now_of(store: Store) -> str:
    return now_stamp(store.deps.clock.now())


def _live(record: MemoryRecord) -> bool:
    return record.status == "active" and not record.archived


@dataclass(frozen=True)
class Page:
    number: int
    count: int

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.count else None


def trail(directory: str) -> list[tuple[str, str]]:
    """``store / a / b``: each label with the folder it opens."""
    parts = [p for p in directory.split("/") if p]
    return [("store", ""), *((part, "/".join(parts[: i + 1]) + "/")
                             for i, part in enumerate(parts))]


RECENT: Final = 15
"""Memories the home page lists as recently changed."""


def recent_records(version: IndexedView, count: int) -> list[MemoryRecord]:
    """The ``count`` live memories changed last (ties by path), from four columns of
    every record rather than the records: at 100,000 memories building every record
    to sort them took the home page about a third of a second."""
    rows = cast(Iterable[tuple[str, str, str, bool]],
                version.field_rows(("updated_at", "path", "status", "archived")))
    newest = heapq.nlargest(count, ((updated, path) for updated, path, status, archived
                                    in rows if status == "active" and not archived))
    found = (version.get(path) for _, path in newest)
    return [r for r in found if r is not None]


def home(version: HeadVersion, now: str) -> dict[str, Any]:
    status = store_status(version, now)
    statuses = dict(status.by_status)
    recent = recent_records(version, RECENT)
    top = listed(version, "", recursive=False, limit=1)
    folders = top.unwrap().dirs if isinstance(top, Success) else ()
    return {
        "here": "home",
        "status": {
            "memories": status.memories,
            "archived": statuses.get("archived", 0),
            "tasks_open": sum(n for s, n in status.tasks if s != "done"),
            "overdue": status.overdue,
            "by_type": status.by_type,
        },
        "folders": folders,
        "recent": [brief(r, now) for r in recent],
    }


def folder(version: HeadVersion, directory: str, page: int, now: str
           ) -> IOResult[dict[str, Any], StoreError]:
    """One folder: its subfolders with counts, and one page of the memories directly
    in it (the listing is cut at the end of the page asked for)."""
    found = listed(version, directory, recursive=False, limit=PAGE * page)
    if not isinstance(found, Success):
        if directory.strip("/"):
            return IOResult.from_result(found).map(lambda _: {})
        found = Success(Listing("", False, (), (), 0))  # an empty store's root
    listing = found.unwrap()
    mine = list(listing.memories)
    pages = max(1, -(-listing.total // PAGE))
    number = min(max(page, 1), pages)
    shown = mine[PAGE * (number - 1): PAGE * number]
    name = listing.dir.rstrip("/").rsplit("/", 1)[-1] if listing.dir else "Memory store"
    return IOSuccess({
        "here": "browse", "heading": name, "trail": trail(listing.dir),
        "dir_path": listing.dir.rstrip("/"), "types": MEMORY_TYPES,
        "dirs": listing.dirs, "here_total": listing.total,
        "total": sum(f.memories for f in listing.dirs) + listing.total,
        "memories": [brief(r, now) for r in shown], "page": Page(number, pages),
    })


@dataclass(frozen=True)
class Edge:
    rel: str
    path: str
    title: str
    exists: bool
    raw_rel: str = ""


def _blocks(record: MemoryRecord) -> list[Markup]:
    def resolve(href: str) -> str | None:
        if not href.startswith("/") or href.startswith("//"):
            return None
        return str(escape(memory_url(to_tree_path(href))))

    blocks = article_blocks(record.html, resolve)
    # article_blocks escapes every text and attribute it writes back.
    return [Markup(block) for block in blocks] or [Markup(f"<p>{escape(record.body_text)}</p>")]


def _lineage(version: HeadVersion, record: MemoryRecord) -> list[Markup]:
    def time(value: str) -> str:
        return f'<time datetime="{escape(value)}">{escape(instant(value))}</time>'

    def target(href: str) -> str:
        path = to_tree_path(href)
        other = version.get(path)
        if other is None:
            return f"<code>{escape(href)}</code>"
        return f'<a href="{escape(memory_url(path))}">{escape(other.title)}</a>'

    # history_events escapes what it quotes; time and target above escape theirs.
    return [Markup(e.what) for e in history_events(version, record, time, target)]


def memory(store: Store, version: HeadVersion, record: MemoryRecord, now: str
           ) -> IOResult[dict[str, Any], StoreError]:
    """A memory's page: its text as the checked tree gives it, metadata, edges both
    ways, the versions of the fact and the commits that touched it, and its tiers."""
    outbound = []
    for link in record.links:
        path = to_tree_path(link.href)
        other = version.get(path)
        outbound.append(Edge(link.rel.replace("_", " "), path,
                             other.title if other else path, other is not None, link.rel))
    inbound = []
    for source in sorted(set(version.inbound(to_document_path(record.path)))):
        other = version.get(source)
        if other is None or source == record.path:
            continue
        for rel in sorted({link.rel for link in other.links
                           if to_tree_path(link.href) == record.path}):
            inbound.append(Edge(rel.replace("_", " "), source, other.title, True))
    directory = record.path.rsplit("/", 1)[0] + "/" if "/" in record.path else ""

    def page(commits: Sequence[dict[str, str]]) -> dict[str, Any]:
        return {
            "here": "browse", "record": record, "status": status_of(record),
            "live": _live(record), "rels": EDGE_RELS, "task_statuses": TASK_STATUSES,
            "expired": expired(record.valid_until, now),
            "overdue": record.memory_type == "task" and any(
                row.overdue for row in task_rows([record], now, include_done=True)),
            "trail": trail(directory), "blocks": _blocks(record),
            "outbound": outbound, "inbound": inbound,
            "lineage": _lineage(version, record), "commits": commits,
            "picture": neighbourhood(version, record.path, now),
            "tiers": [(tier, tier_text(record, tier)) for tier in TIERS if tier != "all"],
        }

    return log(store, record.path, HISTORY).map(lambda history: page([
        {"sha": h.commit.sha, "time": h.commit.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
         "author": h.commit.author.name,
         "subject": h.commit.message.splitlines()[0] if h.commit.message else "",
         "path": h.path} for h in history]))


def labelled(version: IndexedView, kind: str, name: str, now: str) -> dict[str, Any]:
    """The live memories carrying entity or tag ``name``, newest first."""
    if kind == "entity":
        paths: Iterable[str] = version.by_entity(name)
    else:
        rows = cast(Iterable[tuple[str, tuple[str, ...]]], version.field_rows(("path", "tags")))
        paths = [path for path, tags in rows if name in tags]
    records = (version.get(p) for p in paths)
    live = sorted((r for r in records if r is not None and _live(r)),
                  key=lambda r: (r.updated_at, r.path), reverse=True)[:LABEL_LIMIT]
    return {"here": "browse", "kind": kind, "name": name,
            "memories": [brief(r, now) for r in live]}


TASK_COLUMNS: Final = ("todo", "doing", "blocked", "done")


def tasks(version: HeadVersion, now: str, include_done: bool) -> dict[str, Any]:
    rows = task_rows(list(version.records()), now, include_done)
    columns: dict[str, list[TaskRow]] = {c: [] for c in TASK_COLUMNS
                                         if include_done or c != "done"}
    for row in rows:
        columns.setdefault(row.status, []).append(row)
    return {"here": "tasks", "rows": rows, "columns": list(columns.items()),
            "include_done": include_done}


def charts(version: HeadVersion, now: str) -> dict[str, Any]:
    return {"here": "overview", "charts": overview(version, now)}


def instant(value: str) -> str:
    """``2026-02-17T08:31:00Z`` as ``2026-02-17 08:31 UTC``; a date as it is."""
    if len(value) == 20 and value[10] == "T" and value.endswith("Z"):
        return f"{value[:10]} {value[11:16]} UTC"
    return value


def activity(store: Store, version: HeadVersion, start: str | None
             ) -> IOResult[dict[str, Any], StoreError]:
    """``TIMELINE`` commits back along the first-parent chain from ``start`` (default:
    the tip), each with its author, the door its trailers name and what it touched."""
    from memhtml.store.errors import widen

    git = store.deps.git

    def walk(sha: str | None, acc: list[dict[str, Any]]
             ) -> IOResult[tuple[list[dict[str, Any]], str | None], StoreError]:
        if sha is None or len(acc) >= TIMELINE:
            return IOSuccess((acc, sha))

        def one(info: Any) -> IOResult[tuple[list[dict[str, Any]], str | None], StoreError]:
            parent = info.parents[0] if info.parents else None
            changed: IOResult[tuple[str, ...], StoreError] = (
                git.changed_paths(parent, info.sha) if parent else IOSuccess(()))
            ops = commit_ops(info)
            return changed.bind(lambda paths: walk(parent, [*acc, {
                "sha": info.sha, "time": info.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "author": info.author.name, "door": ", ".join(dict.fromkeys(ops)),
                "subject": info.message.splitlines()[0] if info.message else "",
                "paths": [(p, version.get(p) is not None) for p in paths[:TOUCHED]],
                "more": max(0, len(paths) - TOUCHED)}]))

        return git.commit_info(sha).alt(widen).bind(one)

    first = IOSuccess(start) if start else store.tip()
    return first.bind(lambda sha: walk(sha, [])).map(lambda done: {
        "here": "activity", "commits": done[0], "older": done[1]})


__all__ = ["PAGE", "Page", "activity", "charts", "folder", "home", "instant", "labelled", "memory",
           "memory_url", "now_of", "tasks", "trail"]
