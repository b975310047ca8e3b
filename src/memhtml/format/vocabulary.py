"""The closed vocabulary of the memory file format, as data.

There is no sanitizer engine: these tables *are* the policy. The checker reads
them, the writer reads them, and a change of policy is a change of data here.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

META_PREFIX = "memhtml-"
"""Both metadata planes share one hyphenated prefix: a rel token cannot hold a colon."""
LINK_REL_PREFIX = "memhtml-"

MemoryMetaName = Literal[
    "memhtml-type",
    "memhtml-status",
    "memhtml-created",
    "memhtml-updated",
    "memhtml-confidence",
    "memhtml-importance",
    "memhtml-content-hash",
    "memhtml-author",
    "memhtml-session",
    "memhtml-prompt",
    "memhtml-turn",
    "memhtml-valid-from",
    "memhtml-valid-until",
    "memhtml-reprieves",
    "memhtml-archived",
    "memhtml-superseded-by",
    "memhtml-needs-revision",
    "memhtml-task-status",
    "memhtml-due",
    "memhtml-source",
    "memhtml-source-sha256",
    "memhtml-source-links",
    "memhtml-source-shape",
    "memhtml-entity",
    "memhtml-tag",
    "memhtml-alias",
]
META_ORDER: tuple[MemoryMetaName, ...] = get_args(MemoryMetaName)
"""Emit order. New scalars go at the end of the scalar block and new repeatables at
the end of the repeatable block, so two writers stamping different keys leave each
other's lines where they were and a meta-only edit stays a one-line diff.

The four ``memhtml-source`` metas are an import's provenance (the note's path under
its folder, the digest of its bytes, the link targets it named, and the shape of its
frontmatter and body that the memory holds elsewhere, ``store.markdown_shape``):
head metadata, so no search sees them and no export writes them into a note's text."""

RepeatableMeta = Literal["memhtml-entity", "memhtml-tag", "memhtml-alias"]
REPEATABLE_META: tuple[RepeatableMeta, ...] = get_args(RepeatableMeta)
"""One element per value, so correcting one tag is a one-line diff."""

REQUIRED_META: tuple[MemoryMetaName, ...] = (
    "memhtml-type",
    "memhtml-status",
    "memhtml-created",
    "memhtml-updated",
)
"""Facts no pure function can invent. Confidence, importance and author are absent on
purpose: each has a documented default, so a hand-written file missing them is
completed by the reader rather than refused."""

DATETIME_META: tuple[MemoryMetaName, ...] = (
    "memhtml-created",
    "memhtml-updated",
    "memhtml-valid-from",
    "memhtml-valid-until",
    "memhtml-archived",
    "memhtml-due",
)
"""Metas whose malformed value is a refusal rather than a drop: an instant has no
default, and dropping an unsortable valid-until would widen the fact's window."""

INSTANT_META: tuple[MemoryMetaName, ...] = ("memhtml-created", "memhtml-updated")
"""The write stamps: UTC instants, never bare dates. The clock that stamps them
knows the second, and a bare date would sort before every instant of its own day,
so a file written at noon would look older than one written at one past midnight.
The other datetime metas are world times (a validity bound, a deadline, an
eviction day) where a date is what an author means."""

_META_INDEX: dict[str, int] = {name: i for i, name in enumerate(META_ORDER)}


def meta_rank(name: str) -> int:
    """Position of a meta name in META_ORDER (unknown names sort last)."""
    return _META_INDEX.get(name, len(META_ORDER))


def is_memory_meta_name(name: str) -> TypeGuard[MemoryMetaName]:
    """True when a ``memhtml-`` name is in the closed metadata vocabulary."""
    return name in _META_INDEX


def is_repeatable_meta(name: str) -> TypeGuard[RepeatableMeta]:
    """True when a meta name may appear more than once in a head."""
    return name in REPEATABLE_META


DOCUMENT_ELEMENTS: tuple[str, ...] = ("html", "head", "body", "title", "meta", "link")
"""The skeleton: no indexer semantics, there so the file is a document a browser opens."""

ARTICLE_ELEMENTS: tuple[str, ...] = (
    "article", "mark", "time", "dl", "dt", "dd", "data", "cite", "q", "dfn", "figure",
    "figcaption", "details", "summary", "aside", "section", "abbr", "pre", "code", "kbd",
    "samp", "var", "table", "caption", "thead", "tbody", "tr", "th", "td", "p", "ul", "ol",
    "li", "a", "strong", "em",
)
"""One entry per row of the format's element table, plus ``tr``: a table cannot hold a
cell without a row, so refusing it would make every real table warn."""

PERSON_ELEMENTS: tuple[str, ...] = ("address",)
"""The contact block a person file adds. Allowed anywhere: the parser sees no path."""

FIGURE_SCOPED_ELEMENTS: tuple[str, ...] = ("div", "span")
"""Generic containers, allowed only inside a figure where a pasted sample brings its own."""

KNOWN_ELEMENTS: frozenset[str] = frozenset(
    DOCUMENT_ELEMENTS + ARTICLE_ELEMENTS + PERSON_ELEMENTS + FIGURE_SCOPED_ELEMENTS
)

VOID_ELEMENTS: frozenset[str] = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)
"""Start tag only; an end tag on these is invalid HTML."""

GIST_EXCLUDED_ELEMENTS: frozenset[str] = frozenset({"pre", "code"})
"""A command line is searchable body text, not part of the claim."""

BLOCK_ELEMENTS: frozenset[str] = frozenset(
    {"address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details",
     "div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
     "head", "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section",
     "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul"}
)
"""Elements whose edges separate words, so ``<li>a</li><li>b</li>`` reads as two words."""

FORBIDDEN_ELEMENTS: frozenset[str] = frozenset(
    {
        # executes
        "script", "noscript", "template",
        # styles: presentation is the stylesheet's job
        "style",
        # embeds a browsing context or a foreign resource
        "iframe", "frame", "frameset", "object", "embed", "applet", "portal", "fencedframe",
        "img", "picture", "source", "video", "audio", "track", "canvas", "image",
        # rewrites the document's own URL space
        "base",
        # submits or captures data
        "form", "input", "button", "select", "textarea", "option", "keygen", "isindex",
        # foreign content carries its own scripting and animation (svg animate/set)
        "svg", "math",
        # legacy raw-text elements that browsers parse differently from lxml
        "xmp", "plaintext", "listing", "noembed", "noframes", "marquee",
    }
)
"""Data does not execute, embed or navigate. These are violations, not warnings, because
the corpus is published as a static site and every reader's browser would run them."""

FORBIDDEN_ATTRIBUTES: frozenset[str] = frozenset(
    {"style", "class", "srcdoc", "srcset", "src", "formaction", "action", "background",
     "bgcolor", "color", "align", "valign", "face", "border", "width", "height", "ping",
     "http-equiv", "xmlns", "xlink:href", "xml:base", "contenteditable", "autofocus",
     "target", "download", "popover", "popovertarget", "is"}
)
"""Presentation, resource loading and navigation tricks. Any ``on*`` attribute is also
refused, by prefix, since the event-handler set grows with every browser release."""

URL_ATTRIBUTES: frozenset[str] = frozenset({"href", "cite", "src", "data", "poster"})
"""Attributes a browser resolves as URLs; their values are checked for scheme and form."""

SAFE_LINK_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
"""Schemes an ``<a href>`` or ``<q cite>`` may name besides a root-relative path."""
