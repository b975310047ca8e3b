"""The pending-mark ledger: appended, deduplicated by line, unparsable lines counted."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memhtml.sleep.ledger import PendingMark, append_marks, parse_line, read_ledger

SESSION = PendingMark.of("session-consolidated", session="s-1")
PROMOTED = PendingMark.of("edge-promoted", key="a.html|b.html", detections=2)
BELOW = PendingMark.of("commitment-below-floor", statement="I'll send it <b>Friday</b>",
                       confidence=0.4, session="s-1", done=False)


def test_a_line_is_sorted_compact_json() -> None:
    assert SESSION.line() == '{"kind":"session-consolidated","session":"s-1"}'
    assert json.loads(BELOW.line())["statement"] == "I'll send it <b>Friday</b>"


def test_lines_round_trip() -> None:
    for mark in (SESSION, PROMOTED, BELOW):
        assert parse_line(mark.line()) == mark


def test_append_deduplicates_by_rendered_line() -> None:
    data, added = append_marks(None, [SESSION, PROMOTED, SESSION])
    assert added == 2
    again, more = append_marks(data, [PROMOTED, SESSION])
    assert more == 0 and again == data
    grown, one = append_marks(data, [BELOW, SESSION])
    assert one == 1
    assert grown is not None and data is not None and grown.startswith(data)
    assert read_ledger(grown).marks == (SESSION, PROMOTED, BELOW)


def test_a_line_that_does_not_parse_is_counted_and_skipped() -> None:
    lines = [
        SESSION.line(), "not json", "[1, 2]", '{"kind": "nope"}',
        '{"kind": "session-consolidated"}',
        '{"kind": "edge-promoted", "key": "k", "detections": true}',
        '{"kind": "commitment-below-floor", "statement": "x", "confidence": "high", '
        '"session": "s", "done": false}',
        "", PROMOTED.line(),
    ]
    data = ("\n".join(lines) + "\n").encode() + b"\xff\xfe\n"
    ledger = read_ledger(data)
    assert ledger.marks == (SESSION, PROMOTED)
    assert ledger.unparsed == 7
    appended, added = append_marks(data, [SESSION])
    assert added == 0 and appended == data


def test_a_missing_final_newline_is_mended_before_appending() -> None:
    data, _ = append_marks(SESSION.line().encode(), [PROMOTED])
    assert data == f"{SESSION.line()}\n{PROMOTED.line()}\n".encode()


@given(st.lists(st.sampled_from([SESSION, PROMOTED, BELOW]), max_size=12))
def test_appending_in_any_order_keeps_each_line_once(marks: list[PendingMark]) -> None:
    data: bytes | None = None
    for mark in marks:
        data, _ = append_marks(data, [mark])
    assert read_ledger(data).marks == tuple(dict.fromkeys(marks))


def test_a_promotion_may_say_what_it_rests_on_and_an_older_line_still_reads() -> None:
    rests = PendingMark.of("entity-promoted", key="person|[]", detections=2, since="a" * 40,
                           by="b" * 40, prompt="c" * 64)
    assert parse_line(rests.line()) == rests
    assert parse_line(PROMOTED.line()) == PROMOTED
    wrong = '{"kind": "edge-promoted", "key": "k", "detections": 2, "since": 7}'
    assert parse_line(wrong) is None
    # A field no kind names is not carried (the line still reads).
    extra = '{"kind": "edge-promoted", "key": "k", "detections": 2, "prompt": "x"}'
    assert parse_line(extra) == PendingMark.of("edge-promoted", key="k", detections=2)


def test_a_compress_refusal_is_a_record() -> None:
    refused = PendingMark.of("compress-refused", path="resources/people/laith.html",
                             rule="person-file", detail="a person's file")
    assert parse_line(refused.line()) == refused
    assert parse_line('{"kind": "compress-refused", "path": "x.html", "rule": "arc"}') is None
