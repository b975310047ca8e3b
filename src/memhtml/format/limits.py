"""The bounds a memory file must stay within, so that every parser reads all of it.

A parser that meets a document past its own limits does not fail: libxml2 stops
building the tree past 256 levels of nesting and hides the error in recover mode,
browsers flatten past their own depth (about 200 in Firefox, 512 in Chrome), and the
HTML5 tree builder's work grows with the square of the tags in some misnested
inputs. Whatever a parser silently drops is never checked, so each bound here is a
named violation, set far inside every parser's limit, and a file past one is refused
rather than read in part.
"""

from __future__ import annotations

import re

MAX_MEMORY_BYTES = 1 << 20
"""A memory file is at most 1 MiB of UTF-8, the same cap as the store's write door.
Below it no text node or attribute value can reach libxml2's own 10 MB limit, where
a longer node would be cut and whatever follows it lost."""

MAX_START_TAGS = 1024
"""At most 1,024 start tags (counted as ``<`` followed by a letter, which also counts
anything that merely looks like one). A fact file uses tens: the largest golden file
has 50. The bound is what keeps the HTML5 parse cheap on hostile markup: unclosed
inline elements that every later paragraph re-opens build about a quarter of the
square of the tag count, and 1,024 tags measured about 0.08 s in that worst case,
against minutes for a 1 MiB file of them."""

MAX_DEPTH = 64
"""Elements nest at most 64 levels (``<html>`` is level 1). Fact files nest under 20.
It sits far below the depths where libxml2 (256) and browsers (about 200 and 512)
stop building the tree the HTML5 algorithm describes."""

MAX_ELEMENTS = 4 * MAX_START_TAGS
"""How many elements the browser's tree may hold before the walk over it stops. Each
start tag makes at most one element, and the parser adds a few of its own (html,
head, body, tbody), so only re-opened inline elements get past this, and a file
whose tree has them is refused for parity anyway."""

SHOWN_CHARS = 80
"""How much of a value a violation quotes: enough to find it, never the whole 1 MiB."""

_START_TAG = re.compile(rb"<[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(value: str) -> str:
    """``value`` as a message quotes it: cut to SHOWN_CHARS with an ellipsis, and any
    control character written as ``\\xNN`` so the message shows what is there."""
    if len(value) > SHOWN_CHARS:
        value = value[: SHOWN_CHARS - 1] + "…"
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def bounds_violations(data: bytes) -> tuple[str, ...]:
    """The bounds a file's bytes break, checked before either parser runs."""
    if len(data) > MAX_MEMORY_BYTES:
        return (f"size: the file is {len(data):,} bytes; a memory file is at most "
                f"{MAX_MEMORY_BYTES:,} bytes (1 MiB)",)
    # Every start tag begins with "<", so a file with few of them needs no count.
    if data.count(b"<") <= MAX_START_TAGS:
        return ()
    tags = len(_START_TAG.findall(data))
    if tags > MAX_START_TAGS:
        return (f"size: the file has {tags:,} start tags; a memory file has at most "
                f"{MAX_START_TAGS:,}",)
    return ()


__all__ = [
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MAX_MEMORY_BYTES",
    "MAX_START_TAGS",
    "SHOWN_CHARS",
    "bounds_violations",
    "shown",
]
