"""Laws of reading time out of a query (``head.when``): any text is read without
failing; a date written in any of the forms read names a span that holds it and no
more than its day, month or year; a bound word takes the side it says; relative
spans hold the moment they name; a memory falls in a span exactly when its moment,
its validity or a date in its title does."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memhtml.format import NewMemoryInput, render_template
from memhtml.head import record_from
from memhtml.head.when import Span, falls_in, read_time

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]
days = st.dates(min_value=date(1990, 1, 1), max_value=date(2098, 12, 31))
fillers = st.sampled_from(["what did we decide", "deploys", "the cache", "who was on call",
                           "notes", ""])


@given(st.text(max_size=200))
def test_any_text_is_read_and_a_span_is_never_empty(text: str) -> None:
    asked = read_time(text, NOW)
    span = asked.span
    if span is not None and span.start is not None and span.end is not None:
        assert span.start < span.end


def _forms(day: date) -> list[tuple[str, str]]:
    """(written, grain) for each way a date may be written."""
    month = MONTH_NAMES[day.month - 1]
    return [(day.isoformat(), "day"), (f"{day.day} {month} {day.year}", "day"),
            (f"{month} {day.day}, {day.year}", "day"), (f"{month} {day.year}", "month"),
            (f"{month[:3]} {day.year}", "month"), (f"in {day.year}", "year")]


def _grain_start(day: date, grain: str) -> date:
    return {"day": day, "month": day.replace(day=1), "year": date(day.year, 1, 1)}[grain]


@given(days, fillers, st.integers(0, 5))
def test_a_written_date_names_the_span_that_holds_it(day: date, filler: str,
                                                     form: int) -> None:
    written, grain = _forms(day)[form]
    span = read_time(f"{filler} {written}".strip(), NOW).span
    assert span is not None, written
    assert span.start == _grain_start(day, grain).isoformat()
    assert span.holds(day.isoformat()) and span.holds(f"{day.isoformat()}T23:59:59Z")
    widths = {"day": (1, 1), "month": (28, 31), "year": (365, 366)}[grain]
    assert span.end is not None
    width = (date.fromisoformat(span.end) - date.fromisoformat(span.start)).days
    assert widths[0] <= width <= widths[1]


@given(days, st.sampled_from(["before", "after", "since", "until"]), st.integers(0, 5))
def test_a_bound_word_takes_its_side(day: date, word: str, form: int) -> None:
    written, _ = _forms(day)[form]
    written = written.removeprefix("in ")
    whole = read_time(f"deploys in {written}" if form == 5 else f"deploys {written}",
                      NOW).span
    bounded = read_time(f"deploys {word} {written}", NOW).span
    assert whole is not None and bounded is not None
    expected = {"before": Span(None, whole.start, ""), "until": Span(None, whole.end, ""),
                "after": Span(whole.end, None, ""), "since": Span(whole.start, None, "")}[word]
    assert (bounded.start, bounded.end) == (expected.start, expected.end)


@given(st.integers(1, 300), st.sampled_from(["day", "week", "month", "year"]))
def test_so_long_ago_holds_the_moment_it_names(count: int, unit: str) -> None:
    span = read_time(f"what changed {count} {unit}s ago", NOW).span
    assert span is not None
    days_back = count * {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    assert span.holds((NOW.date() - timedelta(days_back)).isoformat())


@given(days, days, days)
def test_a_memory_falls_in_a_span_exactly_when_its_moment_does(
        happened: date, start: date, end: date) -> None:
    low, high = sorted((start, end))
    span = Span(low.isoformat(), (high + timedelta(1)).isoformat(), "")
    html = render_template(NewMemoryInput(title="Deploy", claim="Deploys moved.",
                                          memory_type="episodic", at="2026-01-06T09:00:00Z"))
    record = dataclasses.replace(record_from(html, "areas/inbox/d.html").unwrap(),
                                 event_at=happened.isoformat())
    assert falls_in(record, span) == (low <= happened <= high)
