"""A memory's article as plain-text blocks, for reading it as text.

The search text (``body_text``) collapses every run of whitespace, code included,
because the words are what a search matches. A reader needs the shape too: a YAML
block flattened onto one line no longer says what it said. So the article is read
here block by block, the way a browser lays it out: each paragraph, heading, list
item, term, definition, caption, summary and table row is one block of text with its
whitespace collapsed, and a ``<pre>`` is one block kept verbatim, every line and
indent. Markup never survives: the blocks are the characters a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.format.tree import HtmlElement, find_article, parse_html, tag_of

BlockKind = Literal["prose", "item", "code"]
"""``prose`` a paragraph-like block, ``item`` a list item (kept next to its siblings),
``code`` a ``<pre>`` kept line for line."""

_ASCII_WS = " \t\n\r\f"

_TEXT_BLOCKS = frozenset({"p", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
                          "figcaption", "caption", "summary", "tr", "address", "blockquote",
                          "div"})
"""Elements whose text is one block (a nested block inside one starts another)."""

_CONTAINERS = frozenset({"article", "section", "figure", "aside", "details", "ul", "ol",
                         "dl", "table", "thead", "tbody", "tfoot", "header", "footer", "nav",
                         "main"})
"""Elements whose edges end a block but that hold no block of their own."""

_CELLS = frozenset({"td", "th"})


@dataclass(frozen=True, slots=True)
class TextBlock:
    """One block of an article's visible text."""

    kind: BlockKind
    text: str


@dataclass(slots=True)
class _Walk:
    blocks: list[TextBlock] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    kinds: list[BlockKind] = field(default_factory=lambda: ["prose"])
    cells: list[int] = field(default_factory=list)
    skip_mark: bool = False
    """Leave the claim's ``<mark>`` out (its paragraph's other text stays)."""

    def flush(self) -> None:
        lines = [collapse_ascii_whitespace(line).strip(" ")
                 for line in "".join(self.parts).split("\n")]
        text = "\n".join(line for line in lines if line)
        self.parts.clear()
        if text:
            kind = self.kinds[-1]
            self.blocks.append(TextBlock(kind, f"- {text}" if kind == "item" else text))

    def code(self, el: HtmlElement) -> None:
        self.flush()
        text = "".join(el.itertext())
        # The parser already drops the newline that opens a <pre>; a trailing one is
        # how a fenced block ends, not a line of the code.
        text = text.rstrip("\n")
        if text.strip(_ASCII_WS):
            self.blocks.append(TextBlock("code", text))

    def text(self, value: str | None) -> None:
        if value:
            # A line break in the source is only whitespace; only <br> breaks a line.
            self.parts.append(value.replace("\n", " ").replace("\r", " "))


def _walk(walk: _Walk, el: HtmlElement) -> None:
    tag = tag_of(el)
    if tag == "mark" and walk.skip_mark:
        walk.skip_mark = False
        return
    if tag == "pre":
        walk.code(el)
        return
    if tag == "br":
        walk.parts.append("\n")
        return
    block = tag in _TEXT_BLOCKS
    container = tag in _CONTAINERS
    if block or container:
        walk.flush()
    if block:
        walk.kinds.append("item" if tag == "li" else "prose")
    if tag == "tr":
        walk.cells.append(0)
    if tag in _CELLS and walk.cells:
        if walk.cells[-1]:
            walk.parts.append(" | ")
        walk.cells[-1] += 1
    if tag:
        walk.text(el.text)
    for child in el:
        _walk(walk, child)
        walk.text(child.tail)
    if block or container:
        walk.flush()
    if block:
        walk.kinds.pop()
    if tag == "tr":
        walk.cells.pop()


def article_text_blocks(html: str, *, without_claim: bool = False) -> tuple[TextBlock, ...]:
    """The visible text of a memory file's article, block by block in document order;
    ``without_claim`` leaves out the first ``<mark>`` (the claim), so what is left is
    the body that follows it.

    Total: a file with no article (or none that parses) has no blocks."""
    root, _ = parse_html(html)
    article = find_article(root) if root is not None else None
    if article is None:
        return ()
    walk = _Walk(skip_mark=without_claim)
    walk.text(article.text)
    for child in article:
        _walk(walk, child)
        walk.text(child.tail)
    walk.flush()
    return tuple(walk.blocks)


def join_blocks(blocks: tuple[TextBlock, ...] | list[TextBlock]) -> str:
    """Blocks as one text: a blank line between blocks, list items one per line."""
    out: list[str] = []
    previous: BlockKind | None = None
    for block in blocks:
        if out:
            out.append("\n" if previous == "item" and block.kind == "item" else "\n\n")
        out.append(block.text)
        previous = block.kind
    return "".join(out)


__all__ = ["BlockKind", "TextBlock", "article_text_blocks", "join_blocks"]
