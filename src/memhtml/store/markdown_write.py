"""A memory's article as markdown: the export's half of the mapping in docs/design.md.

The article is walked as a tree, because a markdown reader needs its shape
(sections and their headings, list nesting and numbering, quotes, table cells).
Text is escaped so that the import reads back the very characters the memory holds:
a claim reading ``*not* [a link]`` stays those characters, not emphasis and a link,
and a ``#word`` that is no tag of the memory is written ``\\#word`` (the import takes
``#word`` in text for a tag). An element markdown has no syntax for (a ``<dl>``,
``<details>``, a captioned figure, ``<time datetime>``, ``<cite>``, ``<kbd>``...) is
written as the HTML itself, which markdown carries verbatim and the import takes back
as the same elements (``markdown_html``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memhtml.format.fences import LANG_TOKEN
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.format.markup import start_tag, write_outer
from memhtml.format.tree import HtmlElement, find_article, parse_html, tag_of
from memhtml.store.markdown_html import INLINE_RAW

_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!])")
"""Characters that open or close inline markdown wherever they stand (code spans,
emphasis, links, raw HTML, table cells, strikethrough, entities, images)."""
_ORDERED = re.compile(r"^(\d{1,9})([.)])")
_HEADING_START = re.compile(r"^#{1,6}(?=[ \t]|$)")
_TAG_WORD = re.compile(r"(?:(?<=\s)|^)#([^\W\d_][\w/-]*|[\w/-]*[^\W\d][\w/-]*)", re.UNICODE)
_CLOSING_HASHES = re.compile(r"(^|[ \t])(#+)$")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"(?<!<pre>)\n(?=[ \t]*\n)")

_STRONG = frozenset({"strong", "b"})
_EMPHASIS = frozenset({"em", "i"})
_RAW_BLOCKS = frozenset({"dl", "details", "address"})
_CONTAINERS = frozenset({"div", "header", "footer", "nav", "main", "article", "thead",
                         "tbody", "tfoot", "span"})
_INLINE_TAGS = frozenset({"a", "abbr", "b", "br", "cite", "code", "data", "dfn", "em", "i",
                          "kbd", "mark", "q", "samp", "span", "strong", "time", "var"})
_SOURCE_FACET = "memhtml-source"


@dataclass(frozen=True, slots=True)
class Writing:
    """What the writer needs beyond the article: how to write an anchor (its element
    and its label's markdown), the memory's tags (a ``#word`` naming one stays
    ``#word``), elements to leave out (the claim's paragraph the import added, the
    frontmatter's ``<dl>``), and whether the file is an earlier import's (its
    ``<section><p><strong>`` openings were headings, its ``memhtml-source`` facets
    provenance)."""

    link: Callable[[HtmlElement, str], str]
    tags: frozenset[str] = frozenset()
    skip: frozenset[int] = frozenset()
    legacy: bool = False


def escape_inline(text: str, tags: frozenset[str] = frozenset()) -> str:
    """``text`` with every character that could start inline markup backslash-escaped,
    and every ``#word`` that is not one of ``tags`` written ``\\#word``.

    Whitespace runs are not touched here; a block writer collapses them first."""
    escaped = _INLINE_SPECIAL.sub(r"\\\1", text)
    if "#" not in escaped:
        return escaped
    return _TAG_WORD.sub(lambda hit: hit.group(0) if hit.group(1) in tags
                         else "\\" + hit.group(0), escaped)


def escape_line_starts(text: str) -> str:
    """Escape what would make any line of ``text`` a block construct (a heading, a
    quote, a list item, a setext underline), after inline escaping."""
    lines = []
    for line in text.split("\n"):
        ordered = _ORDERED.match(line)
        if ordered:
            lines.append(f"{ordered.group(1)}\\{ordered.group(2)}{line[ordered.end():]}")
        elif line[:1] in {">", "+", "=", "-"} or _HEADING_START.match(line):
            lines.append("\\" + line)
        else:
            lines.append(line)
    return "\n".join(lines)


def escape_text(text: str, tags: frozenset[str] = frozenset()) -> str:
    """One paragraph's plain text as markdown that reads back as the same text.

    A paragraph's ends lose any whitespace when markdown is read, a no-break or
    ideographic space included, so such a space at either end is written as a
    character reference, which reads back as itself."""
    core = text.strip()
    if not core:
        return _references(text)
    start = text.index(core[0])
    return (_references(text[:start]) + escape_line_starts(escape_inline(core, tags))
            + _references(text[start + len(core):]))


def _references(spaces: str) -> str:
    return "".join(f"&#x{ord(ch):X};" for ch in spaces)


def _code_span(text: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_fence(code: str, lang: str | None) -> str:
    """A fenced block whose fence is longer than any backtick run in the code; the
    language only when it is a language name (an info string is one word)."""
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    name = (lang or "").strip()
    info = name if LANG_TOKEN.fullmatch(name) else ""
    return f"{fence}{info}\n{code}\n{fence}"


def _text(value: str | None, ctx: Writing) -> str:
    return escape_inline(value.replace("\n", " ").replace("\r", " "), ctx.tags) if value \
        else ""


def _inline(el: HtmlElement, ctx: Writing) -> str:
    """The markdown of ``el``'s content, inline."""
    parts = [_text(el.text, ctx)]
    for child in el:
        parts.append(_inline_element(child, ctx))
        parts.append(_text(child.tail, ctx))
    return "".join(parts)


def _wrapped(marker: str, inner: str) -> str:
    core = inner.strip()
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()):]
    return f"{lead}{marker}{core}{marker}{trail}"


