"""Read a memory file the way a browser will, before any constraint is judged.

Order matters and is cheapest first: the bounds on the raw bytes (so neither parser
is handed more than it reads whole), then both parses, then what makes the two
readings one: UTF-8 as the only encoding, a depth every parser builds in full, and
parity between the checker's tree and the browser's. Every finding is a violation;
none is repaired, and none stops the others from being reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from memhtml.format.browser import BrowserTree, browser_tree
from memhtml.format.encoding import encoding_violations
from memhtml.format.limits import MAX_DEPTH, MAX_ELEMENTS, bounds_violations
from memhtml.format.parity import browser_shape, checker_shape, parity_violation
from memhtml.format.tree import HtmlElement, encode_source, parse_bytes


@dataclass(frozen=True, slots=True)
class Reading:
    """Both trees of one file, and what keeps them from being the same document.

    ``root`` is None when the file could not be read at all; ``violations`` then
    says why, and no other check applies.
    """

    root: HtmlElement | None
    browser: BrowserTree | None
    violations: tuple[str, ...]


def read_document(text: str) -> Reading:
    """Read ``text`` with both parsers and judge whether they read the same file."""
    data, why = encode_source(text)
    if data is None:
        return Reading(None, None, (f"skeleton: {why}",))
    bounds = bounds_violations(data)
    if bounds:
        return Reading(None, None, bounds)
    root, why = parse_bytes(data)
    if root is None:
        return Reading(None, None, (f"skeleton: {why}",))
    browser = browser_tree(data)
    found = encoding_violations(text, data, browser.charsets())
    if browser.depth > MAX_DEPTH:
        found.append(f"depth: elements nest {browser.depth} levels deep in the tree a "
                     f"browser builds; a memory file nests at most {MAX_DEPTH}")
    if not browser.complete:
        found.append(f"size: a browser builds more than {MAX_ELEMENTS:,} elements from "
                     "this file (inline elements left open are opened again in every "
                     "later block); a memory file is far smaller")
    roots = [*reversed(list(root.itersiblings(preceding=True))), root,
             *root.itersiblings()]
    parity = parity_violation(checker_shape(roots), browser_shape(browser))
    if parity is not None:
        found.append(parity)
    return Reading(root, browser, tuple(found))


__all__ = ["Reading", "read_document"]
