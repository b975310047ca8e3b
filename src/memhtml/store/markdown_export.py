"""Active memories as markdown files: a pure conversion, the whole store at once.

A store is exported so that another tool (an agent's markdown memory folder, an
Obsidian vault) can read it, and so that ``import markdown`` brings it back as it
was. Each active memory becomes one file at its store path with ``.md`` for
``.html``: a YAML frontmatter block holding what the head carries (title, claim,
type, dates, tags, entities, aliases, the other scalar metas that are set, and the
edges as ``[[wikilinks]]`` grouped by rel), then the article as markdown, the claim
as its first paragraph.

The article is walked as a tree rather than read through its text blocks, because
the blocks drop the shape a markdown reader needs (emphasis, links, list nesting,
table cells). Text is escaped so that a markdown parser reads back the very
characters the memory holds: a claim reading ``*not* [a link]`` stays those
characters, not emphasis and a link.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from returns.result import Success

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.format.fences import LANG_TOKEN
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.format.tree import HtmlElement, find_article, parse_html, tag_of
from memhtml.store.markdown_convert import convert_body
from memhtml.store.markdown_front import split_front
from memhtml.store.markdown_index import exported_index

MARKDOWN_SUFFIX = ".md"
HTML_SUFFIX = ".html"

_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!])")
"""Characters that open or close inline markdown wherever they stand (code spans,
emphasis, links, raw HTML, table cells, strikethrough, entities, images)."""
_ORDERED = re.compile(r"^(\d{1,9})([.)])")
_BACKTICKS = re.compile(r"`+")

_INLINE_CODE = frozenset({"code", "kbd", "samp"})
_STRONG = frozenset({"strong", "b"})
_EMPHASIS = frozenset({"em", "i", "cite", "dfn", "var"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_QUOTES = frozenset({"blockquote", "aside"})
_CONTAINERS = frozenset({"section", "details", "div", "header", "footer", "nav", "main",
                         "address", "figure", "thead", "tbody", "tfoot"})


@dataclass(frozen=True, slots=True)
class MarkdownExport:
    """What an export produced: each file's text by its relative path, and counts."""

    files: dict[str, str] = field(default_factory=dict)
    memories: int = 0
    edges: int = 0
    dangling: int = 0
    """Edges whose target is not among the exported memories (archived or missing):
    kept as a wikilink to the target's path, which no exported file answers."""
    pages: int = 0
    """Markdown pages of the store (imported indexes) written beside the memories."""


def markdown_path(store_path: str) -> str:
    """A memory's export path: its tree path with ``.md`` in place of ``.html``."""
    tree = to_tree_path(store_path)
    stem = tree[: -len(HTML_SUFFIX)] if tree.endswith(HTML_SUFFIX) else tree
    return stem + MARKDOWN_SUFFIX


def escape_inline(text: str) -> str:
    """``text`` with every character that could start inline markup backslash-escaped.

    Whitespace runs are not touched here; a block writer collapses them first."""
    return _INLINE_SPECIAL.sub(r"\\\1", text)


def escape_line_starts(text: str) -> str:
    """Escape what would make any line of ``text`` a block construct (a heading, a
    quote, a list item, a setext underline), after inline escaping."""
    lines = []
    for line in text.split("\n"):
        ordered = _ORDERED.match(line)
        if ordered:
            lines.append(f"{ordered.group(1)}\\{ordered.group(2)}{line[ordered.end():]}")
        elif line[:1] in {"#", ">", "+", "=", "-"}:
            lines.append("\\" + line)
        else:
            lines.append(line)
    return "\n".join(lines)


