"""The six format constraints, as pure checks over a parsed document.

0. Reading (``reading``): the file is within the bounds every parser reads whole,
   UTF-8 is its only encoding, and libxml2's tree is the tree a browser builds.
1. The claim: exactly one non-empty ``<mark>``, leading the article's first ``<p>``
   or ``<li>``, never inside an ``<aside>`` or ``<details>``.
2. The skeleton: an ``<html>`` with a ``<head>`` holding one non-empty ``<title>``,
   exactly one ``<article>`` in the ``<body>``, metadata only in the head.
3. Safety: no forbidden element, no forbidden or event-handler attribute, no URL
   with a scheme outside http, https and mailto, judged on the browser's tree.
4. Metadata: the required metas present once each, scalars at most once, the
   closed vocabularies respected, datetimes in the sortable forms, a task status on
   a task and only on a task, an archived stamp exactly when archived.
5. References: every ``<link>`` a memory edge with a root-relative href, every
   ``<time datetime>`` valid, ``<a href>`` and ``<q cite>`` in a safe form.
6. Vocabulary (warnings only): elements outside the closed vocabulary, and
   ``<div>``/``<span>`` outside a ``<figure>``.

One to five are violations: the file is not a memory. Six is a warning, because a
hand-written file with a stray element still indexes and should degrade gracefully.
Nothing here raises or repairs: a checker that fixed things silently would let
``doctor`` report a clean corpus that the next hand edit breaks again. Every
violation is collected, so one run tells an author everything that is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from lxml import etree

from memhtml.contracts.vocabulary import is_edge_rel, is_memory_status, is_memory_type
from memhtml.contracts.vocabulary import is_task_status as _is_task_status
from memhtml.format.browser import BrowserElement
from memhtml.format.datetimes import is_root_relative_href, is_utc_instant, is_valid_datetime
from memhtml.format.hash import canonical_text
from memhtml.format.limits import shown
from memhtml.format.reading import Reading
from memhtml.format.tree import HtmlElement, has_ancestor, tag_of, text_content
from memhtml.format.vocabulary import (
    DATETIME_META,
    FIGURE_SCOPED_ELEMENTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_ELEMENTS,
    INSTANT_META,
    KNOWN_ELEMENTS,
    LINK_REL_PREFIX,
    META_PREFIX,
    REPEATABLE_META,
    REQUIRED_META,
    SAFE_LINK_SCHEMES,
    URL_ATTRIBUTES,
    is_memory_meta_name,
)

_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_URL_NOISE = re.compile(r"[\x00-\x20\x7f]")
_ASCII_WS = " \t\n\r\f"
_UNREMARKABLE = KNOWN_ELEMENTS - FORBIDDEN_ELEMENTS - frozenset(FIGURE_SCOPED_ELEMENTS)
"""Tags ``_check_element`` says nothing about when they carry no attributes: known,
allowed anywhere. Most elements of a file are these, so the loop skips the call."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Violations and warnings, each in constraint order, then document order."""

    violations: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.violations


def url_scheme(value: str) -> str | None:
    """The scheme a browser would read from a URL attribute, lowercased, or None.

    Browsers drop ASCII whitespace and control characters inside a URL before
    reading its scheme, so ``java\\tscript:`` is ``javascript:``; entity
    references were already decoded by the parser.
    """
    cleaned = _URL_NOISE.sub("", value).lower()
    match = _SCHEME.match(cleaned)
    return match.group(1) if match else None


def rel_of(token: str) -> str | None:
    """The unprefixed edge rel a ``rel`` attribute spells, in any spelling the reader
    accepts (``memhtml-about-person`` or ``memhtml-about_person``), or None."""
    lowered = token.strip(_ASCII_WS).lower()
    if not lowered.startswith(LINK_REL_PREFIX):
        return None
    rel = lowered[len(LINK_REL_PREFIX):].replace("-", "_")
    return rel if is_edge_rel(rel) else None


def _is_safe_reference(value: str) -> bool:
    """An ``<a href>`` or ``<q cite>``: root-relative, a fragment, or http(s)/mailto."""
    if value.startswith("#"):
        return True
    scheme = url_scheme(value)
    if scheme is not None:
        return scheme in SAFE_LINK_SCHEMES and not value.startswith("/")
    return is_root_relative_href(value)