def _inline_element(el: HtmlElement, ctx: Writing) -> str:
    tag = tag_of(el)
    if not tag or id(el) in ctx.skip:
        return ""
    if tag == "br":
        return "\\\n"
    if tag == "code":
        return _code_span("".join(el.itertext()).replace("\n", " "))
    inner = _inline(el, ctx)
    if tag in _STRONG:
        return _wrapped("**", inner)
    if tag in _EMPHASIS:
        return _wrapped("*", inner)
    allowed = INLINE_RAW.get(tag)
    if allowed is not None:
        attributes = [(str(k), str(v)) for k, v in el.items() if str(k) in allowed]
        return f"{start_tag(tag, attributes)}{inner}</{tag}>"
    if tag == "a":
        return ctx.link(el, inner)
    return inner


def _paragraph(markdown: str) -> str:
    """Collapse an inline run into one paragraph's lines, each start escaped, and any
    space a reader would drop from the paragraph's ends (a no-break or ideographic
    one) written as a character reference."""
    lines = [collapse_ascii_whitespace(line).strip(" ")
             for line in markdown.split("\\\n")]
    text = "\\\n".join(line for line in lines if line)
    if not text:
        return ""
    core = text.strip()
    if core != text:
        start = text.index(core[0]) if core else len(text)
        text = _references(text[:start]) + core + _references(text[start + len(core):])
    return escape_line_starts(text)


@dataclass(slots=True)
class _Blocks:
    """The blocks written so far, and the last one's list kind and marker style (two
    lists in a row need different markers, or markdown reads them as one)."""

    out: list[str] = field(default_factory=list)
    last_list: tuple[str, bool] | None = None

    def add(self, block: str) -> None:
        if block.strip():
            self.out.append(block)
            self.last_list = None


def _indented(text: str, pad: str) -> str:
    return "\n".join(pad + line if line.strip() else line for line in text.split("\n"))


def _item(li: HtmlElement, ctx: Writing, depth: int, marker: str, loose: bool) -> str:
    inner = _Blocks()
    _children(li, inner, ctx, depth)
    body = ("\n\n" if loose else "\n").join(inner.out)
    if not body:
        return marker.rstrip()
    pad = " " * len(marker)
    first, _, rest = body.partition("\n")
    return marker + first + ("\n" + _indented(rest, pad) if rest else "")


