"""Raw HTML in a note that is already the memory format: taken as those elements.

Markdown carries raw HTML verbatim, and a note may hold some: an Obsidian user writes
``<kbd>Ctrl</kbd>``, and ``export markdown`` writes every element markdown has no
syntax for this way (a ``<dl>`` of facets, ``<details>``, a captioned figure, a
``<time datetime>`` in a sentence), so that importing the export gives the memory
back. Raw HTML is taken as elements only when it is the vocabulary's and safe by the
format's own rules, element by element and attribute by attribute, from short lists
kept here; anything else stays what it always was, its characters as text.

Inline, an open tag and its close tag must be siblings in the same run of inline
content (``<cite>*a*</cite>``, not ``*<cite>a*</cite>``). A block is parsed in the
article's context and written again by the format's writer; a block holding a
comment, an element or an attribute off the lists is left as text whole. Whether a
browser builds the same tree from the result is the format check's question, asked
of the whole file: a note whose passed-through HTML fails it is converted again with
its raw HTML as text (``markdown_import``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from memhtml.format.constraints import url_scheme
from memhtml.format.datetimes import is_root_relative_href, is_valid_datetime
from memhtml.format.markup import write_children
from memhtml.format.tree import has_ancestor, parse_article_fragment, tag_of
from memhtml.format.vocabulary import SAFE_LINK_SCHEMES

INLINE_RAW: Mapping[str, frozenset[str]] = {
    "time": frozenset({"datetime"}), "data": frozenset({"value"}),
    "cite": frozenset(), "q": frozenset({"cite"}), "dfn": frozenset({"title"}),
    "abbr": frozenset({"title"}), "kbd": frozenset(), "samp": frozenset(),
    "var": frozenset(),
}
"""Inline elements a note may write as raw HTML, with the attributes each may carry:
the vocabulary's inline elements markdown has no syntax for."""

BLOCK_RAW: Mapping[str, frozenset[str]] = {
    **INLINE_RAW,
    "p": frozenset(), "ul": frozenset(), "ol": frozenset({"start", "reversed"}),
    "li": frozenset({"value"}), "dl": frozenset(), "dt": frozenset(), "dd": frozenset(),
    "details": frozenset({"open"}), "summary": frozenset(), "aside": frozenset(),
    "section": frozenset(), "figure": frozenset(), "figcaption": frozenset(),
    "pre": frozenset(), "code": frozenset({"data-lang"}), "table": frozenset(),
    "caption": frozenset(), "thead": frozenset(), "tbody": frozenset(),
    "tr": frozenset(), "th": frozenset({"colspan", "rowspan", "scope"}),
    "td": frozenset({"colspan", "rowspan"}), "strong": frozenset({"role", "aria-level"}),
    "em": frozenset(), "a": frozenset({"href", "title", "data-wikilink", "data-md-href"}),
    "address": frozenset(), "div": frozenset(), "span": frozenset(),
}
"""Elements a raw HTML block may hold, with their attributes: the article vocabulary
less ``<mark>`` (the claim is the import's to place) and ``<article>``, with a person
file's ``<address>``, and ``<div>``/``<span>`` inside a ``<figure>`` only."""
_FIGURE_ONLY = frozenset({"div", "span"})

_NAME = r"[A-Za-z][A-Za-z0-9-]*"
_OPEN = re.compile(rf"<({_NAME})((?:\s+[^\s\"'=<>`/]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|"
                   rf"[^\s\"'=<>`]+))?)*)\s*>", re.DOTALL)
_ATTRIBUTE = re.compile(r"([^\s\"'=<>`/]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|"
                        r"([^\s\"'=<>`]+)))?", re.DOTALL)
_CLOSE = re.compile(rf"</({_NAME})\s*>")
_INTEGER = re.compile(r"[1-9][0-9]{0,8}|0")


def _is_safe_url(value: str) -> bool:
    """An ``href`` or ``cite`` the format takes: http, https, mailto, root-relative, or
    a fragment."""
    if value.startswith("#"):
        return True
    scheme = url_scheme(value)
    if scheme is not None:
        return scheme in SAFE_LINK_SCHEMES and not value.startswith("/")
    return is_root_relative_href(value)


def _value_ok(tag: str, name: str, value: str) -> bool:
    if name == "datetime":
        return is_valid_datetime(value.strip())
    if name in ("href", "cite"):
        return _is_safe_url(value.strip())
    if name in ("start", "colspan", "rowspan", "aria-level") or (
            name == "value" and tag == "li"):
        return _INTEGER.fullmatch(value.strip()) is not None
    if name == "role":
        return tag == "strong" and value == "heading"
    return True


def open_tag(raw: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """An inline open tag of ``INLINE_RAW`` with its attributes decoded, or None."""
    found = _OPEN.fullmatch(raw.strip())
    if found is None:
        return None
    tag = found.group(1).lower()
    allowed = INLINE_RAW.get(tag)
    if allowed is None:
        return None
    attributes: list[tuple[str, str]] = []
    for hit in _ATTRIBUTE.finditer(found.group(2)):
        name = hit.group(1).lower()
        value = html.unescape(next((g for g in hit.groups()[1:] if g is not None), ""))
        if name not in allowed or not _value_ok(tag, name, value) or any(
                name == seen for seen, _ in attributes):
            return None
        attributes.append((name, value))
    return tag, tuple(attributes)


def close_tag(raw: str) -> str | None:
    """The element an inline close tag closes, or None."""
    found = _CLOSE.fullmatch(raw.strip())
    return found.group(1).lower() if found is not None else None


def block_fragment(raw: str) -> tuple[str, bool] | None:
    """A raw HTML block as the format writes it, and whether it holds a ``<p>`` or an
    ``<li>`` (which would come before the claim's paragraph); None when it holds
    anything off ``BLOCK_RAW`` (a comment, a script, an unknown element or attribute)."""
    article = parse_article_fragment(raw)
    if article is None or len(article) == 0:
        return None
    holds_text_block = False
    for el in article.iter():
        if el is article:
            continue
        tag = tag_of(el)
        allowed = BLOCK_RAW.get(tag) if tag else None
        if allowed is None or (tag in _FIGURE_ONLY and not has_ancestor(
                el, ("figure",), article)):
            return None
        for name, value in el.items():
            if str(name) not in allowed or not _value_ok(tag, str(name), str(value)):
                return None
        holds_text_block = holds_text_block or tag in ("p", "li")
    return write_children(article).strip(" \t\n\r\f"), holds_text_block


__all__ = ["BLOCK_RAW", "INLINE_RAW", "block_fragment", "close_tag", "open_tag"]
