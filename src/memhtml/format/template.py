"""The write path: turn a title, a claim and prose into a memory file.

An agent hand-placing the ``<mark>`` would break constraint 1 regularly; a template
that places it always places it right. The claim becomes the one ``<mark>`` leading
the first ``<p>``, the first body paragraph joins that ``<p>`` as its tail, and a
body paragraph that is a whole fenced block becomes ``<figure><pre><code>``. The
language rides on ``data-lang`` (``class`` is refused by constraint 3 and ``lang``
means a human language); the info string wins outright, and the detector is asked
only about an unlabeled fence, so no detector opinion overrides what a person wrote.

The format never guesses a language itself: a guess depends on which model or
lexers are installed, and the file format must mean the same thing everywhere. The
caller hands in a detector (the store passes the one the composition root picks,
``memhtml.compose.detection``); with none, an unlabeled fence stays unlabeled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import MemoryType, TaskStatus
from memhtml.format.document import ArticleExtractions, MemoryDoc, MemoryMetas
from memhtml.format.fences import FencedBlock, fenced_block_of
from memhtml.format.hash import collapse_ascii_whitespace, content_hash
from memhtml.format.markup import escape_text
from memhtml.format.serialize import canonical_article, serialize_memory
from memhtml.format.tree import HtmlElement

DEFAULT_TASK_STATUS: TaskStatus = "todo"
"""A new task starts here. Defaulted because the parser refuses a task without a
status, so a template that left it out would write a file the format rejects."""

_ASCII_WS = " \t\n\r\f"


@dataclass(frozen=True, slots=True)
class NewMemoryInput:
    """What a write door supplies. ``claim`` is required: a memory with no claim has
    nothing to show at the first disclosure tier."""

    title: str
    claim: str
    memory_type: MemoryType
    at: str
    """UTC instant of the write; stamps both created and updated."""
    body: tuple[str, ...] = ()
    """Prose after the claim, one paragraph each; ``body[0]`` joins the claim's ``<p>``."""
    article_html: str | None = None
    """Pre-authored article markup used instead of claim and body; it must carry its
    own ``<mark>``, so the caller owns constraint 1 when using it."""
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    author: str | None = None
    confidence: float | None = None
    importance: int | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    task_status: TaskStatus | None = None
    due_at: str | None = None
    detect: Callable[[str], str | None] | None = field(default=None, compare=False)
    """Language detector for unlabeled fences; None leaves them unlabeled (no guess)."""


@dataclass(frozen=True, slots=True)
class ProseParagraph:
    """A ``<p>``: the claim (first paragraph only) and/or a body paragraph's text."""

    claim: str | None = None
    text: str | None = None
    index: int | None = None


@dataclass(frozen=True, slots=True)
class FigureParagraph:
    """A fenced body paragraph, rendered as a figure."""

    block: FencedBlock
    index: int


Paragraph = ProseParagraph | FigureParagraph


def prose_paragraphs(claim: str, body: tuple[str, ...] | list[str]) -> list[Paragraph]:
    """The paragraphs the prose path renders, in order.

    Blank paragraphs are dropped. A fence is never joined onto the claim's
    paragraph: when the first body paragraph is a fence, the claim stands alone and
    the figure follows, so the claim still leads the article and code stays out of
    the sentence.
    """
    items = [(i, p.strip(_ASCII_WS)) for i, p in enumerate(body) if p.strip(_ASCII_WS)]
    out: list[Paragraph] = []
    first_claim = claim.strip(_ASCII_WS)
    if items and fenced_block_of(items[0][1]) is None:
        index, text = items.pop(0)
        out.append(ProseParagraph(claim=first_claim, text=text, index=index))
    else:
        out.append(ProseParagraph(claim=first_claim))
    for index, text in items:
        block = fenced_block_of(text)
        if block is not None:
            out.append(FigureParagraph(block, index))
        else:
            out.append(ProseParagraph(text=text, index=index))
    return out


def prose_paragraph_text(paragraph: ProseParagraph) -> str:
    """The text a rendered ``<p>`` reads as: its claim, a space, its body text."""
    return " ".join(part for part in (paragraph.claim, paragraph.text) if part)


def _render(paragraph: Paragraph, detect: Callable[[str], str | None] | None) -> str:
    if isinstance(paragraph, FigureParagraph):
        lang = paragraph.block.lang
        if not lang and detect is not None:
            lang = detect(paragraph.block.code)
        attr = f' data-lang="{escape_text(lang)}"' if lang else ""
        return f"<figure><pre><code{attr}>{escape_text(paragraph.block.code)}</code></pre></figure>"
    parts: list[str] = []
    if paragraph.claim is not None:
        parts.append(f"<mark>{escape_text(paragraph.claim)}</mark>")
    if paragraph.text:
        parts.append(escape_text(paragraph.text))
    return f"<p>{' '.join(parts)}</p>"


