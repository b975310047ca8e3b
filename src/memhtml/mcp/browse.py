"""Browsing without a query: what changed lately, a memory's neighbourhood, a folder.

Search answers "what do I know about X"; these answer the questions an agent asks
when it has no words yet: what was written or corrected lately (``recent_of``),
what surrounds a memory it has found (``context_of``: edges both ways and the
memories sharing its entities, a few hops out), and what a folder holds
(``store.listing``, which ``memhtml list`` reads too). Each is a pure function of
one version, bounded by a limit, and ordered totally (newest first or by path, ties
by path).

No ``from __future__ import annotations`` here: the tools registered below have their
input schemas built from their annotations, which must be real objects.
"""

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Annotated, TypeVar

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import AfterValidator, BaseModel, Field
from returns.io import IOResult, IOSuccess
from returns.result import Success

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head import HeadVersion
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.render import Brief, answer, brief, brief_fields, refusal
from memhtml.mcp.scoping import ScopeArg, ScopeGates
from memhtml.store import Store, StoreError, related
from memhtml.store.listing import LIST_LIMIT, Listing, listed
from memhtml.store.stamps import now_stamp

Out = CallToolResult
Register = Callable[[Callable[..., Out]], Callable[..., Out]]
M = TypeVar("M", bound=BaseModel)

DEPTH_MAX = 3
"""How many hops ``memory_context`` goes at most: past three, a well-linked store's
neighbourhood is most of the store."""


class RecentResult(BaseModel):
    memories: list[Brief]


def _since(value: str | None) -> str | None:
    """A ``since`` that is a real date or UTC instant; anything else is refused, since
    comparing it as text would answer "nothing changed" to a typo."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z)?", value):
        raise ValueError("since must be a date (YYYY-MM-DD) or a UTC instant "
                         "(YYYY-MM-DDTHH:MM:SSZ)")
    return value


def recent_of(view: HeadView, now: str, limit: int, since: str | None = None
              ) -> RecentResult:
    """The live memories last written or changed, newest first (then by path);
    with ``since``, only those updated at or after it (a date or an instant)."""
    live = [r for r in view.records()
            if r.status == "active" and not r.archived
            and (since is None or r.updated_at[: len(since)] >= since)]
    live.sort(key=lambda r: r.path)
    live.sort(key=lambda r: r.updated_at, reverse=True)
    return RecentResult(memories=[brief(r, now) for r in live[:limit]])


class Node(Brief):
    depth: int = Field(description="Hops from the memory asked about (0 is itself).")


class GraphEdge(BaseModel):
    source: str
    rel: str
    target: str


class Shared(BaseModel):
    entity: str
    paths: list[str]


class ContextResult(BaseModel):
    path: str
    nodes: list[Node]
    edges: list[GraphEdge]
    shared: list[Shared] = Field(description="Entities two or more nodes carry.")
    truncated: bool = Field(description="True when the limit cut the neighbourhood short.")


def _linked(view: HeadView, record: MemoryRecord) -> list[str]:
    """The memories an edge joins to ``record``, either way, that exist."""
    out = {to_tree_path(link.href) for link in record.links}
    out.update(view.inbound(to_document_path(record.path)))
    return sorted(p for p in out if p != record.path and view.get(p) is not None)


def _sharing(view: HeadView, record: MemoryRecord) -> list[str]:
    """The live memories that carry one of ``record``'s entities."""
    out: set[str] = set()
    for entity in record.entities:
        out.update(view.by_entity(entity))
    live = (view.get(p) for p in out if p != record.path)
    return sorted(r.path for r in live
                  if r is not None and r.status == "active" and not r.archived)


def context_of(view: HeadView, path: str, depth: int, limit: int, now: str
               ) -> ContextResult:
    """The neighbourhood of the memory at ``path`` (which must be in ``view``) out to
    ``depth`` hops, at most ``limit`` memories besides it. At each hop the memories
    joined by an edge come before those that only share an entity, each group by path."""
    reached: dict[str, int] = {path: 0}
    frontier = [path]
    truncated = False
    for hop in range(1, min(depth, DEPTH_MAX) + 1):
        records = [r for r in (view.get(p) for p in frontier) if r is not None]
        candidates = [p for r in records for p in _linked(view, r)]
        candidates += [p for r in records for p in _sharing(view, r)]
        frontier = []
        for candidate in candidates:
            if candidate in reached:
                continue
            if len(reached) > limit:
                truncated = True
                break
            reached[candidate] = hop
            frontier.append(candidate)
        if truncated or not frontier:
            break
    nodes = [view.get(p) for p in reached]
    present = [r for r in nodes if r is not None]
    return ContextResult(
        path=path,
        nodes=[Node(**brief_fields(r, now), depth=reached[r.path])
               for r in sorted(present, key=lambda r: (reached[r.path], r.path))],
        edges=_edges_among(present, set(reached)),
        shared=_shared_among(present),
        truncated=truncated,
    )


def _edges_among(records: Iterable[MemoryRecord], paths: set[str]) -> list[GraphEdge]:
    edges = {(r.path, link.rel, to_tree_path(link.href))
             for r in records for link in r.links if to_tree_path(link.href) in paths}
    return [GraphEdge(source=s, rel=rel, target=t) for s, rel, t in sorted(edges)]


