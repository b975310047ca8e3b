"""Shared helpers for head tests: real repositories and generated memory files."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from immutables import Map
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.git import PygitService
from memhtml.contracts.record import Link, MemoryRecord, record_rows
from memhtml.contracts.services import PathChange, Signature
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format import NewMemoryInput, escape_text, render_template, set_meta
from memhtml.head import (
    HeadVersion,
    IndexedView,
    Indexes,
    SearchHeadInput,
    is_active,
    record_from,
    search_head,
)

AUTHOR = Signature("memhtml tests", "tests@memhtml.invalid")
AT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


T = TypeVar("T")
E = TypeVar("E")


def run(io: IOResult[T, E]) -> T:
    """Unwrap an IOResult in a test, failing loudly."""
    return unsafe_perform_io(io.unwrap())


def new_repo(path: Path) -> PygitService:
    return run(PygitService.init(path))


def memory(title: str, claim: str, body: str = "", at: str = "2026-01-01T00:00:00Z",
           entities: tuple[str, ...] = ()) -> str:
    return render_template(
        NewMemoryInput(title=title, claim=claim, memory_type="semantic", at=at,
                       body=(body,) if body else (), entities=entities,
                       detect=lambda _c: None)
    )


def archived(html: str) -> str:
    return set_meta(set_meta(html, "memhtml-status", "archived"), "memhtml-archived",
                    "2026-11-01T00:00:00Z")


def commit(git: PygitService, parent: str | None, changes: Mapping[str, str | None],
           message: str = "test") -> str:
    return run(
        git.commit(
            "refs/heads/main",
            parent,
            [PathChange(p, None if v is None else v.encode()) for p, v in sorted(changes.items())],
            message,
            AUTHOR,
            AT,
        )
    )


def memory_with(title: str, claim: str, body: str = "", *, at: str = "2026-01-01T00:00:00Z",
                event_at: str | None = None, links: tuple[tuple[EdgeRel, str], ...] = (),
                entities: tuple[str, ...] = ()) -> str:
    """A memory with optional supersedes-style links and an event time.

    The event time rides in a ``<time datetime>`` whose text is ``then``, a stop word,
    so it moves recency without adding a token to the lexical arm.
    """
    article = f"<p><mark>{escape_text(claim)}</mark>"
    if body:
        article += f" {escape_text(body)}"
    if event_at is not None:
        article += f' <time datetime="{event_at}">then</time>'
    article += "</p>"
    return render_template(
        NewMemoryInput(title=title, claim=claim, memory_type="semantic", at=at,
                       article_html=article, entities=entities,
                       links=tuple(Link(rel, href) for rel, href in links),
                       detect=lambda _c: None)
    )


def record_at(path: str, html: str) -> MemoryRecord:
    """Parse ``html`` as the record at ``path``, failing loudly when it is not a memory."""
    return record_from(html, path).unwrap()


def without_holders(indexes: Indexes) -> Indexes:
    """``indexes`` with the content-hash slots emptied: what two versions of one tree
    share whatever order their records were inserted in."""
    return dataclasses.replace(indexes, by_content_hash=Map())


def least_active_twins(version: IndexedView) -> dict[str, str]:
    """Each active content hash mapped to the least path holding it: the holders of a
    version loaded from a tree, whose records are inserted in path order."""
    holders: dict[str, str] = {}
    for record in version.active_records():
        holders.setdefault(record.content_hash, record.path)
    return holders


def holders_after_advance(
    parent: Indexes, child: Indexes, changed: Iterable[str]
) -> dict[str, str]:
    """The content-hash slots ``advance_head`` must produce, by the spec's rule.

    A hash stays with its holder while the holder's path is untouched. Every changed
    path is removed first, and removing a holder empties its slot even while an
    untouched twin stays active; then the changed paths present at the new commit are
    inserted in path order, and an active one takes its hash's slot when it is empty.
    """
    holders = dict(parent.by_content_hash.items())
    touched = sorted(set(changed))
    for path in touched:
        old = parent.records.get(path)
        if old is not None and holders.get(old.content_hash) == path:
            del holders[old.content_hash]
    for path in touched:
        new = child.records.get(path)
        if new is not None and is_active(new):
            holders.setdefault(new.content_hash, path)
    return holders


def fingerprint(version: HeadVersion, queries: Iterable[str]) -> tuple[object, ...]:
    """Everything a reader can observe of a version, copied out as plain data: its
    commit and skips, every record's fields, every index's contents, the lexical base
    segment's arrays byte for byte, and its ranking for ``queries``."""
    indexes = version.indexes
    lexical = indexes.lexical
    base = lexical.base

    def sets(index: Map[str, Map[str, bool]]) -> list[tuple[str, list[str]]]:
        return sorted((key, sorted(members.keys())) for key, members in index.items())

    return (
        version.sha,
        version.skipped_files,
        record_rows(version.records()),
        sorted(indexes.by_content_hash.items()),
        sets(indexes.by_frame_key),
        sets(indexes.inbound),
        sets(indexes.by_entity),
        lexical.materialize(),
        (lexical.documents, lexical.total_length, sorted(lexical.removed.keys()),
         sorted(lexical.added.keys())),
        (base.paths, sorted(base.vocab.items()), base.lengths.tobytes(), base.doc_ids.tobytes(),
         base.tfs.tobytes()),
        [[(hit.path, hit.score, hit.arms) for hit in
          search_head(version, SearchHeadInput(query, limit=20))] for query in queries],
    )
