"""lxml navigation narrowed to what the format needs. Internal to ``memhtml.format``.

One parser for everything (whole files and article fragments alike), so two views
of the same bytes can never disagree about the tree. lxml's walks (``iter``,
``iterwalk``) run in C without Python recursion, so a pathologically deep
hand-written file cannot overflow the stack.
"""

from __future__ import annotations

from typing import cast

from lxml import etree

HtmlElement = etree._Element
"""A plain lxml element. The ``lxml.html`` element classes are not used: their
per-node Python class lookup cost more than the whole C parse."""

_PARSER = etree.HTMLParser(
    encoding="utf-8",
    remove_comments=True,
    remove_pis=True,
    default_doctype=False,
    no_network=True,
)

_FRAGMENT_PREFIX = "<!doctype html><html><head></head><body><article>"
_FRAGMENT_SUFFIX = "</article></body></html>"

ParseOutcome = tuple[HtmlElement | None, str | None]
_UTF8_BOM = b"\xef\xbb\xbf"


def encode_source(text: str) -> tuple[bytes | None, str | None]:
    """A file's text as the UTF-8 bytes both parsers read, or ``(None, why)``.

    A NUL is refused outright: a browser drops or replaces it where the checker's
    parser may end the text, so the two would read different documents.
    """
    if "\x00" in text:
        return None, "NUL character in the file"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None, "text is not encodable as UTF-8 (lone surrogate)"
    if data.startswith(_UTF8_BOM):
        # A browser takes a UTF-8 byte-order mark as the encoding and drops it
        # before parsing; lexbor would read it as text and leave the head early.
        data = data[len(_UTF8_BOM):]
    if not data.strip():
        return None, "empty document"
    return data, None


def parse_bytes(data: bytes) -> ParseOutcome:
    """Parse UTF-8 bytes as a whole document: ``(root, None)`` or ``(None, why)``.

    A ``<pre>``'s leading newline is dropped after parsing, as an HTML5 browser
    drops it, so the text the hash and the extraction see is the text a reader sees.
    """
    try:
        root: HtmlElement | None = etree.fromstring(data, _PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        return None, f"unparseable HTML: {exc}"
    if root is None:  # an empty or comment-only parse yields no element
        return None, "no document element"
    for pre in root.iter("pre"):
        if pre.text and pre.text.startswith("\n"):
            pre.text = pre.text[1:]
    _close_implied(root)
    return root, None


def parse_html(text: str) -> ParseOutcome:
    """Parse a whole document. Returns ``(root, None)`` or ``(None, why)``; never raises."""
    data, why = encode_source(text)
    if data is None:
        return None, why
    return parse_bytes(data)


_CLOSED_BY = {
    # element -> the parents an HTML5 parser closes before opening it
    "dd": ("dd", "dt"),
    "dt": ("dd", "dt"),
    "li": ("li",),
}
_CLOSES_INSIDE = {
    # parent -> the child tags whose start closes it (the inverse of _CLOSED_BY)
    "dd": frozenset({"dd", "dt"}),
    "dt": frozenset({"dd", "dt"}),
    "li": frozenset({"li"}),
}
_CLOSES_P = frozenset(
    # every start tag the HTML5 "in body" rules open by closing a <p> in button scope
    {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div",
     "dl", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
     "h6", "header", "hgroup", "hr", "listing", "main", "menu", "nav", "ol", "p", "plaintext",
     "pre", "search", "section", "summary", "table", "ul", "xmp"}
)


def _close_implied(root: HtmlElement) -> None:
    """Apply the implied end tags libxml2 leaves open but every browser closes.

    ``<dd>a<dd>b`` is two sibling ``<dd>`` elements to a browser, and a ``<figure>``
    opened inside a ``<p>`` closes that paragraph first. libxml2 nests them instead,
    so the tree is repaired here: the element and the siblings after it move up to
    follow the element that should have been closed. Without this the facets of a
    hand-written list would merge, and the written-back markup would nest in a way
    no browser shows.
    """
    if not _has_implied_close(root):
        return
    tags = ("dd", "dt", "li", *_CLOSES_P)
    moved = True
    while moved:
        moved = False
        for el in list(root.iter(*tags)):
            tag = tag_of(el)
            parent = el.getparent()
            if parent is None:
                continue
            closes = tag_of(parent) in _CLOSED_BY.get(tag, ()) or (
                tag in _CLOSES_P and tag_of(parent) == "p"
            )
            if not closes:
                continue
            anchor = parent
            for sibling in [el, *el.itersiblings()]:
                anchor.addnext(sibling)
                anchor = sibling
            moved = True


def _has_implied_close(root: HtmlElement) -> bool:
    """Whether any element sits directly in a parent a browser would have closed
    before opening it: the same pairs ``_close_implied`` looks for, found from the
    parent side. Nearly every file has none, and this walk visits only the ``<p>``,
    ``<dd>``, ``<dt>`` and ``<li>`` elements, where the repair walks every block
    element and asks each for its parent."""
    for parent in root.iter("p", "dd", "dt", "li"):
        tag = cast(str, parent.tag)  # one of the four names asked for
        closing = _CLOSES_P if tag == "p" else _CLOSES_INSIDE[tag]
        for child in parent:
            if child.tag in closing:
                return True
    return False


def parse_article_fragment(inner_html: str) -> HtmlElement | None:
    """Parse article inner HTML inside an ``<article>``: the element it came from.

    Parsing in the element the markup lives in is what makes the hash of a doc
    agree with the hash of the whole file it serializes to.
    """
    root, _ = parse_html(_FRAGMENT_PREFIX + inner_html + _FRAGMENT_SUFFIX)
    if root is None:
        return None
    return find_article(root)


def text_content(el: HtmlElement) -> str:
    """All text under ``el``, in document order, unnormalized."""
    return "".join(el.itertext())


def tag_of(el: HtmlElement) -> str:
    """The element's tag name; empty for comment-like nodes, whose tag is not a string."""
    tag = el.tag
    return tag if isinstance(tag, str) else ""


def find_first(root: HtmlElement, tag: str) -> HtmlElement | None:
    """The first element named ``tag`` in document order, the root included."""
    for el in root.iter(tag):
        return el
    return None


def find_article(root: HtmlElement) -> HtmlElement | None:
    """The document's first ``<article>``, or None."""
    return find_first(root, "article")


def has_ancestor(el: HtmlElement, tags: frozenset[str] | tuple[str, ...], stop: HtmlElement | None
                 ) -> bool:
    """True when an ancestor of ``el`` (below ``stop``) is named in ``tags``."""
    parent = el.getparent()
    while parent is not None and parent is not stop:
        if parent.tag in tags:
            return True
        parent = parent.getparent()
    return False


__all__ = [
    "HtmlElement",
    "encode_source",
    "find_article",
    "find_first",
    "has_ancestor",
    "parse_article_fragment",
    "parse_bytes",
    "parse_html",
    "tag_of",
    "text_content",
]