def _shared_among(records: Iterable[MemoryRecord]) -> list[Shared]:
    carriers: dict[str, set[str]] = {}
    for record in records:
        for entity in record.entities:
            carriers.setdefault(entity, set()).add(record.path)
    return [Shared(entity=e, paths=sorted(ps))
            for e, ps in sorted(carriers.items()) if len(ps) > 1]


class Folder(BaseModel):
    path: str
    memories: int = Field(description="Memories anywhere under it.")


class ListResult(BaseModel):
    dir: str
    dirs: list[Folder]
    memories: list[Brief]
    total: int = Field(description="Memories the listing covers (at any depth when "
                                    "recursive); more than shown if over limit.")


def list_result(found: Listing, now: str) -> ListResult:
    return ListResult(dir=found.dir,
                      dirs=[Folder(path=f.path, memories=f.memories) for f in found.dirs],
                      memories=[brief(r, now) for r in found.memories], total=found.total)


def add_browse_tools(tool: Callable[[str, str, ToolAnnotations], Register], gate: StoreGate,
                     annotations: ToolAnnotations, gates: ScopeGates | None = None) -> None:
    """Register ``memory_recent``, ``memory_context`` and ``memory_list`` with ``tool``
    (the server's registering decorator), each a read of the tip through ``gate``;
    ``memory_list`` through the scopes' gates (``gates``) too."""
    scopes = gates if gates is not None else ScopeGates(gate)

    @tool("memory_recent", "Recent memories", annotations)
    def memory_recent(
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 10,
        since: Annotated[str | None, Field(max_length=64,
                                           description="Only updated since this date."),
                         AfterValidator(_since)] = None,
    ) -> Annotated[Out, RecentResult]:
        """Live memories most recently written or changed, newest first."""
        return _read(gate, lambda store, version: IOSuccess(
            recent_of(version, _now(store), limit, since)))

    @tool("memory_context", "A memory's neighbourhood", annotations)
    def memory_context(
        path: Annotated[str, Field(max_length=4_096, description="The memory.")],
        depth: Annotated[int, Field(ge=1, le=DEPTH_MAX, description="Hops out.")] = 1,
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many others.")]
        = 20,
    ) -> Annotated[Out, ContextResult]:
        """Memories linked to this one either way or sharing an entity, to depth hops,
        with the edges between them."""
        def door(store: Store, version: HeadVersion) -> IOResult[ContextResult, StoreError]:
            return related(store, path).map(lambda found: context_of(
                version, found.path, depth, limit, _now(store)))

        return _read(gate, door)

    @tool("memory_list", "List a folder", annotations)
    def memory_list(
        dir: Annotated[str, Field(max_length=4_096,
                                  description="Folder; default the root.")] = "",
        recursive: Annotated[bool, Field(
            description="Include subfolders' memories.")] = True,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many.")]
        = LIST_LIMIT,
        scope: ScopeArg = None,
    ) -> Annotated[Out, ListResult]:
        """A folder's memories, its subfolders' too unless recursive is false, and its
        subfolders with counts."""
        def door(store: Store, version: HeadVersion) -> IOResult[ListResult, StoreError]:
            return IOResult.from_result(listed(version, dir, recursive=recursive, limit=limit)
                                        ).map(lambda found: list_result(found, _now(store)))

        asked = scopes.spanning(scope)
        if isinstance(asked, CallToolResult):
            return asked
        if not scopes.configured:
            return _read(gate, door)
        return _list_spanning(asked, door, limit)


def _list_spanning(asked: list[tuple[str, StoreGate]],
                   door: Callable[[Store, HeadVersion], IOResult[ListResult, StoreError]],
                   limit: int) -> Out:
    """The folder in every scope asked: its memories merged by place (the own store
    first in each round, as search merges), counts summed, each memory naming its
    scope. A scope without the folder adds nothing; none with it is the own store's
    (or the one named) refusal."""
    from memhtml.compose.scoped import interleave

    found: list[tuple[str, ListResult]] = []
    first: Out | None = None
    for name, chosen in asked:
        result = chosen.run(lambda store: store.head().bind(
            lambda version: door(store, version)))
        match result:
            case Success(listing):
                found.append((name, listing))
            case _ if first is None:
                first = refusal(result.failure())
    if not found:
        assert first is not None, "every scope asked answered or refused"
        return first
    merged = interleave([(name, listing.memories) for name, listing in found], limit)
    counts: dict[str, int] = {}
    for _, listing in found:
        for folder in listing.dirs:
            counts[folder.path] = counts.get(folder.path, 0) + folder.memories
    return answer(ListResult(
        dir=found[0][1].dir,
        dirs=[Folder(path=path, memories=n) for path, n in sorted(counts.items())],
        memories=[memory.model_copy(update={"scope": name}) for name, memory in merged],
        total=sum(listing.total for _, listing in found)))


def _now(store: Store) -> str:
    return now_stamp(store.deps.clock.now())


def _read(gate: StoreGate,
          door: Callable[[Store, HeadVersion], IOResult[M, StoreError]]) -> Out:
    """Run ``door`` on the tip's version and answer with its result or refusal."""
    result = gate.run(lambda store: store.head().bind(lambda version: door(store, version)))
    match result:
        case Success(value):
            return answer(value)
        case _:
            return refusal(result.failure())