def escape_text(text: str) -> str:
    """One paragraph's plain text as markdown that reads back as the same text.

    A paragraph's ends lose any whitespace when markdown is read, a no-break or
    ideographic space included, so such a space at either end is written as a
    character reference, which reads back as itself."""
    core = text.strip()
    if not core:
        return _references(text)
    start = text.index(core[0])
    return (_references(text[:start]) + escape_line_starts(escape_inline(core))
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


def _text(value: str | None) -> str:
    return escape_inline(value.replace("\n", " ").replace("\r", " ")) if value else ""


def _inline(el: HtmlElement, skip: HtmlElement | None = None) -> str:
    """The markdown of ``el``'s content, inline; ``skip`` (the claim's mark) left out."""
    parts = [_text(el.text)]
    for child in el:
        if child is not skip:
            parts.append(_inline_element(child, skip))
        parts.append(_text(child.tail))
    return "".join(parts)


def _wrapped(marker: str, inner: str) -> str:
    core = inner.strip()
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()):]
    return f"{lead}{marker}{core}{marker}{trail}"


def _inline_element(el: HtmlElement, skip: HtmlElement | None) -> str:
    tag = tag_of(el)
    if not tag or el is skip:
        return ""
    if tag == "br":
        return "\\\n"
    if tag in _INLINE_CODE:
        return _code_span("".join(el.itertext()).replace("\n", " "))
    inner = _inline(el, skip)
    if tag in _STRONG:
        return _wrapped("**", inner)
    if tag in _EMPHASIS:
        return _wrapped("*", inner)
    if tag == "q":
        return f"“{inner}”"
    if tag == "a":
        href = el.get("href")
        if href and inner.strip():
            target = href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
            return f"[{inner}]({target})"
    return inner


def _paragraph(markdown: str) -> str:
    """Collapse an inline run into one paragraph's lines, each start escaped."""
    lines = [collapse_ascii_whitespace(line).strip(" ")
             for line in markdown.split("\\\n")]
    text = "\\\n".join(line for line in lines if line)
    return escape_line_starts(text) if text else ""


@dataclass(slots=True)
class _Blocks:
    """The blocks written so far, and the claim's mark (taken out of its paragraph)."""

    claim: HtmlElement | None
    out: list[str] = field(default_factory=list)
    depth: int = 1

    def add(self, block: str) -> None:
        if block.strip():
            self.out.append(block)


def _list(el: HtmlElement, blocks: _Blocks, indent: str = "") -> str:
    ordered = tag_of(el) == "ol"
    lines: list[str] = []
    number = 1
    for item in el:
        if tag_of(item) != "li":
            continue
        marker = f"{number}. " if ordered else "- "
        number += 1
        pad = indent + " " * len(marker)
        own: list[str] = [_text(item.text)]
        nested: list[str] = []
        for child in item:
            if tag_of(child) in {"ul", "ol"}:
                nested.append(_list(child, blocks, pad))
            elif tag_of(child) in _INLINE_TAGS:
                own.append(_inline_element(child, blocks.claim))
            else:
                own.append(" " + _inline_element(child, blocks.claim) + " ")
            own.append(_text(child.tail))
        text = _paragraph("".join(own)).replace("\\\n", "\\\n" + pad)
        lines.append(f"{indent}{marker}{text}".rstrip())
        lines.extend(nested)
    return "\n".join(lines)


def _cell(el: HtmlElement) -> str:
    text = collapse_ascii_whitespace(_inline(el).replace("\\\n", " ")).strip(" ")
    return text or " "


def _table(el: HtmlElement, blocks: _Blocks) -> None:
    rows: list[list[str]] = []
    for row in el.iter("tr"):
        rows.append([_cell(c) for c in row if tag_of(c) in {"td", "th"}])
    for caption in el.iter("caption"):
        blocks.add(_paragraph(_inline(caption)))
    if not rows:
        return
    width = max(len(r) for r in rows)
    padded = [r + [" "] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in padded[1:]]
    blocks.add("\n".join(lines))


