"""Markdown as the memory format's article: markdown-it-py's tree, mapped element by
element onto the closed vocabulary, every text run escaped.

The mapping (the whole table, both ways, is in docs/design.md): a heading opens a
``<section>`` (nested by level) led by ``<strong role="heading" aria-level="N">``;
paragraphs, lists (an ordered one keeps its start), tables, emphasis and inline code
map to their namesakes; a fenced block is ``<figure><pre><code data-lang>``; a block
quote is an ``<aside>``; a link is an ``<a>``: ``http``/``https``/``mailto`` with its
``href``, a ``[[wikilink]]`` or a relative link with what it named as written
(``data-wikilink``, ``data-md-href``) and, once every note has a store path, the
``href`` of the memory it names (``fill_anchors``). Raw HTML of the vocabulary is
taken as those elements (``markdown_html``); other raw HTML and images keep their
text.

The claim is marked where it stands when it can be: the mark must open the
article's first ``<p>`` or ``<li>``, so the first of those (a paragraph, or a tight
list item's own text, outside any quote) is the candidate. With a frontmatter
``description``, that paragraph is marked when it opens with the description; without
one, its first sentence is the claim. Otherwise the claim goes in a paragraph of its
own before the article (``Article.claim_marked`` false), taken from the description
or from the first sentence of the first paragraph.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from memhtml.contracts.vocabulary import EdgeRel, is_edge_rel
from memhtml.format import escape_attribute, escape_text
from memhtml.format.markup import start_tag
from memhtml.format.sentences import sentence_break
from memhtml.store.deps import Detector
from memhtml.store.markdown_front import ascii_collapsed
from memhtml.store.markdown_html import block_fragment, close_tag, open_tag

_WIKILINK = re.compile(r"\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")
"""A wikilink in the scanned copy of a text run: an escaped bracket is ``_ESCAPED``
there, so ``\\[\\[x\\]\\]`` is none, while an escaped character inside one
(``[[a\\*b]]``) is part of its name."""
_ESCAPED = "\x00"
"""Stands in, in the scanned copy of a text run, for a character written escaped
(``\\#``, ``\\[``) or as an entity (``&#35;``): such a character is text, never the
start of a tag or a wikilink. The input never holds NUL (a file with one is refused
as binary), so the stand-in cannot be confused with a written character."""
_TAG = re.compile(r"(?:(?<=\s)|^)#([^\W\d_][\w/-]*|[\w/-]*[^\W\d][\w/-]*)", re.UNICODE)
_OBSERVATION = re.compile(r"\[([^\[\]]+)\]\s+(\S.*)", re.DOTALL)
_RELATION = re.compile(r"([A-Za-z_][\w-]*)\s+\[\[")
_LANG = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_WS = re.compile(r"\s+")
_ASCII_WS = " \t\n\r\f"
_ANCHOR = re.compile("\x00A([0-9]+)\x00")
_LEAD = re.compile("\x00L([0-9]+)\x00")


def _parser() -> MarkdownIt:
    """CommonMark with tables; ``text_join`` off, so an escaped character or an entity
    stays its own ``text_special`` token and tags and wikilinks are found in the text
    as written, not in the text the escapes were taken out of."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").disable("text_join")


_PARSER = _parser()
"""One parser for every note: building one compiles its rule chains again."""
_BLOCK_PARSER = _parser().disable("inline")
"""The blocks alone, for telling an index (a ``MEMORY.md`` of thousands of links) from
a note without parsing every link in it: an index becomes no memory, so its inline
content is never converted (the import rewrites its links by pattern)."""
_INDEX_LINE = re.compile(
    r"[ \t]*(?:#{1,6}(?:[ \t]|$)|(?:-{3,}|\*{3,}|_{3,})[ \t]*$"
    r"|(?:[-*+]|[0-9]{1,9}[.)])[ \t]+(?:\[|<[A-Za-z]))")
_LEADING_LINK = re.compile(r"\[\[|\[(?:[^\[\]\\\n]|\\.)*\]\(|<[A-Za-z][A-Za-z0-9+.-]*:")


