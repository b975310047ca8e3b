"""Markdown as the memory format's article: markdown-it-py's tree, mapped element by
element onto the closed vocabulary, every text run escaped.

The mapping: a heading opens a ``<section>`` (nested by level) whose first line is
the heading text as ``<p><strong>``, since the vocabulary has no ``<h1>``-``<h6>``;
lists, tables, emphasis and inline code map to their namesakes; a fenced block is a
``<figure><pre><code data-lang>``; a block quote's paragraphs are ``<p><q>``; an
``http``/``https``/``mailto`` link is an ``<a href>``. Links between notes (a
``[[wikilink]]``, with ``|alias`` or ``#heading``, or a relative ``.md`` link) are
kept as their text and reported as targets: the import turns them into
``relates_to`` edges once every file's path is known, so the article never holds an
href that a later re-import would leave stale. Images keep their alt text; raw HTML
is kept as text. The claim is the first sentence of the first prose paragraph, never
a heading, a list marker or frontmatter.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from memhtml.contracts.vocabulary import EdgeRel, is_edge_rel
from memhtml.format import escape_attribute, escape_text
from memhtml.format.sentences import sentence_break
from memhtml.store.deps import Detector
from memhtml.store.markdown_front import ascii_collapsed

_WIKILINK = re.compile(
    r"\[\[([^\[\]|#\x00]*)(?:#([^\[\]|\x00]*))?(?:\|([^\[\]\x00]*))?\]\]")
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



def _parser() -> MarkdownIt:
    """CommonMark with tables; ``text_join`` off, so an escaped character or an entity
    stays its own ``text_special`` token and tags and wikilinks are found in the text
    as written, not in the text the escapes were taken out of."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").disable("text_join")


@dataclass(frozen=True, slots=True)
class Target:
    """A link to another note: the wikilink name or the ``.md`` path (already made
    relative to the folder's root), and the rel a basic-memory relation gave it."""

    name: str
    is_path: bool
    rel: EdgeRel = "relates_to"


@dataclass(slots=True)
class _State:
    source_dir: str
    targets: list[Target] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    observations: list[tuple[str, str]] = field(default_factory=list)
    relation: EdgeRel | None = None
    detect: Detector | None = None


@dataclass(frozen=True, slots=True)
class Article:
    """One file's body, converted."""

    html: str
    """The article markup; when ``claim_marked`` its first paragraph carries the mark."""
    claim: str | None
    claim_marked: bool
    title: str | None
    """A leading ``# heading``, taken as the title (and left out of the article)."""
    targets: tuple[Target, ...]
    tags: tuple[str, ...]
    observations: tuple[tuple[str, str], ...]
    is_index: bool
    """Only headings and lists whose every item opens with a link: an index page."""


def _plain(text: str) -> str:
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class _Run:
    """Adjacent text as read (``text``) and as scanned for syntax (``scan``): the same
    length, each escaped character replaced by ``_ESCAPED`` in the scanned copy."""

    text: str
    scan: str


def _text_run(run: _Run, state: _State) -> tuple[str, str]:
    """A text run's markup and plain text: wikilinks become their shown text (and
    targets), ``#tags`` are collected, everything is escaped. Both are looked for in
    the scanned copy, so ``\\#word`` is no tag and ``\\[\\[x\\]\\]`` no link; a code
    span or a fence is never a text run, so a ``#word`` in code is no tag either."""
    text = run.text
    html: list[str] = []
    plain: list[str] = []
    last = 0
    for hit in _WIKILINK.finditer(run.scan):
        before = text[last:hit.start()]
        html.append(escape_text(before))
        plain.append(before)
        name, heading, alias = (text[hit.start(i):hit.end(i)].strip() if hit.group(i)
                                else "" for i in (1, 2, 3))
        shown = alias or (f"{name}#{heading}" if heading else name) or heading
        if name:
            state.targets.append(Target(name, False, state.relation or "relates_to"))
        html.append(escape_text(shown))
        plain.append(shown)
        last = hit.end()
    html.append(escape_text(text[last:]))
    plain.append(text[last:])
    for tag in _TAG.findall(_WIKILINK.sub(" ", run.scan)):
        if tag not in state.tags:
            state.tags.append(tag)
    return "".join(html), "".join(plain)


def _link(node: SyntaxTreeNode, state: _State) -> tuple[str, str]:
    href = str(node.attrs.get("href", ""))
    inner, plain = _inline(node.children, state)
    lowered = href.lower()
    if lowered.startswith(_SAFE_SCHEMES):
        return f'<a href="{escape_attribute(href)}">{inner}</a>', plain
    path = href.split("#", 1)[0].split("?", 1)[0]
    if path.lower().endswith(".md") and ":" not in path and not path.startswith("/"):
        from urllib.parse import unquote

        joined = posixpath.normpath(posixpath.join(state.source_dir, unquote(path)))
        if not joined.startswith("../") and joined != "..":
            state.targets.append(Target(joined, True, state.relation or "relates_to"))
    return inner, plain