def _definitions(el: HtmlElement, blocks: _Blocks) -> None:
    """A ``<dl>`` as a list: ``**term**: definition``, terms of one group joined."""
    lines: list[str] = []
    terms: list[str] = []
    for child in el:
        tag = tag_of(child)
        text = collapse_ascii_whitespace(
            _inline(child, blocks.claim).replace("\\\n", " ")).strip(" ")
        if tag == "dt":
            terms.append(text)
        elif tag == "dd":
            head = " / ".join(f"**{t}**" for t in terms if t)
            lines.append(f"- {head}: {text}" if head else f"- {text}")
            terms = []
    lines.extend(f"- **{t}**" for t in terms if t)
    blocks.add("\n".join(lines))


def _quote(el: HtmlElement, blocks: _Blocks) -> None:
    inner = _Blocks(blocks.claim, depth=blocks.depth)
    _children(el, inner)
    text = "\n\n".join(inner.out)
    blocks.add("\n".join(f"> {line}".rstrip() for line in text.split("\n")))


def _figure_code(el: HtmlElement) -> str:
    code_el = next((c for c in el if tag_of(c) == "code"), None)
    lang = code_el.get("data-lang") if code_el is not None else None
    code = "".join(el.itertext()).rstrip("\n")
    return code_fence(code, lang)


def _heading(level: int, el: HtmlElement) -> str:
    """An ATX heading; every ``#`` of its text escaped, so none reads as a closing run."""
    text = _paragraph(_inline(el).replace("#", "\\#")).replace("\\\n", " ")
    return f"{'#' * level} {text}"


def _block(el: HtmlElement, blocks: _Blocks) -> None:
    tag = tag_of(el)
    if not tag:
        return
    if tag in {"p", "figcaption", "caption"}:
        blocks.add(_paragraph(_inline(el, blocks.claim)))
    elif tag in _HEADINGS:
        blocks.add(_heading(_HEADINGS[tag], el))
    elif tag == "summary":
        blocks.add(_heading(min(blocks.depth, 6), el))
    elif tag in {"ul", "ol"}:
        blocks.add(_list(el, blocks))
    elif tag == "dl":
        _definitions(el, blocks)
    elif tag == "table":
        _table(el, blocks)
    elif tag == "pre":
        blocks.add(_figure_code(el))
    elif tag in _QUOTES:
        _quote(el, blocks)
    elif tag in _CONTAINERS:
        nested = tag in {"section", "details"}
        blocks.depth += nested
        _children(el, blocks)
        blocks.depth -= nested
    else:
        blocks.add(_paragraph(_inline_element(el, blocks.claim)))


def _children(el: HtmlElement, blocks: _Blocks) -> None:
    """Each child as its blocks; loose text between block children is a paragraph."""
    loose: list[str] = [_text(el.text)]
    for child in el:
        if tag_of(child) in _INLINE_TAGS:
            loose.append(_inline_element(child, blocks.claim))
            loose.append(_text(child.tail))
            continue
        blocks.add(_paragraph("".join(loose)))
        loose = []
        _block(child, blocks)
        loose.append(_text(child.tail))
    blocks.add(_paragraph("".join(loose)))


_INLINE_TAGS = frozenset({"a", "abbr", "b", "br", "cite", "code", "data", "dfn", "em", "i",
                          "kbd", "mark", "q", "samp", "span", "strong", "time", "var"})


def article_markdown(html: str, claim: str) -> str:
    """The article of a memory file as markdown: the claim first, as its own paragraph
    (its mark's markup kept, so a code span in it stays one), then every block of the
    article in order, the claim's mark left out of the paragraph that held it."""
    root, _ = parse_html(html)
    article = find_article(root) if root is not None else None
    blocks = _Blocks(None)
    first = escape_text(collapse_ascii_whitespace(claim).strip(" "))
    if article is not None:
        blocks.claim = next(article.iter("mark"), None)
        if blocks.claim is not None:
            first = _paragraph(_inline(blocks.claim)) or first
        _children(article, blocks)
    return "\n\n".join([first, *blocks.out])


