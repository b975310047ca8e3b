"""The tools: their descriptions, typed inputs, annotations, and the door each calls.

Each tool is a thin edge over one store door. Arguments are checked by name and by
value before the door runs (``memhtml.mcp.arguments``): an unknown name or a value
outside a closed vocabulary is a tool error listing what is valid. The door checks
the rest, and a refusal comes back as a tool error with its stable code.

Paths are tree paths relative to the store (``areas/inbox/x.html``): the doors
refuse an absolute path, a ``..`` segment, a backslash or anything under ``.git``,
so no argument can name a file outside the repository; a new file's name must also
be portable (no Windows device name, no ``.memhtml/``, no case twin).

No ``from __future__ import annotations`` here: the SDK builds each input schema from
the tool function's annotations at registration, and real objects need no resolving.
"""

import functools
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema
from returns.io import IOResult
from returns.result import Result, Success

from memhtml.compose.search import Searched, search_memories
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import OWN_SCOPE, EdgeRel, MemoryType, TaskStatus
from memhtml.head import HeadVersion
from memhtml.mcp.arguments import strict_tool
from memhtml.mcp.browse import add_browse_tools
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.params import (
    CLAIM_MAX,
    LABEL_MAX,
    PATH_MAX,
    QUERY_MAX,
    REF_MAX,
    TITLE_MAX,
    AtArg,
    AuthorArg,
    BodyArg,
    BodyHtmlArg,
    ClaimArg,
    ConfidenceArg,
    DateArg,
    DirArg,
    EntityArg,
    ImportanceArg,
    LimitArg,
    LinkArg,
    LinkTo,
    PathArg,
    SessionArg,
    TagArg,
    TitleArg,
    TypeArg,
)
from memhtml.mcp.render import (
    Committed,
    ReadResult,
    RelatedResult,
    SearchResult,
    TaskListResult,
    answer,
    committed,
    read_result,
    refusal,
    related_result,
    search_result,
    task_list_result,
)
from memhtml.mcp.scoping import ScopeArg, ScopeGates, published
from memhtml.store import (
    Landed,
    Store,
    StoreError,
    WriteInput,
    archive,
    correct,
    label,
    link,
    read,
    related,
    restore,
    task_add,
    task_list,
    task_status,
    write,
)
from memhtml.store.paths import tree_path
from memhtml.store.stamps import now_stamp

Tier = Literal["gist", "summary", "details", "all"]

TOOL_NAMES: tuple[str, ...] = (
    "memory_write", "memory_search", "memory_read", "memory_related", "memory_correct",
    "memory_archive", "memory_link", "memory_label", "task_add", "task_status", "task_list",
    "memory_status", "memory_recent", "memory_context", "memory_list", "memory_restore",
)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)
"""A hint the spec defaults the same way (read-only and idempotent default false) is
left unset below: each one costs a model's context on every turn."""
ADD = ToolAnnotations(destructive_hint=False, open_world_hint=False)
"""A new file at a fresh path each call: nothing is overwritten, and a repeat writes twice
(``memory_write`` declines a claim a live memory already holds, unless told otherwise)."""
ADD_ONCE = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)
"""An edge, an entity or a task status: setting it again changes nothing. A restore too:
a second call finds the memory live and is refused, committing nothing."""
REPLACE = ToolAnnotations(destructive_hint=True, open_world_hint=False)
"""Takes a memory out of the live set. It stays in git history and under archive/, but
search stops finding it, which is what a client should ask a person about."""

Out = CallToolResult
T = TypeVar("T")
Register = Callable[[Callable[..., Out]], Callable[..., Out]]


def _one_line(doc: str | None) -> str:
    """A docstring as one line: a description is read by a model, not a person at a
    terminal, and indentation is only tokens."""
    return " ".join((doc or "").split())


