"""The quick reader of serializer-shaped files gives what the full parse gives.

``read_canonical(text)`` is None or the full parse's doc, content hash and warnings,
for every text: files the template writes, the same files with metas, links and
paragraphs of their own, and any of these with characters spliced in where a reader
could go wrong (markup, references, controls, no-break spaces, noncharacters).
"""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from memhtml.format import NewMemoryInput, parse_memory_hashed, render_template
from memhtml.format.canonical import read_canonical
from memhtml.format.markup import escape_attribute, escape_text
from memhtml.head.record import record_from
from tests.property.strategies import claims, memory_files, words

_SPLICED = st.sampled_from([
    "<", ">", "&", '"', "'", "\n", "\t", "\r", " ", "  ", "\u00a0", "\x1b", "\x00", "\x85",
    "\ufeff", "\ufffe", "\U0001fffe", "\u2028", "é", "🙂", "&amp;", "&lt;", "&gt;",
    "&quot;", "&nbsp;", "&#10;", "&amp", "<p>", "</p>", "<mark>", "</mark>", "<b>x</b>",
    "<!-- c -->", "<meta charset=\"latin1\">", '<meta name="memhtml-tag" content="x">',
    '<link rel="memhtml-supports" href="/a/b.html">', "<title>t</title>", "</head>",
    "<article>", "<script>x</script>", "javascript:", "memhtml-", "-", "/", "/../",
])

_META_NAMES = st.sampled_from([
    "memhtml-tag", "memhtml-entity", "memhtml-alias", "memhtml-confidence",
    "memhtml-importance", "memhtml-reprieves", "memhtml-needs-revision",
    "memhtml-content-hash", "memhtml-author", "memhtml-type", "memhtml-status",
    "memhtml-archived", "memhtml-superseded-by", "memhtml-due", "memhtml-valid-from",
    "memhtml-task-status", "memhtml-source", "memhtml-unknown", "memhtml-created",
])
_META_VALUES = st.one_of(words, st.sampled_from([
    "0.5", "1.5", "7", "11", "true", "maybe", "", " x ", "2026-01-06", "2026-01-06T09:00:00Z",
    "/a/b.html", "a/b.html", "archived", "semantic", "task", "todo", "sha256:" + "a" * 64,
]))
_RELS = st.sampled_from(["memhtml-supports", "memhtml-about-person", "memhtml-about_person",
                         "memhtml-nothing", "memhtml-contradicts", "memhtml-derived-from"])
_HREFS = st.sampled_from(["/a/b.html", "/a/../b.html", "javascript:x", "/x y.html", "b.html",
                          "//host/x", " /a/c.html", "/a/%2e%2e/b.html"])


@st.composite
def shaped_files(draw: st.DrawFn) -> str:
    """A template file with extra head lines and paragraphs in the serializer's shape,
    then perhaps a few splices anywhere in it."""
    text = render_template(NewMemoryInput(
        title=draw(claims), claim=draw(claims), memory_type="semantic",
        at="2026-01-06T09:00:00Z", body=tuple(draw(st.lists(words, max_size=3)))))
    metas = "".join(f'<meta name="{name}" content="{escape_attribute(value)}">\n'
                    for name, value in draw(st.lists(st.tuples(_META_NAMES, _META_VALUES),
                                                     max_size=3)))
    links = "".join(f'<link rel="{rel}" href="{escape_attribute(href)}">\n'
                    for rel, href in draw(st.lists(st.tuples(_RELS, _HREFS), max_size=2)))
    text = text.replace("</head>\n", metas + links + "</head>\n", 1)
    more = "".join(f"\n<p>{escape_text(p)}</p>" for p in draw(st.lists(words, max_size=2)))
    text = text.replace("\n</article>", more + "\n</article>", 1)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 2))
        text = text[:at] + draw(_SPLICED) + text[at + cut:]
    return text


def _agrees(text: str) -> None:
    quick = read_canonical(text)
    if quick is None:
        return
    full = parse_memory_hashed(text, "a/b.html").unwrap()
    assert quick == full
    assert quick[0].warnings == full[0].warnings


@given(memory_files)
def test_a_template_file_reads_the_same_quickly(text: str) -> None:
    event("read quickly" if read_canonical(text) is not None else "parsed in full")
    _agrees(text)


@given(shaped_files())
def test_any_shaped_or_spliced_file_reads_the_same_quickly(text: str) -> None:
    event("read quickly" if read_canonical(text) is not None else "parsed in full")
    _agrees(text)


@given(shaped_files())
def test_record_from_is_the_full_parse_record(text: str) -> None:
    """The record a load builds is the one the full parse gives, field for field."""
    from memhtml.format.parse import parse_memory_hashed as full_parse
    from memhtml.head.record import record_of

    expected = full_parse(text, "a/b.html").map(
        lambda pair: record_of(pair[0], pair[1], "a/b.html", text))
    got = record_from(text, "a/b.html")
    assert got.map(vars) == expected.map(vars)
    assert got.alt(str) == expected.alt(str)


def test_the_plain_shape_takes_the_quick_path() -> None:
    """Not vacuous: the files a write door makes from prose are read quickly."""
    text = render_template(NewMemoryInput(
        title="Deploy & <release> window", claim="Deploys happen on Tuesdays, \"always\".",
        memory_type="semantic", at="2026-01-06T09:00:00Z", body=("Never on a Friday.", "Or 日.")))
    assert read_canonical(text) is not None
    _agrees(text)


@given(shaped_files())
def test_the_sites_render_check_refuses_what_the_full_check_refuses(text: str) -> None:
    """The published site's check takes the quick reader's word for a plain file; its
    verdict is the full check's on every file, plain, spliced or refused (a snapshot
    may hold a record a looser checker passed, so the record's text is all it sees)."""
    from types import SimpleNamespace
    from typing import cast

    from memhtml.contracts.errors import VIOLATION_SEPARATOR
    from memhtml.contracts.record import MemoryRecord
    from memhtml.format import check_memory
    from memhtml.store.site_model import _refused_record

    violations = check_memory(text).violations
    expected = VIOLATION_SEPARATOR.join(violations) if violations else None
    assert _refused_record(cast(MemoryRecord, SimpleNamespace(html=text))) == expected
