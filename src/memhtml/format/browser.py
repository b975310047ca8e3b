"""The tree a browser builds from a memory file: the HTML5 algorithm, through lexbor.

libxml2, which the extraction and the hash read, is not an HTML5 tree builder: it
moves no attributes from a stray ``<body>`` onto the real one, puts text after
``</html>`` in a second tree, and stops nesting at 256 levels. What runs in a
reader's browser is decided by the HTML5 tree, so the safety rules are judged on
that tree, and a file passes only when libxml2's tree has the same shape (see
``parity``). lexbor (through selectolax) is a conformant HTML5 parser in C; parsed
with scripting on, as a browser parses, so ``<noscript>`` holds text, not markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser

from memhtml.format.limits import MAX_ELEMENTS

Attributes = tuple[tuple[str, str], ...]


class BrowserElement(NamedTuple):
    """One element of the browser's tree, in document order. A named tuple rather
    than a dataclass: one is built for every element of every file read."""

    tag: str
    attributes: Attributes
    """In source order; a valueless attribute has the empty string."""
    depth: int
    """``<html>`` is 1."""
    in_figure: bool
    """Some ancestor is a ``<figure>``."""


@dataclass(frozen=True, slots=True)
class BrowserTree:
    """Every element of the browser's tree, up to MAX_ELEMENTS."""

    elements: tuple[BrowserElement, ...]
    depth: int
    """The deepest element's depth."""
    complete: bool
    """False when the tree held more than MAX_ELEMENTS and the walk stopped there."""

    def charsets(self) -> list[str]:
        """The ``charset`` values of every ``<meta charset>``, in document order."""
        return [value for el in self.elements if el.tag == "meta"
                for name, value in el.attributes if name == "charset"]


def browser_tree(data: bytes) -> BrowserTree:
    """Parse UTF-8 ``data`` as a browser does, and walk the whole tree once.

    The walk is lexbor's own iterator, so no nesting depth reaches Python's
    recursion limit. Template contents are a separate fragment a browser does not
    render; ``<template>`` itself is a forbidden element, so what it holds never
    needs judging.
    """
    root = LexborHTMLParser(data, scripting=True).root
    if root is None:
        return BrowserTree((), 0, True)
    elements: list[BrowserElement] = []
    # each element's depth and whether it sits in a <figure>, by lexbor's node id
    placed: dict[int, tuple[int, bool]] = {}
    for node in root.traverse(include_text=False):
        if not node.is_element_node:
            continue
        if len(elements) >= MAX_ELEMENTS:
            return BrowserTree(tuple(elements), _deepest(elements), False)
        parent = node.parent
        depth, in_figure = (placed.get(parent.mem_id, (0, False)) if parent is not None
                            else (0, False))
        tag = node.tag or ""
        depth += 1
        placed[node.mem_id] = (depth, in_figure or tag == "figure")
        attrs = node.attributes
        attributes = tuple([(name, value or "") for name, value in attrs.items()]) if attrs else ()
        # tuple.__new__ skips the named tuple's Python-level constructor: this line
        # runs for every element of every file read.
        elements.append(tuple.__new__(BrowserElement, (tag, attributes, depth, in_figure)))
    return BrowserTree(tuple(elements), _deepest(elements), True)


def _deepest(elements: list[BrowserElement]) -> int:
    return max((el.depth for el in elements), default=0)


__all__ = ["Attributes", "BrowserElement", "BrowserTree", "browser_tree"]
