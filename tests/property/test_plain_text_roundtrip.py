"""Plain text is text: whatever a title, claim or body paragraph holds is stored
escaped and reads back as the same characters.

"The same" is what a browser shows, which is also what the format reads: runs of
ASCII whitespace (space, tab, line feed, form feed, carriage return) are one space
and the ends are trimmed; every other character, ``<``, ``&``, a no-break space or a
noncharacter included, is kept exactly. Nothing is refused for looking like markup;
only characters no memory file can hold (NUL, a lone surrogate) are, each named with
its field and offset.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.format import fenced_block_of, parse_memory
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.store import WriteInput, read, write
from memhtml.store.errors import Refused
from tests.integration.store.store_support import err, make_memory_store, ok

_ASCII_WS = " \t\n\r\f"

_PRINTABLE = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    st.sampled_from(["<", ">", "&", "&amp;", "<table>", "</p>", "<script>", "`", '"', "'",
                     "\u00a0", "\u3000", "\u2028", "\ufffe", "\t", "\n", " "]),
)
"""Printable text (no control character, no surrogate) and the spellings of markup."""

texts = st.lists(_PRINTABLE, min_size=1, max_size=60).map("".join).filter(
    lambda text: text.strip(_ASCII_WS) != "")
prose = texts.filter(lambda text: fenced_block_of(text.strip(_ASCII_WS)) is None)


def shown(text: str) -> str:
    """What a reader sees of ``text``: ASCII whitespace runs as one space, ends trimmed."""
    return collapse_ascii_whitespace(text).strip(" ")


@given(title=texts, claim=texts, body=st.lists(prose, max_size=3))
def test_any_printable_text_reads_back_as_written(title: str, claim: str,
                                                  body: list[str]) -> None:
    store, _ = make_memory_store()
    landed = ok(write(store, WriteInput(title=title, claim=claim, body=tuple(body),
                                        path="areas/inbox/text.html")))
    path = landed.primary or ""
    assert ok(read(store, path, "gist")) == shown(claim)
    whole = ok(read(store, path, "all"))
    assert parse_memory(whole, path).unwrap().title == shown(title)
    paragraphs = [shown(p) for p in body]
    first = " ".join([shown(claim), *paragraphs[:1]])
    assert ok(read(store, path, "details")) == "\n\n".join([first, *paragraphs[1:]])


@given(before=texts, after=texts,
       bad=st.sampled_from(["\x00", "\ud800", "\udfff"]),
       field=st.sampled_from(["title", "claim", "body"]))
def test_nul_and_lone_surrogates_are_refused_by_field_and_offset(
        before: str, after: str, bad: str, field: str) -> None:
    store, _ = make_memory_store()
    text = before + bad + after
    fields = {"title": "Title", "claim": "A claim.", "body": ()}
    fields[field] = (text,) if field == "body" else text
    refused = err(write(store, WriteInput(**fields)))  # type: ignore[arg-type]
    assert isinstance(refused, Refused)
    label = "body paragraph 1" if field == "body" else field
    what = "NUL character" if bad == "\x00" else "lone surrogate"
    assert any(v.startswith(f"{label}: a {what} at offset {len(before)}")
               for v in refused.violations), refused.violations