def _write_input(
    title: str, claim: str, body: tuple[str, ...], memory_type: MemoryType | None,
    entity: tuple[str, ...], tag: tuple[str, ...], links: tuple[LinkTo, ...],
    directory: str | None, body_html: str | None, confidence: float | None,
    importance: int | None, author: str | None, valid_from: str | None,
    valid_until: str | None, session_id: str | None, path: str | None = None,
) -> WriteInput:
    return WriteInput(
        title=title, claim=claim, memory_type=memory_type, body=body, entities=entity,
        tags=tag, links=tuple(Link(item.rel, item.target) for item in links),
        directory=directory, article_html=body_html, confidence=confidence,
        importance=importance, author=author, valid_from=valid_from,
        valid_until=valid_until, session_id=session_id, path=path,
    )


def _landed(result: Result[Landed, StoreError] | Out, path: str | None = None,
            archived: str | None = None) -> Out:
    """A commit's answer. ``path`` overrides the door's primary path; ``archived`` is
    the original path whose archive location to report. A tool error (a scope
    refused) is the answer as it is."""
    if isinstance(result, CallToolResult):
        return result
    match result:
        case Success(landed):
            about = path if path is not None else (landed.primary or "")
            return answer(committed(landed, about, archived))
        case _:
            return refusal(result.failure())


def _reply(result: Result[T, StoreError], render: Callable[[T], Out]) -> Out:
    """A read's answer: the rendered value, or the store's refusal as a tool error."""
    match result:
        case Success(value):
            return render(value)
        case _:
            return refusal(result.failure())


def _with_note(out: Out, note: str | None) -> Out:
    """A reply with what the sync has to say (a failed push, say) added as a last text
    block; the answer itself is unchanged."""
    if note is None:
        return out
    return out.model_copy(update={"content": [*out.content,
                                              TextContent(type="text", text=note)]})


def version_of(store: Store, at: str | None) -> IOResult[HeadVersion, StoreError]:
    return store.head() if at is None else store.version_at(at)


def now_of(store: Store) -> str:
    return now_stamp(store.deps.clock.now())


def _read_door(store: Store, path: str, tier: str, at: str | None
               ) -> IOResult[ReadResult, StoreError]:
    """The tier's text through the store's read door (its errors, its tiers), and the
    record's metadata from the same version."""
    def found(text: str) -> IOResult[ReadResult, StoreError]:
        def shown(version: HeadVersion, tree: str) -> ReadResult:
            record: MemoryRecord | None = version.get(tree)
            assert record is not None, "the read door just found it"
            return read_result(record, tier, text, now_of(store))

        return IOResult.from_result(tree_path(path)).bind(
            lambda tree: version_of(store, at).map(lambda v: shown(v, tree)))

    return read(store, path, tier, at).bind(found)


def _searched(store: Store, found: Searched, at: str | None
              ) -> IOResult[SearchResult, StoreError]:
    def shown(version: HeadVersion) -> SearchResult:
        records = {h.path: r for h in found.hits if (r := version.get(h.path)) is not None}
        return search_result(found, records, now_of(store))

    return version_of(store, at).map(shown)


def writing(gates: ScopeGates, scope: str | None,
            door: Callable[[Store], IOResult[Landed, StoreError]]
            ) -> Result[Landed, StoreError] | Out:
    """``door`` run through the gate of the scope a write names (the own store by
    default), or the tool error refusing that scope."""
    chosen = gates.gate(scope, writes=True)
    if isinstance(chosen, CallToolResult):
        return chosen
    return chosen.run(door)


