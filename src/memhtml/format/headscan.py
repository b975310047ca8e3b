"""Where each head element really is: a small HTML tokenizer for the head editors.

Internal to ``memhtml.format``. The editors splice a file by source offset, so they
must know where a ``<meta>`` starts and ends, and where the head stops. A regular
expression over the raw text cannot know that: a meta value, a comment or a title
may all hold text that looks like a tag, and matching it edits the wrong bytes or
misses the real element. So this module tokenizes the way an HTML5 parser's
tokenizer does (the same states for tags, attributes, comments and raw text),
reporting every token with its exact ``[start, end)`` offsets in the ``str``.

It is total: any string yields tokens, and running out of input inside a tag drops
that tag, as the standard does. It has no tree builder; ``scan_head`` adds just the
"in head" rule that decides where the head ends.
"""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from html.entities import html5
from itertools import chain
from types import MappingProxyType
from typing import Literal, NamedTuple

TokenKind = Literal["start", "end", "comment", "doctype", "raw", "ignored", "text"]

_WS = "\t\n\f\r "
_NO_ATTRS: Mapping[str, str] = MappingProxyType({})


class Token(NamedTuple):
    """One token and its exact source span.

    ``start``/``end`` tags carry the ASCII-lowercased ``name``; a start tag carries
    its ``attrs`` (names lowercased, values with character references decoded; the
    first of a repeated name wins). ``raw`` is the text content of an element whose
    content is not markup (``<title>``, ``<style>``, ``<script>``...). ``ignored``
    is what a parser drops: ``</>``, or a tag the input ends inside. Character
    data is not reported by ``iter_tokens``: the gaps between tokens are text.

    A named tuple rather than a frozen dataclass: the editors tokenize on every
    write, and a frozen dataclass's constructor costs several times a tuple's.
    """

    kind: TokenKind
    start: int
    end: int
    name: str = ""
    attrs: Mapping[str, str] = _NO_ATTRS


# One start or end tag, exactly as the tokenizer's tag and attribute states accept
# it. Every quantifier is possessive, so a failed match costs one linear pass and
# never backtracks: the only way a tag that opens with "<" + letter fails to match
# is running out of input before its ">", which is when the standard drops it.
_SEP = r"[\t\n\f\r /]*+"
_ATTR_NAME = r"[^\t\n\f\r />][^\t\n\f\r />=]*+"
_VALUE = r"""(?:"[^"]*+"|'[^']*+'|[^\t\n\f\r >"'][^\t\n\f\r >]*+|(?=>))"""
_ITEM = _SEP + _ATTR_NAME + r"[\t\n\f\r ]*+(?:=[\t\n\f\r ]*+" + _VALUE + r"|(?!=))"
_TAG = re.compile(r"<(/?)([A-Za-z][^\t\n\f\r />]*+)((?:" + _ITEM + r")*+)" + _SEP + ">")
_ATTR = re.compile(
    _SEP + "(" + _ATTR_NAME + r""")[\t\n\f\r ]*+(?:=[\t\n\f\r ]*+(?:"([^"]*+)"|'([^']*+)'|"""
    r"""([^\t\n\f\r >"'][^\t\n\f\r >]*+))?)?"""
)
_COMMENT_CLOSE = re.compile(r"--!?>")
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z0-9]+;?)")
_WS_RUN = re.compile(r"[\t\n\f\r ]*")
_LONGEST_REF = max(map(len, html5))  # bounds the prefix search on a long "&name" run


def _raw_end(name: str) -> re.Pattern[str]:
    return re.compile(r"</" + name + r"[\t\n\f\r />]", re.IGNORECASE)


# Elements whose content is text up to their own end tag. <noscript> is absent: the
# project's parser runs with scripting off, where its content is markup.
_RAW_ENDS = {name: _raw_end(name) for name in
             ("title", "textarea", "style", "xmp", "iframe", "noembed", "noframes")}

# Script data: "<!--" escapes, and inside that a nested "<script" double-escapes,
# where "</script" only steps back out instead of ending the element.
_SCRIPT_DATA = re.compile(r"<!--|</script[\t\n\f\r />]", re.IGNORECASE)
_SCRIPT_ESCAPED = re.compile(r"-->|</?script[\t\n\f\r />]", re.IGNORECASE)
_SCRIPT_DOUBLE = re.compile(r"-->|</script[\t\n\f\r />]", re.IGNORECASE)

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(name: str) -> str:
    # Only ASCII folds: str.lower() would turn the Kelvin sign into "k" and let
    # "<LINK>" spelled with it pass for a <link>, which no parser does.
    return name.lower() if name.isascii() else name.translate(_ASCII_LOWER)