def article_html_for(data: NewMemoryInput) -> str:
    """The article markup: ``article_html`` verbatim when given, else the prose plan."""
    if data.article_html is not None:
        return data.article_html
    return "\n".join(_render(p, data.detect) for p in prose_paragraphs(data.claim, data.body))


def new_memory_doc(data: NewMemoryInput) -> MemoryDoc:
    """A fresh doc with ``memhtml-content-hash`` already stamped from the article just
    built, so the file is self-consistent on its first read. The extraction fields
    are left empty: serialization reads only ``article.html``."""
    html, article = canonical_article(article_html_for(data))
    task_status = data.task_status
    if data.memory_type == "task" and task_status is None:
        task_status = DEFAULT_TASK_STATUS
    if data.memory_type != "task":
        task_status = None
    metas = MemoryMetas(
        memory_type=data.memory_type,
        status="active",
        created_at=data.at,
        updated_at=data.at,
        confidence=None if data.confidence is None else round(data.confidence, 2),
        importance=data.importance,
        content_hash=content_hash(article if article is not None else html),
        author=data.author,
        session_id=data.session_id,
        prompt_id=data.prompt_id,
        turn_uuid=data.turn_uuid,
        valid_from=data.valid_from,
        valid_until=data.valid_until,
        task_status=task_status,
        due_at=data.due_at,
    )
    return MemoryDoc(
        # ASCII whitespace only, as a browser and the parser read it: a no-break or
        # ideographic space in a title is a character of the title.
        title=collapse_ascii_whitespace(data.title).strip(" "),
        metas=metas,
        article=ArticleExtractions(html=html, gist="", body_text=""),
        entities=data.entities,
        tags=data.tags,
        aliases=data.aliases,
        links=data.links,
    )


def render_template(data: NewMemoryInput) -> str:
    """A fresh memory file as text: the one function a write door calls.

    The claim becomes the ``<mark>`` leading the first paragraph, the first body
    paragraph follows it there, and the content hash is stamped from that article:

    >>> from memhtml.format import NewMemoryInput, render_template
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys to checkout-api happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z", body=("Never on a Friday.",),
    ...     entities=("service:checkout-api",), tags=("deploy",)))
    >>> print(html, end="")
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <title>Deploy window</title>
    <meta name="memhtml-type" content="procedural">
    <meta name="memhtml-status" content="active">
    <meta name="memhtml-created" content="2026-01-06T09:00:00Z">
    <meta name="memhtml-updated" content="2026-01-06T09:00:00Z">
    <meta name="memhtml-content-hash" content="sha256:765291720004...">
    <meta name="memhtml-entity" content="service:checkout-api">
    <meta name="memhtml-tag" content="deploy">
    </head>
    <body>
    <article>
    <p><mark>Deploys to checkout-api happen on Tuesdays.</mark> Never on a Friday.</p>
    </article>
    </body>
    </html>
    """
    return serialize_memory(new_memory_doc(data))


def article_with_claim(article_html: str, claim: str) -> str | None:
    """``article_html`` (an article's inner markup, holding one ``<mark>``) with that
    mark's text replaced by ``claim``, everything around it kept as it was: how a
    correction that gives only a new claim keeps the rest of the article. None when
    the fragment holds no mark to replace."""
    from memhtml.format.markup import write_children
    from memhtml.format.tree import find_first, parse_article_fragment

    article = parse_article_fragment(article_html)
    mark = None if article is None else find_first(article, "mark")
    if article is None or mark is None:
        return None
    tail = mark.tail
    for child in list(mark):
        mark.remove(child)
    mark.text = claim
    mark.tail = tail
    return write_children(article).strip(_ASCII_WS)


def article_without_terms(article_html: str, prefix: str) -> str:
    """``article_html`` less every ``<dt>`` whose text starts with ``prefix`` and the
    ``<dd>`` values that follow it (a ``<dl>`` left empty goes too): how a correction
    drops the facets that said where the corrected memory came from (an import's
    ``memhtml-source`` lines), which are no longer true of the new one."""
    from memhtml.format.markup import write_children
    from memhtml.format.tree import parse_article_fragment, tag_of, text_content

    article = parse_article_fragment(article_html)
    if article is None:
        return article_html
    for listing in list(article.iter("dl")):
        dropping = False
        for child in list(listing):
            tag = tag_of(child)
            if tag == "dt":
                dropping = text_content(child).strip(_ASCII_WS).startswith(prefix)
            if dropping and tag in ("dt", "dd"):
                _drop(child)
        if not any(tag_of(child) in ("dt", "dd", "div") for child in listing):
            _drop(listing)
    return write_children(article).strip(_ASCII_WS)


def _drop(el: HtmlElement) -> None:
    """Remove ``el`` and its subtree, keeping the text that follows it (its tail)."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        before = el.getprevious()
        if before is not None:
            before.tail = (before.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)
