"""The twelve tools: their descriptions, typed inputs, annotations, and the door each calls.

Each tool is a thin edge over one store door. Arguments arrive already validated
against the input schema (the closed vocabularies are enums there, so a model sees
the legal values before it calls); the door checks the rest, and a refusal comes
back as a tool error carrying ``describe``'s line with every violation in it.

Paths are tree paths relative to the store (``areas/inbox/x.html``): the doors
refuse an absolute path, a ``..`` segment, a backslash or anything under ``.git``,
so no argument can name a file outside the repository; a new file's name must also
be portable (no Windows device name, no ``.memhtml/``, no case twin).

Every text argument has a length cap in its schema, so an oversized value is
refused by the SDK's validation before any door runs, and the server keeps serving;
a write's text as a whole is capped by the door (``MAX_WRITE_BYTES``, 1 MiB).

No ``from __future__ import annotations`` here: the SDK builds each input schema from
the tool function's annotations at registration, and real objects need no resolving.
"""

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field
from returns.result import Result, Success

from memhtml.compose.search import search_memories
from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EdgeRel, MemoryType, TaskStatus
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.render import (
    Committed,
    ReadResult,
    RelatedResult,
    SearchResult,
    StatusResult,
    TaskListResult,
    answer,
    committed,
    refusal,
    related_result,
    search_result,
    status_result,
    task_list_result,
)
from memhtml.store import (
    Landed,
    StoreError,
    WriteInput,
    archive,
    correct,
    label,
    link,
    read,
    related,
    status,
    task_add,
    task_list,
    task_status,
    write,
)
from memhtml.store.plan import MAX_WRITE_BYTES

Tier = Literal["gist", "summary", "details", "all"]

TOOL_NAMES: tuple[str, ...] = (
    "memory_write", "memory_search", "memory_read", "memory_related", "memory_correct",
    "memory_archive", "memory_link", "memory_label", "task_add", "task_status", "task_list",
    "memory_status",
)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                      open_world_hint=False)
"""A new file at a fresh path each call: nothing is overwritten, and a repeat writes twice."""
ADD_ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                           open_world_hint=False)
"""An edge, an entity or a task status: setting it again changes nothing."""
REPLACE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                          open_world_hint=False)
"""Takes a memory out of the live set. It stays in git history and under archive/, but
search stops finding it, which is what a client should ask a person about."""


# -- input caps, in characters (the door counts the UTF-8 bytes of a write) -------------

TITLE_MAX = 1_000
CLAIM_MAX = 10_000
PARAGRAPH_MAX = 100_000
PARAGRAPHS_MAX = 1_000
LABEL_MAX = 256
"""An entity, a tag, an author or a session id."""
LABELS_MAX = 200
"""Entities, tags or links on one memory."""
PATH_MAX = 4_096
"""The door refuses a path over 4,096 UTF-8 bytes, or a name in it over 255."""
DATE_MAX = 64
REF_MAX = 256
QUERY_MAX = 4_000
ARTICLE_MAX = MAX_WRITE_BYTES


def _capped(limit: int) -> str:
    return f" At most {limit:,} characters."


class LinkTo(BaseModel):
    """An edge from the new memory to an existing one."""

    rel: Annotated[EdgeRel, Field(description="The kind of edge.")]
    path: Annotated[str, Field(max_length=PATH_MAX,
                               description="The target memory's path, e.g. "
                                           "areas/inbox/deploy-runbook.html."
                                           + _capped(PATH_MAX))]


# -- parameter types, shared by the tools that take them --------------------------------

PathArg = Annotated[str, Field(
    max_length=PATH_MAX,
    description="A memory's path relative to the store, as memory_search returns it, "
                "e.g. areas/inbox/deploy-runbook.html." + _capped(PATH_MAX))]
AtArg = Annotated[str | None, Field(
    max_length=REF_MAX,
    description="Read the store as it was at this commit id or ref; omit for the "
                "current state." + _capped(REF_MAX))]
