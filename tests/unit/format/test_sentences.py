"""The first sentence of a claim: a period that ends nothing does not cut it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.format import escape_text
from memhtml.format.sentences import sentence_break


def first(text: str) -> str:
    cut = sentence_break(text)
    return text if cut is None else text[:cut[0]]


@pytest.mark.parametrize(("text", "claim"), [
    ("Deploys happen on Tuesdays. Never on Fridays.", "Deploys happen on Tuesdays."),
    ("Use a cache, e.g. Redis, for sessions. It is fast.",
     "Use a cache, e.g. Redis, for sessions."),
    ("Use a cache (i.e. the shared one). Then restart.", "Use a cache (i.e. the shared one)."),
    ("Dr. Lee owns billing. Ask her.", "Dr. Lee owns billing."),
    ("J. Smith wrote it. Ask him.", "J. Smith wrote it."),
    ("It broke. then it healed itself.", "It broke. then it healed itself."),
    ('He said "stop." Then he left.', 'He said "stop."'),
    ("Is it done? Yes.", "Is it done?"),
    ("Version 3.11 is required.", "Version 3.11 is required."),
    ("No break here", "No break here"),
    ("Compare A vs. B first. Then pick.", "Compare A vs. B first."),
])
def test_the_first_sentence(text: str, claim: str) -> None:
    assert first(text) == claim


_ALPHABET = st.sampled_from(list("ab .?!&<>\"')eg") + ["e.g.", "Dr.", " X", " x", "&amp;"])


@given(st.lists(_ALPHABET, max_size=30).map("".join))
def test_escaped_text_breaks_where_the_text_does(text: str) -> None:
    """The import cuts a claim in the text and in its escaped markup separately; both
    must cut at the same character, or the marked claim and the claim disagree."""
    html = escape_text(text)
    plain_cut, html_cut = sentence_break(text), sentence_break(html)
    assert (plain_cut is None) == (html_cut is None)
    if plain_cut is not None and html_cut is not None:
        assert escape_text(text[:plain_cut[0]]) == html[:html_cut[0]]
        assert escape_text(text[plain_cut[1]:]) == html[html_cut[1]:]