class _Node:
    """One node of the syntax tree: an unnested token, or an ``_open``/``_close`` pair
    and what lies between, with the fields of its (opening) token the conversion
    reads. markdown-it's ``SyntaxTreeNode`` gives the same tree (a law compares them);
    it reads each field through a property that looks for the token every time, which
    cost a fifth of a note's conversion."""

    __slots__ = ("attrs", "children", "content", "hidden", "info", "tag", "type")

    def __init__(self, token: Token, kind: str) -> None:
        self.type = kind
        self.tag = token.tag
        self.attrs = token.attrs
        self.content = token.content
        self.info = token.info
        self.hidden = token.hidden
        self.children: list[_Node] = []


def syntax_tree(tokens: Sequence[Token]) -> list[_Node]:
    """The top-level nodes of a token stream (what ``SyntaxTreeNode(tokens).children``
    holds); ``ValueError`` for a stream whose nesting does not balance."""
    top: list[_Node] = []
    open_children = [top]
    for token in tokens:
        nesting = token.nesting
        if nesting == -1:
            if len(open_children) == 1:
                raise ValueError("Invalid token nesting")
            open_children.pop()
            continue
        if nesting == 1:
            node = _Node(token, token.type.removesuffix("_open"))
            open_children[-1].append(node)
            open_children.append(node.children)
            continue
        if nesting != 0:
            raise ValueError("Invalid token nesting")
        node = _Node(token, token.type)
        if token.children:
            node.children = syntax_tree(token.children)
        open_children[-1].append(node)
    if len(open_children) != 1:
        raise ValueError("unclosed tokens")
    return top


@dataclass(frozen=True, slots=True)
class Target:
    """A link to another note: the wikilink name or the ``.md`` path (already made
    relative to the folder's root), and the rel a basic-memory relation gave it."""

    name: str
    is_path: bool
    rel: EdgeRel = "relates_to"


@dataclass(frozen=True, slots=True)
class _Text:
    """Characters as read (a soft line break as ``\\n``), escaped when written."""

    text: str


@dataclass(frozen=True, slots=True)
class _Atom:
    """Inline markup that is never cut: its HTML, its text, and its text as the claim
    reads it (code left out)."""

    html: str
    plain: str
    gist: str


_Seg = _Text | _Atom


@dataclass(slots=True)
class _Lead:
    """A ``<p>`` or ``<li>`` in document order: where the claim's mark could go.
    ``markable``: its text may open with the mark (a paragraph, or a tight item's own
    text, outside a quote). ``prose``: a claim may be taken from it."""

    segments: list[_Seg]
    markable: bool
    prose: bool


@dataclass(slots=True)
class _State:
    source_dir: str
    raw_html: bool
    detect: Detector | None = None
    targets: list[Target] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    leads: list[_Lead] = field(default_factory=list)
    relation: EdgeRel | None = None
    quoted: int = 0


@dataclass(frozen=True, slots=True)
class Article:
    """One file's body, converted."""

    html: str
    """The article markup, each anchor to a note holding ``\\x00A<n>\\x00`` where its
    ``href`` goes (``fill_anchors``); when ``claim_marked`` it carries the mark."""
    claim: str | None
    claim_marked: bool
    title: str | None
    """The text of a leading ``# heading`` (which stays in the article)."""
    targets: tuple[Target, ...]
    tags: tuple[str, ...]
    is_index: bool
    """Only headings and lists whose every item opens with a link: an index page."""


def fill_anchors(html: str, hrefs: Sequence[str | None]) -> str:
    """``html`` with the ``n``-th target's anchor given ``hrefs[n]`` (none for None: a
    link to a note that is not in the store stays a link with no address)."""
    def one(hit: re.Match[str]) -> str:
        href = hrefs[int(hit.group(1))] if int(hit.group(1)) < len(hrefs) else None
        return f' href="{escape_attribute(href)}"' if href else ""

    return _ANCHOR.sub(one, html) if "\x00" in html else html


