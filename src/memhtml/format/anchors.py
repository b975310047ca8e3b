"""An article's links to another memory, moved with it.

A memory may link another inline (``<a href="/areas/x.html">``, what an imported
``[[wikilink]]`` becomes) beside the head edge to it. When the other memory moves
(archived, corrected, restored, moved), the store rewrites the edges that point at
it; ``retarget_anchors`` rewrites the article's anchors to the same address in the
same files, so the inline link keeps naming the memory it meant. An ``href`` is an
attribute: the article's text, and so its content hash, does not change.

The splice is by pattern over ``<a`` start tags (the writer emits each attribute
double-quoted; single-quoted and unquoted values are matched too), so every other
byte of the file stays as it was.

>>> html = '<p><mark>See</mark> <a href="/a/x.html">x</a> and <abbr href="/a/x.html">y</abbr></p>'
>>> retarget_anchors(html, "/a/x.html", "/archive/2026/a/x.html")
'<p><mark>See</mark> <a href="/archive/2026/a/x.html">x</a> and <abbr href="/a/x.html">y</abbr></p>'
"""

from __future__ import annotations

import re

from memhtml.format.markup import escape_attribute

__all__ = ["retarget_anchors"]

_ANCHOR_START = re.compile(r"<a\s[^<>]*>", re.IGNORECASE)


def retarget_anchors(html: str, old: str, new: str) -> str:
    """``html`` with every ``<a href>`` equal to ``old`` (a document path) set to
    ``new``; the input itself when none is."""
    if escape_attribute(old) not in html:
        return html
    written = re.escape(escape_attribute(old))
    href = re.compile(rf"""(\shref\s*=\s*)(?:"{written}"|'{written}'|{written}(?=[\s>]))""",
                      re.IGNORECASE)
    replacement = f'"{escape_attribute(new)}"'

    def one(tag: re.Match[str]) -> str:
        return href.sub(lambda hit: hit.group(1) + replacement, tag.group(0))

    return _ANCHOR_START.sub(one, html)
