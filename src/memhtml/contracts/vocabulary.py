"""The closed vocabularies every room shares.

Each vocabulary is a ``Literal`` type for the checker and a tuple for the
runtime, kept side by side so a value read from a file can be narrowed to the
type by membership alone.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

MemoryType = Literal[
    "episodic",
    "semantic",
    "procedural",
    "agent_insight",
    "user_preference",
    "error_pattern",
    "verdict",
    "precedent",
    "arc",
    "task",
]
MEMORY_TYPES: tuple[MemoryType, ...] = get_args(MemoryType)

MemoryStatus = Literal["active", "archived"]
MEMORY_STATUSES: tuple[MemoryStatus, ...] = get_args(MemoryStatus)

TaskStatus = Literal["todo", "doing", "blocked", "done"]
TASK_STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)

EdgeRel = Literal[
    "supersedes",
    "contradicts",
    "caused_by",
    "leads_to",
    "part_of",
    "relates_to",
    "example_of",
    "supports",
    "laterally_related",
    "about_person",
    "authored_by",
    "from_session",
    "blocks",
    "subtask_of",
]
EDGE_RELS: tuple[EdgeRel, ...] = get_args(EdgeRel)

DAY_FACET = "day"
"""The facet (``<dt>day</dt>`` in the article's ``<dl>``, its ``<dd>`` naming the day,
best as ``<time datetime="YYYY-MM-DD">``) that makes an ``episodic`` memory a dated
episode: the record of what happened on one day. Compress summarizes such a record
instead of absorbing it; every other phase treats it as any memory."""


def is_memory_type(value: str) -> TypeGuard[MemoryType]:
    """True when ``value`` names one of the ten memory types."""
    return value in MEMORY_TYPES


def is_memory_status(value: str) -> TypeGuard[MemoryStatus]:
    """True when ``value`` is ``active`` or ``archived``."""
    return value in MEMORY_STATUSES


def is_task_status(value: str) -> TypeGuard[TaskStatus]:
    """True when ``value`` is one of the four task lifecycle positions."""
    return value in TASK_STATUSES


def is_edge_rel(value: str) -> TypeGuard[EdgeRel]:
    """True when ``value`` is one of the fourteen edge rels (unprefixed)."""
    return value in EDGE_RELS


OWN_SCOPE: Final = "own"
"""The scope name of the store a command was pointed at, beside the other stores it
reads (``[scopes]`` in the user's config): what every read spans first and every write
goes to unless another scope is named."""