def _plain(text: str) -> str:
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class _Run:
    """Adjacent text as read (``text``) and as scanned for syntax (``scan``): the same
    length, each escaped character replaced by ``_ESCAPED`` in the scanned copy."""

    text: str
    scan: str


def _anchor(index: int | None, attributes: list[tuple[str, str]], inner: list[_Seg]) -> _Atom:
    html, plain, gist = _render(inner)
    placeholder = "" if index is None else f"\x00A{index}\x00"
    return _Atom(f"<a{placeholder}{start_tag('a', attributes)[2:]}{html}</a>", plain, gist)


def _text_run(run: _Run, state: _State) -> list[_Seg]:
    """A text run: each wikilink an anchor (and a target), ``#tags`` collected. Both
    are looked for in the scanned copy, so ``\\#word`` is no tag and ``\\[\\[x\\]\\]``
    no link; a code span or a fence is never a text run, so neither is found in code."""
    text = run.text
    out: list[_Seg] = []
    last = 0
    for hit in _WIKILINK.finditer(run.scan):
        if hit.start() > last:
            out.append(_Text(text[last:hit.start()]))
        name, heading, alias = (text[hit.start(i):hit.end(i)].strip() if hit.group(i)
                                else "" for i in (1, 2, 3))
        shown = alias or (f"{name}#{heading}" if heading else name) or heading
        written = f"{name}#{heading}" if heading else name
        index = None
        if name:
            index = len(state.targets)
            state.targets.append(Target(name, False, state.relation or "relates_to"))
        out.append(_anchor(index, [("data-wikilink", written)], [_Text(shown)]))
        last = hit.end()
    if last < len(text):
        out.append(_Text(text[last:]))
    for tag in _TAG.findall(_WIKILINK.sub(" ", run.scan)):
        if tag not in state.tags:
            state.tags.append(tag)
    return out


def _link(node: _Node, state: _State) -> _Atom:
    href = str(node.attrs.get("href", ""))
    title = node.attrs.get("title")
    extra = [("title", str(title))] if title else []
    inner = _segments(node.children, state)
    if href.lower().startswith(_SAFE_SCHEMES):
        return _anchor(None, [("href", href), *extra], inner)
    path = href.split("#", 1)[0].split("?", 1)[0]
    index = None
    if path.lower().endswith(".md") and ":" not in path and not path.startswith("/"):
        joined = posixpath.normpath(posixpath.join(state.source_dir, unquote(path)))
        if not joined.startswith("../") and joined != "..":
            index = len(state.targets)
            state.targets.append(Target(joined, True, state.relation or "relates_to"))
    return _anchor(index, [("data-md-href", href), *extra], inner)


def _joined_text(nodes: list[_Node]) -> list[_Node | _Run]:
    """Adjacent text nodes (escaped characters among them) as one run: markdown-it
    splits a run at ``[`` and at every escape, which would cut a ``[[wikilink]]`` in
    pieces. An escaped ``|`` stays a pipe in the scanned copy: it is how a wikilink's
    alias is written inside a table cell."""
    out: list[_Node | _Run] = []
    for node in nodes:
        kind = node.type
        if kind not in ("text", "text_special"):
            out.append(node)
            continue
        content = node.content
        scan = content if kind == "text" or content == "|" else _ESCAPED * len(content)
        last = out[-1] if out else None
        if isinstance(last, _Run):
            out[-1] = _Run(last.text + content, last.scan + scan)
        else:
            out.append(_Run(content, scan))
    return out


def _render(segments: list[_Seg]) -> tuple[str, str, str]:
    """Segments as markup, as plain text, and as the claim's text (code left out)."""
    html: list[str] = []
    plain: list[str] = []
    gist: list[str] = []
    for seg in segments:
        if isinstance(seg, _Text):
            html.append(escape_text(seg.text))
            plain.append(seg.text)
            gist.append(seg.text)
        else:
            html.append(seg.html)
            plain.append(seg.plain)
            gist.append(seg.gist)
    return "".join(html), "".join(plain), "".join(gist)


