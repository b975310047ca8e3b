"""Laws of the head editors over hostile heads.

The files are generated memories whose heads also hold the text a regex splicer
mistakes for markup: meta values and hrefs carrying ``</head>``, ``<body>``,
``<article>``, quotes and ``-->``; comments holding metas and links; titles,
styles and scripts holding tag-like text. Each law is checked twice, on the token
view (``headscan``, the editors' own reading) and on the project parser's view
(lxml), so an editor that edits the wrong bytes and a tokenizer that disagrees
with the parser both fail.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import TypeVar

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EDGE_RELS, EdgeRel
from memhtml.format import (
    META_ORDER,
    add_link,
    add_meta,
    content_hash,
    read_links,
    read_meta,
    remove_link,
    remove_meta,
    set_meta,
)
from memhtml.format.constraints import collect_head_metas, rel_of
from memhtml.format.headscan import Token, scan_head
from memhtml.format.serialize import link_line, meta_line
from memhtml.format.tree import find_first, parse_html
from tests.property.strategies import hrefs, memory_files, words

T = TypeVar("T")
WS = " \t\n\r\f"

_HOSTILE = [
    "</head>", "<body>", "<article>", "</article>", "</title>", "<title>", "<!--", "-->",
    "--!>", "<!-->", '"', "'", "`", "=", "&", "&amp;", "&copy=1", "&lt;", "<", ">", "/", " ",
    "\n", "\t", "<script>", "</script>", "<style>", "<meta ", "<p>",
    '<meta name="memhtml-updated" content="1999-01-01T00:00:00Z">',
    '<meta name="memhtml-tag" content="ghost">',
    '<link rel="memhtml-supports" href="/ghost/edge.html">',
    "<link rel=memhtml-relates-to href=/ghost/other.html>",
]
hostile_text = st.lists(st.one_of(st.sampled_from(_HOSTILE), words), max_size=6).map("".join)


def _quoted(value: str, style: str) -> str:
    """An attribute value in one quoting style; only what would end it is escaped."""
    if style == '"':
        return '"' + value.replace('"', "&quot;") + '"'
    if style == "'":
        return "'" + value.replace("'", "&#39;") + "'"
    escaped = "".join(f"&#{ord(c)};" if c in " \t\n\r\f>\"'=<`" else c for c in value)
    return escaped or '""'


def _without(text: str, *closers: str) -> str:
    """``text`` with no case-insensitive occurrence of any closer left in it."""
    changed = True
    while changed:
        changed = False
        for closer in closers:
            at = text.lower().find(closer)
            if at >= 0:
                text, changed = text[:at] + text[at + len(closer):], True
    return text


_quote = st.sampled_from(['"', "'", ""])


@st.composite
def _meta(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["description", "memhtml-tag", "memhtml-entity",
                                 "memhtml-updated", "memhtml-x-note", "MEMHTML-ALIAS"]))
    value = draw(hostile_text)
    return f"<meta name={_quoted(name, draw(_quote))} content={_quoted(value, draw(_quote))}>"


@st.composite
def _link(draw: st.DrawFn) -> str:
    rel = draw(st.sampled_from(["stylesheet", "memhtml-supports", "memhtml-relates-to",
                                "memhtml-about_person"]))
    href = draw(st.one_of(hrefs, hostile_text))
    return f"<link rel={_quoted(rel, draw(_quote))} href={_quoted(href, draw(_quote))}>"


@st.composite
def _comment(draw: st.DrawFn) -> str:
    inner = draw(st.lists(st.one_of(_meta(), _link(), hostile_text), max_size=3))
    return f"<!-- {_without(' '.join(inner), '-->', '--!>')} -->"


@st.composite
def _raw(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["style", "noframes"]))
    return f"<{name}>{_without(draw(hostile_text), '</' + name)}</{name}>"


_piece = st.one_of(
    _meta(), _link(), _comment(), _raw(),
    st.sampled_from(["<!---->", "<!-- a --!>", "<!-- <!-- nested -->", "<!doctype html>",
                     "<?pi <meta name=memhtml-updated content=x>?>",
                     "<script><!--<script></script><meta name=memhtml-updated "
                     "content=x></script>"]),
)


@st.composite
def hostile_files(draw: st.DrawFn) -> str:
    """A generated memory with hostile pieces at random lines of its head and,
    sometimes, tag-like text in its title or CRLF line endings."""
    html = draw(memory_files)
    if draw(st.booleans()):
        title = _without(draw(hostile_text), "</title")
        start, end = html.index("<title>") + len("<title>"), html.index("</title>")
        html = html[:start] + title + html[end:]
    lines = html.split("\n")
    first, last = lines.index("<head>") + 1, lines.index("</head>")
    for piece in draw(st.lists(_piece, max_size=4)):
        lines.insert(draw(st.integers(first, last)), piece)
        last += 1
    html = "\n".join(lines)
    if draw(st.booleans()):
        html = html.replace("\n", "\r\n")
    return html


# --- the two views ------------------------------------------------------------------

Item = tuple[str, ...]


def token_view(html: str) -> tuple[list[Item], str]:
    """Every head token as (kind, source text), and the bytes after the head."""
    scan = scan_head(html)
    return [(t.kind, html[t.start:t.end]) for t in scan.tokens], html[scan.end:]


_WITH_COMMENTS = etree.HTMLParser(encoding="utf-8", remove_comments=False, no_network=True)


def parser_view(html: str) -> tuple[list[Item], bytes]:
    """Every node under lxml's <head> (elements by tag and the attributes the
    editors read, comments and title text verbatim), and the serialized <body>."""
    root = etree.fromstring(html.encode("utf-8"), _WITH_COMMENTS)
    head = find_first(root, "head")
    body = find_first(root, "body")
    items: list[Item] = []
    for node in head.iter() if head is not None else ():
        if node is head:
            continue
        if not isinstance(node.tag, str):
            items.append(("#comment", node.text or ""))
        else:
            attrs = [node.get(a) or "" for a in ("name", "content", "rel", "href")]
            items.append((node.tag, *attrs, node.text or ""))
    return items, b"" if body is None else etree.tostring(body)


def _changes(before: Sequence[T], after: Sequence[T]) -> tuple[list[T], list[T]]:
    """What a minimal edit takes out of ``before`` and puts in to make ``after``."""
    removed: list[T] = []
    added: list[T] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            removed += before[i1:i2]
            added += after[j1:j2]
    return removed, added


def _meta_tokens(html: str, name: str) -> list[Token]:
    out = []
    for t in scan_head(html).tokens:
        if t.kind == "start" and t.name == "meta" and (
            t.attrs.get("name", "").strip(WS).lower() == name
        ):
            out.append(t)
    return out


def _link_tokens(html: str, rel: str) -> list[Token]:
    return [t for t in scan_head(html).tokens
            if t.kind == "start" and t.name == "link" and rel_of(t.attrs.get("rel", "")) == rel]


def _parsed(html: str) -> bool:
    return parse_html(html)[0] is not None


# --- the laws -------------------------------------------------------------------------

Edit = Callable[[str], str]


def _editors(name: str, value: str, rel: EdgeRel, href: str) -> list[Edit]:
    return [
        lambda h: set_meta(h, name, value),
        lambda h: add_meta(h, name, value),
        lambda h: remove_meta(h, name),
        lambda h: remove_meta(h, name, value),
        lambda h: add_link(h, rel, href),
        lambda h: remove_link(h, rel),
        lambda h: remove_link(h, rel, href),
    ]


_names = st.sampled_from(META_ORDER)
_rels = st.sampled_from(EDGE_RELS)
_values = st.one_of(words, hostile_text).map(lambda v: v.strip(WS)).filter(bool)
_hrefs = st.one_of(hrefs, hostile_text.map(lambda v: v.strip(WS)))


@given(hostile_files(), _names, _values, _rels, _hrefs)
def test_no_editor_moves_the_content_hash(html: str, name: str, value: str, rel: EdgeRel,
                                          href: str) -> None:
    before = content_hash(html)
    for edit in _editors(name, value, rel, href):
        assert content_hash(edit(html)) == before


@given(hostile_files(), _names, _values)
def test_set_meta_changes_exactly_the_meta_it_names(html: str, name: str, value: str) -> None:
    edited = set_meta(html, name, value)
    (tokens, tail), (tokens2, tail2) = token_view(html), token_view(edited)
    assert tail2 == tail
    removed, added = _changes(tokens, tokens2)
    first = _meta_tokens(html, name)[:1]
    assert removed in ([], [("start", html[t.start:t.end]) for t in first])
    assert added in ([], [("start", meta_line(name, value))])
    assert bool(removed) <= bool(added)
    if _parsed(html):
        (nodes, body), (nodes2, body2) = parser_view(html), parser_view(edited)
        assert body2 == body
        removed_nodes, added_nodes = _changes(nodes, nodes2)
        assert len(removed_nodes) <= 1
        assert added_nodes in ([], [("meta", name, value, "", "", "")])
        if added and scan_head(html).editable:
            assert read_meta(edited, name) == value


@given(hostile_files(), st.sampled_from(["memhtml-entity", "memhtml-tag", "memhtml-alias"]),
       _values)
def test_add_meta_adds_one_meta_or_nothing(html: str, name: str, value: str) -> None:
    edited = add_meta(html, name, value)
    (tokens, tail), (tokens2, tail2) = token_view(html), token_view(edited)
    assert tail2 == tail
    assert _changes(tokens, tokens2) in (([], []), ([], [("start", meta_line(name, value))]))
    assert add_meta(edited, name, value) == edited


@given(hostile_files(), _names, st.one_of(st.none(), _values))
def test_remove_meta_cuts_exactly_the_metas_it_names(html: str, name: str, value: str | None
                                                     ) -> None:
    edited = remove_meta(html, name, value)
    (tokens, tail), (tokens2, tail2) = token_view(html), token_view(edited)
    assert tail2 == tail
    named = [("start", html[t.start:t.end]) for t in _meta_tokens(html, name)
             if value is None or t.attrs.get("content", "").strip(WS) == value]
    expected = [t for t in tokens if t not in named] if scan_head(html).editable else tokens
    assert tokens2 == expected
    if _parsed(html):
        (nodes, body), (nodes2, body2) = parser_view(html), parser_view(edited)
        assert body2 == body
        removed, added = _changes(nodes, nodes2)
        assert added == []
        assert all(n[0] == "meta" and n[1].strip(WS).lower() == name for n in removed)
        assert len(removed) == (len(named) if scan_head(html).editable else 0)


@given(hostile_files(), _rels, _hrefs)
def test_add_link_adds_one_link_or_nothing_and_is_idempotent(html: str, rel: EdgeRel,
                                                            href: str) -> None:
    added = add_link(html, rel, href)
    (tokens, tail), (tokens2, tail2) = token_view(html), token_view(added)
    assert tail2 == tail
    assert _changes(tokens, tokens2) in (([], []), ([], [("start", link_line(rel, href))]))
    assert add_link(added, rel, href) == added
    if _parsed(html):
        (nodes, body), (nodes2, body2) = parser_view(html), parser_view(added)
        assert body2 == body
        assert _changes(nodes, nodes2) in (
            ([], []), ([], [("link", "", "", link_line(rel, href).split('"')[1], href, "")])
        )
        if scan_head(html).editable:
            assert Link(rel, href) in read_links(added)


@given(hostile_files(), _rels, _hrefs)
def test_remove_link_after_add_link_restores_the_links(html: str, rel: EdgeRel, href: str
                                                       ) -> None:
    present = any(t.attrs.get("href", "").strip(WS) == href for t in _link_tokens(html, rel))
    restored = remove_link(add_link(html, rel, href), rel, href)
    if not present:
        assert token_view(restored) == token_view(html)
        assert read_links(restored) == read_links(html)


@given(hostile_files(), _rels, st.one_of(st.none(), _hrefs))
def test_remove_link_cuts_exactly_the_links_it_names(html: str, rel: EdgeRel, href: str | None
                                                     ) -> None:
    edited = remove_link(html, rel, href)
    (tokens, tail), (tokens2, tail2) = token_view(html), token_view(edited)
    assert tail2 == tail
    named = [("start", html[t.start:t.end]) for t in _link_tokens(html, rel)
             if href is None or t.attrs.get("href", "").strip(WS) == href]
    expected = [t for t in tokens if t not in named] if scan_head(html).editable else tokens
    assert tokens2 == expected
    if _parsed(html):
        (nodes, body), (nodes2, body2) = parser_view(html), parser_view(edited)
        assert body2 == body
        removed, added = _changes(nodes, nodes2)
        assert added == []
        assert all(n[0] == "link" and rel_of(n[3]) == rel for n in removed)
        assert len(removed) == (len(named) if scan_head(html).editable else 0)


@given(hostile_files(), _names, _values, _values)
def test_the_last_set_meta_wins(html: str, name: str, a: str, b: str) -> None:
    """``set_meta(set_meta(x, n, a), n, b) == set_meta(x, n, b)``, except that a meta
    already holding ``b`` is left as its author spelled it, where the detour through
    ``a`` writes it the canonical way: then the two agree on the parsed value."""
    twice, once = set_meta(set_meta(html, name, a), name, b), set_meta(html, name, b)
    first = _meta_tokens(html, name)[:1]
    spelled = [html[t.start:t.end] for t in first if t.attrs.get("content", "").strip(WS) == b]
    if spelled and spelled[0] != meta_line(name, b):
        assert read_meta(twice, name) == read_meta(once, name)
    else:
        assert twice == once


@given(hostile_files())
def test_the_editors_read_the_head_the_parser_reads(html: str) -> None:
    """Every memory meta and edge the parser finds in the head, the tokenizer finds
    too, in the same order (the parser may see more past a stray end tag)."""
    root, _ = parse_html(html)
    if root is None:
        return
    scan = scan_head(html)
    metas = [(t.attrs.get("name", "").strip(WS).lower(), t.attrs.get("content", "").strip(WS))
             for t in scan.tokens if t.kind == "start" and t.name == "meta"]
    metas = [m for m in metas if m[0].startswith("memhtml-")]
    parsed = collect_head_metas(find_first(root, "head"))
    assert parsed[:len(metas)] == metas
    links = [Link(rel, t.attrs.get("href", "").strip(WS))  # type: ignore[arg-type]
             for t in scan.tokens if t.kind == "start" and t.name == "link"
             if (rel := rel_of(t.attrs.get("rel", ""))) is not None]
    assert list(read_links(html))[:len(links)] == links


_html_like = st.lists(
    st.sampled_from(_HOSTILE + ["<head>", "<html>", "\r\n", "\x00", "\ud800", "\ufeff",
                                "<meta name=memhtml-updated content=x>", "<title>", "a",
                                "<textarea>", "<template>", "<noscript>", "<svg>", "</body>",
                                "<!DOCTYPE html>", "<![CDATA[", "]]>", "<?", "</>", "</ ",
                                "&#32;"]),
    max_size=30,
).map("".join)


@st.composite
def hostile_documents(draw: st.DrawFn) -> str:
    """Arbitrary markup, often framed as a document with a head and an article."""
    opening = draw(st.sampled_from(["", "<html>", "<!doctype html><html><head>", "<HEAD>",
                                    "<!-- c --><head>"]))
    closing = draw(st.sampled_from(["", "</head>", "</head><body>", "<body>"]))
    article = draw(st.sampled_from(["", "<article><p><mark>c</mark> d</p></article>"]))
    return opening + draw(_html_like) + closing + draw(_html_like) + article


@given(st.one_of(st.text(max_size=200), hostile_documents()), _names, _values, _rels, _hrefs)
def test_the_editors_are_total_and_keep_the_hash(text: str, name: str, value: str,
                                                 rel: EdgeRel, href: str) -> None:
    """Any input gives a string and keeps its hash; an input whose head cannot be
    edited comes back unchanged."""
    editable = scan_head(text).editable
    before = content_hash(text)
    for edit in _editors(name, value, rel, href):
        edited = edit(text)
        assert isinstance(edited, str)
        assert content_hash(edited) == before
        if not editable:
            assert edited == text
