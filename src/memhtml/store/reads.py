"""The read doors: a file by tier, search, related edges, status and log.

Each reads one version: the tip by default, or any commit named by ``at``, so a
question can be asked of the store as it was. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy.typing as npt
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import NotFound
from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import TreeEntry
from memhtml.format import TextBlock, article_text_blocks, join_blocks
from memhtml.head import (
    VECTOR_WEIGHT,
    HeadVectors,
    HeadVersion,
    SearchHeadInput,
    SearchHit,
    search_head,
)
from memhtml.head.version import SkippedFile
from memhtml.head.when import valid_at
from memhtml.store.archived import archived_copy, archived_error
from memhtml.store.errors import Archived, Moved, Refused, StoreError, widen
from memhtml.store.moved import PathCommit, followed_log, moved_from
from memhtml.store.paths import tree_path
from memhtml.store.session import Store
from memhtml.store.stamps import now_stamp
from memhtml.store.tasks import is_overdue

__all__ = [
    "InboundLink",
    "OutboundLink",
    "Related",
    "StoreStatus",
    "log",
    "markdown_pages",
    "read",
    "related",
    "search",
    "status",
    "whereabouts",
]

Tier = Literal["all", "gist", "summary", "details"]
TIERS: tuple[Tier, ...] = ("gist", "summary", "details", "all")
DEFAULT_TIER: Tier = "summary"
"""What a read answers unless told: enough to judge a hit, not the whole file."""
SUMMARY_PARAGRAPHS = 2
"""How many blocks of the body after the claim the summary carries."""
SUMMARY_CHARS = 800
"""The most characters of body the summary carries (the claim is never cut)."""
TIER_HELP = (
    "gist: the claim alone. "
    f"summary: the claim and the body's first {SUMMARY_PARAGRAPHS} paragraphs (a code "
    f"block counts as one), cut at {SUMMARY_CHARS} characters. "
    "details: the whole article as text, code blocks line for line. "
    "all: the file as committed (HTML, metadata and edges included)."
)
"""The tiers in one paragraph, for a command's or a tool's help."""


def version_of(store: Store, at: str | None) -> IOResult[HeadVersion, StoreError]:
    """The tip's version, or the one at ``at``."""
    return store.head() if at is None else store.version_at(at)


def _record(store: Store, version: HeadVersion, path: str, at: str | None
            ) -> IOResult[MemoryRecord, StoreError]:
    def look(tree: str) -> IOResult[MemoryRecord, StoreError]:
        record = version.get(tree)
        if record is not None:
            return IOSuccess(record)
        for skipped in version.skipped_files:
            if skipped.path == tree:
                return IOFailure(NotFound(f"memory {tree} (the file is not a memory: "
                                          f"{skipped.reason})"))
        return whereabouts_in(store, version, tree, at).bind(
            lambda went: IOFailure(went or NotFound(f"memory {tree}")))

    return IOResult.from_result(tree_path(path)).bind(look)


def whereabouts_in(store: Store, version: HeadVersion, tree: str, at: str | None
                   ) -> IOResult[Archived | Moved | None, StoreError]:
    """Where the memory once at ``tree`` is, when ``version`` holds nothing there: its
    archive (``store.archived``), else where a commit moved it (``store.moved``), else
    None. The history is read only when the version alone cannot say."""
    copy = archived_copy(version.records(), tree)
    if copy is not None:
        return IOSuccess(archived_error(tree, copy))
    if version.sha is None:
        return IOSuccess(None)
    found: IOResult[Moved | None, StoreError] = moved_from(store.deps.git, version,
                                                          version.sha, tree)
    return found


def whereabouts(store: Store, path: str, at: str | None = None
                ) -> IOResult[Archived | Moved | None, StoreError]:
    """Where the memory once at ``path`` went (archived, moved), or None when the path
    holds a memory now, or never held one that went anywhere."""
    def look(version: HeadVersion, tree: str) -> IOResult[Archived | Moved | None, StoreError]:
        if version.get(tree) is not None:
            return IOSuccess(None)
        return whereabouts_in(store, version, tree, at)

    return IOResult.from_result(tree_path(path)).bind(
        lambda tree: version_of(store, at).bind(lambda version: look(version, tree)))


def tier_text(record: MemoryRecord, tier: Tier) -> str:
    """The disclosure tiers, smallest first (``TIER_HELP`` says each in a line).

    The text tiers are what a reader sees, never markup: prose with its whitespace
    collapsed, code blocks line for line, a blank line between blocks."""
    if tier == "gist":
        return record.claim
    if tier == "summary":
        return summary_text(record)
    if tier == "details":
        return join_blocks(article_text_blocks(record.html))
    return record.html