TitleArg = Annotated[str, Field(max_length=TITLE_MAX,
                                description="A short title, a few words; the file name is "
                                            "made from it." + _capped(TITLE_MAX))]
ClaimArg = Annotated[str, Field(
    max_length=CLAIM_MAX,
    description="The fact itself, one or two self-contained sentences: what a later search "
                "shows as the gist." + _capped(CLAIM_MAX))]
Paragraph = Annotated[str, Field(max_length=PARAGRAPH_MAX)]
Label = Annotated[str, Field(max_length=LABEL_MAX)]
BodyArg = Annotated[tuple[Paragraph, ...], Field(
    max_length=PARAGRAPHS_MAX,
    description="Supporting prose, one string per paragraph. Plain text: markup is escaped, "
                "and a paragraph containing a block tag such as <p> or <div> is refused. A "
                "paragraph that is one fenced block (```lang ... ```) becomes a code figure. "
                f"At most {PARAGRAPHS_MAX:,} paragraphs of {PARAGRAPH_MAX:,} characters; the "
                f"whole memory's text at most {MAX_WRITE_BYTES:,} bytes (UTF-8).")]
TypeArg = Annotated[MemoryType, Field(
    description="What kind of memory: semantic (a fact), episodic (something that "
                "happened), procedural (how to do something), user_preference, "
                "agent_insight, error_pattern, verdict, precedent, arc.")]
_EACH = f" At most {LABELS_MAX:,}, each at most {LABEL_MAX:,} characters."
EntitiesArg = Annotated[tuple[Label, ...], Field(
    max_length=LABELS_MAX,
    description="Entities the memory is about, each type:name in lowercase type, e.g. "
                "person:ada-lovelace, project:memhtml." + _EACH)]
TagsArg = Annotated[tuple[Label, ...], Field(max_length=LABELS_MAX,
                                             description="Free-form tags." + _EACH)]
LinksArg = Annotated[tuple[LinkTo, ...], Field(
    max_length=LABELS_MAX,
    description=f"Edges to existing memories. At most {LABELS_MAX:,}.")]
DirectoryArg = Annotated[str | None, Field(
    max_length=PATH_MAX,
    description="The folder for the file, e.g. areas/deploy/ or resources/people/; "
                "default areas/inbox/ (areas/tasks/ for a task). A new folder's name must "
                "be portable: no Windows device name (con, nul, com1), no <>:\"|?*, no "
                "trailing dot or space, nothing under .memhtml/, and no case-only "
                "variant of an existing folder." + _capped(PATH_MAX))]
ArticleArg = Annotated[str | None, Field(
    max_length=ARTICLE_MAX,
    description="Advanced: the article's inner HTML instead of claim and body. It must "
                "hold exactly one <mark> around the claim; every violation is reported."
                + _capped(ARTICLE_MAX))]
ConfidenceArg = Annotated[float | None, Field(ge=0.0, le=1.0, allow_inf_nan=False,
                                              description="How sure the fact is, 0 to 1.")]
ImportanceArg = Annotated[int | None, Field(ge=1, le=10,
                                            description="How much it matters, 1 to 10.")]
DateArg = Annotated[str | None, Field(
    max_length=DATE_MAX,
    description="A date YYYY-MM-DD or an instant YYYY-MM-DDTHH:MM:SSZ." + _capped(DATE_MAX))]
AuthorArg = Annotated[str | None, Field(max_length=LABEL_MAX,
                                        description="Who stated the fact."
                                                    + _capped(LABEL_MAX))]
SessionArg = Annotated[str | None, Field(max_length=LABEL_MAX,
                                         description="The conversation or session it came "
                                                     "from." + _capped(LABEL_MAX))]

Out = CallToolResult
T = TypeVar("T")


def _one_line(doc: str | None) -> str:
    """A docstring as one line: a description is read by a model, not a person at a
    terminal, and indentation is only tokens."""
    return " ".join((doc or "").split())