def search_spanning(asked: list[tuple[str, StoreGate]],
                    one: Callable[[StoreGate], Result[SearchResult, StoreError]],
                    limit: int, gates: ScopeGates) -> Result[SearchResult, StoreError]:
    """``one`` search in each scope asked, merged by rank (``compose.scoped``): the
    first scope's failure is the call's, a later one's (and a scope that could not be
    opened) a note. With no scope configured, the own store's answer as it is."""
    from memhtml.compose import explain
    from memhtml.compose.scoped import interleave

    if not gates.configured:
        return one(asked[0][1])
    answers: list[tuple[str, SearchResult]] = []
    notes = [f"{b.reason}; the other scopes answered" for b in gates.broken
             if len(asked) > 1]
    for index, (name, chosen) in enumerate(asked):
        match one(chosen):
            case Success(found):
                answers.append((name, found))
                if found.note:
                    notes.append(f"{name}: {found.note}")
            case failed if index == 0:
                return failed
            case failed:
                notes.append(f"scope {name} did not answer: {explain(failed.failure())}")
    first = answers[0][1]
    merged = interleave([(name, found.hits) for name, found in answers], limit)
    hits = [hit.model_copy(update={"scope": name}) for name, hit in merged]
    return Success(first.model_copy(update={"hits": hits,
                                            "note": "; ".join(notes) or None}))


