"""Pictures drawn on the server as SVG: a memory's neighbourhood and the store's shape.

Both are plain values a template turns into ``<svg>`` elements (presentation
attributes only, every text escaped by the template), so they need no script and no
library in the page, and the app's Content-Security-Policy stays as strict as it is.

- ``neighbourhood``: the memory, what its edges join it to either way and what shares
  one of its entities, out to two hops (``mcp.browse.context_of``, the same answer an
  agent's ``memory_context`` gets), laid out in rings: the memory in the middle, each
  hop a ring further out, each ring's nodes in path order.
- ``overview``: memories by type and month written (the last ``MONTHS`` months), how
  many were archived each month, and how the live memories' confidence is spread
  (what decay lowers), as bars.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, cast

from memhtml.head import HeadVersion, IndexedView
from memhtml.mcp.browse import ContextResult, context_of

WIDTH: Final = 720
HEIGHT: Final = 480
RING: Final = 150
"""Pixels between the rings of the neighbourhood picture."""
NEIGHBOURS: Final = 40
"""Memories the neighbourhood picture shows besides the memory itself."""
MONTHS: Final = 12
CONFIDENCE_BINS: Final = 10


@dataclass(frozen=True)
class Node:
    path: str
    title: str
    depth: int
    x: float
    y: float


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    label: str
    kind: str
    """``edge`` (a link, labelled with its relation) or ``shared`` (an entity both carry)."""


@dataclass(frozen=True)
class Picture:
    nodes: tuple[Node, ...]
    lines: tuple[Line, ...]
    truncated: bool
    width: int = WIDTH
    height: int = HEIGHT


def _place(found: ContextResult) -> dict[str, Node]:
    rings: dict[int, list[tuple[str, str]]] = {}
    for node in found.nodes:
        rings.setdefault(node.depth, []).append((node.path, node.title))
    cx, cy = WIDTH / 2, HEIGHT / 2
    placed: dict[str, Node] = {}
    for depth, members in sorted(rings.items()):
        radius = depth * RING * (0.75 if depth > 1 else 1.0)
        for i, (path, title) in enumerate(sorted(members)):
            angle = 2 * math.pi * i / max(1, len(members)) + depth * 0.4
            x = cx + radius * math.cos(angle) * (1.3 if depth else 0)
            y = cy + radius * math.sin(angle) * 0.9
            placed[path] = Node(path, title, depth, round(x, 1), round(y, 1))
    return placed


def neighbourhood(version: HeadVersion, path: str, now: str) -> Picture:
    """The picture of the memory at ``path`` (which ``version`` holds) and its
    neighbourhood, two hops out, at most ``NEIGHBOURS`` others."""
    found = context_of(version, path, 2, NEIGHBOURS, now)
    placed = _place(found)
    lines: list[Line] = []
    for edge in found.edges:
        a, b = placed.get(edge.source), placed.get(edge.target)
        if a is not None and b is not None:
            lines.append(Line(a.x, a.y, b.x, b.y, edge.rel.replace("_", " "), "edge"))
    linked = {(e.source, e.target) for e in found.edges} | {
        (e.target, e.source) for e in found.edges}
    for shared in found.shared:
        carriers = [placed[p] for p in shared.paths if p in placed]
        anchor = next((n for n in carriers if n.path == path), carriers[0] if carriers else None)
        for other in carriers:
            if anchor is None or other is anchor or (anchor.path, other.path) in linked:
                continue
            lines.append(Line(anchor.x, anchor.y, other.x, other.y, shared.entity, "shared"))
    return Picture(tuple(placed.values()), tuple(lines), found.truncated)


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Chart:
    title: str
    bars: tuple[Bar, ...]
    total: int
    width: int = WIDTH
    height: int = 160


def _bars(title: str, counts: list[tuple[str, int]], height: int = 160) -> Chart:
    top = max((v for _, v in counts), default=0) or 1
    slot = WIDTH / max(1, len(counts))
    room = height - 30
    bars = tuple(Bar(label, value, round(i * slot + 4, 1), round(10 + room * (1 - value / top), 1),
                     round(slot - 8, 1), round(room * value / top, 1))
                 for i, (label, value) in enumerate(counts))
    return Chart(title, bars, sum(v for _, v in counts), height=height)


def _months(now: str) -> list[str]:
    year, month = int(now[:4]), int(now[5:7])
    out = []
    for _ in range(MONTHS):
        out.append(f"{year:04d}-{month:02d}")
        month -= 1
        if month == 0:
            year, month = year - 1, 12
    return out[::-1]


def overview(version: IndexedView, now: str) -> list[Chart]:
    """Memories written each month, by type; archived each month; live memories by
    confidence. One pass over six columns of every record (``field_rows``), never the
    records themselves."""
    months = _months(now)
    written: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    archived: Counter[str] = Counter()
    confidence: Counter[int] = Counter()
    rows = cast(Iterable[tuple[str, str | None, str, bool, str, float | None]],
                version.field_rows(("created_at", "archived_at", "status", "archived",
                                    "memory_type", "confidence")))
    for created, archived_at, status, is_archived, kind, sure in rows:
        written[created[:7]] += 1
        if archived_at is not None:
            archived[archived_at[:7]] += 1
        if status == "active" and not is_archived:
            by_type[kind] += 1
            if sure is not None:
                confidence[min(CONFIDENCE_BINS - 1, int(sure * CONFIDENCE_BINS))] += 1
    return [
        _bars("Live memories by type", sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))),
        _bars("Written each month", [(m, written[m]) for m in months]),
        _bars("Archived each month", [(m, archived[m]) for m in months]),
        _bars("Live memories by confidence", [
            (f"{b / CONFIDENCE_BINS:.1f}", confidence[b]) for b in range(CONFIDENCE_BINS)]),
    ]


__all__ = ["Chart", "Picture", "neighbourhood", "overview"]