def _decode_ref(match: re.Match[str]) -> str:
    ref = match.group(1)
    if ref[0] == "#":
        return htmllib.unescape(match.group(0))
    if ref[-1] == ";" and ref in html5:
        return html5[ref]
    # A legacy name without ";" ("&amp", "&copy"): inside an attribute it stays
    # literal when a letter, digit or "=" follows, so a query string such as
    # "?a=1&copy=2" keeps its text.
    bare = ref.rstrip(";")
    for size in range(min(len(bare), _LONGEST_REF), 1, -1):
        name = bare[:size]
        if name in html5:
            after = ref[size:size + 1] or match.string[match.end():match.end() + 1]
            if after == "=" or after.isalnum():
                return match.group(0)
            return html5[name] + ref[size:]
    return match.group(0)


def attribute_value(raw: str) -> str:
    """An attribute's value as a parser reads it: line breaks normalized, NUL
    replaced, character references decoded by the attribute-value rules."""
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in raw:
        raw = raw.replace("\x00", "\ufffd")
    return _CHARREF.sub(_decode_ref, raw) if "&" in raw else raw


# The form every writer in the project emits: lowercase names, double-quoted values
# with nothing to decode. Read in one C-level pass; anything else takes the full path.
_PLAIN_ATTRS = re.compile(r'(?: [a-z][a-z-]*+="[^"&\r\x00]*+")++')
_PLAIN_PAIR = re.compile(r' ([a-z][a-z-]*+)="([^"]*+)"')


def _attributes(text: str) -> Mapping[str, str]:
    if not text:
        return _NO_ATTRS
    if _PLAIN_ATTRS.fullmatch(text) is not None:
        pairs = _PLAIN_PAIR.findall(text)
        plain = dict(pairs)
        if len(plain) == len(pairs):  # a repeated name keeps its first value: full path
            return plain
    out: dict[str, str] = {}
    for m in _ATTR.finditer(text):
        name = _lower(m.group(1))
        if name not in out:
            dq, sq, uq = m.group(2, 3, 4)
            raw = dq if dq is not None else sq if sq is not None else uq or ""
            out[name] = attribute_value(raw)
    return out


def _comment_end(html: str, at: int) -> int:
    """The end of a comment whose "<!--" ends at ``at``. "<!-->" and "<!--->" are
    complete (empty) comments; otherwise the first "-->" or "--!>" closes it, and
    an unclosed one runs to the end of the input."""
    if html.startswith(">", at):
        return at + 1
    if html.startswith("->", at):
        return at + 2
    m = _COMMENT_CLOSE.search(html, at)
    return len(html) if m is None else m.end()


def _script_end(html: str, at: int) -> int:
    """Where the end tag of a script whose content starts at ``at`` begins."""
    pattern, depth = _SCRIPT_DATA, 0  # 0 data, 1 escaped, 2 double-escaped
    while (m := pattern.search(html, at)) is not None:
        found = m.group(0)
        if found == "<!--":
            # The dashes of "<!--" count toward "-->", so "<!-->" leaves at once.
            pattern, depth, at = _SCRIPT_ESCAPED, 1, m.end() - 2
        elif found == "-->":
            pattern, depth, at = _SCRIPT_DATA, 0, m.end()
        elif found[1] != "/":
            pattern, depth, at = _SCRIPT_DOUBLE, 2, m.end()
        elif depth == 2:
            pattern, depth, at = _SCRIPT_ESCAPED, 1, m.end()
        else:
            return m.start()
    return len(html)


def _find_gt(html: str, at: int) -> int:
    gt = html.find(">", at)
    return len(html) if gt < 0 else gt + 1


def iter_tokens(html: str, pos: int = 0) -> Iterator[Token]:
    """Every non-text token from ``pos`` on, in source order. Total."""
    size = len(html)
    while True:
        lt = html.find("<", pos)
        if lt < 0 or lt + 1 >= size:
            return
        c = html[lt + 1]
        if c in _LETTERS or (c == "/" and lt + 2 < size and html[lt + 2] in _LETTERS):
            m = _TAG.match(html, lt)
            if m is None:  # the input ends inside this tag, which a parser drops
                yield Token("ignored", lt, size)
                return
            name = _lower(m.group(2))
            pos = m.end()
            if m.group(1):
                yield Token("end", lt, pos, name)
                continue
            yield Token("start", lt, pos, name, _attributes(m.group(3)))
            if name == "script":
                close = _script_end(html, pos)
            elif (ender := _RAW_ENDS.get(name)) is not None:
                found = ender.search(html, pos)
                close = size if found is None else found.start()
            elif name == "plaintext":
                close = size
            else:
                continue
            if close > pos:
                yield Token("raw", pos, close)
            pos = close
            continue
        if c == "!":
            if html.startswith("--", lt + 2):
                pos = _comment_end(html, lt + 4)
                yield Token("comment", lt, pos)
                continue
            kind: TokenKind = "doctype" if html[lt + 2:lt + 9].lower() == "doctype" else "comment"
            pos = _find_gt(html, lt + 2)
            yield Token(kind, lt, pos)
        elif c == "?":
            pos = _find_gt(html, lt + 2)
            yield Token("comment", lt, pos)
        elif c == "/":
            if lt + 2 >= size:
                return  # "</" at the end of the input is text
            if html[lt + 2] == ">":
                pos = lt + 3
                yield Token("ignored", lt, pos)
            else:
                pos = _find_gt(html, lt + 2)
                yield Token("comment", lt, pos)
        else:
            pos = lt + 1  # a "<" that opens nothing is text