def _inline(nodes: list[SyntaxTreeNode], state: _State) -> tuple[str, str]:
    html: list[str] = []
    plain: list[str] = []
    for part_html, part_plain, _ in _segments(nodes, state):
        html.append(part_html)
        plain.append(part_plain)
    return "".join(html), "".join(plain)


def _joined_text(nodes: list[SyntaxTreeNode]) -> list[SyntaxTreeNode | _Run]:
    """Adjacent text nodes (escaped characters among them) as one run: markdown-it
    splits a run at ``[`` and at every escape, which would cut a ``[[wikilink]]`` in
    pieces. An escaped ``|`` stays a pipe in the scanned copy: it is how a wikilink's
    alias is written inside a table cell."""
    out: list[SyntaxTreeNode | _Run] = []
    for node in nodes:
        if node.type not in ("text", "text_special"):
            out.append(node)
            continue
        content = node.content
        scan = content if node.type == "text" or content == "|" else \
            _ESCAPED * len(content)
        last = out[-1] if out else None
        if isinstance(last, _Run):
            out[-1] = _Run(last.text + content, last.scan + scan)
        else:
            out.append(_Run(content, scan))
    return out


def _segments(nodes: list[SyntaxTreeNode], state: _State) -> list[tuple[str, str, bool]]:
    """Each inline piece as (markup, plain text, is a bare text run)."""
    out: list[tuple[str, str, bool]] = []
    for node in _joined_text(nodes):
        if isinstance(node, _Run):
            html, plain = _text_run(node, state)
            out.append((html, plain, True))
            continue
        kind = node.type
        if kind in ("strong", "em"):
            inner, plain = _inline(node.children, state)
            out.append((f"<{kind}>{inner}</{kind}>", plain, False))
        elif kind == "code_inline":
            out.append((f"<code>{escape_text(node.content)}</code>", node.content, False))
        elif kind == "link":
            html, plain = _link(node, state)
            out.append((html, plain, False))
        elif kind == "image":
            html, plain = _inline(node.children, state)
            out.append((html, plain, False))
        elif kind in ("softbreak", "hardbreak"):
            out.append(("\n", " ", True))
        else:  # html_inline and anything unknown: kept as the characters written
            text = node.content
            out.append((escape_text(text), text, False))
    return out


def _claim_paragraph(node: SyntaxTreeNode, state: _State) -> tuple[str, str]:
    """The first prose paragraph with its first sentence marked, and that sentence."""
    segments = _segments(_children_inline(node), state)
    head: list[tuple[str, str]] = []
    tail: list[str] = []
    split = False
    for html, plain, is_text in segments:
        if split:
            tail.append(html)
            continue
        cut = sentence_break(plain) if is_text else None
        if cut is None:
            head.append((html, plain))
            continue
        # Escaping turns & < > into entities: it adds no whitespace, no period and no
        # lower-case letter after a break, so the html breaks where the text does.
        raw_cut = sentence_break(html)
        if raw_cut is None:
            head.append((html, plain))
            continue
        head.append((html[:raw_cut[0]], plain[:cut[0]]))
        tail.append(html[raw_cut[1]:])
        split = True
    mark = "".join(h for h, _ in head).strip()
    rest = "".join(tail).strip()
    claim = _plain("".join(p for _, p in head))
    return (f"<p><mark>{mark}</mark> {rest}</p>" if rest else f"<p><mark>{mark}</mark></p>",
            claim)


def _children_inline(node: SyntaxTreeNode) -> list[SyntaxTreeNode]:
    return [c for inline in node.children for c in inline.children]


def _fence(node: SyntaxTreeNode, detect: Detector | None) -> str:
    info = (node.info or "").strip().split()
    lang = info[0] if info and _LANG.fullmatch(info[0]) else ""
    if not info and detect is not None:
        # As a write door does: an info string wins, and only a block without one is
        # guessed (``memhtml.detect``), which leaves it unlabeled unless sure.
        lang = detect(node.content) or ""
    attr = f' data-lang="{escape_attribute(lang)}"' if lang else ""
    return f"<figure><pre><code{attr}>{escape_text(node.content)}</code></pre></figure>"


def _list_item(node: SyntaxTreeNode, state: _State) -> str:
    first = node.children[0] if node.children else None
    plain_first = ""
    if first is not None and first.type == "paragraph":
        plain_first = "".join(c.content for c in _children_inline(first) if c.type == "text")
    relation = _RELATION.match(plain_first)
    state.relation = None
    rel = relation.group(1) if relation else ""
    if is_edge_rel(rel):
        state.relation = rel
    parts = []
    for child in node.children:
        if child.type == "paragraph":
            html, plain = _inline(_children_inline(child), state)
            observation = _OBSERVATION.fullmatch(plain.strip()) if child is first else None
            if observation and html.startswith(f"[{escape_text(observation.group(1))}]"):
                category = escape_text(observation.group(1))
                state.observations.append((observation.group(1), _plain(observation.group(2))))
                html = f"<strong>[{category}]</strong>" + html[len(category) + 2:]
            parts.append(html if child.hidden else f"<p>{html}</p>")
        else:
            parts.append(_block(child, state))
    state.relation = None
    return f"<li>{''.join(parts)}</li>"


