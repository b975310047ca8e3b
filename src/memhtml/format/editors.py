"""Surgical head edits: splices that change one element and never touch the article.

Bookkeeping passes stamp ``memhtml-updated``, decay confidence, count reprieves and
add edges on files they otherwise leave alone. Re-serializing the whole file for
that would show up in ``git diff`` as a content change and risk moving the content
hash, so these editors splice the head by source offset instead.

The offsets come from ``headscan``, a tokenizer that reads the head the way a
parser does, never from a pattern over raw text: text that merely looks like a tag
(inside a comment, a ``<title>`` or an attribute value) is not an element, so it
is neither edited nor taken for the end of the head. Every edit lands inside the
head, before the token that ends it, and an editor returns its input unchanged
unless a ``<head>`` tag opens that head and an ``<article>`` follows it, so
``content_hash(set_meta(html, n, v)) == content_hash(html)`` holds by construction.

The read halves (``read_meta``, ``read_links``) are tolerant: they parse without
validating, so a caller holding raw bytes can ask what a file says or points at
even when the file is not a well-formed memory.
"""

from __future__ import annotations

from typing import cast

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format.constraints import collect_head_metas, rel_of
from memhtml.format.headscan import HeadScan, Token, scan_head
from memhtml.format.serialize import link_line, meta_line
from memhtml.format.tree import find_first, parse_html
from memhtml.format.vocabulary import (
    META_PREFIX,
    is_memory_meta_name,
    is_repeatable_meta,
    meta_rank,
)

_ASCII_WS = " \t\n\r\f"


def _head(html: str) -> HeadScan | None:
    """The head an editor may splice, or None: then the editor returns its input."""
    scan = scan_head(html)
    return scan if scan.editable else None


def _meta_name(tag: Token) -> str | None:
    if tag.kind != "start" or tag.name != "meta":
        return None
    name = tag.attrs.get("name", "").strip(_ASCII_WS).lower()
    return name if name.startswith(META_PREFIX) else None


def _meta_value(tag: Token) -> str:
    return tag.attrs.get("content", "").strip(_ASCII_WS)


def _link_key(tag: Token) -> tuple[str, str] | None:
    if tag.kind != "start" or tag.name != "link":
        return None
    rel = rel_of(tag.attrs.get("rel", ""))
    return None if rel is None else (rel, tag.attrs.get("href", "").strip(_ASCII_WS))


# The splices below work on whole lines when the element has its line to itself.
# That is safe because an editable head holds only whitespace between its tokens,
# and the neighbours of a meta, a link, a whole title or the head's end are tags
# and comments, which end in ">": the whitespace around an element alone on its
# line is text, never part of a comment, a title or an attribute.

def _line_bounds(html: str, start: int, end: int) -> tuple[int, int, bool]:
    """The line around a span, and whether the span is alone on it."""
    line_start = html.rfind("\n", 0, start) + 1
    newline = html.find("\n", end)
    line_end = len(html) if newline == -1 else newline + 1
    alone = not html[line_start:start].strip(_ASCII_WS) and not html[end:line_end].strip(_ASCII_WS)
    return line_start, line_end, alone


def _insert_after(html: str, start: int, end: int, new_tag: str) -> str:
    line_start, line_end, alone = _line_bounds(html, start, end)
    if alone:
        indent = html[line_start:start]
        eol = "\r\n" if html[line_start:line_end].endswith("\r\n") else "\n"
        if not html[line_start:line_end].endswith("\n"):
            return html + eol + indent + new_tag
        return html[:line_end] + indent + new_tag + eol + html[line_end:]
    return html[:end] + "\n" + new_tag + html[end:]


def _insert_before(html: str, at: int, new_tag: str) -> str:
    line_start, _, _ = _line_bounds(html, at, at)
    if not html[line_start:at].strip(_ASCII_WS):
        eol = "\r\n" if "\r\n" in html[:at] else "\n"
        return html[:line_start] + new_tag + eol + html[line_start:]
    return html[:at] + new_tag + "\n" + html[at:]


def _cut(html: str, tag: Token) -> str:
    line_start, line_end, alone = _line_bounds(html, tag.start, tag.end)
    if alone:
        return html[:line_start] + html[line_end:]
    return html[: tag.start] + html[tag.end :]


def _title_span(scan: HeadScan) -> tuple[int, int] | None:
    """The last ``<title>`` element, from its start tag to the end of its end tag."""
    span: tuple[int, int] | None = None
    opened: int | None = None
    for tag in scan.tokens:
        if tag.kind == "start" and tag.name == "title":
            opened, span = tag.start, (tag.start, tag.end)
        elif opened is not None and tag.kind == "end" and tag.name == "title":
            span = (opened, tag.end)
            opened = None
    return span


def _insert_meta(html: str, scan: HeadScan, name: str, value: str) -> str:
    """Insert a meta line at its META_ORDER position: after the last meta ranked at
    or before it, else before the first memory meta or link, else after the title,
    else just before the end of the head."""
    new_tag = meta_line(name, value)
    rank = meta_rank(name)
    after: Token | None = None
    for tag in scan.tokens:
        other = _meta_name(tag)
        if other is not None and meta_rank(other) <= rank:
            after = tag
    if after is not None:
        return _insert_after(html, after.start, after.end, new_tag)
    for tag in scan.tokens:
        if _meta_name(tag) is not None or _link_key(tag) is not None:
            return _insert_before(html, tag.start, new_tag)
    title = _title_span(scan)
    if title is not None:
        return _insert_after(html, title[0], title[1], new_tag)
    return _insert_before(html, scan.end, new_tag)


