"""A free-text positional (``search``'s query, ``md query``'s text) takes its words
unquoted: however the words are split into tokens, the command asks the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.cli.cli_support import call, usage_code

MEMORIES = (
    ("Deploy window", "Deploys to checkout-api happen on Tuesdays.", "procedural"),
    ("On-call rotation", "Priya runs the on-call rotation every Monday.", "semantic"),
    ("Friday freeze", "Nothing ships on a Friday; the freeze starts at noon.", "procedural"),
)
VOCABULARY = ("deploy", "window", "tuesdays", "rotation", "priya", "friday", "noon",
              "checkout", "monday")

WORDS = st.lists(st.sampled_from(VOCABULARY) | st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
                 min_size=1, max_size=6)


@pytest.fixture
def filled(store: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    for title, claim, kind in MEMORIES:
        code, answer = call(capsys, "write", "--title", title, "--claim", claim, "--type", kind,
                            "--store", str(store), "--json")
        assert code == 0, answer
    return store


def grouped(words: list[str], cuts: list[bool]) -> list[str]:
    """The words as command-line tokens: a cut after a word ends a token, so each
    token is one word or several joined by a space (as a quoted argument is)."""
    tokens = [[words[0]]]
    for index, word in enumerate(words[1:]):
        if index < len(cuts) and cuts[index]:
            tokens.append([])
        tokens[-1].append(word)
    return [" ".join(token) for token in tokens]


def test_search_takes_an_unquoted_query(filled: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(filled), "--json")
    code, answer = call(capsys, "search", "deploy", "window", *s)
    assert code == 0
    assert answer["query"] == "deploy window"
    assert answer["hits"][0]["path"] == "areas/inbox/deploy-window.html"
    assert call(capsys, "search", "deploy window", *s) == (code, answer)


def test_a_search_without_words_is_a_usage_error(filled: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_code(capsys, "search", "--store", str(filled)) == 2
    assert usage_code(capsys, "search", "deploy", "--bogus", "--store", str(filled)) == 2


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=WORDS, cuts=st.lists(st.booleans(), max_size=6), at=st.integers(0, 6))
def test_any_split_of_the_words_searches_the_same(
        filled: Path, capsys: pytest.CaptureFixture[str], words: list[str], cuts: list[bool],
        at: int) -> None:
    # The store is only read here, so one store serves every example.
    s = ["--store", str(filled), "--json"]
    tokens = grouped(words, cuts)
    tokens[at:at] = ["--limit", "5"]  # an option may sit between the words
    split = call(capsys, "search", *tokens, *s)
    whole = call(capsys, "search", " ".join(words), "--limit", "5", *s)
    assert split == whole
    assert split[1]["query"] == " ".join(words)


def test_md_query_takes_unquoted_text(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for title, claim, _ in MEMORIES:
        (notes / f"{title.lower().replace(' ', '-')}.md").write_text(
            f"# {title}\n\n{claim}\n", encoding="utf-8")
    root = ("--root", str(notes), "--json")
    code, answer = call(capsys, "md", "query", "friday", "noon", *root)
    assert code == 0
    assert answer["query"] == "friday noon"
    assert answer["hits"][0]["file"] == "friday-freeze.md"
    assert call(capsys, "md", "query", "friday noon", *root) == (code, answer)
    assert call(capsys, "md", "query", "friday", "--k", "1", "noon", *root)[1]["hits"] == \
        answer["hits"][:1]
    assert usage_code(capsys, "md", "query", *root) == 2
