"""UTF-8 is the only encoding a memory file may be read in.

A published memory is served as its raw bytes, usually with no charset in the
response, so the browser takes the encoding from the file. A file that declared
another one would be decoded differently from the text the checker judged: in
ISO-2022-JP an escape sequence turns the ASCII bytes after it into other
characters, so an event handler can hide in what the checker reads as text, and
UTF-7 or UTF-16 declarations change the document as thoroughly. So a file carries
exactly one ``<meta charset="utf-8">``, the declaration a browser's prescan of the
first 1,024 bytes finds first is that one, and no ESC byte (which only such
stateful encodings use) appears at all.

The prescan is the WHATWG algorithm, which reads bytes, not the tree: it does not
know that ``<title>`` holds text, so a ``<meta charset>`` written inside a title is
invisible to the HTML parser and decisive for the browser. It is judged here as
the browser runs it, over the first 1,024 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from memhtml.format.limits import shown

PRESCAN_BYTES = 1024
"""How far a browser looks for an encoding declaration before it parses."""
UTF8 = "utf-8"
"""The one spelling of the one encoding."""

_SPACE = b"\t\n\x0c\r "
_SPACE_OR_SLASH = b"\t\n\x0c\r /"


@dataclass(frozen=True, slots=True)
class Declaration:
    """One encoding declaration the prescan read, and whether a browser acts on it.

    ``honoured`` is false for a ``content="...charset=..."`` with no
    ``http-equiv="content-type"`` beside it, which a browser skips."""

    label: str
    honoured: bool


def _lower(byte: int) -> int:
    return byte + 0x20 if 0x41 <= byte <= 0x5A else byte


def _get_attribute(data: bytes, pos: int) -> tuple[tuple[str, str] | None, int]:
    """The prescan's "get an attribute": ``((name, value) or None, next position)``.

    Running off the end returns ``len(data)``, which ends the prescan."""
    end = len(data)
    while pos < end and data[pos] in _SPACE_OR_SLASH:
        pos += 1
    if pos >= end or data[pos] == 0x3E:
        return None, pos
    name: list[int] = []
    while True:
        if pos >= end:
            return None, end
        byte = data[pos]
        if byte == 0x3D and name:
            pos += 1
            break
        if byte in _SPACE:
            while pos < end and data[pos] in _SPACE:
                pos += 1
            if pos >= end:
                return None, end
            if data[pos] != 0x3D:
                return (_decoded(name), ""), pos
            pos += 1
            break
        if byte in b"/>":
            return (_decoded(name), ""), pos
        name.append(_lower(byte))
        pos += 1
    while pos < end and data[pos] in _SPACE:
        pos += 1
    if pos >= end:
        return None, end
    byte = data[pos]
    if byte in b"\"'":
        close = data.find(byte, pos + 1)
        if close < 0:
            return None, end
        return (_decoded(name), _decoded([_lower(b) for b in data[pos + 1 : close]])), close + 1
    if byte == 0x3E:
        return (_decoded(name), ""), pos
    value: list[int] = []
    while pos < end and data[pos] not in b"\t\n\x0c\r >":
        value.append(_lower(data[pos]))
        pos += 1
    if pos >= end:
        return None, end
    return (_decoded(name), _decoded(value)), pos


def _decoded(codes: list[int]) -> str:
    return bytes(codes).decode("latin-1")


def charset_in_content(content: str) -> str | None:
    """The label a ``content="text/html; charset=..."`` value names, or None."""
    lowered = content.lower()
    pos = 0
    while True:
        found = lowered.find("charset", pos)
        if found < 0:
            return None
        pos = found + 7
        while pos < len(content) and content[pos] in "\t\n\x0c\r ":
            pos += 1
        if pos >= len(content) or content[pos] != "=":
            continue
        pos += 1
        while pos < len(content) and content[pos] in "\t\n\x0c\r ":
            pos += 1
        if pos >= len(content):
            return None
        quote = content[pos]
        if quote in "\"'":
            close = content.find(quote, pos + 1)
            return content[pos + 1 : close] if close >= 0 else None
        stop = pos
        while stop < len(content) and content[stop] not in "\t\n\x0c\r ;":
            stop += 1
        return content[pos:stop]


def _meta_declaration(data: bytes, pos: int) -> tuple[Declaration | None, int]:
    """Read the attributes of a ``<meta`` whose name ends at ``pos``."""
    seen: set[str] = set()
    got_pragma = False
    need_pragma: bool | None = None
    label: str | None = None
    while True:
        attribute, pos = _get_attribute(data, pos)
        if attribute is None:
            break
        name, value = attribute
        if name in seen:
            continue
        seen.add(name)
        if name == "http-equiv":
            got_pragma = got_pragma or value == "content-type"
        elif name == "content":
            found = charset_in_content(value)
            if found is not None and label is None:
                label, need_pragma = found, True
        elif name == "charset":
            label, need_pragma = value, False
    if need_pragma is None or label is None:
        return None, pos
    honoured = not (need_pragma and not got_pragma)
    return Declaration(label.strip("\t\n\x0c\r ").lower(), honoured), pos


_WRITTEN_HEAD = b'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">'
"""How the serializer opens every file. The prescan of it ends at its own meta,
whatever follows, so its outcome is known without running it."""
_WRITTEN_OUTCOME = (Declaration(UTF8, True),)


def prescan(data: bytes) -> list[Declaration]:
    """Every encoding declaration a browser's prescan reads, up to the first it acts on.

    Runs over at most PRESCAN_BYTES bytes. The list ends with the declaration the
    browser decodes by, if it found one; the ones before it were skipped, and are
    returned because a declaration a browser skips today is still one too many.
    """
    if data.startswith(_WRITTEN_HEAD):
        return list(_WRITTEN_OUTCOME)
    data = data[:PRESCAN_BYTES]
    found: list[Declaration] = []
    pos, end = 0, len(data)
    while pos < end:
        if data.startswith(b"<!--", pos):
            close = data.find(b"-->", pos + 2)
            if close < 0:
                break
            pos = close + 3
            continue
        if (data[pos : pos + 5].lower() == b"<meta" and pos + 5 < end
                and data[pos + 5] in _SPACE_OR_SLASH):
            declaration, pos = _meta_declaration(data, pos + 5)
            if declaration is not None:
                found.append(declaration)
                if declaration.honoured:
                    break
            continue
        nxt = data[pos + 1 : pos + 2]
        if data[pos] == 0x3C and (
            nxt.isalpha() or (nxt == b"/" and data[pos + 2 : pos + 3].isalpha())
        ):
            pos += 2
            while pos < end and data[pos] not in b"\t\n\x0c\r >":
                pos += 1
            attribute: tuple[str, str] | None = ("", "")
            while attribute is not None:
                attribute, pos = _get_attribute(data, pos)
        elif data[pos] == 0x3C and nxt in (b"!", b"/", b"?"):
            close = data.find(b">", pos + 1)
            if close < 0:
                break
            pos = close
        pos += 1
    return found


def encoding_violations(text: str, data: bytes, charsets: list[str]) -> list[str]:
    """What keeps a browser from reading ``data`` as the UTF-8 the checker read.

    ``charsets`` are the ``<meta charset>`` values in the parsed document, in order.
    """
    out: list[str] = []
    esc = text.find("\x1b")
    if esc >= 0:
        out.append(f"charset: an ESC (0x1B) character at offset {esc}; it switches "
                   "encodings such as ISO-2022-JP, and a memory file is UTF-8 only")
    if not charsets:
        out.append('charset: no <meta charset="utf-8">; a memory file declares UTF-8, '
                   "and only UTF-8")
    elif len(charsets) > 1:
        out.append(f"charset: {len(charsets)} <meta charset> elements; exactly one is "
                   "allowed")
    for value in charsets:
        if value.strip("\t\n\x0c\r ").lower() != UTF8:
            out.append(f'charset: <meta charset="{shown(value)}"> declares another '
                       "encoding; a memory file is UTF-8 only")
    if charsets:
        declarations = prescan(data)
        for declaration in declarations:
            if declaration.label != UTF8:
                out.append(f'charset: a browser\'s encoding prescan reads "'
                           f'{shown(declaration.label)}" in the first {PRESCAN_BYTES} '
                           "bytes; the only encoding is utf-8")
        if not declarations or not declarations[-1].honoured:
            out.append(f'charset: the <meta charset="utf-8"> must end within the first '
                       f"{PRESCAN_BYTES} bytes, where a browser looks for it")
    return out


__all__ = [
    "PRESCAN_BYTES",
    "UTF8",
    "Declaration",
    "charset_in_content",
    "encoding_violations",
    "prescan",
]
