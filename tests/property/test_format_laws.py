"""Laws of the memory file format."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from returns.result import Success

from memhtml.contracts.vocabulary import EDGE_RELS
from memhtml.format import (
    META_ORDER,
    NewMemoryInput,
    add_link,
    add_meta,
    canonical_text,
    check_memory,
    content_hash,
    is_repeatable_meta,
    is_valid_datetime,
    parse_memory,
    remove_link,
    remove_meta,
    render_template,
    serialize_memory,
    set_meta,
)
from memhtml.format.browser import BrowserElement, BrowserTree
from memhtml.format.parity import browser_shape, checker_shape
from memhtml.format.tree import parse_article_fragment, parse_html
from tests.property.strategies import article_bodies, hrefs, memory_files, memory_inputs, words


@given(memory_files)
def test_parse_of_serialize_is_identity(text: str) -> None:
    doc = parse_memory(text).unwrap()
    assert parse_memory(serialize_memory(doc)) == Success(doc)


_provenance = st.tuples(*(st.none() | words.map(lambda w: w.strip(" \t\n\r\f")).filter(bool)
                          for _ in range(4)))
"""A meta's content is read trimmed of ASCII whitespace, and an empty one is no value."""


@given(memory_files, _provenance)
def test_provenance_metas_round_trip_outside_the_searchable_text(
        text: str, provenance: tuple[str | None, ...]) -> None:
    """An import's four source metas are head metadata: they survive a rewrite, and
    neither the article's text nor its hash sees them."""
    import dataclasses

    doc = parse_memory(text).unwrap()
    source, digest, links, shape = provenance
    stamped = dataclasses.replace(doc, metas=dataclasses.replace(
        doc.metas, source=source, source_sha256=digest, source_links=links,
        source_shape=shape))
    again = parse_memory(serialize_memory(stamped)).unwrap()
    assert again == stamped
    assert again.article.body_text == doc.article.body_text
    assert content_hash(serialize_memory(stamped)) == content_hash(text)


@given(memory_inputs(), article_bodies())
def test_round_trip_holds_for_authored_articles(data: NewMemoryInput, body: str) -> None:
    text = render_template(
        NewMemoryInput(title=data.title, claim="", memory_type=data.memory_type, at=data.at,
                       article_html=body, task_status=data.task_status)
    )
    doc = parse_memory(text).unwrap()
    again = serialize_memory(doc)
    assert parse_memory(again) == Success(doc)
    assert serialize_memory(parse_memory(again).unwrap()) == again


@given(memory_files)
def test_template_stamps_the_hash_the_parser_recomputes(text: str) -> None:
    doc = parse_memory(text).unwrap()
    assert doc.metas.content_hash == content_hash(text)
    assert content_hash(doc.article) == content_hash(text)


def _changed_lines(before: str, after: str) -> int:
    a, b = before.split("\n"), after.split("\n")
    if len(a) == len(b):
        return sum(1 for x, y in zip(a, b, strict=True) if x != y)
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    if len(longer) - len(shorter) != 1:
        return 99
    for i, line in enumerate(shorter):
        if longer[i] != line:
            return 1 if longer[i + 1 :] == shorter[i:] else 99
    return 1


@given(memory_files, st.sampled_from(META_ORDER), words)
def test_meta_editors_keep_the_hash_and_change_one_line(text: str, name: str, value: str) -> None:
    value = value.strip(" \t\n\r\f")
    assume(value)
    before = content_hash(text)
    for edited in (
        set_meta(text, name, value),
        add_meta(text, name, value),
        remove_meta(text, name),
        remove_meta(text, name, value),
    ):
        assert content_hash(edited) == before
        assert _changed_lines(text, edited) <= 1 or edited.count("\n") < text.count("\n")
    once = set_meta(text, name, value)
    assert set_meta(once, name, value) == once
    if is_repeatable_meta(name):
        added = add_meta(text, name, value)
        assert add_meta(added, name, value) == added


@given(memory_files, st.sampled_from(EDGE_RELS), hrefs)
def test_link_editors_keep_the_hash_and_are_idempotent(text: str, rel: str, href: str) -> None:
    before = content_hash(text)
    added = add_link(text, rel, href)  # type: ignore[arg-type]
    assert content_hash(added) == before
    assert _changed_lines(text, added) <= 1
    assert add_link(added, rel, href) == added  # type: ignore[arg-type]
    removed = remove_link(added, rel, href)  # type: ignore[arg-type]
    assert content_hash(removed) == before
    assert _changed_lines(added, removed) <= 1


@given(memory_files, st.sampled_from(META_ORDER), words)
def test_a_set_meta_edit_still_parses_to_the_same_article(text: str, name: str, value: str) -> None:
    edited = set_meta(text, "memhtml-updated", "2030-01-01T00:00:00Z")
    assert parse_memory(edited).unwrap().article == parse_memory(text).unwrap().article


@given(st.lists(words, min_size=1, max_size=5), st.integers(0, 6))
def test_canonical_text_ignores_indentation(items: list[str], indent: int) -> None:
    escaped = [w.replace("&", "&amp;").replace("<", "&lt;") for w in items]
    flat = "<ul>" + "".join(f"<li>{w}</li>" for w in escaped) + "</ul>"
    pad = " " * indent
    pretty = "<ul>\n" + "".join(f"{pad}<li>{w}</li>\n" for w in escaped) + "</ul>\n"
    a, b = parse_article_fragment(flat), parse_article_fragment(pretty)
    assert a is not None and b is not None
    assert canonical_text(a) == canonical_text(b)