def _closing(items: list[_Node | _Run], start: int, tag: str) -> int | None:
    """The index of the close tag matching the raw open tag at ``start``, or None."""
    depth = 0
    for index in range(start, len(items)):
        item = items[index]
        if isinstance(item, _Run) or item.type != "html_inline":
            continue
        opened = open_tag(item.content)
        if opened is not None and opened[0] == tag:
            depth += 1
        elif close_tag(item.content) == tag:
            depth -= 1
            if depth == 0:
                return index
    return None


def _segments(nodes: list[_Node], state: _State) -> list[_Seg]:
    return _segments_of(_joined_text(nodes), state)


def _segments_of(items: list[_Node | _Run], state: _State) -> list[_Seg]:
    """Each inline piece as text or as an atom, adjacent text merged."""
    out: list[_Seg] = []
    index = 0
    while index < len(items):
        node = items[index]
        index += 1
        if isinstance(node, _Run):
            out.extend(_text_run(node, state))
            continue
        kind = node.type
        if kind in ("strong", "em"):
            html, plain, gist = _render(_segments(node.children, state))
            out.append(_Atom(f"<{kind}>{html}</{kind}>", plain, gist))
        elif kind == "code_inline":
            out.append(_Atom(f"<code>{escape_text(node.content)}</code>", node.content, ""))
        elif kind == "link":
            out.append(_link(node, state))
        elif kind == "image":
            out.extend(_segments(node.children, state))
        elif kind in ("softbreak", "hardbreak"):
            out.append(_Text("\n"))
        elif kind == "html_inline" and state.raw_html and (
                opened := open_tag(node.content)) is not None and (
                end := _closing(items, index - 1, opened[0])) is not None:
            html, plain, gist = _render(_segments_of(items[index:end], state))
            tag = opened[0]
            out.append(_Atom(f"{start_tag(tag, list(opened[1]))}{html}</{tag}>", plain, gist))
            index = end + 1
        else:  # html_inline and anything unknown: kept as the characters written
            out.append(_Text(node.content))
    merged: list[_Seg] = []
    for seg in out:
        if isinstance(seg, _Text) and merged and isinstance(merged[-1], _Text):
            merged[-1] = _Text(merged[-1].text + seg.text)
        elif not (isinstance(seg, _Text) and not seg.text):
            merged.append(seg)
    return merged


def _children_inline(node: _Node) -> list[_Node]:
    return [c for inline in node.children for c in inline.children]


def _lead(state: _State, segments: list[_Seg], markable: bool, prose: bool) -> str:
    """Register a ``<p>``/``<li>`` text and return its placeholder."""
    state.leads.append(_Lead(segments, markable, prose))
    return f"\x00L{len(state.leads) - 1}\x00"


def _fence(node: _Node, detect: Detector | None = None) -> str:
    info = (node.info or "").strip().split()
    lang = info[0] if info and _LANG.fullmatch(info[0]) else ""
    if not info and detect is not None:
        # As a write door does: an info string wins, and only a block without one is
        # guessed (``memhtml.detect``), which leaves it unlabeled unless sure.
        lang = detect(node.content) or ""
    attr = f' data-lang="{escape_attribute(lang)}"' if lang else ""
    return f"<figure><pre><code{attr}>{escape_text(node.content)}</code></pre></figure>"


def _list_item(node: _Node, state: _State) -> str:
    children = node.children
    first = children[0] if children else None
    plain_first = ""
    if first is not None and first.type == "paragraph":
        plain_first = "".join(c.content for c in _children_inline(first) if c.type == "text")
    relation = _RELATION.match(plain_first)
    state.relation = None
    rel = relation.group(1) if relation else ""
    if is_edge_rel(rel):
        state.relation = rel
    tight = first is not None and first.type == "paragraph" and first.hidden
    if not tight:  # the <li> itself comes first, before any <p> in it
        _lead(state, [], False, False)
    parts = []
    for child in children:
        if child.type == "paragraph":
            segments = _segments(_children_inline(child), state)
            if child.hidden:
                parts.append(_lead(state, segments, child is first and state.quoted == 0,
                                   state.quoted == 0))
            else:
                parts.append(f"<p>{_lead(state, segments, False, state.quoted == 0)}</p>")
        else:
            parts.append(_block(child, state))
    state.relation = None
    return f"<li>{''.join(parts)}</li>"


