"""What the tools answer: small typed results, and their compact text for a model.

Every result is sent twice, as the MCP spec asks of a tool with an output schema:
``structuredContent`` for a client that reads fields, and one text block for the
model. The text is the same JSON without whitespace or empty fields, because a
model's context is the scarce resource here. Every path a result names is in tree
form (``areas/inbox/x.html``), the form every tool accepts, so a model can pass any
path it is shown straight back.

A memory is shown the same way wherever it appears (a hit, a recent write, a
neighbour, a folder entry): ``Brief`` carries what a model needs to decide whether
to read it, including whether the fact still holds (``valid``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from memhtml.compose import error_code
from memhtml.compose.search import Searched
from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.head import SearchHit
from memhtml.head.when import Holds, holds_of
from memhtml.mcp.arguments import tool_error
from memhtml.store import Landed, Related, StoreError, TaskRow, describe
from memhtml.store.layout import original_of_archived
from memhtml.store.listing import status_of

SCORE_DIGITS = 5
"""Fused scores are reciprocal-rank sums around 0.01-0.03: five decimals keep every
difference that changes an order and drop the float noise."""
RAW_DIGITS = 4
"""An arm's own score (BM25, cosine): four decimals are more than a reader compares."""

FIXES = {
    "ERR_NOT_FOUND": "find the path with memory_search or memory_list",
    "ERR_DUPLICATE_CLAIM": "memory_read or memory_correct that memory, or call again with "
                           "allow_duplicate true to store a copy",
    "ERR_DANGLING_LINKS": "find each target's path with memory_search or memory_list, or "
                          "write it first",
    "ERR_PATH_REFUSED": "give a path inside the store, e.g. areas/inbox/x.html",
    "ERR_INVALID_MEMORY": "fix every listed problem and call again",
    "ERR_REF_MOVED": "call again",
}
"""What to do next, by error code, where the store's own line does not say it."""


def expired(valid_until: str | None, now: str) -> bool:
    """Past its ``valid_until``: an instant against now, a date against today's date
    (a bound of today lapses only when the day is over), as curation judges it."""
    if valid_until is None:
        return False
    if len(valid_until) == len("YYYY-MM-DD"):
        return valid_until < now[:10]
    return valid_until < now


class Brief(BaseModel):
    path: str
    title: str
    type: str
    claim: str
    updated: str
    status: str = Field(description="active, archived, or a task's status.")
    valid: bool = Field(description="False once valid_until has passed.")
    valid_until: str | None = None
    scope: str | None = Field(default=None, description=(
        "The scope it is in (own: this store), when scopes are configured."))


def brief_fields(record: MemoryRecord, now: str) -> dict[str, Any]:
    return {"path": record.path, "title": record.title, "type": record.memory_type,
            "claim": record.claim, "updated": record.updated_at,
            "status": status_of(record), "valid": not expired(record.valid_until, now),
            "valid_until": record.valid_until}


def brief(record: MemoryRecord, now: str) -> Brief:
    return Brief(**brief_fields(record, now))


class ArmScore(BaseModel):
    arm: str = Field(description="lexical or vector.")
    rank: int = Field(description="The hit's rank in that arm, 1 first.")
    score: float = Field(description="The arm's own score: BM25 for lexical, cosine for "
                                     "vector.")


class Hit(Brief):
    score: float = Field(description="Fused rank score; compare within one answer only.")
    arms: list[str] = Field(description=(
        "The arms that ranked the hit (lexical, vector), and recency when its fused score "
        "tied another hit's and the newer one was put first."))
    ranks: list[ArmScore] = Field(description="Each arm's rank and own score (BM25, cosine).")
    holds_since: str = Field(description="valid_from, else its event or write time.")
    holds_until: str | None = None


class When(BaseModel):
    phrase: str | None = None
    start: str | None = None
    end: str | None = None
    as_of: str | None = None


class SearchResult(BaseModel):
    hits: list[Hit]
    mode: str = Field(description="hybrid when the vector arm ranked too, else lexical")
    note: str | None = None
    when: When | None = Field(default=None, description="Span read from the query, as_of.")


class Link(BaseModel):
    """An outbound edge as ``memory_write`` takes one back (``rel``, ``target``)."""

    rel: str
    target: str