@given(st.text(alphabet=" \tab\n", min_size=1, max_size=20))
def test_canonical_text_keeps_pre_whitespace(code: str) -> None:
    assume(not code.startswith("\n"))
    article = parse_article_fragment(f"<pre>{code}</pre>")
    assert article is not None
    assert canonical_text(article) == code


def _instant(value: str) -> datetime:
    if len(value) == 10:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


_datetime_like = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
    st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
    st.from_regex(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?",
                  fullmatch=True),
)


@given(_datetime_like, _datetime_like)
def test_valid_datetimes_sort_as_strings_the_way_they_sort_in_time(a: str, b: str) -> None:
    if is_valid_datetime(a) and is_valid_datetime(b) and a < b:
        assert _instant(a) <= _instant(b)


@given(_datetime_like)
def test_only_the_two_sortable_forms_are_accepted(value: str) -> None:
    if is_valid_datetime(value):
        assert len(value) in (10, 20)
        assert value[4] == "-" and (len(value) == 10 or value.endswith("Z"))


_html_like = st.lists(
    st.sampled_from(
        list("<>/=\"' \n&;#abcdefhilmnoprstuvx-:")
        + ["<article>", "<mark>", "</mark>", "<p>", "<meta ", "<html>", "<head>", "<title>",
           "\x00", "\ud800", "<!--", "-->", "<script>", "<pre>", "&#0;", "<body>", "</head>"]
    ),
    max_size=80,
).map("".join)


@given(st.one_of(st.text(max_size=300), _html_like, memory_files.map(lambda t: t[: len(t) // 2])))
def test_check_memory_is_total(text: str) -> None:
    result = check_memory(text)
    parsed = parse_memory(text)
    assert isinstance(result.violations, tuple)
    if result.violations:
        assert parsed.failure().violations == result.violations


# --- totality: no input makes the parser, the checker or the hash raise -----------------

_PIECES = (
    "<", ">", "/", '"', "'", "=", "&", ";", "\x00", "\x1b", "\r", "\ud800", "\ufeff",
    "<p>", "</p>", "<b>", "</b>", "<em>", "<table>", "<tr>", "<td>", "</table>", "<body>",
    "</body>", "<html>", "</html>", "<head>", "</head>", "<!--", "-->", "<mark>", "</mark>",
    "<li>", "<dd>", "<dt>", "<pre>\n", "</pre>", "<title>", "</title>", "<meta charset=utf-8>",
    '<meta charset="iso-2022-jp">', " onclick=x", "<a href=javascript:x>", "<svg>", "<math>",
    "<template>", "<select>", "<frameset>", "<p title='", "&#0;", "<figure>", "<div>",
    "<textarea>", "<plaintext>", "<xmp>", "<section>" * 70, "<em>" * 300, "9" * 4400,
    '<meta name="memhtml-importance" content="' + "1" * 4400 + '">',
    '<meta name="memhtml-reprieves" content="' + "7" * 4400 + '">',
    '<meta name="memhtml-confidence" content="0.' + "5" * 4400 + '">',
    '<data value="' + "4" * 4400 + '">n</data>', "<dl><dt>k<dd><data value=1e999>x</data></dl>",
    '<link rel="memhtml-supports" href="/a/%2e%2e/b.html">', "<time datetime=2026-02-30>",
)


@st.composite
def mutated_files(draw: st.DrawFn) -> str:
    """A valid memory file after a few random cuts and splices of markup."""
    text = draw(memory_files)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(_PIECES)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]
    return text


_any_text = st.one_of(
    st.text(max_size=300),
    _html_like,
    memory_files.map(lambda t: t[: len(t) // 2]),
    mutated_files(),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="replace")),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="surrogateescape")),
    st.binary(max_size=400).map(lambda b: b.decode("latin-1")),
)


@given(_any_text)
def test_parse_check_and_hash_return_normally(text: str) -> None:
    result = check_memory(text)
    parsed = parse_memory(text)
    assert content_hash(text).startswith("sha256:")
    assert all(isinstance(v, str) and v for v in result.violations)
    if result.violations:
        assert parsed.failure().violations == result.violations
    else:
        assert content_hash(parsed.unwrap().article) == content_hash(text)


@given(st.builds(lambda n, digit: digit * n, st.integers(19, 20_000), st.sampled_from("123456789")),
       st.sampled_from(("memhtml-importance", "memhtml-reprieves", "memhtml-confidence")))
def test_a_number_of_any_length_is_read_or_dropped_never_raised(digits: str, name: str) -> None:
    text = set_meta(render_template(NewMemoryInput(
        title="t", claim="c", memory_type="semantic", at="2026-01-01T00:00:00Z",
        detect=lambda _code: None)), name, digits)
    doc = parse_memory(text).unwrap()
    assert any(name in warning for warning in doc.warnings)


# --- parity: what passes is what a browser builds -----------------------------------------


@given(mutated_files())
def test_a_file_that_passes_is_the_tree_an_independent_html5_parser_builds(text: str) -> None:
    html5lib = pytest.importorskip("html5lib")
    if check_memory(text).violations:
        return
    data = text.encode("utf-8")
    tree = html5lib.parse(data, treebuilder="etree", namespaceHTMLElements=False)
    elements: list[BrowserElement] = []
    depths = {tree: 1}
    for el in tree.iter():
        for child in el:
            depths[child] = depths[el] + 1
        if isinstance(el.tag, str):
            attributes = tuple((str(k), str(v)) for k, v in el.attrib.items())
            elements.append(BrowserElement(el.tag, attributes, depths[el], False))
    root, _ = parse_html(text)
    assert root is not None
    oracle = browser_shape(BrowserTree(tuple(elements), 0, True))
    assert checker_shape([root]) == oracle
