"""One markdown note as one memory file: converted, rendered, and read for links.

``convert_markdown`` reads a note (frontmatter by ``markdown_front`` and
``markdown_fields``, body by ``markdown_convert``) into a ``Converted`` value that
waits for its links' paths; ``render_file`` writes the whole memory file once they
are known, the note's provenance in its head metas. ``note_links`` is what
``md verify --wikilinks`` reads of a note, through the same conversion, so verify
and the import resolve alike. The folder-wide planning is ``markdown_import``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from returns.result import Failure, Result, Success

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import MemoryType
from memhtml.format import (
    NewMemoryInput,
    escape_text,
    new_memory_doc,
    parse_memory,
    serialize_memory,
)
from memhtml.mdindex.links import NoteLinks, derived_title
from memhtml.store.deps import Detector
from memhtml.store.errors import FrontmatterRefused
from memhtml.store.markdown_convert import Article, Target, convert_body, fill_anchors
from memhtml.store.markdown_decisions import NoteTarget, digest_of, targets_facet
from memhtml.store.markdown_fields import FacetField, Front, read_front
from memhtml.store.markdown_front import FrontFailure, ascii_collapsed, split_front
from memhtml.store.markdown_shape import Shape, encode_shape

__all__ = ["Converted", "NotConverted", "check_rendered", "convert_markdown", "not_converted",
           "note_links", "note_targets", "render_file", "written_targets"]


@dataclass(frozen=True, slots=True)
class Converted:
    """One file, converted but not yet placed: its links wait for every path."""

    source: str
    digest: str
    title: str
    claim: str
    memory_type: MemoryType
    front: Front
    article: Article
    tags: tuple[str, ...]
    shape: Shape


@dataclass(frozen=True, slots=True)
class NotConverted:
    """A file left out of the import, and why; ``error`` is the typed error when the
    reason has one (a frontmatter past a bound, a field named twice)."""

    source: str
    reason: str
    error: FrontmatterRefused | None = None


def not_converted(source: str, why: FrontFailure) -> NotConverted:
    """The file left out for ``why``, a typed error naming the file when it is one."""
    if isinstance(why, str):
        return NotConverted(source, why)
    named = replace(why, file=source)
    return NotConverted(source, named.reason, named)


def _text_of(raw: bytes) -> Result[str, FrontFailure]:
    if b"\x00" in raw:
        return Failure("binary (it holds NUL bytes), not markdown text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return Failure(f"not UTF-8 text (byte {error.start} cannot be decoded); "
                       "re-save it as UTF-8")
    return Success(text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff"))


def convert_markdown(source: str, raw: bytes, tags: Sequence[str] = (),
                     raw_html: bool = True, whole: bool = False,
                     detect: Detector | None = None, fallback_claim: str | None = None
                     ) -> Result[Converted, FrontFailure]:
    """One markdown file, converted, or why it cannot be a memory. ``tags`` are the
    import's own (``--tag``); ``raw_html`` False keeps raw HTML as text; ``whole``
    reads an index's links too (``convert_body``); ``detect`` guesses the language of a
    code block written without one (None: no guess). ``fallback_claim`` is the claim
    of a note with no prose to take one from (a heading alone, a block of XML): the
    memory tool's files are whatever a model writes, and refusing those would lose
    them; it leads the article as its own marked paragraph, which the export leaves
    out, so the text reads back as written."""
    text = _text_of(raw)
    if isinstance(text, Failure):
        return text
    split = split_front(text.unwrap())
    if isinstance(split, Failure):
        failure = split.failure()
        return Failure(failure if isinstance(failure, str) else replace(failure, file=source))
    fields, body = split.unwrap()
    front = read_front(fields)
    description = ascii_collapsed(front.description) if front.description else None
    article = convert_body(body, source, description, raw_html, whole, detect)
    title = front.title or article.title or derived_title(source) or "memory"
    claim = description or article.claim or (
        ascii_collapsed(fallback_claim) if fallback_claim else None)
    if article.is_index:
        claim = claim or title
    if not claim:
        return Failure("no prose to take a claim from (no frontmatter description and "
                       "no paragraph of text)")
    body_tags = tuple(t for t in article.tags if t not in front.tags)
    shape = Shape(front.keys, not article.claim_marked,
                  tuple(t for t in dict.fromkeys(tags)
                        if t not in front.tags and t not in body_tags),
                  body_tags, front.entities)
    all_tags = tuple(dict.fromkeys([*front.tags, *body_tags, *tags]))
    return Success(Converted(source, digest_of(raw), title, ascii_collapsed(claim),
                             front.memory_type, front, article, all_tags, shape))


def _facets_html(facets: Iterable[FacetField]) -> str:
    """The frontmatter's other fields as the article's last ``<dl>``: each key one
    ``<dt>``, each of its values one ``<dd>``, as written."""
    rows = "".join(f"<dt>{escape_text(f.key)}</dt>"
                   + "".join(f"<dd>{escape_text(v)}</dd>" for v in f.values)
                   for f in facets)
    return f"<dl>{rows}</dl>" if rows else ""


def note_targets(converted: Converted) -> list[Target]:
    """Every link target the note names: in its text, then in its ``edges`` field."""
    named = [Target(name, False, rel) for rel, name in converted.front.edges]
    return [*converted.article.targets, *named]


def written_targets(converted: Converted, resolved: Callable[[Target], str | None]
             ) -> tuple[tuple[NoteTarget, ...], tuple[NoteTarget, ...]]:
    """The note's targets as its memory records them, each with what ``resolved``
    gives it; and those its frontmatter's ``edges`` named."""
    article = converted.article.targets
    rows = [(t.rel, t.name, t.is_path, resolved(t)) for t in note_targets(converted)]
    return tuple(rows), tuple(rows[len(article):])


