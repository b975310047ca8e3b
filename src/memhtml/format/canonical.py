"""A file exactly as the serializer writes it, read without building a tree.

The first command in a fresh clone parses every memory of the tip, and the full
parse (both parsers, the parity between their trees, every constraint, the
extraction) costs a few hundred microseconds a file: about a minute at 100,000. Most
files of a store were written by ``serialize_memory`` and never edited by hand: the
fixed head layout, one line a ``<meta>`` or ``<link>``, and an article of plain
paragraphs, the first opening with the claim's ``<mark>``. ``read_canonical``
recognizes exactly that shape and reads the same ``MemoryDoc`` and content hash the
full parse gives, from the text itself.

The shape is narrow on purpose, so that the answer cannot differ from the full
parse: every element is one the serializer writes, with the attributes it writes;
text runs hold no markup, no character reference other than ``&amp;``, ``&lt;``,
``&gt;`` (``&amp;`` and ``&quot;`` in an attribute), and no character
``str.isprintable`` refuses: controls, C1, every space but the plain one (the
no-break space among them), format characters (the byte-order mark), surrogates,
unassigned and noncharacter code points. Those are where a parser's reading could
turn on more than the text; both parsers keep every other character of a text run as
it is written. The metas go through the same constraint checks and the same
typed reading as a parsed head (``check_metas``, ``metas_of``). Anything else, and
any file that would fail a check or carry a warning, is None: the caller parses it in
full, which gives the error or the warning with its own words. A hypothesis law holds
the two readers equal on every file both accept (``tests/property``).
"""

from __future__ import annotations

import re
from typing import cast

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format.constraints import check_metas, rel_of, url_scheme
from memhtml.format.datetimes import is_root_relative_href
from memhtml.format.document import ArticleExtractions, MemoryDoc
from memhtml.format.hash import collapse_ascii_whitespace, digest, flow_text
from memhtml.format.limits import MAX_MEMORY_BYTES, MAX_START_TAGS
from memhtml.format.parse import metas_of
from memhtml.format.vocabulary import SAFE_LINK_SCHEMES, is_memory_meta_name

_ASCII_WS = " \t\n\r\f"
# Possessive throughout: a run is read once, never backtracked into.
_TEXT = r"[^<>&\n]*+(?:&(?:amp|lt|gt);[^<>&\n]*+)*+"
_VALUE = r'[^<>&"\n]*+(?:&(?:amp|quot);[^<>&"\n]*+)*+'
_PREFIX = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
_BODY = "</head>\n<body>\n<article>\n<p><mark>"
_SUFFIX = "</p>\n</article>\n</body>\n</html>\n"
_HEAD = re.compile(
    f"<title>({_TEXT})</title>\n"
    f'((?:<meta name="memhtml-[a-z0-9-]+" content="{_VALUE}">\n)*+)'
    f'((?:<link rel="memhtml-[a-z_-]+" href="{_VALUE}">\n)*+)'
)
_META = re.compile(f'<meta name="(memhtml-[a-z0-9-]+)" content="({_VALUE})">\n')
_LINK = re.compile(f'<link rel="(memhtml-[a-z_-]+)" href="({_VALUE})">\n')
_REFERENCE = re.compile(r"&(?!amp;|lt;|gt;)")
"""An ``&`` that does not start one of the three references a text run may hold."""


def _plain(run: str) -> bool:
    """A text run of an article: no markup, no line break, no reference but the three.
    Tested with ``in`` first, which runs in C at memory speed; a run that holds an
    ``&`` is looked at again by a pattern."""
    return ("<" not in run and ">" not in run and "\n" not in run
            and ("&" not in run or _REFERENCE.search(run) is None))


def _text(raw: str) -> str:
    return raw.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _value(raw: str) -> str:
    return raw.replace("&quot;", '"').replace("&amp;", "&")


def _squash(text: str) -> str:
    return collapse_ascii_whitespace(text).strip(" ")


def read_canonical(html: str) -> tuple[MemoryDoc, str] | None:
    """``parse_memory_hashed(html)``'s doc and content hash when ``html`` is a file in
    the serializer's plain shape that passes every check with no warning; None for
    any other file (parse it in full).

    >>> from memhtml.format import NewMemoryInput, parse_memory_hashed, render_template
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z", body=("Never on a Friday.",)))
    >>> read_canonical(html) == parse_memory_hashed(html).unwrap()
    True
    >>> read_canonical(html.replace("<p>", "<p><b>x</b>")) is None
    True
    """
    if ((len(html) * 4 > MAX_MEMORY_BYTES and len(html.encode("utf-8")) > MAX_MEMORY_BYTES)
            or html.count("<") > MAX_START_TAGS):
        return None
    if not html.startswith(_PREFIX) or not html.endswith(_SUFFIX):
        return None
    # Every character a reader could take for more than text (controls, C1, the
    # no-break space, format characters, surrogates, noncharacters) is unprintable;
    # the line breaks are the shape's own.
    if not html.replace("\n", "").isprintable():
        return None
    body = html.find(_BODY)
    if body < 0:
        return None
    head = _HEAD.fullmatch(html, len(_PREFIX), body)
    if head is None:
        return None
    raw_title, meta_lines, link_lines = head.groups()
    article_html = html[body + len(_BODY) - len("<p><mark>"):len(html) - len(_SUFFIX) + 4]
    claim, marked, rest = html[body + len(_BODY):len(html) - len(_SUFFIX)].partition("</mark>")
    if not marked:
        return None
    tail, *more = rest.split("</p>\n<p>")
    if not all(map(_plain, (claim, tail, *more))):
        return None
    title = _squash(_text(raw_title))
    if not title.strip(_ASCII_WS):
        return None
    metas = [(name, _value(value).strip(_ASCII_WS)) for name, value in _META.findall(meta_lines)]
    if any(not is_memory_meta_name(name) for name, _ in metas):
        return None
    checked = check_metas(metas)
    if checked.violations or checked.warnings:
        return None
    links: list[Link] = []
    for token, raw_href in _LINK.findall(link_lines):
        href = _value(raw_href)
        rel = rel_of(token)
        scheme = url_scheme(href)
        if (rel is None or not is_root_relative_href(href.strip(_ASCII_WS))
                or (scheme is not None and scheme not in SAFE_LINK_SCHEMES)):
            return None
        links.append(Link(cast(EdgeRel, rel), href.strip(_ASCII_WS)))
    gist = flow_text([_text(claim)])
    if not gist.strip():
        return None
    runs: list[str | None] = [None, None, _text(claim), _text(tail), None]
    for paragraph in more:
        runs += [None, _text(paragraph), None]
    runs.append(None)
    canon = flow_text(runs)
    values: dict[str, list[str]] = {}
    for name, value in metas:
        values.setdefault(name, []).append(value)
    warnings: list[str] = []
    typed = metas_of(values, warnings)
    if warnings:
        return None
    doc = MemoryDoc(
        title=title,
        metas=typed,
        article=ArticleExtractions(html=article_html, gist=gist.strip(_ASCII_WS),
                                   body_text=_squash(canon)),
        entities=tuple(v for v in values.get("memhtml-entity", []) if v),
        tags=tuple(v for v in values.get("memhtml-tag", []) if v),
        aliases=tuple(v for v in values.get("memhtml-alias", []) if v),
        links=tuple(links),
    )
    return doc, digest(canon)


__all__ = ["read_canonical"]
