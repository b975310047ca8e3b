"""An index file (``MEMORY.md``) kept as an index page whose links reach the memories.

An index is navigation, not a fact: it has no claim of its own, and read as a memory it
would say every title in the folder a second time, which skews every search toward it.
So it never becomes a memory. It is not dropped either: the import commits it beside
the memories as a markdown page (``<directory>/<same relative path>.md``), the file the
person wrote with each link to a note rewritten to point at the memory that note
became. Git hosts render it as a page with working links, the head never reads it (it
is not an ``.html`` file), and export rewrites the links back, so an index
round-trips through a store to the same text.

Only link targets change; every other byte stays as written. Links are found with two
patterns rather than through the markdown parser because the parser keeps no column
positions for inline links; fenced code blocks and inline code spans are masked
first, so a link written as code is never rewritten.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

__all__ = ["IndexPage", "exported_index", "index_page"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)(?<!`)\1(?!`)", re.DOTALL)
_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]\\\n]|\\.)*)\]"  # [label], not an image's ![alt]
    r"\((<[^>\n]*>|[^\s()<>]+)((?:\s+\"[^\"\n]*\")?\s*)\)")  # (target "title")
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")


def _masked(text: str) -> str:
    """``text`` with every character inside code replaced by a NUL, same length, so a
    match found in the mask is at the same offsets in the text."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opening = _FENCE.match(line)
        if fence is not None:
            out.append("\x00" * len(line))
            if opening and opening.group(1)[0] == fence[0] and \
                    len(opening.group(1)) >= len(fence) and not line[opening.end():].strip():
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            out.append("\x00" * len(line))
            continue
        out.append(_CODE_SPAN.sub(lambda m: "\x00" * len(m.group(0)), line))
    return "".join(out)


def _relative(target: str, page: str) -> str:
    """``target`` (a tree path) as a link from the page at ``page``."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


@dataclass(frozen=True, slots=True)
class IndexPage:
    """An index file with its note links rewritten, and the links that named no note."""

    text: str
    unresolved: tuple[str, ...]


def _rewrite(text: str, link: Callable[[str, str | None, str], str | None],
             wiki: Callable[[str, str, str], str | None]) -> str:
    mask = _masked(text)
    edits: list[tuple[int, int, str]] = []
    for hit in _LINK.finditer(mask):
        raw = text[hit.start(2):hit.end(2)]
        bare = raw[1:-1] if raw.startswith("<") else raw
        path, _, fragment = bare.partition("#")
        new = link(path, fragment or None, text[hit.start(1):hit.end(1)])
        if new is not None:
            edits.append((hit.start(2), hit.end(2), new))
    for hit in _WIKILINK.finditer(mask):
        name, heading, alias = (text[hit.start(i):hit.end(i)] if hit.group(i) is not None
                                else "" for i in (1, 2, 3))
        new = wiki(name.strip(), heading.strip(), alias.strip())
        if new is not None:
            edits.append((hit.start(), hit.end(), new))
    out: list[str] = []
    last = 0
    for start, end, new in sorted(edits):
        if start < last:  # a wikilink inside a link's text: the outer edit stands
            continue
        out += [text[last:start], new]
        last = end
    out.append(text[last:])
    return "".join(out)


def _href(path: str, fragment: str | None) -> str:
    href = quote(path, safe="/-._~")
    return href + (f"#{fragment}" if fragment else "")


def index_page(text: str, source: str, page: str,
               resolve: Callable[[str, bool], str | None]) -> IndexPage:
    """The page committed at ``page`` for the index file at ``source`` (both relative:
    ``source`` to the folder, ``page`` to the store), given the import's resolver
    (a ``.md`` path or a wikilink name -> the store path of the memory it became).

    A relative ``.md`` link becomes a relative link to the memory file; a wikilink
    becomes a markdown link whose text is the alias, or the name as written (with its
    heading), since no renderer of a git host follows ``[[...]]``. A link that names
    no imported note is left exactly as written and listed."""
    unresolved: list[str] = []
    base = posixpath.dirname(source)

    def link(path: str, fragment: str | None, _label: str) -> str | None:
        if not path.lower().endswith(".md") or ":" in path or path.startswith("/"):
            return None
        joined = posixpath.normpath(posixpath.join(base, unquote(path)))
        found = resolve(joined, True)
        if found is None:
            unresolved.append(joined)
            return None
        return _href(_relative(found, page), fragment)

    def wiki(name: str, heading: str, alias: str) -> str | None:
        found = resolve(name, False) if name else None
        if found is None:
            if name:
                unresolved.append(name)
            return None
        shown = alias or (f"{name}#{heading}" if heading else name)
        shown = re.sub(r"([\\\[\]])", r"\\\1", shown)
        return f"[{shown}]({_href(_relative(found, page), None)})"

    return IndexPage(_rewrite(text, link, wiki), tuple(unresolved))


def exported_index(text: str, page: str, exported: Callable[[str], str | None]) -> str:
    """An index page's text as export writes it: each relative link to a memory file
    (``x.html``) pointed at the file that memory is exported as (``exported``: a tree
    path -> its export path, None when it is not exported), and left alone otherwise."""
    base = posixpath.dirname(page)

    def link(path: str, fragment: str | None, _label: str) -> str | None:
        if not path.lower().endswith(".html") or ":" in path or path.startswith("/"):
            return None
        target = posixpath.normpath(posixpath.join(base, unquote(path)))
        to = exported(target)
        if to is None:
            return None
        return _href(_relative(to, page), fragment)

    return _rewrite(text, link, lambda _n, _h, _a: None)