def _write_input(
    title: str, claim: str, body: tuple[str, ...], memory_type: MemoryType,
    entities: tuple[str, ...], tags: tuple[str, ...], links: tuple[LinkTo, ...],
    directory: str | None, article_html: str | None, confidence: float | None,
    importance: int | None, author: str | None, valid_from: str | None,
    valid_until: str | None, session_id: str | None, path: str | None = None,
) -> WriteInput:
    return WriteInput(
        title=title, claim=claim, memory_type=memory_type, body=body, entities=entities,
        tags=tags, links=tuple(Link(item.rel, item.path) for item in links),
        directory=directory, article_html=article_html, confidence=confidence,
        importance=importance, author=author, valid_from=valid_from,
        valid_until=valid_until, session_id=session_id, path=path,
    )


def _landed(result: Result[Landed, StoreError], path: str | None = None,
            archived: str | None = None) -> Out:
    """A commit's answer. ``path`` overrides the door's primary path; ``archived`` is
    the original path whose archive location to report."""
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


def register_tools(server: MCPServer[Any], gate: StoreGate) -> None:
    """Add the twelve tools to ``server``, each running its door through ``gate``."""

    def tool(name: str, title: str, annotations: ToolAnnotations
             ) -> Callable[[Callable[..., Out]], Callable[..., Out]]:
        def register(fn: Callable[..., Out]) -> Callable[..., Out]:
            server.add_tool(fn, name=name, title=title, description=_one_line(fn.__doc__),
                            annotations=annotations)
            return fn

        return register

    @tool("memory_search", title="Search memories", annotations=READ)
    def memory_search(
        query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX,
                                    description="Words to look for." + _capped(QUERY_MAX))],
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many hits.")] = 10,
        types: Annotated[tuple[MemoryType, ...], Field(
            description="Only memories of these types.")] = (),
        entities: Annotated[tuple[Label, ...], Field(
            max_length=LABELS_MAX,
            description="Only memories labelled with every one of these type:name "
                        "entities." + _EACH)] = (),
        tags: Annotated[tuple[Label, ...], Field(
            max_length=LABELS_MAX,
            description="Only memories carrying every one of these tags." + _EACH)] = (),
        prefix: Annotated[str | None, Field(
            max_length=PATH_MAX,
            description="Only memories under this folder, e.g. areas/deploy/."
                        + _capped(PATH_MAX))] = None,
        explain: Annotated[bool, Field(
            description="Also name the ranking arms behind each hit.")] = False,
        at: AtArg = None,
    ) -> Annotated[Out, SearchResult]:
        """Search the live memories (archived ones are left out) for a query, ranked by
        relevance over their titles, claims and bodies. Use it before answering from
        memory and before writing, to find what is already known. Returns hits, best
        first, each with its path, its claim (the one-sentence gist) and its score;
        read a hit with memory_read for more."""
        return _reply(gate.run(lambda store: search_memories(
            gate.services, store, query, at=at, types=types, entities=entities, tags=tags,
            prefix=prefix, limit=limit)), lambda found: answer(search_result(found, explain)))

    @tool("memory_read", title="Read a memory", annotations=READ)
    def memory_read(
        path: PathArg,
        tier: Annotated[Tier, Field(
            description="How much to read: gist (the claim), summary (the claim and its "
                        "summary lines), details (the body text), all (the whole HTML "
                        "file, metadata and edges included).")] = "summary",
        at: AtArg = None,
    ) -> Annotated[Out, ReadResult]:
        """Read one memory at a disclosure tier, from the smallest (gist) to the whole
        file (all). Start at summary and go deeper only when the task needs it.
        Returns the text of that tier; archived memories can be read too."""
        return _reply(gate.run(lambda store: read(store, path, tier, at)),
                      lambda text: answer(ReadResult(path=path, tier=tier, text=text), text))

    @tool("memory_related", title="Related memories", annotations=READ)
    def memory_related(path: PathArg, at: AtArg = None) -> Annotated[Out, RelatedResult]:
        """List a memory's edges: outbound (the memories it links to, with the rel and
        whether the target exists) and inbound (memories that link to it). Use it to
        follow supersedes, contradicts, caused_by and other edges around a fact."""
        return _reply(gate.run(lambda store: related(store, path, at)),
                      lambda edges: answer(related_result(edges)))

    @tool("memory_status", title="Store status", annotations=READ)
    def memory_status() -> Annotated[Out, StatusResult]:
        """Summarize the store: the branch tip commit, how many memories there are by
        type and status, tasks by status and how many are overdue, and files in the
        tree that are not valid memories. Use it to orient yourself in a new store."""
        return _reply(gate.run(status), lambda state: answer(status_result(state)))

    @tool("task_list", title="List tasks", annotations=READ)
    def task_list_tool(
        include_done: Annotated[bool, Field(
            description="Also list finished and archived tasks.")] = False,
    ) -> Annotated[Out, TaskListResult]:
        """List the tasks: open ones by default, overdue first, then by due date
        (undated last). Returns each task's path, title, status, due date and whether
        it is overdue."""
        return _reply(gate.run(lambda store: task_list(store, include_done)),
                      lambda rows: answer(task_list_result(rows)))

    @tool("memory_write", title="Write a memory", annotations=ADD)
    def memory_write(
        title: TitleArg,
        claim: ClaimArg,
        body: BodyArg = (),
        memory_type: TypeArg = "semantic",
        entities: EntitiesArg = (),
        tags: TagsArg = (),
        links: LinksArg = (),
        directory: DirectoryArg = None,
        article_html: ArticleArg = None,
        confidence: ConfidenceArg = None,
        importance: ImportanceArg = None,
        author: AuthorArg = None,
        valid_from: DateArg = None,
        valid_until: DateArg = None,
        session_id: SessionArg = None,
        path: Annotated[str | None, Field(
            max_length=PATH_MAX,
            description="An exact path for the file instead of one made from the title; "
                        "refused when a memory is already there, or when the name is not "
                        "portable (as for directory)." + _capped(PATH_MAX))] = None,
    ) -> Annotated[Out, Committed]:
        """Remember one new fact as its own memory file, committed to the store. Write
        one fact per call; search first, and use memory_correct instead when the fact
        replaces one already stored. Returns the new memory's path and the commit id.
        An invalid memory is refused with every violation listed, and nothing is
        committed."""
        data = _write_input(title, claim, body, memory_type, entities, tags, links,
                            directory, article_html, confidence, importance, author,
                            valid_from, valid_until, session_id, path)
        return _landed(gate.run(lambda store: write(store, data)))

    @tool("memory_correct", title="Correct a memory", annotations=REPLACE)
    def memory_correct(
        path: Annotated[str, Field(max_length=PATH_MAX,
                                   description="The live memory that is wrong or out of "
                                               "date, e.g. areas/inbox/deploy-runbook.html."
                                               + _capped(PATH_MAX))],
        title: TitleArg,
        claim: ClaimArg,
        body: BodyArg = (),
        memory_type: TypeArg = "semantic",
        entities: EntitiesArg = (),
        tags: TagsArg = (),
        links: LinksArg = (),
        directory: Annotated[str | None, Field(
            max_length=PATH_MAX,
            description="The folder for the new file; default the old one's folder. A new "
                        "folder's name must be portable, as for memory_write."
                        + _capped(PATH_MAX))] = None,
        article_html: ArticleArg = None,
        confidence: ConfidenceArg = None,
        importance: ImportanceArg = None,
        author: AuthorArg = None,
        valid_from: DateArg = None,
        valid_until: DateArg = None,
        session_id: SessionArg = None,
    ) -> Annotated[Out, Committed]:
        """Replace a memory that is wrong or out of date with a corrected one, in one
        commit: the new memory links supersedes to the old, and the old one is marked
        superseded and archived (it leaves search but stays readable, and every edge
        pointing at it is rewritten to its archive path). Give the complete corrected
        memory, not a diff. Returns the new path, where the old one was archived to,
        and the commit id."""
        data = _write_input(title, claim, body, memory_type, entities, tags, links,
                            directory, article_html, confidence, importance, author,
                            valid_from, valid_until, session_id)
        return _landed(gate.run(lambda store: correct(store, path, data)), archived=path)

    @tool("memory_archive", title="Archive a memory", annotations=REPLACE)
    def memory_archive(path: PathArg) -> Annotated[Out, Committed]:
        """Retire a memory that no longer holds and has no replacement: it moves under
        archive/<YYYY>/, is marked archived, and leaves search; every edge pointing at
        it is rewritten in the same commit. Prefer memory_correct when there is a
        corrected fact to record. Returns where it was archived to and the commit id."""
        return _landed(gate.run(lambda store: archive(store, path)), path, archived=path)

    @tool("memory_link", title="Link two memories", annotations=ADD_ONCE)
    def memory_link(
        path: Annotated[str, Field(max_length=PATH_MAX,
                                   description="The memory the edge starts from."
                                               + _capped(PATH_MAX))],
        rel: Annotated[EdgeRel, Field(description="The kind of edge, read as "
                                                  "'<path> <rel> <target>'.")],
        target: Annotated[str, Field(max_length=PATH_MAX,
                                     description="The memory the edge points to; it must "
                                                 "exist." + _capped(PATH_MAX))],
    ) -> Annotated[Out, Committed]:
        """Add a typed edge from one memory to another, e.g. caused_by, supports,
        contradicts, part_of, relates_to. Adding an edge that already exists changes
        nothing. Returns the source path and the commit id."""
        return _landed(gate.run(lambda store: link(store, path, rel, target)), path)

    @tool("memory_label", title="Label a memory", annotations=ADD_ONCE)
    def memory_label(
        path: PathArg,
        entity: Annotated[str, Field(max_length=LABEL_MAX,
                                     description="A type:name entity with a lowercase "
                                                 "type, e.g. person:ada-lovelace."
                                                 + _capped(LABEL_MAX))],
    ) -> Annotated[Out, Committed]:
        """Tag a memory with an entity it is about, so searches filtered by that entity
        find it. Labelling twice changes nothing. Returns the path and the commit id."""
        return _landed(gate.run(lambda store: label(store, path, entity)), path)

    @tool("task_add", title="Add a task", annotations=ADD)
    def task_add_tool(
        title: TitleArg,
        claim: Annotated[str, Field(max_length=CLAIM_MAX,
                                    description="What is to be done, in a sentence."
                                                + _capped(CLAIM_MAX))],
        due_at: DateArg = None,
        entities: EntitiesArg = (),
        body: BodyArg = (),
        tags: TagsArg = (),
        importance: ImportanceArg = None,
        status: Annotated[TaskStatus | None, Field(
            description="The starting status; default todo.")] = None,
    ) -> Annotated[Out, Committed]:
        """Record a task to do later, as a task memory under areas/tasks/. Returns the
        task's path and the commit id; move it along with task_status."""
        return _landed(gate.run(lambda store: task_add(
            store, title, claim, due_at, entities, body=body, tags=tags,
            importance=importance, task_status=status)))

    @tool("task_status", title="Set a task's status", annotations=ADD_ONCE)
    def task_status_tool(
        path: Annotated[str, Field(max_length=PATH_MAX,
                                   description="The task's path, as task_list returns it."
                                               + _capped(PATH_MAX))],
        status: Annotated[TaskStatus, Field(
            description="todo, doing or blocked; done finishes the task and archives it.")],
    ) -> Annotated[Out, Committed]:
        """Move a task through todo, doing and blocked, or finish it with done (which
        archives it). Returns the path, where a finished task was archived to, and the
        commit id."""
        archived = path if status == "done" else None
        return _landed(gate.run(lambda store: task_status(store, path, status)), path,
                       archived=archived)
