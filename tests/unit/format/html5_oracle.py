"""HTML5 parsers as oracles: what a browser would run from a file's raw bytes.

Two conformant HTML5 tree builders stand in for a browser. lexbor (through
selectolax) is the one the checker itself uses, so it is an oracle only for what the
checker *reports*; html5lib is independent of the checker (pure Python, its own
encoding sniffing from the bytes, as a browser sniffs them) and is used whenever it
is installed. An oracle answers one question: what in this tree would execute or
navigate to script: a script element in any namespace, an ``on*`` attribute, or a URL
attribute whose scheme is javascript, vbscript or data.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterator

from selectolax.lexbor import LexborHTMLParser

Element = tuple[str, tuple[tuple[str, str], ...]]
"""A tag (local name, lowercased) and its attributes (local names), in document order."""
Oracle = Callable[[bytes], list[Element]]

_URL_NOISE = re.compile(r"[\x00-\x20\x7f]")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
SCRIPTABLE_SCHEMES = frozenset({"javascript", "vbscript", "data", "livescript", "mocha"})
URL_ATTRIBUTES = frozenset({
    "href", "src", "cite", "action", "formaction", "data", "poster", "background",
    "codebase", "srcdoc", "lowsrc", "dynsrc", "longdesc", "usemap", "xlink:href", "to",
    "from", "values", "ping", "manifest", "icon", "profile",
})


def _local(name: str) -> str:
    """``{namespace}local`` as its local name, lowercased."""
    return name.rsplit("}", 1)[-1].lower()


def lexbor_elements(data: bytes) -> list[Element]:
    """Every element of the tree lexbor builds from UTF-8 bytes, scripting on."""
    root = LexborHTMLParser(data, scripting=True).root
    if root is None:
        return []
    return [
        ((node.tag or "").lower(),
         tuple((name.lower(), value or "") for name, value in node.attributes.items()))
        for node in root.traverse(include_text=False) if node.is_element_node
    ]


def _html5lib_elements(data: bytes) -> list[Element]:
    import html5lib

    tree = html5lib.parse(data, treebuilder="etree", namespaceHTMLElements=False)
    out: list[Element] = []
    for el in tree.iter():
        tag: object = el.tag  # a comment's tag is a function, not a name
        if not isinstance(tag, str):
            continue
        out.append((_local(tag),
                    tuple((_local(str(k)), str(v)) for k, v in el.attrib.items())))
    return out


def oracles() -> list[tuple[str, Oracle]]:
    """The oracles installed here: lexbor always, html5lib when it is importable."""
    found: list[tuple[str, Oracle]] = [("lexbor", lexbor_elements)]
    if importlib.util.find_spec("html5lib") is not None:
        found.append(("html5lib", _html5lib_elements))
    return found


def scheme_of(value: str) -> str | None:
    """The scheme a browser reads from a URL attribute, after dropping what it ignores."""
    match = _SCHEME.match(_URL_NOISE.sub("", value).lower())
    return match.group(1) if match else None


def dangers(elements: list[Element]) -> Iterator[str]:
    """What in a tree would run script or navigate to it."""
    for tag, attributes in elements:
        if tag == "script":
            yield "<script>"
        for name, value in attributes:
            if name.startswith("on"):
                yield f"{name} on <{tag}>"
            elif name in URL_ATTRIBUTES and scheme_of(value) in SCRIPTABLE_SCHEMES:
                yield f"{scheme_of(value)}: in {name} of <{tag}>"
            elif tag == "meta" and name == "http-equiv" and value.lower() == "refresh":
                yield "<meta http-equiv=refresh>"


__all__ = ["Element", "Oracle", "dangers", "lexbor_elements", "oracles", "scheme_of"]