def _list(el: HtmlElement, blocks: _Blocks, ctx: Writing, depth: int) -> None:
    kind = tag_of(el)
    alternate = blocks.last_list is not None and blocks.last_list == (kind, False)
    items = [c for c in el if tag_of(c) == "li"]
    loose = any(tag_of(c) == "p" for li in items for c in li)
    start = int(el.get("start") or "1") if (el.get("start") or "1").isdigit() else 1
    written = []
    for n, li in enumerate(items):
        if kind == "ol":
            marker = f"{start + n}{')' if alternate else '.'} "
        else:
            marker = "* " if alternate else "- "
        written.append(_item(li, ctx, depth, marker, loose))
    blocks.add(("\n\n" if loose else "\n").join(written) if written
               else ("1." if kind == "ol" else "-"))
    blocks.last_list = (kind, alternate)


def _cell(el: HtmlElement, ctx: Writing) -> str:
    text = collapse_ascii_whitespace(_inline(el, ctx).replace("\\\n", " ")).strip(" ")
    return text or " "


def _pipe_table(el: HtmlElement, ctx: Writing) -> str | None:
    """A pipe table, when the table is one: no caption, a first row of header cells,
    the other rows of data cells, every cell inline; else None."""
    rows: list[list[HtmlElement]] = []
    for row in el.iter("tr"):
        rows.append([c for c in row if tag_of(c) in ("td", "th")])
    if not rows or any(tag_of(c) == "caption" for c in el.iter()) or not rows[0]:
        return None
    if any(tag_of(c) != "th" for c in rows[0]) or any(
            tag_of(c) != "td" for row in rows[1:] for c in row):
        return None
    if any(tag_of(d) not in _INLINE_TAGS for row in rows for c in row for d in c.iter()
           if d is not c):
        return None
    width = max(len(r) for r in rows)
    cells = [[_cell(c, ctx) for c in r] + [" "] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)


def raw_block(el: HtmlElement) -> str:
    """``el`` as HTML, with no blank line in it (a blank line would end the HTML
    block): a newline before one is written as a character reference."""
    return _BLANK_LINE.sub("&#10;", write_outer(el))


def _quote(el: HtmlElement, blocks: _Blocks, ctx: Writing, depth: int) -> None:
    inner = _Blocks()
    _children(el, inner, ctx, depth)
    text = "\n\n".join(inner.out)
    blocks.add("\n".join(f"> {line}".rstrip() for line in text.split("\n")))


def _figure(el: HtmlElement) -> str:
    """A figure holding only ``<pre><code>``: a fence; any other figure: its HTML."""
    parts = [c for c in el if tag_of(c)]
    text_around = (el.text or "").strip() or any((c.tail or "").strip() for c in parts)
    pre = parts[0] if len(parts) == 1 and tag_of(parts[0]) == "pre" else None
    code = [c for c in pre if tag_of(c)] if pre is not None else []
    if pre is None or text_around or (pre.text or "").strip(" \t\n\r\f") or len(code) != 1 \
            or tag_of(code[0]) != "code" or len(code[0]) or (code[0].tail or "").strip() \
            or set(code[0].attrib) - {"data-lang"}:
        return raw_block(el)
    return code_fence((code[0].text or "").rstrip("\n"), code[0].get("data-lang"))


def _heading(level: int, el: HtmlElement, ctx: Writing) -> str:
    """An ATX heading; a run of ``#`` ending its text escaped, so it is not read as
    the heading's closing sequence."""
    text = _paragraph(_inline(el, ctx)).replace("\\\n", " ")
    text = _CLOSING_HASHES.sub(lambda hit: f"{hit.group(1)}\\{hit.group(2)}", text)
    return f"{'#' * level} {text}".rstrip()


def _level(el: HtmlElement, depth: int) -> int:
    written = el.get("aria-level") or ""
    return min(max(int(written), 1), 6) if written.isdigit() else min(depth, 6)