def summary_text(record: MemoryRecord) -> str:
    """The claim, then the first ``SUMMARY_PARAGRAPHS`` blocks of the body after it (a
    code block counts as one), the body part cut to ``SUMMARY_CHARS`` characters: a
    paragraph at a word with "…", a code block at a whole line with a last line "…"."""
    body = article_text_blocks(record.html, without_claim=True)[:SUMMARY_PARAGRAPHS]
    kept: list[TextBlock] = []
    room = SUMMARY_CHARS
    for block in body:
        if room <= 0:
            break
        cut = _cut(block, room)
        if cut is None:
            break
        kept.append(cut)
        room -= len(cut.text)
    return join_blocks([TextBlock("prose", record.claim), *kept]) if kept else record.claim


def _cut(block: TextBlock, room: int) -> TextBlock | None:
    """``block`` within ``room`` characters, or None when not even a start fits."""
    if len(block.text) <= room:
        return block
    if block.kind == "code":
        lines: list[str] = []
        used = 2  # the closing "…" line
        for line in block.text.split("\n"):
            if used + len(line) + 1 > room:
                break
            lines.append(line)
            used += len(line) + 1
        return TextBlock("code", "\n".join([*lines, "…"])) if lines else None
    head = block.text[: room - 1]
    word = head.rsplit(" ", 1)[0] if " " in head else head
    return TextBlock(block.kind, word.rstrip() + "…") if word.strip() else None


def read(store: Store, path: str, tier: str = DEFAULT_TIER, at: str | None = None
         ) -> IOResult[str, StoreError]:
    """One memory's text at a tier (``TIERS``); ``summary`` unless told, in the CLI
    and the MCP server alike. An archived memory reads at its archive path; its old
    path answers ``Archived``, saying where it went; the old path of a moved one
    answers ``Moved``, saying where it is now."""
    if tier not in TIERS:
        return IOFailure(Refused(f"{tier!r} is not a tier ({', '.join(TIERS)})"))
    chosen: Tier = tier

    def answered(record: MemoryRecord) -> str:
        # Only a read of the tip is a use of the memory as it stands: at another
        # commit the same path may name another memory, or one since moved.
        if at is None:
            store.deps.note_access(record.path)
        return tier_text(record, chosen)

    return version_of(store, at).bind(lambda v: _record(store, v, path, at)).map(answered)


@dataclass(frozen=True, slots=True)
class SearchScope:
    """What narrows a search: a hit has one of ``types``, every one of ``entities``
    and ``tags``, a path under ``prefix``, and, given ``valid_on`` (an instant), a
    validity holding then. One predicate for every step that picks memories (the
    arms, and a time-only answer), so a filter never applies to one and not another."""

    types: frozenset[str] = frozenset()
    entities: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    prefix: str | None = None
    valid_on: str | None = None

    @classmethod
    def of(cls, types: Sequence[str] = (), entities: Sequence[str] = (),
           tags: Sequence[str] = (), prefix: str | None = None,
           valid_on: str | None = None) -> SearchScope:
        under = None if prefix is None else to_tree_path(prefix.strip())
        return cls(frozenset(types), frozenset(entities), frozenset(tags), under, valid_on)

    @property
    def narrowed(self) -> bool:
        return bool(self.types or self.entities or self.tags or self.prefix
                    or self.valid_on)

    def admit(self, record: MemoryRecord) -> bool:
        if self.types and record.memory_type not in self.types:
            return False
        if self.entities and not self.entities.issubset(record.entities):
            return False
        if self.tags and not self.tags.issubset(record.tags):
            return False
        if self.valid_on is not None and not valid_at(record, self.valid_on):
            return False
        return self.prefix is None or record.path.startswith(self.prefix)


def search(
    store: Store,
    query: str,
    *,
    at: str | None = None,
    types: Sequence[str] = (),
    entities: Sequence[str] = (),
    tags: Sequence[str] = (),
    prefix: str | None = None,
    limit: int = 10,
    vectors: HeadVectors | None = None,
    query_vector: npt.ArrayLike | None = None,
    vector_weight: float = VECTOR_WEIGHT,
    scope: SearchScope | None = None,
) -> IOResult[list[SearchHit], StoreError]:
    """Ranked active memories. Filters narrow what each arm ranks (through ``admit``):
    a hit has one of ``types``, every one of ``entities`` and ``tags``, and a path
    under ``prefix`` (or, given, ``scope`` says it all, validity included). Hybrid
    when ``vectors`` and ``query_vector`` are given."""
    chosen = scope if scope is not None else SearchScope.of(types, entities, tags, prefix)
    request = SearchHeadInput(
        query=query, limit=limit, now=now_stamp(store.deps.clock.now()),
        admit=chosen.admit if chosen.narrowed else None, vectors=vectors,
        query_vector=query_vector, vector_weight=vector_weight,
    )
    return version_of(store, at).map(lambda version: search_head(version, request))


@dataclass(frozen=True, slots=True)
class OutboundLink:
    rel: str
    href: str
    exists: bool


