"""What the tools answer: small typed results, and their compact text for a model.

Every result is sent twice, as the MCP spec asks of a tool with an output schema:
``structuredContent`` for a client that reads fields, and one text block for the
model. The text is the same JSON without whitespace or empty fields, because a
model's context is the scarce resource here; ``memory_read`` answers with the tier's
text alone. Every path a result names is in tree form (``areas/inbox/x.html``), the
form every tool accepts, so a model can pass any path it is shown straight back.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from memhtml.compose.search import Searched
from memhtml.contracts.paths import to_tree_path
from memhtml.store import Landed, Related, StoreError, StoreStatus, TaskRow, describe
from memhtml.store.layout import original_of_archived

SCORE_DIGITS = 5
"""Fused scores are reciprocal-rank sums around 0.01-0.03: five decimals keep every
difference that changes an order and drop the float noise."""
SKIPPED_SHOWN = 20


class Hit(BaseModel):
    path: str
    claim: str
    score: float
    arms: list[str] | None = Field(default=None, description="The arms that ranked the hit.")


class SearchResult(BaseModel):
    hits: list[Hit]
    mode: str = Field(description="hybrid when the vector arm ranked too, else lexical")
    note: str | None = Field(default=None, description="Why search stayed lexical when "
                             "an embedder is configured.")


class ReadResult(BaseModel):
    path: str
    tier: str
    text: str


class Edge(BaseModel):
    rel: str
    path: str
    exists: bool | None = Field(
        default=None, description="Outbound only: whether a memory is at the target path.")


class RelatedResult(BaseModel):
    path: str
    outbound: list[Edge]
    inbound: list[Edge]


class Committed(BaseModel):
    path: str = Field(description="The memory the call was about (the new one for a correction).")
    commit: str = Field(description="The commit the change landed as (the tip, when nothing "
                                    "needed to change).")
    changed: list[str] = Field(description="Every path the commit touched; empty when the "
                                           "memory already was as asked.")
    archived_to: str | None = Field(default=None, description="Where the archived memory now "
                                                              "lives, under archive/<YYYY>/.")


class Task(BaseModel):
    path: str
    title: str
    status: str
    due_at: str | None = None
    overdue: bool


class TaskListResult(BaseModel):
    tasks: list[Task]


class Skipped(BaseModel):
    path: str
    reason: str


class StatusResult(BaseModel):
    commit: str | None
    memories: int
    by_type: dict[str, int]
    by_status: dict[str, int]
    tasks: dict[str, int]
    overdue: int
    skipped: int = Field(description="Files in the tree that are not valid memories.")
    skipped_files: list[Skipped] = Field(
        default_factory=list, description=f"The first {SKIPPED_SHOWN} of them, with why.")


def compact_json(value: Any) -> str:
    """JSON with no spaces and real characters rather than escapes (fewer tokens)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def answer(result: BaseModel, text: str | None = None) -> CallToolResult:
    """A successful tool result: the model's fields, and the text a model reads."""
    structured = result.model_dump(mode="json")
    shown = text if text is not None else compact_json(result.model_dump(mode="json",
                                                                         exclude_none=True))
    return CallToolResult(content=[TextContent(type="text", text=shown)],
                          structured_content=structured)


def refusal(error: StoreError) -> CallToolResult:
    """A tool error: the store's own one-line account, every violation listed."""
    return CallToolResult(content=[TextContent(type="text", text=describe(error))],
                          is_error=True)


def search_result(found: Searched, explain: bool) -> SearchResult:
    return SearchResult(mode=found.mode, note=found.note, hits=[
        Hit(path=h.path, claim=h.claim, score=round(h.score, SCORE_DIGITS),
            arms=list(h.arms) if explain else None)
        for h in found.hits
    ])


def related_result(related: Related) -> RelatedResult:
    return RelatedResult(
        path=related.path,
        outbound=[Edge(rel=o.rel, path=to_tree_path(o.href), exists=o.exists)
                  for o in related.outbound],
        inbound=[Edge(rel=i.rel, path=i.path) for i in related.inbound],
    )


def archived_path(landed: Landed, original: str) -> str | None:
    """Where ``original`` went, read off the commit's own paths."""
    return next((p for p in landed.paths if original_of_archived(p) == original), None)


def committed(landed: Landed, path: str, archived: str | None = None) -> Committed:
    """``path`` is what the call was about; ``archived`` an original path whose archive
    location the answer should name."""
    return Committed(
        path=path,
        commit=landed.commit,
        changed=list(landed.paths),
        archived_to=None if archived is None else archived_path(landed, archived),
    )


def task_list_result(rows: list[TaskRow]) -> TaskListResult:
    return TaskListResult(tasks=[
        Task(path=r.path, title=r.title, status=r.status, due_at=r.due_at, overdue=r.overdue)
        for r in rows
    ])


def status_result(status: StoreStatus) -> StatusResult:
    return StatusResult(
        commit=status.commit,
        memories=status.memories,
        by_type=dict(status.by_type),
        by_status=dict(status.by_status),
        tasks=dict(status.tasks),
        overdue=status.overdue,
        skipped=len(status.skipped),
        skipped_files=[Skipped(path=s.path, reason=s.reason)
                       for s in status.skipped[:SKIPPED_SHOWN]],
    )
