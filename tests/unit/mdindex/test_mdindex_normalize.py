"""Normalization and tokenization: the four grep failure modes, as golden cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.mdindex import normalize, tokenize
from memhtml.mdindex.text import normalize_general, tokenize_general, tokenize_normalized


@pytest.mark.parametrize(
    ("failure_mode", "specimen", "phrase"),
    [
        ("a hard wrap splits the phrase", "", "awake and watching"),
        ("emphasis markers split the phrase", "emphasis", "every instrument reading as a"),
        ("blockquote markers survive a naive unwrap", "wrap", "somebody is awake and watching"),
    ],
)
def test_normalize_recovers_the_hidden_phrase(
    specimens: dict[str, str], failure_mode: str, specimen: str, phrase: str
) -> None:
    source = specimens.get(specimen, "somebody is awake\nand watching")
    assert phrase not in source.lower(), f"{failure_mode}: the fixture must hide the phrase"
    assert phrase in normalize(source), failure_mode


def test_the_order_is_the_fix(specimens: dict[str, str]) -> None:
    wrap = specimens["wrap"]
    # Collapsing whitespace before stripping leaves the quote marker between
    # the words, which is exactly what a naive unwrap produces.
    collapsed_first = " ".join(wrap.split()).lower()
    assert "awake > and watching" in collapsed_first
    assert normalize(wrap) == (
        "the light is not the point. the point is that somebody is awake and watching,"
        " and the light is only how that fact travels to a ship."
    )


def test_function_word_variation_is_left_to_term_retrieval(specimens: dict[str, str]) -> None:
    stored = specimens["function_word"]
    # Normalization cannot make "reliable on" match "reliable about"; the
    # terms still overlap on every content word, which is what BM25 scores.
    query = set(tokenize("the anemometer is reliable on the gusts"))
    assert "reliable on the gusts" not in normalize(stored)
    assert {"anemometer", "reliable", "gusts"} <= query & set(tokenize(stored))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("**Bold** and __under__ and `code`", "bold and under and code"),
        ("# Heading\n\n| a | b |", "heading a b"),
        ("[link text](target.md)", "link text target.md"),
        ("  tabs\tand\r\nnewlines  ", "tabs and newlines"),
        ("Straße ÉCOLE", "strasse école"),
        ("> > nested\n> > quote", "nested quote"),
        ("snake_case_name", "snake_case_name"),
        ("", ""),
    ],
)
def test_normalize_golden(source: str, expected: str) -> None:
    assert normalize(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Don't 'quote' me, o'clock!", ["don't", "quote", "me", "o'clock"]),
        ("a I x9 42 b2", ["x9", "42", "b2"]),
        ("über café 東京", ["über", "café", "東京"]),
        ("''' a' 'b ab'", ["ab"]),
        ("well-known e-mail", ["well", "known", "mail", "well-known", "e-mail"]),
    ],
)
def test_tokenize_golden(source: str, expected: list[str]) -> None:
    assert tokenize(source) == expected


@settings(max_examples=300, derandomize=True)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_ascii_fast_path_matches_the_general_one(text: str) -> None:
    reference = normalize_general(text)
    assert normalize(text) == reference
    assert tokenize_normalized(reference) == tokenize_general(reference)


@settings(max_examples=200, derandomize=True)
@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert tokenize(text) == tokenize(once)
