"""The content hash: the one value that must not move under head edits.

It is taken over the article's text only, so stamping ``memhtml-updated``, decaying
confidence, or adding a link never looks like a content change; without that, a
corpus-wide bookkeeping pass would present every file as new content and
deduplication would collapse.
"""

from __future__ import annotations

import hashlib
import re
from typing import Protocol

from lxml import etree

from memhtml.format.tree import HtmlElement, find_article, parse_article_fragment, parse_html
from memhtml.format.vocabulary import BLOCK_ELEMENTS, GIST_EXCLUDED_ELEMENTS

HASH_ALGORITHM = "sha256"
"""The digest's self-describing prefix, so a stored value can be re-verified."""

_ASCII_WS = re.compile(r"[\t\n\f\r ]+")
_HASH_FORM = re.compile(r"sha256:[0-9a-f]{64}")
_SPACE = None  # a collapsible space, merged with its neighbours and trimmed at the edges


class HashableArticle(Protocol):
    """Anything carrying the article's inner HTML, such as a parsed ``MemoryDoc``'s article."""

    @property
    def html(self) -> str: ...


def _needs_collapse(text: str) -> bool:
    return "\n" in text or "  " in text or "\t" in text or "\r" in text or "\f" in text


def collapse_ascii_whitespace(text: str) -> str:
    """Runs of ASCII whitespace to one space. U+00A0 and other Unicode spaces are kept:
    they are content. Checked with cheap substring tests first, since most text
    nodes hold single spaces only and need no regex pass."""
    return _ASCII_WS.sub(" ", text) if _needs_collapse(text) else text


def _append_flow_text(parts: list[str | None], text: str) -> None:
    normalized = collapse_ascii_whitespace(text)
    if normalized == " ":
        parts.append(_SPACE)
        return
    if normalized.startswith(" "):
        parts.append(_SPACE)
    core = normalized.strip(" ")
    if core:
        parts.append(core)
    if normalized.endswith(" "):
        parts.append(_SPACE)


def canonical_text(root: HtmlElement, *, exclude_code: bool = False) -> str:
    """Article text with ASCII whitespace runs collapsed to one space, ``<pre>`` verbatim.

    Each block element contributes a collapsible space at both edges, so the result
    depends on the words and not on the indentation: a list written on one line and
    the same list pretty-printed give one string. Only a *collapsible* segment at
    either end is trimmed: trimming the final string would make ``<pre> a</pre>``
    and ``<pre>a</pre>`` equal, and leading whitespace is what a ``<pre>`` keeps.
    U+00A0 is content, not whitespace. ``exclude_code`` drops ``<pre>``/``<code>``
    subtrees (the gist rule: a command line is not the claim).
    """
    parts: list[str | None] = []
    pre_depth = 0
    skip_depth = 0
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if not isinstance(tag, str):
            if event == "end" and el is not root and el.tail and skip_depth == 0:
                if pre_depth:
                    parts.append(el.tail)
                else:
                    _append_flow_text(parts, el.tail)
            continue
        if event == "start":
            if exclude_code and tag in GIST_EXCLUDED_ELEMENTS:
                skip_depth += 1
            if tag in BLOCK_ELEMENTS:
                parts.append(_SPACE)
            if tag == "pre":
                pre_depth += 1
            if el.text and skip_depth == 0:
                if pre_depth:
                    parts.append(el.text)
                else:
                    _append_flow_text(parts, el.text)
        else:
            if tag == "pre":
                pre_depth -= 1
            if tag in BLOCK_ELEMENTS:
                parts.append(_SPACE)
            if exclude_code and tag in GIST_EXCLUDED_ELEMENTS:
                skip_depth -= 1
            if el is not root and el.tail and skip_depth == 0:
                if pre_depth:
                    parts.append(el.tail)
                else:
                    _append_flow_text(parts, el.tail)
    return _joined(parts)


def _joined(parts: list[str | None]) -> str:
    """Text runs joined, each collapsible space (None) between two of them one space,
    and one at either end dropped."""
    out: list[str] = []
    pending = False
    for part in parts:
        if part is None:
            pending = bool(out)
        elif part:
            if pending:
                out.append(" ")
                pending = False
            out.append(part)
    return "".join(out)


def flow_text(runs: list[str | None]) -> str:
    """``canonical_text`` of a tree given as its runs in document order: a text node
    outside ``<pre>`` as a string, a block element's edge as None. For a reader that
    found an article's text without building its tree (``format.canonical``)."""
    parts: list[str | None] = []
    for run in runs:
        if run is None:
            parts.append(_SPACE)
        else:
            _append_flow_text(parts, run)
    return _joined(parts)


def canonical_article_text(root: HtmlElement) -> str:
    """The digest's input: ``canonical_text`` with code kept, so everything is hashed."""
    return canonical_text(root)


def digest(text: str) -> str:
    """``sha256:<hex>`` of a canonical text."""
    return f"{HASH_ALGORITHM}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def content_hash(source: str | HtmlElement | HashableArticle) -> str:
    """The content hash of an article.

    Accepts an ``<article>`` element, anything with an ``html`` attribute holding the
    article's inner HTML, or a string. A string containing an ``<article>`` is a
    whole file and the article is located first, so head content never reaches the
    digest; a string without one is hashed as article inner HTML rather than
    refused, because refusing malformed input is ``parse_memory``'s job.

    Only the article's text counts: the file and its bare article hash alike, and
    spacing or a head edit leaves the hash where it was, while a changed word moves it.

    >>> from memhtml.format import NewMemoryInput, content_hash, render_template, set_meta
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z"))
    >>> content_hash(html)
    'sha256:661bc6042ded413ca6d64448f90c35b79fb8905c361e3e49ef3906c16c61c245'
    >>> content_hash("<p><mark>Deploys happen on Tuesdays.</mark></p>") == content_hash(html)
    True
    >>> content_hash(html.replace("happen on", "happen    on")) == content_hash(html)
    True
    >>> content_hash(set_meta(html, "memhtml-confidence", "0.9")) == content_hash(html)
    True
    >>> content_hash(html.replace("Tuesdays", "Mondays")) == content_hash(html)
    False
    """
    if isinstance(source, HtmlElement):
        return digest(canonical_article_text(source))
    inner = source if isinstance(source, str) else source.html
    if isinstance(source, str) and "<article" in source.lower():
        root, _ = parse_html(source)
        article = find_article(root) if root is not None else None
        if article is not None:
            return digest(canonical_article_text(article))
    fragment = parse_article_fragment(inner)
    if fragment is None:
        return digest("")
    return digest(canonical_article_text(fragment))


def is_content_hash(value: str) -> bool:
    """True for a well-formed ``sha256:<64 lowercase hex>`` digest."""
    return _HASH_FORM.fullmatch(value) is not None