def set_meta(html: str, name: str, value: str) -> str:
    """Set a head meta to one value: replace the first ``<meta>`` of that name in
    place, or insert a line at its META_ORDER position. On a repeatable name this
    sets the first value (``add_meta`` appends). An unknown name, or a file with no
    head to edit, is returned unchanged rather than given a line ``doctor`` would
    flag at once. A meta already holding the value is left as written.

    >>> from memhtml.format import NewMemoryInput, read_meta, render_template, set_meta
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z"))
    >>> edited = set_meta(html, "memhtml-confidence", "0.9")
    >>> read_meta(edited, "memhtml-confidence")
    '0.9'
    >>> [line for line in edited.splitlines() if "confidence" in line]
    ['<meta name="memhtml-confidence" content="0.9">']
    >>> set_meta(html, "memhtml-colour", "red") == html
    True
    """
    if not is_memory_meta_name(name):
        return html
    scan = _head(html)
    if scan is None:
        return html
    for tag in scan.tokens:
        if _meta_name(tag) == name:
            if _meta_value(tag) == value:
                return html
            return html[: tag.start] + meta_line(name, value) + html[tag.end :]
    return _insert_meta(html, scan, name, value)


def add_meta(html: str, name: str, value: str) -> str:
    """Append another value of a repeatable meta after its last line. Adding a value
    already present is a no-op, so a re-run bookkeeping pass cannot grow the head.
    A scalar name is refused (returned unchanged): ``set_meta`` owns scalars."""
    if not is_repeatable_meta(name):
        return html
    scan = _head(html)
    if scan is None:
        return html
    same = [t for t in scan.tokens if _meta_name(t) == name]
    if any(_meta_value(t) == value for t in same):
        return html
    if same:
        return _insert_after(html, same[-1].start, same[-1].end, meta_line(name, value))
    return _insert_meta(html, scan, name, value)


def remove_meta(html: str, name: str, value: str | None = None) -> str:
    """Cut every ``<meta>`` of a name, or only those carrying ``value``, one whole
    line each. An absent name or value is a no-op."""
    scan = _head(html)
    if scan is None:
        return html
    for tag in reversed(scan.tokens):
        if _meta_name(tag) == name and (value is None or _meta_value(tag) == value):
            html = _cut(html, tag)
    return html


def add_link(html: str, rel: EdgeRel, href: str) -> str:
    """Append a ``<link rel="memhtml-...">`` edge. Idempotent on ``(rel, href)`` in any
    spelling of the rel, because a duplicated link would become a duplicated edge.

    >>> from memhtml.format import NewMemoryInput, add_link, read_links, render_template
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z"))
    >>> linked = add_link(html, "supports", "/areas/inbox/tuesday-freeze.html")
    >>> read_links(linked)
    (Link(rel='supports', href='/areas/inbox/tuesday-freeze.html'),)
    >>> add_link(linked, "supports", "/areas/inbox/tuesday-freeze.html") == linked
    True
    """
    scan = _head(html)
    if scan is None:
        return html
    if any(_link_key(t) == (rel, href) for t in scan.tokens):
        return html
    new_tag = link_line(rel, href)
    last = next((t for t in reversed(scan.tokens) if _link_key(t) is not None), None)
    if last is None:
        last = next((t for t in reversed(scan.tokens) if _meta_name(t) is not None), None)
    if last is not None:
        return _insert_after(html, last.start, last.end, new_tag)
    return _insert_before(html, scan.end, new_tag)


def remove_link(html: str, rel: EdgeRel, href: str | None = None) -> str:
    """Cut links of a rel (every spelling), or only the one pointing at ``href``."""
    scan = _head(html)
    if scan is None:
        return html
    for tag in reversed(scan.tokens):
        key = _link_key(tag)
        if key is not None and key[0] == rel and (href is None or key[1] == href):
            html = _cut(html, tag)
    return html


def read_meta(html: str, name: str) -> str | None:
    """The first value of a head meta, or None. Parses, validates nothing."""
    root, _ = parse_html(html)
    if root is None:
        return None
    for meta_name, value in collect_head_metas(find_first(root, "head")):
        if meta_name == name:
            return value
    return None


def read_links(html: str) -> tuple[Link, ...]:
    """Every memory edge in the head, in document order; unknown rels are dropped,
    exactly as ``parse_memory`` drops them. Parses, validates nothing."""
    root, _ = parse_html(html)
    head = find_first(root, "head") if root is not None else None
    if head is None:
        return ()
    out: list[Link] = []
    for link in head.iter("link"):
        rel = rel_of(link.get("rel") or "")
        if rel is not None:
            out.append(Link(cast(EdgeRel, rel), (link.get("href") or "").strip(_ASCII_WS)))
    return tuple(out)
