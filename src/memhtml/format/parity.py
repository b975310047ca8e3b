"""Parity: the tree the checker read is the tree a browser builds.

The claim, skeleton, metadata and reference rules, the extraction and the hash all
read libxml2's tree; the safety rules read the browser's (``browser``). Each is
only worth what the other is when both parsers built the same tree, so a file
passes only when they did: the same elements, in the same order, at the same
depths, with the same attributes and values. Where they differ, some markup is
read one way by the checker and another by every reader, and the file is refused
with the first place they part.

Two differences are not disagreements, because no reader can see them: the HTML5
algorithm wraps a table's bare rows in a ``<tbody>`` that libxml2 leaves out (a row
is a row either way), and it always builds a ``<head>``, where libxml2 builds one
only for head content. An attribute-less ``<tbody>``, and an attribute-less empty
``<head>``, are therefore left out of both sides.
"""

from __future__ import annotations

from typing import cast

from lxml import etree

from memhtml.format.browser import BrowserTree
from memhtml.format.limits import MAX_ELEMENTS, shown
from memhtml.format.tree import HtmlElement

Shape = tuple[int, str, tuple[tuple[str, str], ...]]
"""One element as both sides are compared: depth, tag, attributes sorted by name."""


def _transparent(tag: str, attributes: object) -> bool:
    return tag == "tbody" and not attributes


def browser_shape(tree: BrowserTree) -> list[Shape]:
    """The browser's elements as shapes, transparent wrappers left out."""
    out: list[Shape] = []
    # depth of each kept element = its depth minus the transparent ancestors above it
    lifted: list[int] = []  # depths of the transparent elements on the current path
    elements = tree.elements
    for i, el in enumerate(elements):
        while lifted and lifted[-1] >= el.depth:
            lifted.pop()
        if _transparent(el.tag, el.attributes):
            lifted.append(el.depth)
            continue
        if el.tag == "head" and not el.attributes and (
            i + 1 == len(elements) or elements[i + 1].depth <= el.depth
        ):
            continue
        out.append((el.depth - len(lifted), el.tag,
                    tuple(sorted(el.attributes)) if el.attributes else ()))
    return out


def checker_shape(roots: list[HtmlElement]) -> list[Shape]:
    """libxml2's elements as shapes, the same way, over every top-level tree."""
    out: list[Shape] = []
    # each element's depth with the transparent wrappers above it left out
    depths: dict[HtmlElement, int] = {}
    for root in roots:
        for el in root.iter(etree.Element):
            parent = el.getparent()
            depth = depths[parent] if parent is not None else 0
            tag = cast(str, el.tag)  # iter(etree.Element) yields elements, named by str
            # items() reads the attributes without building the attrib proxy
            attributes = el.items()
            if _transparent(tag, attributes) or (
                tag == "head" and not attributes and len(el) == 0
            ):
                depths[el] = depth
                continue
            depth += 1
            depths[el] = depth
            out.append((depth, tag, tuple(sorted(attributes)) if attributes else ()))
            if len(out) > MAX_ELEMENTS:
                return out
    return out


def _describe(shape: Shape | None) -> str:
    if shape is None:
        return "nothing"
    depth, tag, attributes = shape
    names = "".join(f" {shown(name)}" for name, _ in attributes)
    return f"<{shown(tag)}{names}> at depth {depth}"


def parity_violation(checker: list[Shape], browser: list[Shape]) -> str | None:
    """The first place the two trees part, as a violation, or None when they agree."""
    if checker == browser:
        return None
    index = next(
        (i for i, (a, b) in enumerate(zip(checker, browser, strict=False)) if a != b),
        min(len(checker), len(browser)),
    )
    here = checker[index] if index < len(checker) else None
    there = browser[index] if index < len(browser) else None
    if here is not None and there is not None and here[:2] == there[:2]:
        mine, theirs = dict(here[2]), dict(there[2])
        for name in sorted(set(mine) | set(theirs)):
            if mine.get(name) == theirs.get(name):
                continue
            where = f"on <{shown(here[1])}>"
            if name not in mine:
                return (f"parity: a browser's tree has {shown(name)}=\"{shown(theirs[name])}\" "
                        f"{where}, which the checker's tree does not; the file must mean "
                        "one thing to both")
            if name not in theirs:
                return (f"parity: the checker's tree has {shown(name)}=\"{shown(mine[name])}\" "
                        f"{where}, which a browser's tree does not; the file must mean one "
                        "thing to both")
            return (f"parity: a browser reads {shown(name)}=\"{shown(theirs[name])}\" {where} "
                    f"where the checker read \"{shown(mine[name])}\"; the file must mean one "
                    "thing to both")
    return (f"parity: element {index + 1} is {_describe(there)} in the tree a browser "
            f"builds and {_describe(here)} in the tree the checker read; the file must "
            "mean one thing to both")


__all__ = ["Shape", "browser_shape", "checker_shape", "parity_violation"]