def collect_head_metas(head: HtmlElement | None) -> list[tuple[str, str]]:
    """The ``memhtml-*`` metas of a head, as ``(name, content)`` in document order."""
    if head is None:
        return []
    out: list[tuple[str, str]] = []
    for meta in head.iter("meta"):
        name = (meta.get("name") or "").strip(_ASCII_WS).lower()
        if name.startswith(META_PREFIX):
            out.append((name, (meta.get("content") or "").strip(_ASCII_WS)))
    return out


class _Checker:
    def __init__(self) -> None:
        self.c0: list[str] = []
        self.c1: list[str] = []
        self.c2: list[str] = []
        self.c3: list[str] = []
        self.c4: list[str] = []
        self.c5: list[str] = []
        self.c6: list[str] = []
        self._warned: set[str] = set()

    def warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.c6.append(message)

    def result(self) -> CheckResult:
        return CheckResult(
            tuple(self.c0 + self.c1 + self.c2 + self.c3 + self.c4 + self.c5), tuple(self.c6)
        )


def _check_claim(ck: _Checker, article: HtmlElement) -> str | None:
    """Judge the claim; return the first ``<mark>``'s gist text (``canonical_text``
    with code left out, untrimmed), or None when the article has no ``<mark>``."""
    marks = list(article.iter("mark"))
    if not marks:
        ck.c1.append("claim: the article has no <mark>; mark the claim exactly once")
        return None
    if len(marks) > 1:
        ck.c1.append(f"claim: the article has {len(marks)} <mark> elements; exactly one is allowed")
    mark = marks[0]
    gist = canonical_text(mark, exclude_code=True)
    # Any Unicode space counts as empty: a claim of no-break spaces shows as nothing.
    if not gist.strip():
        ck.c1.append("claim: the <mark> is empty (code inside it does not count as a claim)")
    if has_ancestor(mark, ("aside", "details"), article):
        ck.c1.append("claim: the <mark> sits inside an <aside> or <details>, which only qualify it")
    leader = next(article.iter("p", "li"), None)
    parent = mark.getparent()
    leads = (
        leader is not None
        and parent is leader
        and not (leader.text or "").strip(_ASCII_WS)
        and leader.index(mark) == 0
    )
    if not leads:
        ck.c1.append(
            "claim: the <mark> must open the article's first <p> or <li>, before any other text"
        )
    return gist


def _check_skeleton(
    ck: _Checker, root: HtmlElement, outside: list[HtmlElement]
) -> tuple[HtmlElement | None, HtmlElement | None]:
    if tag_of(root) != "html":
        ck.c2.append(f"skeleton: the document element is <{tag_of(root)}>, not <html>")
    # One walk finds all four, each in document order: the first <head> and <body>,
    # every <title> and <article>.
    head: HtmlElement | None = None
    body: HtmlElement | None = None
    titles: list[HtmlElement] = []
    articles: list[HtmlElement] = []
    for el in root.iter("head", "body", "title", "article"):
        tag = el.tag
        if tag == "title":
            titles.append(el)
        elif tag == "article":
            articles.append(el)
        elif tag == "head":
            if head is None:
                head = el
        elif body is None:
            body = el
    if head is None or not titles:
        ck.c2.append("skeleton: no <title> in the <head>; the title names the memory")
    else:
        if len(titles) > 1:
            ck.c2.append(f"skeleton: {len(titles)} <title> elements; exactly one is allowed")
        if not (text_content(titles[0]) or "").strip(_ASCII_WS):
            ck.c2.append("skeleton: the <title> is empty")
    articles += [a for top in outside for a in top.iter("article")]
    if not articles:
        ck.c2.append("skeleton: no <article>; the memory's content lives in one <article>")
    elif len(articles) > 1:
        ck.c2.append(f"skeleton: {len(articles)} <article> elements; exactly one is allowed")
    if body is not None:
        for el in body.iter("meta", "link", "title"):
            ck.c2.append(
                f"skeleton: <{tag_of(el)}> outside the <head>; metadata belongs in the head"
            )
    return head, (articles[0] if articles else None)


