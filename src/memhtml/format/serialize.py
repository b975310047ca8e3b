"""Write a ``MemoryDoc`` back to a whole file: the inverse of ``parse_memory``.

``parse_memory(serialize_memory(doc)) == Success(doc)`` is what lets a caller read a
file, adjust it and write it back without touching content it did not mean to.
The output is deterministic: one ``<meta>`` per line in META_ORDER, no head
indentation, so stamping ``memhtml-updated`` is a one-line diff a person can review.
"""

from __future__ import annotations

from memhtml.format.document import MemoryDoc
from memhtml.format.markup import escape_attribute, escape_text, write_children
from memhtml.format.tree import HtmlElement, parse_article_fragment
from memhtml.format.vocabulary import LINK_REL_PREFIX, MemoryMetaName

_ASCII_WS = " \t\n\r\f"


def meta_pairs(doc: MemoryDoc) -> list[tuple[MemoryMetaName, str]]:
    """The doc's metas as ``(name, content)`` in META_ORDER, one pair per repeatable
    value. An absent value contributes nothing; the reader's defaults cover it."""
    m = doc.metas
    pairs: list[tuple[MemoryMetaName, str | None]] = [
        ("memhtml-type", m.memory_type),
        ("memhtml-status", m.status),
        ("memhtml-created", m.created_at),
        ("memhtml-updated", m.updated_at),
        ("memhtml-confidence", None if m.confidence is None else f"{m.confidence:.2f}"),
        ("memhtml-importance", None if m.importance is None else str(m.importance)),
        ("memhtml-content-hash", m.content_hash),
        ("memhtml-author", m.author),
        ("memhtml-session", m.session_id),
        ("memhtml-prompt", m.prompt_id),
        ("memhtml-turn", m.turn_uuid),
        ("memhtml-valid-from", m.valid_from),
        ("memhtml-valid-until", m.valid_until),
        ("memhtml-reprieves", None if m.reprieves is None else str(m.reprieves)),
        ("memhtml-archived", m.archived_at),
        ("memhtml-superseded-by", m.superseded_by),
        (
            "memhtml-needs-revision",
            None if m.needs_revision is None else ("true" if m.needs_revision else "false"),
        ),
        ("memhtml-task-status", m.task_status),
        ("memhtml-due", m.due_at),
        ("memhtml-source", m.source),
        ("memhtml-source-sha256", m.source_sha256),
        ("memhtml-source-links", m.source_links),
        ("memhtml-source-shape", m.source_shape),
    ]
    pairs += [("memhtml-entity", v) for v in doc.entities]
    pairs += [("memhtml-tag", v) for v in doc.tags]
    pairs += [("memhtml-alias", v) for v in doc.aliases]
    return [(name, value) for name, value in pairs if value is not None]


def meta_line(name: str, value: str) -> str:
    """One head ``<meta>`` line, without its newline."""
    return f'<meta name="{name}" content="{escape_attribute(value)}">'


def link_line(rel: str, href: str) -> str:
    """One head ``<link>`` line; the rel is written hyphenated (``about_person`` ->
    ``memhtml-about-person``), the form a rel token conventionally takes."""
    token = LINK_REL_PREFIX + rel.replace("_", "-")
    return f'<link rel="{token}" href="{escape_attribute(href)}">'


_KNOWN_CANONICAL: dict[str, None] = {}
"""The last article markups this module wrote (insertion-ordered, so the oldest goes
first). Canonical markup is a fixed point, so one of these given back is returned as
it is: the template writes a new file's article canonical and then serializes it,
which parsed and wrote the same markup twice, once per write of an import of
thousands of notes."""
_KNOWN_CANONICAL_MAX = 64


def _remember(html: str) -> str:
    known = _KNOWN_CANONICAL
    if html not in known:
        if len(known) >= _KNOWN_CANONICAL_MAX:
            del known[next(iter(known))]
        known[html] = None
    return html


def canonical_article(inner_html: str) -> tuple[str, HtmlElement | None]:
    """Article inner HTML re-parsed and re-written (the fixed-point markup), with the
    parsed article, so a caller that also hashes it need not parse it again."""
    article = parse_article_fragment(inner_html)
    if article is None:
        return "", None
    return _remember(write_children(article).strip(_ASCII_WS)), article


def canonical_article_html(inner_html: str) -> str:
    """Article inner HTML re-parsed and re-written: the fixed-point markup."""
    if inner_html in _KNOWN_CANONICAL:
        return inner_html
    return canonical_article(inner_html)[0]


def serialize_memory(doc: MemoryDoc) -> str:
    """The whole file for a doc. ``article.html`` is re-parsed and re-written rather
    than pasted, so a hand-assembled doc still gets canonical markup."""
    lines = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escape_text(doc.title)}</title>",
    ]
    lines += [meta_line(name, value) for name, value in meta_pairs(doc)]
    lines += [link_line(link.rel, link.href) for link in doc.links]
    lines += ["</head>", "<body>", "<article>"]
    article = canonical_article_html(doc.article.html)
    if article:
        lines.append(article)
    lines += ["</article>", "</body>", "</html>", ""]
    return "\n".join(lines)
