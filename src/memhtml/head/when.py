"""Time in a query: the span a query names, and when a memory holds.

A question about memory is often a question about time: "what did we decide in
August 2023", "deploys last year", "the rota before the migration", "when did the
cache move". A ranker of words sees "August" and "2023" as two more terms, and most
memories never spell their dates in words, so the span is read out of the query
here and matched against the dates a memory carries: its event time, its validity,
its created and updated stamps, and ISO dates written in its title.

Pure: ``now`` is handed in (the clock is a service), and nothing here reads the
store. A span is a half-open interval of ISO instants ``[start, end)``, either side
open; instants and dates compare as strings because the format admits only forms
that sort as they order in time (a date ``2023-08-14`` sorts before every instant of
that day, which is what an inclusive start wants).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final

from memhtml.contracts.record import MemoryRecord

MONTHS: Final = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
    ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
    ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_UNITS: Final = {"day": 1, "week": 7, "month": 30, "year": 365}

_EXPRESSIONS: Final = (
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("iso_month", re.compile(r"\b(\d{4})-(\d{2})\b(?!-)")),
    ("month_year", re.compile(rf"\b({_MONTH})\.?\s+(?:of\s+)?({_YEAR})\b", re.IGNORECASE)),
    ("day_month_year", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+"
                                  rf"({_YEAR})\b", re.IGNORECASE)),
    ("month_day_year", re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
                                  rf"({_YEAR})\b", re.IGNORECASE)),
    ("year", re.compile(rf"\b(?:in|during|of|for|since|before|after|until|by)\s+"
                        rf"(?P<year>{_YEAR})\b", re.IGNORECASE)),
    ("relative", re.compile(r"\b(yesterday|today|this (?:week|month|year)|"
                            r"last (?:week|month|year))\b", re.IGNORECASE)),
    ("ago", re.compile(r"\b(\d{1,3}|a|an|one|two|three|four|five|six)\s+"
                       r"(day|week|month|year)s?\s+ago\b", re.IGNORECASE)),
)
_COUNTS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                  "six": 6}
_BOUND = re.compile(r"\b(before|after|since|until|till|by)\s+$", re.IGNORECASE)
_ANCHOR = re.compile(r"\b(before|after|since)\s+(?:the\s+|our\s+|we\s+)?"
                     r"([a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})", re.IGNORECASE)
_WHEN = re.compile(r"^\s*(?:when|what\s+(?:date|day|year|month)|how\s+long\s+ago)\b",
                   re.IGNORECASE)
_STOP_ANCHOR: Final = frozenset({"a", "an", "it", "that", "this", "then", "now", "we",
                                 "i", "you", "they", "he", "she", "is", "was", "do"})


@dataclass(frozen=True, slots=True)
class Span:
    """A span of time a query names: ``[start, end)`` as ISO dates or instants, a
    side None when open. ``phrase`` is the words it was read from, for the answer."""

    start: str | None
    end: str | None
    phrase: str

    def holds(self, moment: str) -> bool:
        """Whether an instant or date falls in the span."""
        return ((self.start is None or moment >= self.start)
                and (self.end is None or moment < self.end))

    def overlaps(self, start: str | None, end: str | None) -> bool:
        """Whether ``[start, end)`` (a side None: open) meets the span."""
        return ((self.end is None or start is None or start < self.end)
                and (self.start is None or end is None or end > self.start))


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What a query says about time: a span, an anchor to resolve (``before the
    migration``: the span ends where the memory about ``anchor`` happened), and
    whether it asks when something happened."""

    span: Span | None = None
    anchor: str | None = None
    anchor_side: str | None = None
    """``before``, ``after`` or ``since``: which side of the anchor the span lies."""
    asks_when: bool = False


def _day(value: date) -> str:
    return value.isoformat()