class ReadResult(BaseModel):
    path: str
    tier: str
    text: str
    title: str
    type: str
    status: str
    created: str
    updated: str
    valid: bool
    valid_from: str | None = None
    valid_until: str | None = None
    due: str | None = None
    confidence: float | None = None
    importance: int | None = None
    author: str | None = None
    superseded_by: str | None = None
    entities: list[str]
    tags: list[str]
    links: list[Link]


class Edge(BaseModel):
    rel: str
    path: str
    exists: bool


class RelatedResult(BaseModel):
    path: str
    outbound: list[Edge]
    inbound: list[Edge]


class Committed(BaseModel):
    path: str = Field(description="The memory the call was about (the new one for a correction).")
    commit: str = Field(description="The commit it landed as (the tip if nothing changed).")
    changed: list[str] = Field(description="Paths the commit touched; empty if none.")
    archived_to: str | None = None
    note: str | None = None


def _pruned(value: Any) -> Any:
    """``value`` without nulls and empty lists, for the text a model reads."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def compact_json(value: Any) -> str:
    """JSON with no spaces and real characters rather than escapes (fewer tokens)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def answer(result: BaseModel, text: str | None = None) -> CallToolResult:
    """A successful tool result: the model's fields, and the text a model reads."""
    structured = result.model_dump(mode="json")
    shown = text if text is not None else compact_json(_pruned(structured))
    return CallToolResult(content=[TextContent(type="text", text=shown)],
                          structured_content=structured)


def refusal(error: StoreError) -> CallToolResult:
    """A tool error: the stable code, the store's own account (every violation
    listed), and what to do next."""
    code = error_code(error)
    line = describe(error)
    fix = FIXES.get(code)
    return tool_error(code, line if fix is None else f"{line}. Next: {fix}.")


def hit_of(hit: SearchHit, record: MemoryRecord | None, now: str) -> Hit:
    """A search hit with the memory's brief; ``record`` is None only if the version
    searched lost the path, which a hit from that version cannot do."""
    fields = brief_fields(record, now) if record is not None else {
        "path": hit.path, "title": "", "type": "", "claim": hit.claim, "updated": "",
        "status": "active", "valid": True}
    ranks = [ArmScore(**{**asdict(r), "score": round(r.score, RAW_DIGITS)})
             for r in hit.ranks]
    holds = holds_of(record) if record is not None else Holds("", None, False)
    return Hit(**fields, score=round(hit.score, SCORE_DIGITS), arms=list(hit.arms),
               ranks=ranks, holds_since=holds.since, holds_until=holds.until)


def search_result(found: Searched, records: dict[str, MemoryRecord], now: str
                  ) -> SearchResult:
    when = found.when
    return SearchResult(mode=found.mode, note=found.note,
                        hits=[hit_of(h, records.get(h.path), now) for h in found.hits],
                        when=None if when is None or (when.phrase is None and when.as_of is None)
                        else When(**asdict(when)))


def read_result(record: MemoryRecord, tier: str, text: str, now: str) -> ReadResult:
    return ReadResult(
        path=record.path, tier=tier, text=text, title=record.title,
        type=record.memory_type, status=status_of(record), created=record.created_at,
        updated=record.updated_at, valid=not expired(record.valid_until, now),
        valid_from=record.valid_from, valid_until=record.valid_until, due=record.due_at,
        confidence=record.confidence, importance=record.importance, author=record.author,
        superseded_by=None if record.superseded_by is None
        else to_tree_path(record.superseded_by),
        entities=list(record.entities), tags=list(record.tags),
        links=[Link(rel=link.rel, target=to_tree_path(link.href)) for link in record.links],
    )


def related_result(related: Related) -> RelatedResult:
    """Outbound edges say whether their target exists; an inbound edge's source is a
    memory in the same version by construction, so it always does."""
    return RelatedResult(
        path=related.path,
        outbound=[Edge(rel=o.rel, path=to_tree_path(o.href), exists=o.exists)
                  for o in related.outbound],
        inbound=[Edge(rel=i.rel, path=i.path, exists=True) for i in related.inbound],
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


class Task(BaseModel):
    path: str
    title: str
    status: str
    due_at: str | None = None
    overdue: bool


class TaskListResult(BaseModel):
    tasks: list[Task]


def task_list_result(rows: list[TaskRow]) -> TaskListResult:
    return TaskListResult(tasks=[
        Task(path=r.path, title=r.title, status=r.status, due_at=r.due_at, overdue=r.overdue)
        for r in rows
    ])
