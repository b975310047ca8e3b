"""Find block tags typed into prose.

A write door escapes prose, so an agent that types ``<p>`` or ``<ul>`` into a body
paragraph gets those characters back as visible text, not structure. The doors
use these two functions to refuse such a body with a pointer to the tag, and
``doctor`` uses the article form to find files that already carry one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memhtml.format.tree import find_article, parse_html, tag_of, text_content

TAG_SHOWN = 40
"""How many characters of an offending tag an error message quotes."""

_BLOCK_TAG = re.compile(
    r"</?(?:p|div|br|hr|ul|ol|li|dl|dt|dd|table|thead|tbody|tfoot|tr|td|th|pre|figure|"
    r"figcaption|blockquote|h[1-6]|section|article|aside|details|summary|header|footer|"
    r"nav|main)(?=[\s/>])[^>]*>",
    re.IGNORECASE,
)
_LINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class BlockTagInRun:
    """Where a block tag starts in a text, and the tag as written."""

    offset: int
    tag: str


@dataclass(frozen=True, slots=True)
class BlockTagInArticle:
    """Which element's text holds a block tag, and the tag as the text reads."""

    element: Literal["mark", "p"]
    tag: str


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Backtick code spans on one line: a run opens, the next run of the same length
    closes. An unmatched run is literal text."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(line):
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        run = line[i:j]
        close = re.compile(r"(?<!`)" + re.escape(run) + r"(?!`)").search(line, j)
        if close is None:
            i = j
            continue
        spans.append((i, close.end()))
        i = close.end()
    return spans


def block_tag_in_run(text: str) -> BlockTagInRun | None:
    """The first block tag in ``text`` outside a backtick span, or None.

    The text is read as the HTML parser will hold it: every line-break spelling is a
    break and NULs are dropped. A backtick span opens and closes on one line, so a
    tag on its own line is prose even when neighbouring lines carry backticks.
    """
    position = 0
    for line_match in [*_LINE.finditer(text), None]:
        end = line_match.start() if line_match is not None else len(text)
        raw = text[position:end]
        kept = [i for i, ch in enumerate(raw) if ch != "\x00"]
        line = "".join(raw[i] for i in kept)
        spans = _code_spans(line)
        for match in _BLOCK_TAG.finditer(line):
            if any(start <= match.start() < stop for start, stop in spans):
                continue
            return BlockTagInRun(position + kept[match.start()], match.group(0)[:TAG_SHOWN])
        if line_match is None:
            break
        position = line_match.end()
    return None


def block_tag_in_article(html: str) -> BlockTagInArticle | None:
    """The first ``<p>`` (read whole, its ``<mark>`` included), or ``<mark>`` outside
    any ``<p>``, whose text holds a block tag; None when none does. The text is what a
    reader sees, so ``&lt;p&gt;`` in the file reads as ``<p>`` here."""
    root, _ = parse_html(html)
    article = find_article(root) if root is not None else None
    if article is None:
        return None
    for el in article.iter("p", "mark"):
        tag = tag_of(el)
        if tag == "mark" and any(tag_of(a) == "p" for a in el.iterancestors()):
            continue
        found = block_tag_in_run(text_content(el))
        if found is not None:
            return BlockTagInArticle("p" if tag == "p" else "mark", found.tag)
    return None
