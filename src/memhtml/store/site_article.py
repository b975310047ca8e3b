"""A memory's article as blocks of escaped text, for its readable page.

The readable page never copies markup out of a memory file. It walks the article
and writes its own small set of elements (``p``, ``pre``, ``h3``, ``mark``, ``code``,
``strong``, ``em``, ``br``, ``a``, and ``table``, ``tbody``, ``tr``, ``th``, ``td``)
around the file's text, escaped, and carries over no attribute at all. The paragraph,
list, definition, table and code structure survives (a table as rows of cells, each
cell one line of text; a table inside a cell runs on as that cell's words); anything
else in the file becomes plain text. So whatever a file holds, and
whichever parser disagrees about it, the page can only ever show its words; the
one attribute written is an ``href`` the caller resolved to a page of the site.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

from memhtml.format import escape_text

Resolve = Callable[[str], str | None]
"""An ``<a href>`` as authored -> the escaped site-relative href to use, or None."""

_ASCII_WS = " \t\n\r\f"
_WORDS = re.compile(r"[^ \t\n\r\f]+")

_BLOCK_KIND = {
    "p": "p", "address": "p", "div": "p", "li": "item", "dt": "term", "dd": "def",
    "figcaption": "caption", "caption": "caption", "summary": "summary", "tr": "row",
    "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading", "h5": "heading",
    "h6": "heading", "pre": "pre", "blockquote": "p",
}
"""Elements that hold a block of text, and the kind of block each makes."""

_CONTAINERS = frozenset({"article", "section", "figure", "aside", "details", "ul", "ol",
                         "dl", "table", "thead", "tbody", "tfoot", "header", "footer"})
"""Elements whose edges end a block but that hold no text of their own."""

_CONTEXT_CLASS = {"aside": "note", "details": "more", "blockquote": "quote"}
_INLINE_TAG = {"mark": "mark", "strong": "strong", "b": "strong", "em": "em", "i": "em",
               "code": "code", "kbd": "code", "samp": "code", "var": "code"}
_MAX_DEPTH = 4


@dataclass(slots=True)
class _Frame:
    """What an open element emits when it closes."""

    closing: str = ""
    block: bool = False
    kind: bool = False
    """Whether it pushed a block kind (a container ends a block but pushes none)."""
    list_tag: str | None = None
    context: str | None = None
    table: bool = False
    """A ``table`` element (at any depth): closing it leaves one level of tables."""
    cell: str | None = None
    """``td`` or ``th`` of the outermost table: closing it ends a cell."""
    caption: bool = False
    """The outermost table's ``caption``: closing it writes the caption's block."""


@dataclass(slots=True)
class _Reader:
    resolve: Resolve
    blocks: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=lambda: ["p"])
    contexts: list[str] = field(default_factory=list)
    lists: list[list[int | str]] = field(default_factory=list)
    inline: list[tuple[str, str]] = field(default_factory=list)
    """Open inline elements: (opening, closing), reopened across a block edge."""
    parts: list[str] = field(default_factory=list)
    has_words: bool = False
    pending_space: bool = False
    marker: str = ""
    tables: int = 0
    """Open ``table`` elements. Only the outermost is drawn as a table; one inside
    a cell or the caption is read as that cell's (or caption's) text."""
    rows: list[list[tuple[str, str]]] = field(default_factory=list)
    """The outermost table's rows so far: (``td`` or ``th``, the cell's escaped text)."""
    running: bool = False
    """Inside a cell or the caption of the outermost table: one line of text, where
    blocks, lists and tables run on as words."""
    row_start: bool = False
    """A row of a table inside a cell just began: its first cell needs no ``|``."""
    outer_inline: list[tuple[str, str]] = field(default_factory=list)
    """The inline elements open around the table, set aside while a cell is read."""
    loose: list[str] = field(default_factory=list)
    """Words written in the table outside any cell or caption (a browser shows
    them before the table), escaped."""

    def text(self, value: str | None) -> None:
        if not value:
            return
        if self.tables and not self.running:
            self.loose.extend(escape_text(word) for word in _WORDS.findall(value))
            return
        if self.kinds[-1] == "pre":
            self.parts.append(escape_text(value))
            self.has_words = self.has_words or bool(value.strip(_ASCII_WS))
            return
        if value[0] in _ASCII_WS:
            self.pending_space = True
        for i, word in enumerate(_WORDS.findall(value)):
            if (self.pending_space or i) and self.has_words:
                self.parts.append(" ")
            self.parts.append(escape_text(word))
            self.has_words = True
            self.pending_space = False
        if value[-1] in _ASCII_WS:
            self.pending_space = True

    def flush(self) -> None:
        kind = self.kinds[-1]
        if self.has_words:
            closing = "".join(close for _, close in reversed(self.inline))
            body = self.marker + "".join(self.parts) + closing
            if kind == "pre":
                self.blocks.append(f"<pre>{body}</pre>")
            elif kind == "heading":
                self.blocks.append(f"<h3>{body}</h3>")
            else:
                classes = [kind] if kind != "p" else []
                if kind == "item" and self.lists:
                    classes.append(f"depth-{min(len(self.lists), _MAX_DEPTH)}")
                if self.contexts:
                    classes.append(self.contexts[-1])
                css = f' class="{" ".join(classes)}"' if classes else ""
                self.blocks.append(f"<p{css}>{body}</p>")
            self.marker = ""
        self.parts = [opening for opening, _ in self.inline]
        self.has_words = False
        self.pending_space = False

    def start(self, el: etree._Element) -> _Frame:
        tag = el.tag if isinstance(el.tag, str) else ""
        frame = _Frame()
        if tag == "table":
            return self._open_table(frame)
        if self.tables and not self.running:
            return self._table_part(tag, frame)
        if self.running and (tag in _BLOCK_KIND or tag in _CONTAINERS):
            # A cell holds one line: its paragraphs and lists run on, spaced.
            self.pending_space = True
            self.row_start = self.row_start or tag == "tr"
            return frame
        if tag in _BLOCK_KIND or tag in _CONTAINERS:
            self.flush()
            frame.block = True
            if tag in _BLOCK_KIND:
                self.kinds.append(_BLOCK_KIND[tag])
                frame.kind = True
            if tag in ("ul", "ol"):
                self.lists.append([tag, 0])
                frame.list_tag = tag
            if tag == "li":
                self.marker = ""
                if self.lists and self.lists[-1][0] == "ol":
                    count = int(self.lists[-1][1]) + 1
                    self.lists[-1][1] = count
                    self.marker = f'<span class="marker">{count}.</span> '
            context = _CONTEXT_CLASS.get(tag)
            if context is not None:
                self.contexts.append(context)
                frame.context = context
        elif tag in ("td", "th"):
            if self.has_words and not self.row_start:
                self.parts.append(" | ")
                self.pending_space = False
            else:
                self.pending_space = True
            self.row_start = False
            if tag == "th":
                self._open(frame, "<strong>", "</strong>")
        elif tag == "br":
            self.parts.append("\n" if self.kinds[-1] == "pre" else "<br>")
            self.pending_space = False
        elif tag == "q":
            self.text("\u201c")
            frame.closing = "\u201d"
        elif tag == "a":
            self._anchor(el, frame)
        elif tag in _INLINE_TAG and self.kinds[-1] != "pre":
            name = _INLINE_TAG[tag]
            self._open(frame, f"<{name}>", f"</{name}>")
        return frame

    def _open_table(self, frame: _Frame) -> _Frame:
        """The outermost table starts collecting rows; a table inside a cell or the
        caption runs on as its words."""
        frame.table = True
        self.tables += 1
        if self.running:
            self.pending_space = True
        elif self.tables == 1:
            self.flush()
            self.rows, self.loose = [], []
        return frame

    def _table_part(self, tag: str, frame: _Frame) -> _Frame:
        """An element of the outermost table outside its cells: a row, a cell, the
        caption; any other element there is read for its words only."""
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._run(frame)
            frame.cell = tag
        elif tag == "caption":
            self._run(frame)
            self.kinds.append("caption")
            frame.caption = True
        return frame

    def _run(self, frame: _Frame) -> None:
        """Start reading a cell or the caption as one line of its own."""
        self.outer_inline, self.inline = self.inline, []
        self.parts, self.has_words, self.pending_space = [], False, False
        self.running, self.row_start = True, False

    def _stop(self) -> None:
        self.inline, self.outer_inline = self.outer_inline, []
        self.parts, self.has_words, self.pending_space = [], False, False
        self.running, self.row_start = False, False

    def _end_cell(self, tag: str) -> None:
        closing = "".join(close for _, close in reversed(self.inline))
        self.rows[-1].append((tag, "".join(self.parts) + closing if self.has_words else ""))
        self._stop()

    def _end_caption(self) -> None:
        # A list item's number belongs to the item's own words, not to the caption.
        marker, self.marker = self.marker, ""
        self.flush()
        self.marker = marker
        self.kinds.pop()
        self._stop()

    def _end_table(self) -> None:
        self.tables -= 1
        if self.tables:
            return
        if self.loose:
            self.blocks.append(f"<p>{' '.join(self.loose)}</p>")
        rows = [row for row in self.rows if any(text for _, text in row)]
        if rows:
            body = "".join("<tr>" + "".join(f"<{tag}>{text}</{tag}>" for tag, text in row)
                           + "</tr>" for row in rows)
            self.blocks.append(f"<table><tbody>{body}</tbody></table>")
        self.rows, self.loose = [], []
        # What follows the table starts a block of its own, inside the inline
        # elements still open around it.
        self.parts = [opening for opening, _ in self.inline]
        self.has_words = self.pending_space = False

    def _open(self, frame: _Frame, opening: str, closing: str) -> None:
        if self.pending_space and self.has_words:
            self.parts.append(" ")
            self.pending_space = False
        self.parts.append(opening)
        self.inline.append((opening, closing))
        frame.closing = closing

    def _anchor(self, el: etree._Element, frame: _Frame) -> None:
        href = (el.get("href") or "").strip(_ASCII_WS)
        target = self.resolve(href) if href else None
        if target is not None:
            self._open(frame, f'<a href="{target}">', "</a>")
        elif href.lower().startswith(("http://", "https://", "mailto:")):
            # The address stays readable, as text: the site links only its own pages.
            label = "".join(el.itertext()).strip(_ASCII_WS)
            if label != href:
                frame.closing = f" ({escape_text(href)})"

    def end(self, frame: _Frame) -> None:
        if frame.cell is not None:
            self._end_cell(frame.cell)
            return
        if frame.caption:
            self._end_caption()
            return
        if frame.table:
            self._end_table()
            return
        if frame.block:
            self.flush()
            if frame.list_tag is not None:
                self.lists.pop()
            if frame.context is not None:
                self.contexts.pop()
            if frame.kind:
                self.kinds.pop()
            return
        if frame.closing.startswith("<"):
            self.inline.pop()
            self.parts.append(frame.closing)
        elif frame.closing == "\u201d":
            self.text(frame.closing)
        elif frame.closing:
            self.parts.append(frame.closing)


def _article_of(html: str) -> etree._Element | None:
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
    try:
        root = lxml.html.document_fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None
    return next(root.iter("article"), None)


def article_blocks(html: str, resolve: Resolve) -> list[str]:
    """The article of a memory file as escaped HTML blocks, in document order; empty
    when the file has no article to read."""
    article = _article_of(html)
    if article is None:
        return []
    reader = _Reader(resolve)
    frames: list[_Frame] = []
    for event, el in etree.iterwalk(article, events=("start", "end")):
        if event == "start":
            frames.append(reader.start(el))
            reader.text(el.text)
        else:
            reader.end(frames.pop())
            if el is not article:
                reader.text(el.tail)
    reader.flush()
    return reader.blocks