def render_file(converted: Converted, links: tuple[Link, ...], at: str,
                entities: tuple[str, ...] = (), targets: tuple[NoteTarget, ...] | None = None,
                hrefs: Sequence[str | None] = (), front_targets: tuple[NoteTarget, ...] = ()
                ) -> str:
    """The whole memory file: the article (each anchor to a note given its ``hrefs``
    entry), the frontmatter's other fields as facets, the edges, the note's entities
    and the labels the store gave an earlier version (``entities``), the stamps the
    frontmatter gave (``at``, the import's time, for those it did not), and the
    provenance metas (the note's link ``targets``: by default each as written,
    unresolved)."""
    article = converted.article
    front = converted.front
    lead = "" if article.claim_marked else f"<p><mark>{escape_text(converted.claim)}</mark></p>"
    parts = [lead, fill_anchors(article.html, hrefs), _facets_html(front.facets)]
    if targets is None:
        targets, front_targets = written_targets(converted, lambda _: None)
    created = front.created or at
    doc = new_memory_doc(NewMemoryInput(
        title=converted.title, claim=converted.claim, memory_type=converted.memory_type,
        at=created, article_html="\n".join(p for p in parts if p), tags=converted.tags,
        aliases=front.aliases, links=links,
        entities=tuple(dict.fromkeys([*front.entities, *entities])),
        author=front.author, confidence=front.confidence, importance=front.importance,
        session_id=front.session, prompt_id=front.prompt, turn_uuid=front.turn,
        valid_from=front.valid_from, valid_until=front.valid_until,
        task_status=front.task_status, due_at=front.due))
    metas = replace(
        doc.metas, updated_at=front.updated or created, reprieves=front.reprieves,
        needs_revision=front.needs_revision, source=converted.source,
        source_sha256=converted.digest,
        source_links=targets_facet(targets, front_targets) if targets else None,
        source_shape=encode_shape(converted.shape))
    return serialize_memory(replace(doc, metas=metas))


def check_rendered(converted: Converted, path: str) -> str | None:
    """Why the rendered file would be refused, or None: a bad file is reported rather
    than sinking the whole import's commit."""
    html = render_file(converted, (), "2026-01-01T00:00:00Z")
    return parse_memory(html, path).map(lambda _: None).alt(
        lambda error: "; ".join(error.violations) or error.reason).swap().value_or(None)


def note_links(source: str, raw: bytes) -> NoteLinks | None:
    """What ``md verify --wikilinks`` needs of a note, read as the import reads it: its
    title, its aliases, and the wikilink targets it names (in its text and its
    ``edges``); None when the import could not read it."""
    converted = convert_markdown(source, raw, whole=True)
    if isinstance(converted, Failure):
        return None
    one = converted.unwrap()
    names = tuple(t.name for t in note_targets(one) if not t.is_path)
    return NoteLinks(one.title, one.front.aliases, names, not one.article.is_index)