# The start tags the "in head" insertion mode keeps in the head; any other start
# tag implies </head>. <noscript> and <template> are passed through, as the
# project's parser keeps their content under <head> too.
_HEAD_CONTENT = frozenset({
    "html", "head", "base", "basefont", "bgsound", "link", "meta", "title", "noscript",
    "noframes", "style", "script", "template",
})
_HEAD_ENDING_END_TAGS = frozenset({"head", "body", "html", "br"})


def _first_content(html: str, start: int, stop: int) -> int | None:
    """The first offset in ``html[start:stop]`` (character data) that is not head
    whitespace, or None. A character reference to whitespace counts as whitespace."""
    if start >= stop or not html[start:stop].strip(_WS):
        return None
    at = start
    while at < stop:
        run = _WS_RUN.match(html, at, stop)
        at = run.end() if run is not None else at
        if at >= stop:
            return None
        if html[at] != "&":
            return at
        ref = _CHARREF.match(html, at, stop)
        if ref is None or htmllib.unescape(ref.group(0)).strip(_WS):
            return at
        at = ref.end()
    return None


@dataclass(frozen=True, slots=True)
class HeadScan:
    """The head of a document, as far as a parser keeps it.

    ``tokens`` are the non-text tokens before ``end``; every gap between them is
    whitespace. ``closer`` is what ended the head (``</head>``, a start tag that
    belongs in the body, stray text) or None when the input ran out first.
    ``declared`` records that a ``<head>`` start tag opened the head, and
    ``article`` the offset of the first ``<article>`` start tag after the head
    (looked for only when the head is declared).
    """

    tokens: tuple[Token, ...]
    end: int
    closer: Token | None
    declared: bool
    article: int | None

    @property
    def editable(self) -> bool:
        """A head an editor may splice: opened by a ``<head>`` tag, closed by a real
        token, and followed by an ``<article>``.

        An implied head is refused because the project's parser (libxml2) builds a
        different tree once an edit creates or empties one: a meta inserted into a
        head-less file can pull the article into the head and change its text. And
        without an article the content hash reads the whole input, head included,
        so no head edit could leave it unchanged."""
        return self.article is not None


def scan_head(html: str) -> HeadScan:
    """Tokenize ``html`` up to the end of its head, by the "in head" rules: the
    head ends at ``</head>`` (or ``</body>``, ``</html>``, ``</br>``), at the first
    start tag that is not head content, or at the first character of text that is
    not whitespace. Comments, doctypes and other end tags stay inside it."""
    tokens: list[Token] = []
    declared, before_head = False, True
    pos = 1 if html.startswith("\ufeff") else 0  # a byte-order mark is not text
    stream = iter_tokens(html, pos)
    end, closer, after = len(html), None, None
    for token in stream:
        kind, start, _, name, _ = token
        if start > pos + 1 or (start > pos and html[pos] not in _WS):
            stray = _first_content(html, pos, start)
            if stray is not None:
                end, closer, after = stray, Token("text", stray, start), token
                break
        if (kind == "start" and name not in _HEAD_CONTENT) or (
            kind == "end" and name in _HEAD_ENDING_END_TAGS
        ):
            end, closer, after = start, token, token
            break
        if before_head and kind == "start" and name != "html":
            # Only a <head> that opens the head counts; any other start tag has
            # already implied the head, and a later <head> is ignored.
            declared, before_head = name == "head", False
        tokens.append(token)
        pos = token.end
    else:
        stray = _first_content(html, pos, len(html))
        if stray is not None:
            end, closer = stray, Token("text", stray, len(html))
    article = None
    if closer is not None and declared:
        for token in chain(() if after is None else (after,), stream):
            if token.kind == "start" and token.name == "article":
                article = token.start
                break
    return HeadScan(tuple(tokens), end, closer, declared, article)


__all__ = ["HeadScan", "Token", "TokenKind", "attribute_value", "iter_tokens", "scan_head"]
