"""Parse a memory file into a ``MemoryDoc``, or refuse it with every violation.

What is refused and what is dropped is the interesting part. A malformed
*optional* scalar whose reader owns a default (confidence, importance, reprieves,
needs-revision, content-hash) is dropped with a warning and left to ``doctor``:
``memhtml-confidence="high"`` means the file stated no confidence. A blank value
is malformed rather than zero, so a blank confidence never indexes as 0.00. The
datetime and task metas are refused instead (constraint 4): an instant has no
default, and a task without a status has no place in its own lifecycle.
"""

from __future__ import annotations

import math
import re
from typing import cast

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.record import CitationValue, FacetValue, Link
from memhtml.contracts.vocabulary import EdgeRel, MemoryStatus, MemoryType, TaskStatus
from memhtml.format.constraints import (
    CheckedDocument,
    CheckResult,
    check_located,
    rel_of,
)
from memhtml.format.document import ArticleExtractions, MemoryDoc, MemoryMetas
from memhtml.format.hash import canonical_text, collapse_ascii_whitespace, digest, is_content_hash
from memhtml.format.limits import shown
from memhtml.format.markup import write_children
from memhtml.format.reading import read_document
from memhtml.format.tree import HtmlElement, find_first, tag_of, text_content

_ASCII_WS = " \t\n\r\f"
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""ASCII decimal notation only: Python's ``float`` would also take ``1_000``, ``inf``
and full-width digits, none of which a file should mean as a number."""
_INTEGER = re.compile(r"0*([0-9]{1,18})")
"""A count, read with bounded length: at most 18 significant digits, which is every
value a signed 64-bit column holds. Python's ``int`` refuses strings of more than
4,300 digits with an exception, so a longer run of digits must never reach it."""


_EXTRACTED = ("time", "dl", "cite", "q", "dfn", "summary", "aside", "figcaption", "code", "abbr")
"""The article elements ``_extract_article`` reads something from."""


def _squash(text: str) -> str:
    """Collapse ASCII whitespace runs to one space and trim; U+00A0 is kept."""
    return collapse_ascii_whitespace(text).strip(" ")


def _text(el: HtmlElement) -> str:
    return _squash(canonical_text(el))


def check_memory(html: str) -> CheckResult:
    """The structured violations and warnings of a file. Total: never raises.

    Every violation is listed, in constraint order, not just the first:

    >>> from memhtml.format import NewMemoryInput, check_memory, render_template
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z"))
    >>> check_memory(html).ok
    True
    >>> broken = (html.replace("<mark>", "").replace("</mark>", "")
    ...           .replace("</article>", "<script>alert(1)</script></article>")
    ...           .replace('content="procedural"', 'content="recipe"'))
    >>> result = check_memory(broken)
    >>> result.ok
    False
    >>> for violation in result.violations:
    ...     print(violation)
    claim: the article has no <mark>; mark the claim exactly once
    forbidden element: <script> (a memory is data; data does not execute)
    metadata: memhtml-type "recipe" is not one of the ten memory types
    """
    reading = read_document(html)
    if reading.root is None:
        return CheckResult(reading.violations, ())
    return check_located(reading.root, reading).result


def _extract_article(article: HtmlElement, canon: str, gist_text: str | None
                     ) -> ArticleExtractions:
    """``gist_text`` is the first ``<mark>``'s text as the claim check computed it."""
    gist = gist_text.strip(_ASCII_WS) if gist_text is not None else ""
    event_at: str | None = None
    facets: list[FacetValue] = []
    citations: list[CitationValue] = []
    terms: list[str] = []
    summaries: list[str] = []
    asides: list[str] = []
    captions: list[str] = []
    langs: list[str] = []
    abbreviations: list[str] = []
    # Only these tags carry an extraction; naming them lets lxml skip every other
    # element in C, in the same document order.
    for el in article.iter(*_EXTRACTED):
        tag = el.tag
        if tag == "time":
            if event_at is None and el.get("datetime") is not None:
                event_at = (el.get("datetime") or "").strip(_ASCII_WS)
        elif tag == "dl":
            facets.extend(_facets_of(el))
        elif tag == "cite":
            citations.append(CitationValue(_text(el)))
        elif tag == "q":
            cite = el.get("cite")
            citations.append(CitationValue(_text(el), cite.strip(_ASCII_WS) if cite else None))
        elif tag == "dfn":
            terms.append(_text(el))
        elif tag == "summary":
            summaries.append(_text(el))
        elif tag == "aside":
            asides.append(_text(el))
        elif tag == "figcaption":
            captions.append(_text(el))
        elif tag == "code":
            lang = el.get("data-lang")
            if lang and lang.strip(_ASCII_WS):
                langs.append(lang.strip(_ASCII_WS).lower())
        elif tag == "abbr":
            title = el.get("title")
            if title and title.strip(_ASCII_WS):
                abbreviations.append(_squash(title))
    return ArticleExtractions(
        html=write_children(article).strip(_ASCII_WS),
        gist=gist,
        body_text=_squash(canon),
        event_at=event_at,
        facets=tuple(facets),
        citations=tuple(citations),
        defined_terms=tuple(terms),
        summary_texts=tuple(summaries),
        aside_texts=tuple(asides),
        captions=tuple(captions),
        code_langs=tuple(langs),
        abbreviations=tuple(abbreviations),
    )