def _link_names(paths: Iterable[str]) -> dict[str, str]:
    """Each exported file's wikilink name: its stem when no other file shares it
    (case aside), else its path without the suffix, as Obsidian writes them."""
    stems: dict[str, int] = {}
    names = {}
    for path in paths:
        stem = posixpath.basename(path)[: -len(MARKDOWN_SUFFIX)]
        stems[stem.casefold()] = stems.get(stem.casefold(), 0) + 1
        names[path] = stem
    return {path: stem if stems[stem.casefold()] == 1 else path[: -len(MARKDOWN_SUFFIX)]
            for path, stem in names.items()}


def _frontmatter(record: MemoryRecord, edges: dict[str, list[str]]) -> str:
    data: dict[str, Any] = {
        "name": record.title,
        "description": collapse_ascii_whitespace(record.claim).strip(" "),
        "type": record.memory_type,
        "created": record.created_at,
        "updated": record.updated_at,
    }
    optional: dict[str, Any] = {
        "event": record.event_at, "valid_from": record.valid_from,
        "valid_until": record.valid_until, "task_status": record.task_status,
        "due": record.due_at, "confidence": record.confidence,
        "importance": record.importance, "author": record.author,
    }
    data.update({key: value for key, value in optional.items() if value is not None})
    for key, values in (("tags", record.tags), ("entities", record.entities),
                        ("aliases", record.aliases)):
        if values:
            data[key] = list(values)
    if edges:
        data["edges"] = edges
    dumped = yaml.safe_dump(data, allow_unicode=True, sort_keys=False,
                            default_flow_style=False, width=10_000)
    return f"---\n{dumped}---\n"


def is_exported(record: MemoryRecord) -> bool:
    """Only active memories outside the archive are exported."""
    return record.status == "active" and not record.archived


def is_index_page(page: str, text: str) -> bool:
    """Whether a markdown file of the store is an index page as the import makes them
    (a body of only link lists): only those go out, since any other markdown (a
    README at the store's root) would come back from the import as a memory."""
    split = split_front(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    if not isinstance(split, Success):
        return False
    return convert_body(split.unwrap()[1], page, claim_given=False).is_index


def export_markdown(records: Iterable[MemoryRecord],
                    pages: Mapping[str, str] | None = None) -> MarkdownExport:
    """Every active memory of ``records`` as a markdown file, by export path, and
    every index page of the store (``pages``: its markdown files by tree path; those
    that are not index pages stay behind) at its own path, its links to memories
    pointed at their exported files.

    Edges name their targets by wikilink name; a target that is not exported keeps
    its store path (without ``.html``), so nothing is dropped, and is counted as
    dangling. A page at a path a memory is exported to is left out: the memory is
    the fact."""
    chosen = sorted((r for r in records if is_exported(r)), key=lambda r: r.path)
    paths = {r.path: markdown_path(r.path) for r in chosen}
    names = _link_names(paths.values())
    files: dict[str, str] = {}
    edge_count = dangling = 0
    for record in chosen:
        edges: dict[str, list[str]] = {}
        for link in record.links:
            target = to_tree_path(link.href)
            exported = paths.get(target)
            if exported is None:
                dangling += 1
                name = target[: -len(HTML_SUFFIX)] if target.endswith(HTML_SUFFIX) else target
            else:
                name = names[exported]
            edges.setdefault(link.rel, []).append(f"[[{name}]]")
            edge_count += 1
        body = article_markdown(record.html, record.claim)
        files[paths[record.path]] = _frontmatter(record, edges) + "\n" + body + "\n"
    written = 0
    for page, text in sorted((pages or {}).items()):
        if page not in files and is_index_page(page, text):
            files[page] = exported_index(text, page, paths.get)
            written += 1
    return MarkdownExport(files, len(chosen), edge_count, dangling, written)


__all__ = [
    "MarkdownExport",
    "article_markdown",
    "code_fence",
    "escape_inline",
    "escape_text",
    "export_markdown",
    "is_exported",
    "markdown_path",
]
