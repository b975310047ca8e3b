"""Surgical head edits: byte splices that change one line and never touch the article.

Bookkeeping passes stamp ``memhtml-updated``, decay confidence, count reprieves and
add edges on files they otherwise leave alone. Re-serializing the whole file for
that would show up in ``git diff`` as a content change and risk moving the content
hash, so these editors splice the head by source offset instead. Every edit lands
before the first ``</head>``/``<body>``/``<article>``, so
``content_hash(set_meta(html, n, v)) == content_hash(html)`` holds by construction.

The read halves (``read_meta``, ``read_links``) are tolerant: they parse without
validating, so a caller holding raw bytes can ask what a file says or points at
even when the file is not a well-formed memory.
"""

from __future__ import annotations

import html as htmllib
import re
from dataclasses import dataclass
from typing import cast

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format.constraints import collect_head_metas, rel_of
from memhtml.format.serialize import link_line, meta_line
from memhtml.format.tree import find_first, parse_html
from memhtml.format.vocabulary import (
    META_PREFIX,
    is_memory_meta_name,
    is_repeatable_meta,
    meta_rank,
)

_TAG = re.compile(r"""<(meta|link|title)\b(?:[^>"']|"[^"]*"|'[^']*')*>""", re.IGNORECASE)
_ATTR = re.compile(
    r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""", re.IGNORECASE
)
_HEAD_END = re.compile(r"</head\b|<body\b|<article\b", re.IGNORECASE)
_ASCII_WS = " \t\n\r\f"


@dataclass(frozen=True, slots=True)
class _HeadTag:
    start: int
    end: int
    kind: str
    attrs: dict[str, str]


def _attrs_of(tag_text: str) -> dict[str, str]:
    inner = tag_text[1:-1]
    name_end = re.match(r"\w+", inner)
    rest = inner[name_end.end():] if name_end else inner
    out: dict[str, str] = {}
    for m in _ATTR.finditer(rest):
        key = m.group(1).lower()
        raw = m.group(2) if m.group(2) is not None else m.group(3) or m.group(4) or ""
        out.setdefault(key, htmllib.unescape(raw))
    return out


def _head_tags(html: str) -> tuple[list[_HeadTag], int] | None:
    end_match = _HEAD_END.search(html)
    if end_match is None:
        return None
    head_end = end_match.start()
    tags = [
        _HeadTag(m.start(), m.end(), m.group(1).lower(), _attrs_of(m.group(0)))
        for m in _TAG.finditer(html, 0, head_end)
    ]
    return tags, head_end


def _meta_name(tag: _HeadTag) -> str | None:
    if tag.kind != "meta":
        return None
    name = tag.attrs.get("name", "").strip(_ASCII_WS).lower()
    return name if name.startswith(META_PREFIX) else None


def _meta_value(tag: _HeadTag) -> str:
    return tag.attrs.get("content", "").strip(_ASCII_WS)


def _link_key(tag: _HeadTag) -> tuple[str, str] | None:
    if tag.kind != "link":
        return None
    rel = rel_of(tag.attrs.get("rel", ""))
    return None if rel is None else (rel, tag.attrs.get("href", "").strip(_ASCII_WS))


def _line_bounds(html: str, start: int, end: int) -> tuple[int, int, bool]:
    """The line around a tag, and whether the tag is alone on it."""
    line_start = html.rfind("\n", 0, start) + 1
    newline = html.find("\n", end)
    line_end = len(html) if newline == -1 else newline + 1
    alone = not html[line_start:start].strip(_ASCII_WS) and not html[end:line_end].strip(_ASCII_WS)
    return line_start, line_end, alone


def _insert_after(html: str, tag: _HeadTag, new_tag: str) -> str:
    line_start, line_end, alone = _line_bounds(html, tag.start, tag.end)
    if alone:
        indent = html[line_start:tag.start]
        eol = "\r\n" if html[line_start:line_end].endswith("\r\n") else "\n"
        if not html[line_start:line_end].endswith("\n"):
            return html + eol + indent + new_tag
        return html[:line_end] + indent + new_tag + eol + html[line_end:]
    return html[: tag.end] + "\n" + new_tag + html[tag.end :]


def _insert_before(html: str, at: int, new_tag: str) -> str:
    line_start, _, _ = _line_bounds(html, at, at)
    if not html[line_start:at].strip(_ASCII_WS):
        eol = "\r\n" if "\r\n" in html[:at] else "\n"
        return html[:line_start] + new_tag + eol + html[line_start:]
    return html[:at] + new_tag + "\n" + html[at:]


def _cut(html: str, tag: _HeadTag) -> str:
    line_start, line_end, alone = _line_bounds(html, tag.start, tag.end)
    if alone:
        return html[:line_start] + html[line_end:]
    return html[: tag.start] + html[tag.end :]


def _insert_meta(html: str, tags: list[_HeadTag], head_end: int, name: str, value: str) -> str:
    """Insert a meta line at its META_ORDER position."""
    new_tag = meta_line(name, value)
    rank = meta_rank(name)
    after: _HeadTag | None = None
    for tag in tags:
        other = _meta_name(tag)
        if other is not None and meta_rank(other) <= rank:
            after = tag
    if after is not None:
        return _insert_after(html, after, new_tag)
    for tag in tags:
        if _meta_name(tag) is not None or _link_key(tag) is not None:
            return _insert_before(html, tag.start, new_tag)
    titles = [t for t in tags if t.kind == "title"]
    if titles:
        close = re.compile(r"</title\s*>", re.IGNORECASE).search(html, titles[-1].end, head_end)
        if close is not None:
            return _insert_after(html, _HeadTag(titles[-1].start, close.end(), "title", {}),
                                 new_tag)
    return _insert_before(html, head_end, new_tag)


def set_meta(html: str, name: str, value: str) -> str:
    """Set a head meta to one value: replace the first ``<meta>`` of that name in
    place, or insert a line at its META_ORDER position. On a repeatable name this
    sets the first value (``add_meta`` appends). An unknown name, or a file with no
    recognizable head, is returned unchanged rather than given a line ``doctor``
    would flag at once."""
    if not is_memory_meta_name(name):
        return html
    found = _head_tags(html)
    if found is None:
        return html
    tags, head_end = found
    for tag in tags:
        if _meta_name(tag) == name:
            if _meta_value(tag) == value:
                return html
            return html[: tag.start] + meta_line(name, value) + html[tag.end :]
    return _insert_meta(html, tags, head_end, name, value)


def add_meta(html: str, name: str, value: str) -> str:
    """Append another value of a repeatable meta after its last line. Adding a value
    already present is a no-op, so a re-run bookkeeping pass cannot grow the head.
    A scalar name is refused (returned unchanged): ``set_meta`` owns scalars."""
    if not is_repeatable_meta(name):
        return html
    found = _head_tags(html)
    if found is None:
        return html
    tags, head_end = found
    same = [t for t in tags if _meta_name(t) == name]
    if any(_meta_value(t) == value for t in same):
        return html
    if same:
        return _insert_after(html, same[-1], meta_line(name, value))
    return _insert_meta(html, tags, head_end, name, value)


def remove_meta(html: str, name: str, value: str | None = None) -> str:
    """Cut every ``<meta>`` of a name, or only those carrying ``value``, one whole
    line each. An absent name or value is a no-op."""
    found = _head_tags(html)
    if found is None:
        return html
    tags, _ = found
    for tag in reversed(tags):
        if _meta_name(tag) == name and (value is None or _meta_value(tag) == value):
            html = _cut(html, tag)
    return html


def add_link(html: str, rel: EdgeRel, href: str) -> str:
    """Append a ``<link rel="memhtml-...">`` edge. Idempotent on ``(rel, href)`` in any
    spelling of the rel, because a duplicated link would become a duplicated edge."""
    found = _head_tags(html)
    if found is None:
        return html
    tags, head_end = found
    if any(_link_key(t) == (rel, href) for t in tags):
        return html
    new_tag = link_line(rel, href)
    links = [t for t in tags if _link_key(t) is not None]
    if links:
        return _insert_after(html, links[-1], new_tag)
    metas = [t for t in tags if _meta_name(t) is not None]
    if metas:
        return _insert_after(html, metas[-1], new_tag)
    return _insert_before(html, head_end, new_tag)


def remove_link(html: str, rel: EdgeRel, href: str | None = None) -> str:
    """Cut links of a rel (every spelling), or only the one pointing at ``href``."""
    found = _head_tags(html)
    if found is None:
        return html
    tags, _ = found
    for tag in reversed(tags):
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