def _is_heading(el: HtmlElement) -> bool:
    return tag_of(el) == "strong" and el.get("role") == "heading"


def _legacy_heading(section: HtmlElement) -> HtmlElement | None:
    """An earlier import's heading: a section opening with a ``<p>`` that holds only a
    ``<strong>``."""
    first = next((c for c in section if tag_of(c)), None)
    if first is None or tag_of(first) != "p" or (first.text or "").strip() or len(first) != 1:
        return None
    strong = first[0]
    if tag_of(strong) != "strong" or (strong.tail or "").strip():
        return None
    return first


def _dl_without_provenance(el: HtmlElement) -> bool:
    """Drop an earlier import's ``memhtml-source`` facets from a ``<dl>``; whether
    anything is left."""
    dropping = False
    for child in list(el):
        tag = tag_of(child)
        if tag == "dt":
            dropping = "".join(child.itertext()).strip().startswith(_SOURCE_FACET)
        if dropping and tag in ("dt", "dd"):
            el.remove(child)
    return any(tag_of(child) in ("dt", "dd") for child in el)


def _block(el: HtmlElement, blocks: _Blocks, ctx: Writing, depth: int) -> None:
    tag = tag_of(el)
    if not tag or id(el) in ctx.skip:
        return
    if _is_heading(el):
        blocks.add(_heading(_level(el, depth), el, ctx))
    elif tag in {"p", "figcaption", "caption", "summary", "dt", "dd"}:
        blocks.add(_paragraph(_inline(el, ctx)))
    elif tag == "section":
        legacy = _legacy_heading(el) if ctx.legacy else None
        if legacy is not None:
            blocks.add(_heading(min(depth + 1, 6), legacy[0], ctx))
            ctx = Writing(ctx.link, ctx.tags, ctx.skip | {id(legacy)}, ctx.legacy)
        _children(el, blocks, ctx, depth + 1)
    elif tag in {"ul", "ol"}:
        _list(el, blocks, ctx, depth)
    elif tag == "dl":
        if not ctx.legacy or _dl_without_provenance(el):
            blocks.add(raw_block(el))
    elif tag == "table":
        blocks.add(_pipe_table(el, ctx) or raw_block(el))
    elif tag == "figure":
        blocks.add(_figure(el))
    elif tag == "pre":
        blocks.add(code_fence("".join(el.itertext()).rstrip("\n"), None))
    elif tag in {"aside", "blockquote"}:
        _quote(el, blocks, ctx, depth)
    elif tag in _RAW_BLOCKS:
        blocks.add(raw_block(el))
    elif tag in _CONTAINERS:
        _children(el, blocks, ctx, depth)
    else:
        blocks.add(_paragraph(_inline_element(el, ctx)))


def _children(el: HtmlElement, blocks: _Blocks, ctx: Writing, depth: int) -> None:
    """Each child as its blocks; loose text between block children is a paragraph."""
    loose: list[str] = [_text(el.text, ctx)]
    for child in el:
        if tag_of(child) in _INLINE_TAGS and not _is_heading(child):
            loose.append(_inline_element(child, ctx))
            loose.append(_text(child.tail, ctx))
            continue
        blocks.add(_paragraph("".join(loose)))
        loose = []
        _block(child, blocks, ctx, depth)
        loose.append(_text(child.tail, ctx))
    blocks.add(_paragraph("".join(loose)))


def article_root(html: str) -> HtmlElement | None:
    """The ``<article>`` of a memory file."""
    root, _ = parse_html(html)
    return find_article(root) if root is not None else None


def article_markdown(article: HtmlElement, ctx: Writing) -> str:
    """Every block of the article in order, as markdown."""
    blocks = _Blocks()
    _children(article, blocks, ctx, 1)
    return "\n\n".join(blocks.out)


__all__ = [
    "Writing",
    "article_markdown",
    "article_root",
    "code_fence",
    "escape_inline",
    "escape_line_starts",
    "escape_text",
    "raw_block",
]
