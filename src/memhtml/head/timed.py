"""A search's time step: the span a query names placed in a version, and the hits
reordered by it. Pure over a view and the hits its arms ranked, so the search door
and the temporal benchmark run the very same step.

``head.when`` reads spans and moments; this module applies them: it places an anchor
("before the migration") by the memory its words find, moves the hits about the span
ahead of the rest, and answers a query that names only a time with that time's
memories. Why a span reorders rather than filters is in docs/design.md ("Time in a
query").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.lexical import tokenize
from memhtml.head.search import SearchHeadInput, SearchHit, search_head
from memhtml.head.when import (
    Span,
    TimeQuery,
    anchored,
    moment_of,
    newest_in,
    time_ordered,
)

CANDIDATES: Final = 50
"""How many hits a query naming a time ranks before the time reorders them: enough
that a memory of that time a little down the words' order still comes up."""
QUESTION_WORDS: Final = frozenset({
    "what", "when", "which", "who", "did", "does", "happened", "happen", "anything",
    "everything", "we", "i", "our", "us", "something", "things", "there", "decided",
    "say", "said"})
"""Words that ask rather than name: a query of only these and a time ("what happened
last week") is answered by the time alone."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A query's span once placed in a version: the span (None: none named, or an
    anchor no memory places), the memory that placed an anchor, and why not."""

    span: Span | None = None
    anchor: str | None = None
    note: str | None = None


def placed(view: HeadView, asked: TimeQuery) -> Placed:
    """``asked``'s span; an anchor's span is where the best memory for its words
    happened."""
    if asked.anchor is None:
        return Placed(asked.span)
    found = search_head(view, SearchHeadInput(asked.anchor, limit=1))
    record = view.get(found[0].path) if found else None
    if record is None:
        return Placed(note=f"no memory about {asked.anchor!r} places "
                           f"'{asked.anchor_side} the {asked.anchor}' in time")
    return Placed(anchored(asked, moment_of(record)), record.path)


def only_time(query: str, phrase: str) -> bool:
    """Whether ``query`` names nothing but the time ``phrase`` and asking words."""
    rest = query.lower().replace(phrase.lower(), " ")
    return not [t for t in tokenize(rest) if t not in QUESTION_WORDS]


def candidates(limit: int, where: Placed) -> int:
    """How many hits the arms rank for a search whose time is ``where``."""
    return limit if where.span is None else max(limit, CANDIDATES)


def in_time(view: HeadView, hits: list[SearchHit], query: str, where: Placed, limit: int,
            admit: Callable[[MemoryRecord], bool]) -> list[SearchHit]:
    """``hits`` (best first) cut to ``limit``, those about the placed span first; a
    query of only a time (or one whose words found nothing) is answered by the span's
    memories ``admit`` lets through, latest first, arm ``time``."""
    span = where.span
    if span is None:
        return hits[:limit]
    if only_time(query, span.phrase) or not hits:
        live = (r for r in view.records() if r.status == "active" and admit(r))
        return [SearchHit(r.path, 0.0, r.claim, ("time",)) for r in newest_in(live, span, limit)]
    by_path = {hit.path: hit for hit in hits}
    order = time_ordered([hit.path for hit in hits], view.get, span, where.anchor)
    return [by_path[path] for path in order][:limit]