def _block(node: SyntaxTreeNode, state: _State) -> str:
    kind = node.type
    if kind == "paragraph":
        return f"<p>{_inline(_children_inline(node), state)[0]}</p>"
    if kind in ("bullet_list", "ordered_list"):
        tag = "ul" if kind == "bullet_list" else "ol"
        return f"<{tag}>{''.join(_list_item(c, state) for c in node.children)}</{tag}>"
    if kind in ("fence", "code_block"):
        return _fence(node, state.detect)
    if kind == "blockquote":
        return "".join(
            f"<p><q>{_inline(_children_inline(c), state)[0]}</q></p>" if c.type == "paragraph"
            else _block(c, state) for c in node.children)
    if kind == "table":
        return f"<table>{''.join(_block(c, state) for c in node.children)}</table>"
    if kind in ("thead", "tbody", "tr"):
        return f"<{kind}>{''.join(_block(c, state) for c in node.children)}</{kind}>"
    if kind in ("th", "td"):
        return f"<{kind}>{_inline(_children_inline(node), state)[0]}</{kind}>"
    if kind == "hr":
        return ""
    if kind == "heading":
        return f"<p><strong>{_inline(_children_inline(node), state)[0]}</strong></p>"
    return f"<p>{escape_text(node.content.strip())}</p>" if node.content.strip() else ""


def _first_prose(nodes: list[SyntaxTreeNode]) -> SyntaxTreeNode | None:
    """The first top-level paragraph; else the first paragraph of a list item (its
    text, never its marker). Quotes and tables are someone else's words or data."""
    for node in nodes:
        if node.type == "paragraph":
            return node

    def in_list(node: SyntaxTreeNode) -> SyntaxTreeNode | None:
        for child in node.children:
            if child.type == "paragraph":
                return child
            if child.type in ("bullet_list", "ordered_list", "list_item"):
                found = in_list(child)
                if found is not None:
                    return found
        return None

    for node in nodes:
        if node.type in ("bullet_list", "ordered_list"):
            found = in_list(node)
            if found is not None:
                return found
    return None


def _is_index(nodes: list[SyntaxTreeNode]) -> bool:
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


def _restating(nodes: list[SyntaxTreeNode], description: str | None) -> SyntaxTreeNode | None:
    """The opening paragraph when it says exactly what the frontmatter ``description``
    says (ASCII whitespace aside), else None. An exported memory is written that way,
    the claim in the frontmatter and again as the body's first paragraph; kept as
    both, a re-import would state its claim twice."""
    if description is None or not nodes or nodes[0].type != "paragraph":
        return None
    said = _inline(_children_inline(nodes[0]), _State(""))[1]
    return nodes[0] if ascii_collapsed(said) == ascii_collapsed(description) else None


def convert_body(text: str, source: str, claim_given: bool,
                 description: str | None = None, detect: Detector | None = None) -> Article:
    """The article for a file's body (frontmatter already removed). With a claim given
    (the frontmatter description), no sentence of the body is marked, unless the
    body opens with that very claim: then that paragraph is the claim's mark, so the
    claim is said once."""
    tree = SyntaxTreeNode(_parser().parse(text))
    nodes = list(tree.children)
    title = None
    if nodes and nodes[0].type == "heading" and nodes[0].tag == "h1":
        title = _plain(_inline(_children_inline(nodes[0]), _State(""))[1]) or None
        nodes = nodes[1:]
    restated = _restating(nodes, description)
    state = _State(posixpath.dirname(source), detect=detect)
    is_index = _is_index(nodes)
    claim_node = None if claim_given or is_index else _first_prose(nodes)
    claim: str | None = None
    marked = False
    html: list[str] = []
    open_levels: list[int] = []
    for index, node in enumerate(nodes):
        if node.type == "heading":
            level = int(node.tag[1])
            while open_levels and open_levels[-1] >= level:
                open_levels.pop()
                html.append("</section>")
            open_levels.append(level)
            html.append("<section>" + _block(node, state))
        elif node is restated:
            inner = _inline(_children_inline(node), state)[0].strip()
            claim, marked = description, True
            html.append(f"<p><mark>{inner}</mark></p>")
        elif node is claim_node and index == 0:
            rendered, claim = _claim_paragraph(node, state)
            marked = True
            html.append(rendered)
        else:
            html.append(_block(node, state))
    html.extend("</section>" for _ in open_levels)
    if claim_node is not None and claim is None:
        claim = _claim_paragraph(claim_node, _State(""))[1]
        observation = _OBSERVATION.fullmatch(claim)
        claim = _plain(observation.group(2)) if observation else claim
    return Article(
        html="\n".join(h for h in html if h), claim=claim or None, claim_marked=marked,
        title=title, targets=tuple(state.targets), tags=tuple(state.tags),
        observations=tuple(state.observations), is_index=is_index)