def _month_span(year: int, month: int, phrase: str) -> Span:
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return Span(_day(date(year, month, 1)), _day(end), phrase)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _span_of(kind: str, match: re.Match[str], today: date) -> Span | None:
    phrase = match.group(0)
    groups = match.groups()
    if kind in ("iso", "day_month_year", "month_day_year"):
        if kind == "iso":
            year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
        elif kind == "day_month_year":
            year, month, day = int(groups[2]), MONTHS[groups[1].lower()], int(groups[0])
        else:
            year, month, day = int(groups[2]), MONTHS[groups[0].lower()], int(groups[1])
        start = _safe_date(year, month, day)
        return None if start is None else Span(_day(start), _day(start + timedelta(1)), phrase)
    if kind == "iso_month":
        year, month = int(groups[0]), int(groups[1])
        return _month_span(year, month, phrase) if 1 <= month <= 12 else None
    if kind == "month_year":
        return _month_span(int(groups[1]), MONTHS[groups[0].lower()], phrase)
    if kind == "year":
        year = int(groups[0])
        return Span(_day(date(year, 1, 1)), _day(date(year + 1, 1, 1)), groups[0])
    if kind == "ago":
        count = _COUNTS.get(groups[0].lower())
        n = count if count is not None else int(groups[0])
        days = n * _UNITS[groups[1].lower()]
        around = today - timedelta(days)
        slack = timedelta(max(1, days // 4))
        return Span(_day(around - slack), _day(around + slack + timedelta(1)), phrase)
    word = groups[0].lower()
    if word == "today":
        return Span(_day(today), _day(today + timedelta(1)), phrase)
    if word == "yesterday":
        return Span(_day(today - timedelta(1)), _day(today), phrase)
    unit = word.split()[1]
    last = word.startswith("last")
    if unit == "week":
        monday = today - timedelta(today.weekday())
        start = monday - timedelta(7) if last else monday
        return Span(_day(start), _day(start + timedelta(7)), phrase)
    if unit == "month":
        year, month = today.year, today.month
        if last:
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return _month_span(year, month, phrase)
    year = today.year - 1 if last else today.year
    return Span(_day(date(year, 1, 1)), _day(date(year + 1, 1, 1)), phrase)


def _bounded(span: Span, before: str) -> Span:
    """``before 2023``, ``after August 2023``, ``since ...``, ``until ...``: one side
    of the named span, open on the other."""
    word = _BOUND.search(before)
    if word is None:
        return span
    side = word.group(1).lower()
    phrase = f"{word.group(1)} {span.phrase}"
    if side in ("before", "until", "till", "by"):
        end = span.start if side == "before" else span.end
        return Span(None, end, phrase)
    return Span(span.end if side == "after" else span.start, None, phrase)


def read_time(query: str, now: datetime) -> TimeQuery:
    """The span ``query`` names, if any, its anchor when it names an event instead
    of a date, and whether it asks when. The first date expression found wins; a
    query naming none has no span.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 12, 6, tzinfo=timezone.utc)
    >>> read_time("what did we decide in August 2023", now).span
    Span(start='2023-08-01', end='2023-09-01', phrase='August 2023')
    >>> read_time("deploys last year", now).span
    Span(start='2025-01-01', end='2026-01-01', phrase='last year')
    >>> read_time("the rota before 2024", now).span
    Span(start=None, end='2024-01-01', phrase='before 2024')
    >>> read_time("the rota before 2024-03-01", now).span
    Span(start=None, end='2024-03-01', phrase='before 2024-03-01')
    >>> q = read_time("on-call rota before the migration", now)
    >>> (q.span, q.anchor, q.anchor_side)
    (None, 'migration', 'before')
    >>> read_time("when did the cache move", now).asks_when
    True
    """
    today = now.date()
    asks_when = _WHEN.search(query) is not None
    found: list[tuple[int, str, re.Match[str]]] = []
    for kind, pattern in _EXPRESSIONS:
        for match in pattern.finditer(query):
            # A bare year is matched with its preposition; it sits where the year does,
            # so "before 2024-03-01" is the date, not the year 2024.
            found.append((match.start("year") if kind == "year" else match.start(),
                          kind, match))
    for start, kind, match in sorted(found, key=lambda f: (f[0], f[0] - f[2].end())):
        span = _span_of(kind, match, today)
        if span is not None:
            head = query[:start]
            return TimeQuery(span=_bounded(span, head), asks_when=asks_when)
    anchor = _ANCHOR.search(query)
    if anchor is not None:
        words = [w for w in anchor.group(2).lower().split() if w not in _STOP_ANCHOR]
        if words:
            return TimeQuery(anchor=" ".join(words), anchor_side=anchor.group(1).lower(),
                             asks_when=asks_when)
    return TimeQuery(asks_when=asks_when)


def anchored(query: TimeQuery, at: str) -> Span | None:
    """The span an anchored query names once its anchor's time ``at`` is known."""
    if query.anchor is None or query.anchor_side is None:
        return query.span
    phrase = f"{query.anchor_side} the {query.anchor}"
    if query.anchor_side == "before":
        return Span(None, at, phrase)
    return Span(at, None, phrase)


def title_dates(record: MemoryRecord) -> tuple[str, ...]:
    """ISO dates written in a memory's title: a meeting note named for its day."""
    return tuple(m.group(0) for m in _ISO_DAY.finditer(record.title))


def moment_of(record: MemoryRecord) -> str:
    """When a memory's fact happened, as best the file says: its event time, else a
    date in its title, else when it was written."""
    if record.event_at is not None:
        return record.event_at
    dated = title_dates(record)
    return dated[0] if dated else record.created_at


def falls_in(record: MemoryRecord, span: Span) -> bool:
    """Whether a memory is about the span: its moment falls in it, or its stated
    validity meets it, or a date in its title does."""
    if span.holds(moment_of(record)):
        return True
    if (record.valid_from is not None or record.valid_until is not None) and span.overlaps(
            record.valid_from, record.valid_until):
        return True
    return any(span.holds(day) for day in title_dates(record))


def valid_at(record: MemoryRecord, moment: str) -> bool:
    """Whether a memory states its fact true at ``moment``: inside its validity
    (absent sides open: the spec's "absent means always-valid")."""
    return ((record.valid_from is None or record.valid_from <= moment)
            and (record.valid_until is None or moment < record.valid_until))


@dataclass(frozen=True, slots=True)
class Holds:
    """When a hit's fact holds, for the answer: from its validity start (else its
    moment) until its validity end (None: still, as far as the memory says).
    ``stated``: the file says so (a validity, an event time, a title date) rather
    than the stamp of its writing standing in, so a reader is told only news."""

    since: str
    until: str | None
    stated: bool = True


def holds_of(record: MemoryRecord) -> Holds:
    since = record.valid_from or moment_of(record)
    stated = (record.valid_from is not None or record.valid_until is not None
              or since != record.created_at)
    return Holds(since, record.valid_until, stated)


def time_ordered(paths: list[str], record: Callable[[str], MemoryRecord | None],
                 span: Span, anchor: str | None = None) -> list[str]:
    """``paths`` (best first) with the memories about ``span`` moved ahead of the
    rest, each group in its own order: the words still rank, the time decides which
    of them a question about that time wants first. A query whose span no hit meets
    keeps its order. ``anchor``, the memory that placed the span ("after the
    migration": the migration's own memory), is the event, not a memory of the time
    around it, so it stays with the rest."""
    inside = [p for p in paths if p != anchor and (r := record(p)) is not None
              and falls_in(r, span)]
    held = set(inside)
    return inside + [p for p in paths if p not in held]


def newest_in(records: Iterable[MemoryRecord], span: Span, limit: int) -> list[MemoryRecord]:
    """The memories about ``span``, latest moment first, at most ``limit``: what a
    query naming only a time ("what happened last week") is answered with."""
    inside = [r for r in records if falls_in(r, span)]
    return sorted(inside, key=lambda r: (moment_of(r), r.path), reverse=True)[:limit]
