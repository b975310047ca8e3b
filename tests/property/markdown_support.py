"""What the markdown round-trip laws compare, shared by the laws and the CLI tests.

``same_note``: two notes are the same up to the formatting docs/design.md lists
(``What "up to formatting" means``): their frontmatter reads as the same keys in the
same order with the same values (tags and aliases as their words, dates as the
instant they name), and their bodies render to the same HTML through a CommonMark
renderer, each run of ASCII whitespace compared as one space.

``record_view``: what the store-first law holds equal between a memory and its
round trip: every field but the path and what follows from it (blob, bytes, hrefs'
spelling) and the provenance metas; tags less those the import added; edges by the
claim at their other end, or by href when that memory was not exported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from markdown_it import MarkdownIt

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.store.markdown_fields import words_of
from memhtml.store.markdown_front import instant_of, split_front

_RENDERER = MarkdownIt("commonmark").enable("table")
_ASCII_RUN = re.compile(r"[ \t\n\r\f]+")
_LIST_KEYS = frozenset({"tags", "tag", "aliases", "alias"})
_DATE_KEYS = frozenset({"created", "created_at", "date", "updated", "updated_at", "modified"})


def rendered(body: str) -> str:
    """A body as a CommonMark renderer shows it, whitespace runs as one space."""
    return _ASCII_RUN.sub(" ", _RENDERER.render(body)).strip()


def front_view(text: str) -> tuple[list[tuple[str, object]] | None, str]:
    """A note's frontmatter as (key, value) pairs in order, values normalized as the
    formatting rules allow, and its body."""
    split = split_front(text.removeprefix("\ufeff"))
    fields, body = split.unwrap()
    if fields is None:
        return None, body
    pairs: list[tuple[str, object]] = []
    for key, value in fields.items():
        if key in _LIST_KEYS:
            pairs.append((key, words_of(value)))
        elif key in _DATE_KEYS and instant_of(value) is not None:
            pairs.append((key, instant_of(value)))
        else:
            pairs.append((key, value))
    return pairs, body


def note_difference(before: str, after: str) -> str | None:
    """Why two notes differ beyond formatting, or None when they do not."""
    front_a, body_a = front_view(before)
    front_b, body_b = front_view(after)
    if (front_a or []) != (front_b or []):
        return f"frontmatter {front_a!r} != {front_b!r}"
    if rendered(body_a) != rendered(body_b):
        return f"body {rendered(body_a)!r} != {rendered(body_b)!r}"
    return None


RECORD_FIELDS_COMPARED = (
    "title", "claim", "memory_type", "status", "created_at", "updated_at", "event_at",
    "confidence", "importance", "author", "session_id", "prompt_id", "turn_uuid",
    "valid_from", "valid_until", "reprieves", "needs_revision", "task_status", "due_at",
    "entities", "aliases", "summary_texts", "aside_texts", "captions", "defined_terms",
    "code_langs", "abbreviations", "facets", "citations", "body_text", "content_hash")


def record_view(record: MemoryRecord, claim_at: Mapping[str, str],
                added_tags: Iterable[str] = ()) -> dict[str, object]:
    """The record as the store-first law compares it (``claim_at``: tree path ->
    claim, of the store the record is in)."""
    view: dict[str, object] = {name: getattr(record, name) for name in RECORD_FIELDS_COMPARED}
    added = set(added_tags)
    view["tags"] = tuple(t for t in record.tags if t not in added)
    view["links"] = sorted((link.rel, claim_at.get(to_tree_path(link.href), link.href))
                           for link in record.links)
    return view


def store_difference(before: Iterable[MemoryRecord], after: Iterable[MemoryRecord],
                     added_tags: Iterable[str] = ()) -> list[str]:
    """Each way the records of ``after`` differ from those of ``before`` (matched by
    claim), beyond what the store-first law sets aside."""
    old, new = list(before), list(after)
    old_claims = {r.path: r.claim for r in old}
    new_claims = {r.path: r.claim for r in new}
    by_claim = {r.claim: r for r in new}
    out: list[str] = []
    if sorted(r.claim for r in old) != sorted(r.claim for r in new):
        out.append("the claims differ")
    for record in old:
        twin = by_claim.get(record.claim)
        if twin is None:
            out.append(f"{record.path}: no memory with its claim")
            continue
        a = record_view(record, old_claims)
        b = record_view(twin, new_claims, added_tags)
        out += [f"{record.path}: {name} {a[name]!r} != {b[name]!r}"
                for name in a if a[name] != b[name]]
    return out