@dataclass(frozen=True, slots=True)
class InboundLink:
    path: str
    rel: str


@dataclass(frozen=True, slots=True)
class Related:
    path: str
    outbound: tuple[OutboundLink, ...]
    inbound: tuple[InboundLink, ...]


def related_of(version: HeadVersion, record: MemoryRecord) -> Related:
    outbound = tuple(
        OutboundLink(link.rel, link.href, version.get(to_tree_path(link.href)) is not None)
        for link in record.links
    )
    href = to_document_path(record.path)
    inbound: list[InboundLink] = []
    for source in version.inbound(href):
        other = version.get(source)
        if other is None:
            continue
        inbound.extend(InboundLink(source, link.rel) for link in other.links if link.href == href)
    return Related(record.path, outbound, tuple(sorted(inbound, key=lambda i: (i.path, i.rel))))


def related(store: Store, path: str, at: str | None = None) -> IOResult[Related, StoreError]:
    """A memory's outbound edges (and whether each target exists) and inbound edges."""
    return version_of(store, at).bind(
        lambda version: _record(store, version, path, at).map(
            lambda r: related_of(version, r)))


@dataclass(frozen=True, slots=True)
class StoreStatus:
    commit: str | None
    memories: int
    by_type: tuple[tuple[str, int], ...]
    by_status: tuple[tuple[str, int], ...]
    tasks: tuple[tuple[str, int], ...]
    """Open and finished tasks by task status."""
    overdue: int
    skipped: tuple[SkippedFile, ...]


def _counted(values: list[str]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return tuple(sorted(counts.items()))


_TALLIED = ("memory_type", "status", "task_status", "archived", "due_at")


def status_of(version: HeadVersion, now: str) -> StoreStatus:
    # Five fields of every record, not the records: a version restored from a
    # snapshot hands these over as columns, so a cold ``status`` builds no record.
    rows = cast(list[tuple[str, str, str | None, bool, str | None]],
                list(version.field_rows(_TALLIED)))
    tasks = [row for row in rows if row[0] == "task"]
    return StoreStatus(
        commit=version.sha,
        memories=len(rows),
        by_type=_counted([row[0] for row in rows]),
        by_status=_counted([row[1] for row in rows]),
        tasks=_counted([task_status or "todo" for _, _, task_status, _, _ in tasks]),
        overdue=sum(1 for _, status, task_status, archived, due_at in tasks
                    if status == "active" and not archived
                    and is_overdue(due_at, now, task_status)),
        skipped=version.skipped_files,
    )


def status(store: Store) -> IOResult[StoreStatus, StoreError]:
    """The tip commit, counts by type, status and task status, and skipped files."""
    now = now_stamp(store.deps.clock.now())
    return store.head().map(lambda version: status_of(version, now))


def log(store: Store, path: str, limit: int = 20) -> IOResult[list[PathCommit], StoreError]:
    """The commits on the branch that touched the memory at ``path``, newest first,
    each with the path the memory had in it: followed back through the moves and
    archives that brought it there (``store.moved.followed_log``). A path no commit
    ever touched is ``NotFound``, as every door answers a path that names nothing."""
    def touching(tree: str) -> IOResult[list[PathCommit], StoreError]:
        return followed_log(store.deps.git, store.deps.ref, tree, limit).bind(
            lambda found: IOSuccess(found) if found or limit < 1 else IOFailure(NotFound(
                f"memory {tree} (no commit on {store.deps.ref.removeprefix('refs/heads/')} "
                "ever touched it; search finds a memory by its words)")))

    return IOResult.from_result(tree_path(path)).bind(touching)


MARKDOWN_PAGE_LIMIT = 1 << 20
"""The largest markdown page read back (1 MiB): an index lists notes, it is not one."""


def markdown_pages(store: Store, version: HeadVersion) -> IOResult[dict[str, str], StoreError]:
    """Every markdown page the store holds at ``version``'s commit (an imported index),
    by tree path: regular ``.md`` files outside hidden directories, UTF-8, at most
    ``MARKDOWN_PAGE_LIMIT`` bytes. A symbolic link, a larger file or one that is not
    UTF-8 is not a page the store wrote, and is left out."""
    if version.sha is None:
        return IOSuccess({})
    git = store.deps.git

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[dict[str, str], StoreError]:
        chosen = [e for e in entries if e.path.endswith(".md") and not e.is_symlink
                  and not any(part.startswith(".") for part in e.path.split("/"))]
        return git.read_blobs([e.blob_id for e in chosen]).alt(widen).map(
            lambda blobs: {e.path: text for e in chosen
                           if (text := _page_text(blobs.get(e.blob_id))) is not None})

    return git.list_tree(version.sha).alt(widen).bind(read)


def _page_text(data: bytes | None) -> str | None:
    if data is None or len(data) > MARKDOWN_PAGE_LIMIT:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
