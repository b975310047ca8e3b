"""The project's own HTML writer.

lxml's serializer is not used for two reasons. Attribute order: it keeps the order
the author wrote, so two files differing only in that order would stay different
bytes forever; sorting by name canonicalizes them. And ``<pre>``: the parser drops
the newline right after the start tag, so a ``<pre>`` whose text really begins with
a newline must be written with an extra one or it would lose a line on every write,
and since ``<pre>`` whitespace is hashed verbatim that drift would move the memory's
dedup key on a pass that edited nothing.
"""

from __future__ import annotations

from lxml import etree

from memhtml.format.tree import HtmlElement
from memhtml.format.vocabulary import VOID_ELEMENTS


def escape_text(text: str) -> str:
    """Escape a text run. U+00A0 is written as ``&nbsp;`` because a literal no-break
    space is invisible in an editor and reads as a plain space in review. ESC is
    written as ``&#27;``: a raw ESC byte is refused in a memory file (it is how
    ISO-2022-JP switches character sets), and a terminal log pasted with its colour
    codes keeps them as a reference instead."""
    # Chained replace runs in C and beats a translate table by several times here.
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\u00a0", "&nbsp;").replace("\x1b", "&#27;")
    )


def escape_attribute(value: str) -> str:
    """Escape a double-quoted attribute value. Line breaks become character
    references so an emitted ``<meta>`` or ``<link>`` is always exactly one source
    line, which the line-splicing head editors rely on."""
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("\n", "&#10;")
        .replace("\r", "&#13;").replace("\u00a0", "&nbsp;").replace("\x1b", "&#27;")
    )


def start_tag(tag: str, attributes: list[tuple[str, str]]) -> str:
    """A start tag with attributes sorted by name, values double-quoted."""
    if not attributes:
        return f"<{tag}>"
    attrs = "".join(f' {name}="{escape_attribute(value)}"' for name, value in sorted(attributes))
    return f"<{tag}{attrs}>"


def _write(root: HtmlElement, include_root: bool) -> str:
    out: list[str] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if not isinstance(tag, str):
            # Comments and processing instructions were dropped by the parser;
            # an entity node carries nothing a reader sees.
            if event == "end" and el is not root and el.tail:
                out.append(escape_text(el.tail))
            continue
        is_root = el is root
        if event == "start":
            if not is_root or include_root:
                # items() reads the attributes without the attrib proxy; most
                # elements have none, and their tag needs no sorting.
                items = el.items()
                out.append(start_tag(tag, [(str(k), str(v)) for k, v in items]) if items
                           else f"<{tag}>")
            text = el.text
            if tag == "pre" and text and text.startswith("\n"):
                out.append("\n")
            if text:
                out.append(escape_text(text))
        else:
            if (not is_root or include_root) and tag not in VOID_ELEMENTS:
                out.append(f"</{tag}>")
            if not is_root and el.tail:
                out.append(escape_text(el.tail))
    return "".join(out)


def write_children(parent: HtmlElement) -> str:
    """The inner markup of ``parent``: its text and children, the element itself excluded."""
    return _write(parent, include_root=False)


def write_outer(node: HtmlElement) -> str:
    """``node`` and its subtree (its tail excluded)."""
    return _write(node, include_root=True)