def _text_block(text: str, state: _State) -> str:
    """Text that is no markdown construct (raw HTML left as its characters) as a ``<p>``."""
    text = text.strip()
    if not text:
        return ""
    return f"<p>{_lead(state, [_Text(text)], state.quoted == 0, False)}</p>"


def _block(node: _Node, state: _State) -> str:
    kind = node.type
    if kind == "paragraph":
        segments = _segments(_children_inline(node), state)
        return f"<p>{_lead(state, segments, state.quoted == 0, state.quoted == 0)}</p>"
    if kind == "bullet_list":
        return f"<ul>{''.join(_list_item(c, state) for c in node.children)}</ul>"
    if kind == "ordered_list":
        start = node.attrs.get("start")
        attr = f' start="{int(start)}"' if start is not None and int(start) != 1 else ""
        return f"<ol{attr}>{''.join(_list_item(c, state) for c in node.children)}</ol>"
    if kind in ("fence", "code_block"):
        # markdown ends a block's code with the newline of its last line; the memory's
        # code (the template's, and what a fence is written back from) does not hold
        # it, so that a fence reads back as the very code and the content hash agrees.
        return _fence(node, state.detect).replace("\n</code></pre></figure>",
                                                  "</code></pre></figure>")
    if kind == "blockquote":
        state.quoted += 1
        inner = _blocks(node.children, state)
        state.quoted -= 1
        return f"<aside>{inner}</aside>"
    if kind == "table":
        return f"<table>{''.join(_block(c, state) for c in node.children)}</table>"
    if kind in ("thead", "tbody", "tr"):
        return f"<{kind}>{''.join(_block(c, state) for c in node.children)}</{kind}>"
    if kind in ("th", "td"):
        return f"<{kind}>{_render(_segments(_children_inline(node), state))[0]}</{kind}>"
    if kind == "hr":
        return ""
    if kind == "html_block" and state.raw_html:
        fragment = block_fragment(node.content)
        if fragment is not None:
            if fragment[1]:
                _lead(state, [], False, False)
            return fragment[0]
    return _text_block(node.content, state)


def _blocks(nodes: list[_Node], state: _State) -> str:
    """Blocks in order, each heading opening a section that runs to the next heading
    of its level or higher."""
    html: list[str] = []
    open_levels: list[int] = []
    for node in nodes:
        if node.type == "heading":
            level = int(node.tag[1])
            while open_levels and open_levels[-1] >= level:
                open_levels.pop()
                html.append("</section>")
            open_levels.append(level)
            inner = _render(_segments(_children_inline(node), state))[0]
            html.append(f'<section><strong aria-level="{level}" role="heading">{inner}'
                        "</strong>")
        else:
            html.append(_block(node, state))
    html.extend("</section>" for _ in open_levels)
    return "\n".join(h for h in html if h)


def _is_index(nodes: list[_Node]) -> bool:
    items = 0
    for node in nodes:
        if node.type in ("heading", "hr"):
            continue
        if node.type not in ("bullet_list", "ordered_list"):
            return False
        for item in node.children:
            first = item.children[0] if item.children else None
            if first is None or first.type != "paragraph":
                return False
            inline = _children_inline(first)
            lead = inline[0] if inline else None
            if lead is None or not (lead.type == "link" or (
                    lead.type == "text" and lead.content.lstrip().startswith("[["))):
                return False
            items += 1
    return items > 0