def _check_element(
    ck: _Checker, tag: str, attributes: Iterable[tuple[str, str]], in_figure: bool
) -> None:
    if tag in FORBIDDEN_ELEMENTS:
        ck.c3.append(f"forbidden element: <{tag}> (a memory is data; data does not execute)")
    elif tag not in KNOWN_ELEMENTS:
        ck.warn(tag, f"vocabulary: <{shown(tag)}> is not in the memory vocabulary")
    elif tag in FIGURE_SCOPED_ELEMENTS and not in_figure:
        ck.warn(tag, f"vocabulary: <{tag}> outside a <figure>")
    for raw_name, value in attributes:
        name = raw_name.lower()
        if name.startswith("on"):
            ck.c3.append(f"event handler: {shown(name)} on <{shown(tag)}>")
        elif name in FORBIDDEN_ATTRIBUTES:
            ck.c3.append(f"forbidden attribute: {name} on <{shown(tag)}>")
        elif name in URL_ATTRIBUTES:
            scheme = url_scheme(value)
            if scheme is not None and scheme not in SAFE_LINK_SCHEMES:
                ck.c3.append(f"unsafe URL: {shown(scheme)}: in {name} of <{shown(tag)}>")
            elif tag == "link" and name == "href":
                pass  # the link rules below own this
            elif tag in ("a", "q") and not _is_safe_reference(value.strip(_ASCII_WS)):
                ck.c5.append(
                    f"reference: {name}=\"{shown(value)}\" on <{tag}> must be root-relative "
                    "(/a/b.html), a #fragment, or an http(s)/mailto URL"
                )


def _lxml_elements(tops: Iterable[HtmlElement]
                   ) -> Iterable[tuple[str, list[tuple[str, str]], bool]]:
    for top in tops:
        for el in top.iter(etree.Element):
            attributes = [(str(k), str(v)) for k, v in el.attrib.items()]
            yield tag_of(el), attributes, has_ancestor(el, ("figure",), None)


def _browser_elements(elements: Iterable[BrowserElement]
                      ) -> Iterable[tuple[str, tuple[tuple[str, str], ...], bool]]:
    for el in elements:
        yield el.tag, el.attributes, el.in_figure


def _check_links(ck: _Checker, root: HtmlElement) -> None:
    for link in root.iter("link"):
        rel_attr = link.get("rel") or ""
        href = (link.get("href") or "").strip(_ASCII_WS)
        if rel_of(rel_attr) is None:
            ck.c5.append(f"reference: <link rel=\"{shown(rel_attr)}\"> is not a memory edge")
        if not is_root_relative_href(href):
            ck.c5.append(f"reference: link href \"{shown(href)}\" is not root-relative "
                         "(/a/b.html)")
    for time in root.iter("time"):
        value = time.get("datetime")
        if value is not None and not is_valid_datetime(value.strip(_ASCII_WS)):
            ck.c5.append(f"reference: <time datetime=\"{shown(value)}\"> is not YYYY-MM-DD "
                         "or YYYY-MM-DDTHH:MM:SSZ")


