"""Markup is a word boundary, never glue: every word of a markdown paragraph is findable."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.mdindex import index_documents, make_channels, normalize, retrieve, tokenize


@pytest.mark.parametrize(
    ("source", "wanted"),
    [
        ("[Deleted thing](gone.md)", {"deleted", "thing", "gone.md", "gone"}),
        (
            "[[feedback_testing|the tests]]",
            {"feedback_testing", "feedback", "testing", "the", "tests"},
        ),
        (
            "see `src/mod_a/file_b.py`.",
            {"src/mod_a/file_b.py", "file_b.py", "file_b", "mod_a", "src", "mod", "file", "py"},
        ),
        ("C# and F# beat c++", {"c#", "f#", "c++", "and", "beat"}),
        ("[[note#Some heading]]", {"note", "some", "heading"}),
        ("**bold**text and _emph_ too", {"bold", "text", "emph", "too"}),
        ("| cell one | cell_two |", {"cell", "one", "cell_two", "two"}),
        ("mail ines@example.org at 11:00", {"ines@example.org", "example.org", "11:00"}),
    ],
)
def test_markup_separates_and_code_words_stay_whole(source: str, wanted: set[str]) -> None:
    terms = set(tokenize(source))
    assert wanted <= terms, wanted - terms


def test_link_text_and_target_do_not_glue() -> None:
    assert normalize("[Deleted thing](gone.md)") == "deleted thing gone.md"
    assert normalize("[[feedback_testing|the tests]]") == "feedback_testing the tests"
    assert "thinggone" not in normalize("[Deleted thing](gone.md)")


def test_edge_underscores_and_heading_hashes_are_markup() -> None:
    assert normalize("__init__ ## Title _x_") == "init title x"
    assert normalize("snake_case C#") == "snake_case c#"


def test_a_code_word_is_found_whole_by_its_own_query() -> None:
    # The query runs through the same tokenizer, so asking for the whole
    # spelling reaches the whole term and every part of it.
    assert set(tokenize("file_b.py")) == {"file_b.py", "file_b", "file", "py"}


WORD = st.text(alphabet=string.ascii_lowercase + string.digits + "éßø", min_size=2, max_size=8)

CONSTRUCTS = [
    "**{a}** {b}",
    "{a}**{b}**",
    "*{a}*{b}",
    "_{a}_ {b}",
    "__{a}__{b}",
    "~~{a}~~{b}",
    "[{a}]({b}.md)",
    "[{a} x]({b})",
    "[[{a}|{b}]]",
    "[[{a}#{b}]]",
    "[[{a}]][[{b}]]",
    "# {a}\n{b}",
    "## {a} ##\n{b}",
    "|{a}|{b}|",
    "| {a} | {b} |\n|---|---|",
    "`{a}`{b}",
    "``{a}``{b}",
    "> {a}\n> {b}",
    ">{a}\n>{b}",
    "- {a}\n- {b}",
    "* {a}\n* {b}",
    "1. {a}\n2. {b}",
    "![{a}]({b}.png)",
    "{a}_{b}",
    "{a}/{b}",
    "{a}.{b}",
    "{a}-{b}",
    "({a}){b}",
]

FILLER = "plenty of ordinary filler words around it"


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.sampled_from(CONSTRUCTS), WORD, WORD)
def test_both_words_of_any_construct_are_retrievable(construct: str, a: str, b: str) -> None:
    body = f"{FILLER}\n{construct.format(a=a, b=b)}\n{FILLER}"
    built = index_documents([("target.md", body.encode()), ("other.md", "ωωω ψψψ φφφ".encode())])
    assert isinstance(built, Success)
    corpus = built.unwrap()
    channels = make_channels(corpus, ["bm25"]).unwrap()
    for word in (a, b):
        hits = retrieve(corpus, channels, word, 1)
        assert [hit.file for hit in hits] == ["target.md"], (construct, word)