def _maybe_index(text: str) -> bool:
    """Every line a heading, a rule, or a list item opening with a link: what an
    index looks like line by line (a cheap test before the block parse)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(_INDEX_LINE.match(line) for line in lines)


_PLAIN_INDEX_LINE = re.compile(r"#{1,6}(?: [^\n]*)?|[-*+] \[[^\n]*")
"""A line whose block CommonMark settles by itself: an ATX heading at the margin, or a
bullet item at the margin whose content opens, one space after the marker, with
``[``. Such a line cannot continue the line before it (a heading and a bullet item
both interrupt a paragraph), and nothing can continue it (the next line is blank or
one of these), so each item holds one paragraph: the line's content."""
_BLANK = " \t"
"""What a blank line may hold (CommonMark: spaces and tabs only; a no-break space is
text)."""


def _plain_index(text: str) -> Article | None:
    """The article ``_index_article`` gives a ``MEMORY.md`` of headings and one-line
    bullet items of links, read line by line (a law holds the two equal): None when
    any line is another shape, and the block parse decides. A list of thousands of
    notes cost that parse a quarter of a second, on every import of the folder."""
    lines = [line for line in text.split("\n") if line.strip(_BLANK)]
    items = 0
    for line in lines:
        if _PLAIN_INDEX_LINE.fullmatch(line) is None:
            return None
        if line[0] != "#":
            # A paragraph's content is its line's, less the whitespace around it.
            if _LEADING_LINK.match(line[2:].strip(" \t")) is None:
                return None
            items += 1
    if not items:
        return None
    title = None
    if lines[0].startswith("# ") or lines[0] == "#":
        heading = _BLOCK_PARSER.parse(lines[0])
        title = _plain(heading[1].content) or None
    return Article(html="", claim=None, claim_marked=False, title=title, targets=(), tags=(),
                   is_index=True)


def _index_article(text: str) -> Article | None:
    """The article of an index, from its blocks alone, or None when it is no index:
    every item of its lists opens with a link or a wikilink, and nothing but headings
    and rules stands beside them."""
    plain = _plain_index(text)
    if plain is not None:
        return plain
    return _parsed_index(text)


def _parsed_index(text: str) -> Article | None:
    """``_index_article`` through the block parse."""
    nodes = syntax_tree(_BLOCK_PARSER.parse(text))
    items = 0
    for node in nodes:
        if node.type in ("heading", "hr"):
            continue
        if node.type not in ("bullet_list", "ordered_list"):
            return None
        for item in node.children:
            first = item.children[0] if item.children else None
            inline = first.children[0] if first is not None and first.children else None
            if first is None or first.type != "paragraph" or inline is None or \
                    _LEADING_LINK.match(inline.content.lstrip()) is None:
                return None
            items += 1
    if not items:
        return None
    title = None
    if nodes and nodes[0].type == "heading" and nodes[0].tag == "h1" and nodes[0].children:
        title = _plain(nodes[0].children[0].content) or None
    return Article(html="", claim=None, claim_marked=False, title=title, targets=(), tags=(),
                   is_index=True)


def _first_sentence(segments: list[_Seg]) -> int:
    """How many leading segments the first sentence takes once the text segment it
    ends in is cut (``_cut``): the index of the text segment holding the break, or
    ``len(segments)`` when the whole lead is one sentence."""
    for index, seg in enumerate(segments):
        if isinstance(seg, _Text) and sentence_break(seg.text) is not None:
            return index
    return len(segments)


def _cut_sentence(segments: list[_Seg]) -> tuple[list[_Seg], list[_Seg]]:
    """The first sentence's segments and the rest."""
    index = _first_sentence(segments)
    if index == len(segments):
        return list(segments), []
    seg = segments[index]
    assert isinstance(seg, _Text)
    span = sentence_break(seg.text)
    assert span is not None
    head = [*segments[:index], _Text(seg.text[:span[0]])]
    rest = [_Text(seg.text[span[1]:]), *segments[index + 1:]]
    return head, rest


def _cut_at(segments: list[_Seg], claim: str) -> tuple[list[_Seg], list[_Seg]] | None:
    """The leading segments whose claim text (code left out, ASCII whitespace runs as
    one space) is ``claim``, and the rest; None when the text does not open with it at
    a word's end, or the cut would fall inside inline markup."""
    target = ascii_collapsed(claim)
    if not target or not ascii_collapsed(_render(segments)[2]).startswith(target):
        return None
    emitted, pending = 0, False
    for index, seg in enumerate(segments):
        text = seg.text if isinstance(seg, _Text) else seg.gist
        for offset, char in enumerate(text):
            if char in " \t\n\r\f\v":
                pending = emitted > 0
                continue
            emitted += 1 + pending
            pending = False
            if emitted < len(target):
                continue
            if isinstance(seg, _Atom):
                if offset != len(text) - 1:
                    return None
                return list(segments[:index + 1]), list(segments[index + 1:])
            after = text[offset + 1:offset + 2]
            if after.isalnum():
                return None
            return ([*segments[:index], _Text(text[:offset + 1])],
                    [_Text(text[offset + 1:]), *segments[index + 1:]])
    return None


def _marked(head: list[_Seg], rest: list[_Seg]) -> tuple[str, str] | None:
    """The lead's markup with ``head`` marked, and the claim; None when the mark would
    hold no claim text (only code, which the claim leaves out)."""
    html, _, gist = _render(head)
    claim = ascii_collapsed(gist)
    if not claim:
        return None
    tail = _render(rest)[0].strip(_ASCII_WS)
    mark = f"<mark>{html.strip(_ASCII_WS)}</mark>"
    return (f"{mark} {tail}" if tail else mark), claim


def _derived_claim(leads: list[_Lead]) -> str | None:
    """The first sentence of the first paragraph that may give a claim (a basic-memory
    ``[category]`` opening left out), when the claim cannot be marked in place."""
    lead = next((lead for lead in leads if lead.prose), None)
    if lead is None:
        return None
    claim = ascii_collapsed(_render(_cut_sentence(lead.segments)[0])[1])
    observation = _OBSERVATION.fullmatch(claim)
    return (_plain(observation.group(2)) if observation else claim) or None


def convert_body(text: str, source: str, description: str | None = None,
                 raw_html: bool = True, whole: bool = False,
                 detect: Detector | None = None) -> Article:
    """The article for a file's body (frontmatter already removed). ``description``
    is the claim the frontmatter gives; ``raw_html`` False keeps every raw HTML
    construct as text (the retry for a note whose raw HTML fails the format check).
    An index is read from its blocks alone unless ``whole`` asks for its links too."""
    if not whole and _maybe_index(text):
        index = _index_article(text)
        if index is not None:
            return index
    nodes = syntax_tree(_PARSER.parse(text))
    title = None
    if nodes and nodes[0].type == "heading" and nodes[0].tag == "h1":
        title = _plain(_render(_segments(_children_inline(nodes[0]),
                                         _State("", False)))[1]) or None
    state = _State(posixpath.dirname(source), raw_html, detect)
    is_index = _is_index(nodes)
    body = _blocks(nodes, state)
    leads = state.leads
    first = leads[0] if leads else None
    marked: tuple[str, str] | None = None
    if first is not None and first.markable and not is_index:
        if description is not None:
            cut = _cut_at(first.segments, description)
            marked = _marked(*cut) if cut is not None else None
        elif first.prose and _OBSERVATION.fullmatch(
                _plain(_render(first.segments)[1])) is None:
            marked = _marked(*_cut_sentence(first.segments))
    claim = marked[1] if marked is not None else (
        description if description is not None else
        None if is_index else _derived_claim(leads))
    rendered = [_render(lead.segments)[0] for lead in leads]
    if marked is not None:
        rendered[0] = marked[0]
    html = _LEAD.sub(lambda hit: rendered[int(hit.group(1))], body)
    return Article(
        html=html, claim=claim or None, claim_marked=marked is not None, title=title,
        targets=tuple(state.targets), tags=tuple(state.tags), is_index=is_index)


__all__ = ["Article", "Target", "convert_body", "fill_anchors", "syntax_tree"]
