"""Truncation and receipts never cut inside a character."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.mdindex import SNIPPET_BYTES, FileHit, format_receipt, truncate
from memhtml.mdindex.text import ELLIPSIS

MULTIBYTE = st.text(
    alphabet=st.sampled_from(["a", "é", "ß", "東", "😀", "\u0301", " ", "ж"]), max_size=200
)


@settings(max_examples=300, derandomize=True)
@given(MULTIBYTE, st.integers(min_value=-3, max_value=300))
def test_truncate_cuts_on_a_character_boundary(text: str, limit: int) -> None:
    cut = truncate(text, limit)
    cut.encode("utf-8")  # a split character would not survive the round trip
    if len(text.encode("utf-8")) <= limit:
        assert cut == text
    else:
        assert cut.endswith(ELLIPSIS)
        kept = cut[: -len(ELLIPSIS)]
        assert text.startswith(kept)
        assert len(kept.encode("utf-8")) <= max(limit, 0)
        # The cut keeps as much as fits: the next character would not have.
        assert len(text[: len(kept) + 1].encode("utf-8")) > limit


def test_truncate_at_a_multibyte_boundary() -> None:
    text = "a" * 9 + "é" + "b" * 40
    assert truncate(text, 10) == "a" * 9 + ELLIPSIS
    assert truncate(text, 11) == "a" * 9 + "é" + ELLIPSIS
    assert truncate("short", 99) == "short"


@settings(max_examples=100, derandomize=True)
@given(MULTIBYTE)
def test_receipt_lines_hold_whole_characters(text: str) -> None:
    hit = FileHit(
        "a.md", ".", None, None, 0, 1, truncate(text, SNIPPET_BYTES), 0.5, 1.0, "bm25"
    )
    line = format_receipt(hit)
    assert line.encode("utf-8").decode("utf-8") == line
    assert "\n" not in line