def _facets_of(dl: HtmlElement) -> list[FacetValue]:
    """Each group of ``<dt>`` names paired with every ``<dd>`` that follows the group,
    in document order: ``<dt>a<dt>b<dd>x`` states ``a=x`` and ``b=x``.

    One facet name carries meaning beyond search: ``day`` (``DAY_FACET``) on an
    ``episodic`` memory marks it a dated episode, the record of one day, which the
    sleep run's compress summarizes instead of absorbing (``head.is_dated_episode``)."""
    out: list[FacetValue] = []
    names: list[str] = []
    after_value = False
    for child in dl:
        tag = tag_of(child)
        if tag == "dt":
            if after_value:
                names, after_value = [], False
            names.append(_text(child))
        elif tag == "dd":
            after_value = True
            value, number = _text(child), _numeric_value(child)
            out.extend(FacetValue(name, value, number) for name in names)
    return out


def _numeric_value(dd: HtmlElement) -> float | None:
    data = find_first(dd, "data")
    if data is None:
        return None
    raw = (data.get("value") or "").strip(_ASCII_WS)
    if _NUMBER.fullmatch(raw) is None:
        return None
    number = float(raw)
    return number if math.isfinite(number) else None


def _integer(raw: str) -> int | None:
    """A non-negative decimal integer of at most 18 significant digits, or None."""
    match = _INTEGER.fullmatch(raw)
    return int(match.group(1)) if match is not None else None


def _optional_scalars(
    values: dict[str, list[str]], warnings: list[str]
) -> tuple[float | None, int | None, int | None, bool | None, str | None]:
    def first(name: str) -> str | None:
        found = values.get(name)
        return found[0] if found else None

    def dropped(name: str, raw: str, why: str) -> None:
        warnings.append(f"metadata: {name} \"{shown(raw)}\" dropped ({why}); the default "
                        "applies")

    confidence: float | None = None
    raw = first("memhtml-confidence")
    if raw is not None:
        number = float(raw) if _NUMBER.fullmatch(raw) else math.nan
        if math.isfinite(number) and 0.0 <= number <= 1.0:
            confidence = round(number, 2)
        else:
            dropped("memhtml-confidence", raw, "not a number in [0, 1]")
    importance: int | None = None
    raw = first("memhtml-importance")
    if raw is not None:
        integer = _integer(raw)
        if integer is not None and 1 <= integer <= 10:
            importance = integer
        else:
            dropped("memhtml-importance", raw, "not an integer from 1 to 10")
    reprieves: int | None = None
    raw = first("memhtml-reprieves")
    if raw is not None:
        reprieves = _integer(raw)
        if reprieves is None:
            dropped("memhtml-reprieves", raw, "not a non-negative integer")
    needs_revision: bool | None = None
    raw = first("memhtml-needs-revision")
    if raw is not None:
        if raw in ("true", "false"):
            needs_revision = raw == "true"
        else:
            dropped("memhtml-needs-revision", raw, "not true or false")
    content_hash: str | None = None
    raw = first("memhtml-content-hash")
    if raw is not None:
        if is_content_hash(raw):
            content_hash = raw
        else:
            dropped("memhtml-content-hash", raw, "not sha256:<64 hex>")
    return confidence, importance, reprieves, needs_revision, content_hash