def _check_metas(ck: _Checker, metas: list[tuple[str, str]]) -> None:
    seen: dict[str, list[str]] = {}
    for name, value in metas:
        seen.setdefault(name, []).append(value)
        if not is_memory_meta_name(name):
            ck.warn(f"meta:{name}", f"vocabulary: unknown metadata name {name}")
    for name in REQUIRED_META:
        if name not in seen:
            ck.c4.append(f"metadata: missing {name}")
    for name, values in seen.items():
        if is_memory_meta_name(name) and name not in REPEATABLE_META and len(values) > 1:
            ck.c4.append(f"metadata: {name} appears {len(values)} times; it is single-valued")
    mtype = seen.get("memhtml-type", [None])[0]
    if mtype is not None and not is_memory_type(mtype):
        ck.c4.append(f"metadata: memhtml-type \"{shown(mtype)}\" is not one of the ten memory "
                     "types")
    status = seen.get("memhtml-status", [None])[0]
    if status is not None and not is_memory_status(status):
        ck.c4.append(f"metadata: memhtml-status \"{shown(status)}\" is not active or archived")
    for name in DATETIME_META:
        for value in seen.get(name, []):
            if not is_valid_datetime(value):
                ck.c4.append(f"metadata: {name} \"{shown(value)}\" is not YYYY-MM-DD or "
                             "YYYY-MM-DDTHH:MM:SSZ")
            elif name in INSTANT_META and not is_utc_instant(value):
                ck.c4.append(f"metadata: {name} \"{shown(value)}\" is a date; a write stamp is "
                             "a UTC instant, YYYY-MM-DDTHH:MM:SSZ")
    task_status = seen.get("memhtml-task-status", [None])[0]
    if task_status is not None and not _is_task_status(task_status):
        ck.c4.append(f"metadata: memhtml-task-status \"{shown(task_status)}\" is not todo, "
                     "doing, blocked or done")
    if mtype == "task" and task_status is None:
        ck.c4.append("metadata: a task needs memhtml-task-status")
    if mtype is not None and mtype != "task" and task_status is not None:
        ck.c4.append(f"metadata: memhtml-task-status on a {mtype} memory; only a task has one")
    archived_at = "memhtml-archived" in seen
    if status == "archived" and not archived_at:
        ck.c4.append("metadata: an archived memory needs memhtml-archived")
    if status == "active" and archived_at:
        ck.c4.append("metadata: memhtml-archived on an active memory")
    for value in seen.get("memhtml-superseded-by", []):
        if not is_root_relative_href(value):
            ck.c5.append(f"reference: memhtml-superseded-by \"{shown(value)}\" is not "
                         "root-relative")


def check_metas(metas: list[tuple[str, str]]) -> CheckResult:
    """Constraint 4 (and the unknown-name warnings of 6) over a head's ``memhtml-*``
    metas alone, as ``collect_head_metas`` gives them: what ``check_located`` says
    of them, for a reader that found the metas without building a tree."""
    ck = _Checker()
    _check_metas(ck, metas)
    return ck.result()


@dataclass(frozen=True, slots=True)
class CheckedDocument:
    """A check's result with the parts it located, so a parser can reuse them."""

    result: CheckResult
    head: HtmlElement | None
    article: HtmlElement | None
    metas: list[tuple[str, str]]
    gist: str | None = None
    """The article's first ``<mark>`` as ``canonical_text(mark, exclude_code=True)``,
    untrimmed; None without an article or a mark. The claim check needs it, and the
    extraction's claim is the same text, so it is computed once."""


def check_located(root: HtmlElement, reading: Reading | None = None) -> CheckedDocument:
    """``check_document``, also returning the head, the article and the head metas.

    Given the ``reading`` of the file's source, its violations come first and the
    safety rules are judged on the browser's tree; without one (a tree handed in
    with no source) they are judged on libxml2's.
    """
    ck = _Checker()
    # lxml parks anything after </html> in a second top-level element; a browser
    # moves it into the body and runs it, so every top-level tree is checked.
    outside = [*root.itersiblings(preceding=True), *root.itersiblings()]
    if reading is not None:
        ck.c0.extend(reading.violations)
    head, article = _check_skeleton(ck, root, outside)
    gist = _check_claim(ck, article) if article is not None else None
    if any(len(el) or (el.text or "").strip(_ASCII_WS) for el in outside):
        ck.c2.append("skeleton: content outside <html>; a browser would show and run it")
    browser = reading.browser if reading is not None else None
    elements = (_browser_elements(browser.elements) if browser is not None
                else _lxml_elements((root, *outside)))
    for tag, attributes, in_figure in elements:
        if attributes or tag not in _UNREMARKABLE:
            _check_element(ck, tag, attributes, in_figure)
    metas = collect_head_metas(head)
    _check_metas(ck, metas)
    _check_links(ck, root)
    return CheckedDocument(ck.result(), head, article, metas, gist)


def check_document(root: HtmlElement) -> CheckResult:
    """Check a parsed document against all six constraints, collecting everything."""
    return check_located(root).result