def tools_for(gate: StoreGate, scopes: ScopeGates | None = None) -> list[Tool]:
    """Every tool, each running its door through ``gate``, or through the gate of the
    scope a call names (``scopes``; none configured: the own gate alone)."""
    built: list[Tool] = []
    gates = scopes if scopes is not None else ScopeGates(gate)

    def tool(name: str, title: str, annotations: ToolAnnotations) -> Register:
        """Register ``fn`` as the tool ``name``. The ``title`` names it for a reader
        of this file and is not published: a host falls back to the name, and every
        byte of ``tools/list`` sits in a model's context on every turn."""
        del title

        def register(fn: Callable[..., Out]) -> Callable[..., Out]:
            @functools.wraps(fn)
            def noted(*args: object, **kwargs: object) -> Out:
                return _with_note(fn(*args, **kwargs), gates.note())

            built.append(published(strict_tool(
                noted, name=name, description=_one_line(fn.__doc__),
                annotations=annotations), gates))
            return fn

        return register

    @tool("memory_search", title="Search memories", annotations=READ)
    def memory_search(
        query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX,
                                    description="Words to look for.")],
        limit: LimitArg = 10,
        type: Annotated[tuple[MemoryType, ...], WithJsonSchema({
            "type": "array", "items": {"type": "string"},
            "description": "Only these types (memory_write's)."})] = (),
        entity: Annotated[EntityArg, Field(description="All of these.")] = (),
        tag: Annotated[TagArg, Field(description="All of these.")] = (),
        prefix: Annotated[str | None, Field(max_length=PATH_MAX,
                                            description="Only under this folder.")] = None,
        at: AtArg = None,
        as_of: Annotated[str | None, Field(max_length=REF_MAX, description=(
            "YYYY-MM-DD: what was held, valid, then."))] = None,
        scope: ScopeArg = None,
    ) -> Annotated[Out, SearchResult]:
        """Search live memories, best first; a time in the query ranks its memories
        first. Hits: path, title, type, claim, updated, status, valid (false past
        valid_until), holds_since, holds_until, score (fused, this answer only), arms
        (lexical, vector; recency: a tie put newer first; time: the query's time
        alone), ranks (each arm's rank and score: BM25, cosine), scope."""
        def one(chosen: StoreGate) -> Result[SearchResult, StoreError]:
            return chosen.run(lambda store: search_memories(
                chosen.services, store, query, at=at, as_of=as_of, types=type,
                entities=entity, tags=tag, prefix=prefix, limit=limit).bind(
                    lambda found: _searched(store, found, found.commit or at)))

        asked = gates.spanning(scope if scope is not None or at is None else OWN_SCOPE)
        if isinstance(asked, CallToolResult):
            return asked
        return _reply(search_spanning(asked, one, limit, gates), answer)

    @tool("memory_read", title="Read a memory", annotations=READ)
    def memory_read(
        path: PathArg,
        tier: Annotated[Tier, Field(
            description="gist: the claim; summary: claim and opening paragraphs; details: "
                        "the whole text; all: the HTML file.")] = "summary",
        at: AtArg = None,
        scope: ScopeArg = None,
    ) -> Annotated[Out, ReadResult]:
        """A memory's text at a tier, with its type, dates, status, entities, tags and
        links (archived ones too)."""
        chosen = gates.gate(scope, writes=False)
        if isinstance(chosen, CallToolResult):
            return chosen
        return _reply(chosen.run(lambda store: _read_door(store, path, tier, at)), answer)

    @tool("memory_related", title="Related memories", annotations=READ)
    def memory_related(path: PathArg, at: AtArg = None) -> Annotated[Out, RelatedResult]:
        """A memory's edges: outbound (with whether the target exists) and inbound."""
        return _reply(gate.run(lambda store: related(store, path, at)),
                      lambda edges: answer(related_result(edges)))

    @tool("memory_status", title="Store status", annotations=READ)
    def memory_status() -> Out:
        """The store at a glance: tip commit, memories by type and status, tasks by
        status and overdue, files that are not memories, vector coverage, uncommitted
        edits (search does not see them; writes to them are refused)."""
        from mcp.types import TextContent

        from memhtml.compose.status import status_payload, status_report
        from memhtml.mcp.render import compact_json

        def shown(payload: dict[str, object]) -> Out:
            return Out(content=[TextContent(type="text", text=compact_json(payload))],
                       structured_content=payload)

        return _reply(gate.run(lambda store: status_report(gate.services, store)),
                      lambda report: shown(status_payload(report)))

    @tool("task_list", title="List tasks", annotations=READ)
    def task_list_tool(
        all: Annotated[bool, Field(description="Include finished tasks.")] = False,
    ) -> Annotated[Out, TaskListResult]:
        """Open tasks, overdue first, then by due date."""
        return _reply(gate.run(lambda store: task_list(store, all)),
                      lambda rows: answer(task_list_result(rows)))

    @tool("memory_write", title="Write a memory", annotations=ADD)
    def memory_write(
        title: TitleArg,
        claim: ClaimArg,
        body: BodyArg = (),
        body_html: BodyHtmlArg = None,
        type: TypeArg = "semantic",
        entity: EntityArg = (),
        tag: TagArg = (),
        link: LinkArg = (),
        dir: DirArg = None,
        confidence: ConfidenceArg = None,
        importance: ImportanceArg = None,
        author: AuthorArg = None,
        valid_from: DateArg = None,
        valid_until: DateArg = None,
        session_id: SessionArg = None,
        path: Annotated[str | None, Field(max_length=PATH_MAX,
                                          description="The file's exact path.")] = None,
        allow_duplicate: Annotated[bool, Field(
            description="Store it even if a live memory has the same claim.")] = False,
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Store one new fact, one commit. Refused, naming them, if a live memory has
        the same claim (up to case and spacing) or a link's target does not exist."""
        data = _write_input(title, claim, body, type, entity, tag, link, dir, body_html,
                            confidence, importance, author, valid_from, valid_until,
                            session_id, path)
        return _landed(writing(gates, scope, lambda store: write(
            store, data, allow_duplicate=allow_duplicate)))

    @tool("memory_correct", title="Correct a memory", annotations=REPLACE)
    def memory_correct(
        path: Annotated[str, Field(max_length=PATH_MAX,
                                   description="The live memory that is wrong.")],
        claim: Annotated[str, Field(max_length=CLAIM_MAX,
                                    description="The corrected fact.")] = "",
        title: Annotated[str, Field(max_length=TITLE_MAX,
                                    description="Default the old one's.")] = "",
        body: BodyArg = (),
        body_html: BodyHtmlArg = None,
        type: Annotated[MemoryType | None, WithJsonSchema({
            "type": "string", "description": "As memory_write's; default the old one's."
        })] = None,
        entity: EntityArg = (),
        tag: TagArg = (),
        link: LinkArg = (),
        dir: Annotated[str | None, Field(max_length=PATH_MAX,
                                         description="Default the old one's folder.")] = None,
        confidence: ConfidenceArg = None,
        importance: ImportanceArg = None,
        author: AuthorArg = None,
        valid_from: DateArg = None,
        valid_until: DateArg = None,
        session_id: SessionArg = None,
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Replace a wrong or outdated memory with a corrected one, one commit; the old
        one is archived (archived_to). What is not given is kept from the old one."""
        def door(store: Store) -> IOResult[Landed, StoreError]:
            data = _write_input(title, claim, body, type, entity, tag, link, dir,
                                body_html, confidence, importance, author, valid_from,
                                valid_until, session_id)
            return correct(store, path, data)

        return _landed(writing(gates, scope, door), archived=path)

    @tool("memory_archive", title="Archive a memory", annotations=REPLACE)
    def memory_archive(path: PathArg, scope: ScopeArg = None) -> Annotated[Out, Committed]:
        """Retire a memory that no longer holds and has no replacement; it leaves
        search."""
        return _landed(writing(gates, scope, lambda store: archive(store, path)), path,
                       archived=path)

    @tool("memory_restore", title="Restore a memory", annotations=ADD_ONCE)
    def memory_restore(
        path: Annotated[str, Field(max_length=PATH_MAX, description=(
            "Its archive path, or its original path (the latest archive of it)."))],
        at: Annotated[str | None, Field(max_length=REF_MAX, description=(
            "For a deleted memory: the commit whose version to put back."))] = None,
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Bring an archived (or deleted) memory back live at its original path, links
        pointed back, one commit; refused for a live one."""
        return _landed(writing(gates, scope, lambda store: restore(store, path, at)))

    @tool("memory_link", title="Link two memories", annotations=ADD_ONCE)
    def memory_link(
        path: Annotated[str, Field(max_length=PATH_MAX, description="The source memory.")],
        rel: Annotated[EdgeRel, Field(description="Read as: path rel target.")],
        target: Annotated[str, Field(max_length=PATH_MAX,
                                     description="An existing memory.")],
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Add a typed edge between two memories; adding it again changes nothing."""
        return _landed(writing(gates, scope, lambda store: link(store, path, rel, target)),
                       path)

    @tool("memory_label", title="Label a memory", annotations=ADD_ONCE)
    def memory_label(
        path: PathArg,
        entity: Annotated[str, Field(max_length=LABEL_MAX,
                                     description="type:name, e.g. person:ada.")],
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Add an entity the memory is about; labelling twice changes nothing."""
        return _landed(writing(gates, scope, lambda store: label(store, path, entity)), path)

    @tool("task_add", title="Add a task", annotations=ADD)
    def task_add_tool(
        title: TitleArg,
        claim: Annotated[str, Field(max_length=CLAIM_MAX, description="What is to be done.")],
        due: DateArg = None,
        entity: EntityArg = (),
        body: BodyArg = (),
        tag: TagArg = (),
        importance: ImportanceArg = None,
        status: Annotated[TaskStatus, Field(description="The starting status.")] = "todo",
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Record a task under areas/tasks/; move it along with task_status."""
        return _landed(writing(gates, scope, lambda store: task_add(
            store, title, claim, due, entity, body=body, tags=tag,
            importance=importance, task_status=status)))

    @tool("task_status", title="Set a task's status", annotations=ADD_ONCE)
    def task_status_tool(
        path: PathArg,
        status: Annotated[TaskStatus, Field(description="done archives it.")],
        scope: ScopeArg = None,
    ) -> Annotated[Out, Committed]:
        """Set a task's status; done archives it and returns archived_to."""
        archived = path if status == "done" else None
        return _landed(writing(gates, scope, lambda store: task_status(store, path, status)),
                       path, archived=archived)

    add_browse_tools(tool, gate, READ, gates)
    return built