def metas_of(values: dict[str, list[str]], warnings: list[str]) -> MemoryMetas:
    """The typed metas of a file from its ``memhtml-*`` values by name, in document
    order; a malformed optional scalar is dropped with a warning added to
    ``warnings``. Shared by the full parse and ``canonical.read_canonical``, so both
    read a meta the same way."""
    first = {name: found[0] for name, found in values.items()}.get
    confidence, importance, reprieves, needs_revision, stated_hash = _optional_scalars(
        values, warnings
    )
    return MemoryMetas(
        memory_type=cast(MemoryType, first("memhtml-type")),
        status=cast(MemoryStatus, first("memhtml-status")),
        created_at=first("memhtml-created") or "",
        updated_at=first("memhtml-updated") or "",
        confidence=confidence,
        importance=importance,
        content_hash=stated_hash,
        author=first("memhtml-author") or None,
        session_id=first("memhtml-session") or None,
        prompt_id=first("memhtml-prompt") or None,
        turn_uuid=first("memhtml-turn") or None,
        valid_from=first("memhtml-valid-from"),
        valid_until=first("memhtml-valid-until"),
        reprieves=reprieves,
        archived_at=first("memhtml-archived"),
        superseded_by=first("memhtml-superseded-by"),
        needs_revision=needs_revision,
        task_status=cast("TaskStatus | None", first("memhtml-task-status")),
        due_at=first("memhtml-due"),
        source=first("memhtml-source") or None,
        source_sha256=first("memhtml-source-sha256") or None,
        source_links=first("memhtml-source-links") or None,
        source_shape=first("memhtml-source-shape") or None,
    )


def _build(root: HtmlElement, checked: CheckedDocument) -> tuple[MemoryDoc, str]:
    head, article = checked.head, checked.article
    assert article is not None  # constraint 2 guarantees it on a passing check
    canon = canonical_text(article)
    values: dict[str, list[str]] = {}
    for name, value in checked.metas:
        values.setdefault(name, []).append(value)
    warnings = list(checked.result.warnings)
    metas = metas_of(values, warnings)
    links: list[Link] = []
    if head is not None:
        for link in head.iter("link"):
            rel = rel_of(link.get("rel") or "")
            if rel is not None:
                links.append(Link(cast(EdgeRel, rel), (link.get("href") or "").strip(_ASCII_WS)))
    title = find_first(root, "title")
    doc = MemoryDoc(
        title=_squash(text_content(title)) if title is not None else "",
        metas=metas,
        article=_extract_article(article, canon, checked.gist),
        entities=tuple(v for v in values.get("memhtml-entity", []) if v),
        tags=tuple(v for v in values.get("memhtml-tag", []) if v),
        aliases=tuple(v for v in values.get("memhtml-alias", []) if v),
        links=tuple(links),
        warnings=tuple(warnings),
    )
    return doc, digest(canon)


def _parse(html: str, path: str) -> Result[tuple[MemoryDoc, str], InvalidMemory]:
    reading = read_document(html)
    if reading.root is None:
        return Failure(InvalidMemory.of(path, reading.violations))
    checked = check_located(reading.root, reading)
    if checked.result.violations:
        return Failure(InvalidMemory.of(path, checked.result.violations))
    return Success(_build(reading.root, checked))


def parse_memory(html: str, path: str = "") -> Result[MemoryDoc, InvalidMemory]:
    """Parse a memory file, or fail with ``InvalidMemory`` listing every violation.

    No partial doc is ever returned. ``path`` only labels the error.

    >>> from memhtml.format import NewMemoryInput, parse_memory, render_template
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="procedural", at="2026-01-06T09:00:00Z",
    ...     body=("Never on a Friday.",), entities=("service:checkout-api",)))
    >>> doc = parse_memory(html).unwrap()
    >>> doc.title, doc.metas.memory_type, doc.entities
    ('Deploy window', 'procedural', ('service:checkout-api',))
    >>> doc.article.gist
    'Deploys happen on Tuesdays.'
    >>> doc.article.body_text
    'Deploys happen on Tuesdays. Never on a Friday.'

    A file that is not a memory fails with every violation:

    >>> refused = parse_memory("<p>Deploys happen on Tuesdays.</p>", "notes.html").failure()
    >>> refused.path
    'notes.html'
    >>> for violation in refused.violations:
    ...     print(violation)
    charset: no <meta charset="utf-8">; a memory file declares UTF-8, and only UTF-8
    skeleton: no <title> in the <head>; the title names the memory
    skeleton: no <article>; the memory's content lives in one <article>
    metadata: missing memhtml-type
    metadata: missing memhtml-status
    metadata: missing memhtml-created
    metadata: missing memhtml-updated
    """
    return _parse(html, path).map(lambda pair: pair[0])


def parse_memory_hashed(html: str, path: str = "") -> Result[tuple[MemoryDoc, str], InvalidMemory]:
    """``parse_memory`` plus the article's content hash, from the same tree.

    The indexer needs both for every file; hashing here reuses the canonical text
    the extraction already computed instead of parsing the article a second time.
    """
    return _parse(html, path)
