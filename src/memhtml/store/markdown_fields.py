"""A note's frontmatter fields, each sorted into its place in a memory file.

Every field is kept. The fields a memory file has a place for go there: ``name`` or
``title`` the title, ``description`` the claim, ``type`` the memory type, ``tags``,
``aliases`` and ``entities`` the head's lists, ``created``/``updated`` the write
stamps, ``edges`` the links, and the other metas by their own names (``confidence``,
``importance``, ``author``, ``session``, ``prompt``, ``turn``, ``valid_from``,
``valid_until``, ``due``, ``task_status``, ``reprieves``, ``needs_revision``), which
is what ``export markdown`` writes. A value its place cannot hold exactly
(``importance: high``, a confidence of three decimals, a ``task_status`` on a note that
is not a task) and every other field becomes a facet instead, so nothing a person
wrote silently disappears, and nothing is rounded or retyped on the way in.

Which key each value came from, in which order, and how each facet was written (plain,
quoted, a list, nested) is the note's key list (``keys``): the memory keeps it in its
``memhtml-source-shape`` meta, and the export writes the frontmatter back from it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memhtml.contracts.vocabulary import (
    EdgeRel,
    MemoryType,
    TaskStatus,
    is_edge_rel,
    is_memory_type,
    is_task_status,
)
from memhtml.format.datetimes import is_valid_datetime
from memhtml.store.markdown_front import Quoted, ascii_collapsed, instant_of

TYPE_MAP: dict[str, MemoryType] = {
    "user": "user_preference",
    "feedback": "agent_insight",
    "project": "arc",
    "reference": "semantic",
}
"""The agent-memory types, one to one onto memory types, so two never collapse:
``user`` (who the person is, what they prefer) is a user preference, ``feedback``
(how to work, learned from being corrected) an agent insight, ``project`` (ongoing
work and its course) an arc, ``reference`` (where things are) a semantic fact. A
type that already names a memory type is kept; any other becomes ``semantic``. The
value as written stays as the ``type`` facet unless it is the memory type's own name,
so nothing is lost either way."""

ROLE_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("title", ("name", "title")),
    ("claim", ("description",)),
    ("type", ("type",)),
    ("tags", ("tags", "tag")),
    ("aliases", ("aliases", "alias")),
    ("entities", ("entities",)),
    ("created", ("created", "created_at", "date")),
    ("updated", ("updated", "updated_at", "modified")),
    ("confidence", ("confidence",)),
    ("importance", ("importance",)),
    ("author", ("author",)),
    ("session", ("session",)),
    ("prompt", ("prompt",)),
    ("turn", ("turn",)),
    ("valid_from", ("valid_from",)),
    ("valid_until", ("valid_until",)),
    ("reprieves", ("reprieves",)),
    ("needs_revision", ("needs_revision",)),
    ("task_status", ("task_status",)),
    ("due", ("due",)),
    ("edges", ("edges",)),
)
"""Each place a field can go, with the keys that name it, the first one present
winning (a second spelling of the same place is a facet). The order is the export's
default order, for a memory that was not imported."""
ROLES: frozenset[str] = frozenset(role for role, _ in ROLE_KEYS)

OWN_FACET_PREFIX = "memhtml-source"
"""Fields of that name are the import's own (an export of an earlier release wrote
them); one in the input is not copied, so a memory never ends with two sets."""

PLAIN, QUOTED, EMPTY, LIST, NESTED = "=", "'", "~", "[", "{"
"""How a facet's value was written: a plain scalar, a quoted or block scalar, no value,
a list of scalars (followed by each item's own code), anything else (kept as JSON)."""

_WIKILINK = re.compile(r"^\[\[(.+?)\]\]$")


@dataclass(frozen=True, slots=True)
class FacetField:
    """A field kept as a facet: its key, how it was written, its values (one
    ``<dd>`` each; a scalar one, a list one per item, a nested value its JSON)."""

    key: str
    code: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Front:
    """What the frontmatter says, split by where each field goes."""

    title: str | None = None
    description: str | None = None
    type: str | None = None
    """The ``type`` as written."""
    memory_type: MemoryType = "semantic"
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    created: str | None = None
    updated: str | None = None
    confidence: float | None = None
    importance: int | None = None
    author: str | None = None
    session: str | None = None
    prompt: str | None = None
    turn: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    needs_revision: bool | None = None
    task_status: TaskStatus | None = None
    due: str | None = None
    facets: tuple[FacetField, ...] = ()
    edges: tuple[tuple[EdgeRel, str], ...] = ()
    """(rel, target name) of each edge the ``edges`` field names."""
    keys: tuple[tuple[str, str], ...] | None = None
    """Each key in the note's order with its place (a role of ``ROLE_KEYS``) or, for a
    facet, how it was written; None when the note has no frontmatter block."""

    @property
    def facet_pairs(self) -> tuple[tuple[str, str], ...]:
        """The facets as (name, value) pairs, a list one pair per item."""
        return tuple((f.key, v) for f in self.facets for v in f.values)


def memory_type_of(raw: str | None) -> MemoryType:
    """The memory type a frontmatter ``type`` maps to (see ``TYPE_MAP``)."""
    if raw is None:
        return "semantic"
    name = raw.strip().lower().replace("-", "_")
    if is_memory_type(name):
        return name
    return TYPE_MAP.get(name, "semantic")


def number_text(value: float) -> str:
    """A confidence as the export writes it: two decimals at most, no trailing zero."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def text_of(value: object) -> str:
    """A field's value as one line of text: scalars as written, a list of scalars
    joined by commas, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, list | tuple) and all(
            not isinstance(v, dict | list | tuple) for v in value):
        return ", ".join(text_of(v) for v in value)
    if isinstance(value, str):
        # ASCII whitespace only, as the store collapses a title or claim: a no-break
        # or ideographic space is text and stays.
        return ascii_collapsed(value)
    return json.dumps(value, ensure_ascii=False)


def words_of(value: object) -> tuple[str, ...] | None:
    """A tags or aliases field: a YAML list, or a string of comma- or space-separated
    words (Obsidian accepts both); a leading ``#`` is dropped. None when it is
    neither (a nested value), which is then kept as a facet."""
    if isinstance(value, str):
        items: list[object] = [w for w in re.split(r"[,\s]+", value) if w]
    elif isinstance(value, list):
        items = list(value)
    else:
        return None
    out: list[str] = []
    for item in items:
        if isinstance(item, dict | list):
            return None
        word = text_of(item).strip().lstrip("#").strip()
        if word and word not in out:
            out.append(word)
    return tuple(out)


def _edges_of(value: object) -> tuple[tuple[EdgeRel, str], ...] | None:
    """The edges an ``edges`` mapping names, or None when it is not one this reads
    (then it is kept as a facet). A target is ``[[name]]`` (an alias after ``|`` and a
    heading after ``#`` are dropped) or a plain name."""
    if not isinstance(value, dict) or not all(is_edge_rel(str(k)) for k in value):
        return None
    out: list[tuple[EdgeRel, str]] = []
    for rel, targets in value.items():
        items = targets if isinstance(targets, list) else [targets]
        for item in items:
            if not isinstance(item, str):
                return None
            found = _WIKILINK.match(item.strip())
            name = (found.group(1) if found else item).split("|")[0].split("#")[0].strip()
            if name:
                out.append((str(rel), name))  # type: ignore[arg-type]
    return tuple(out)


def _plain(value: object) -> str | None:
    """A scalar written plain (not quoted, not a list), trimmed, or None."""
    if not isinstance(value, str) or isinstance(value, Quoted):
        return None
    return value


def _line(value: object) -> str | None:
    """A scalar on one line with nothing to trim, as a meta can hold it, or None."""
    if not isinstance(value, str) or not value or "\n" in value \
            or value != value.strip(" \t\r\f"):
        return None
    return value


def _confidence(value: object) -> float | None:
    written = _plain(value)
    if written is None or re.fullmatch(r"[01](?:\.\d{1,2})?", written) is None:
        return None
    number = float(written)
    return number if number <= 1.0 and number_text(number) == written else None


def _count(value: object, low: int, high: int) -> int | None:
    written = _plain(value)
    if written is None or re.fullmatch(r"0|[1-9]\d{0,17}", written) is None:
        return None
    number = int(written)
    return number if low <= number <= high else None


def _entities(value: object) -> tuple[str, ...] | None:
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        text = _line(item)
        if text is None or text in out:
            return None
        out.append(text)
    return tuple(out) if out else None


def _placed(role: str, value: object, memory_type: MemoryType) -> object | None:
    """The value ``role`` takes from ``value``, or None when it cannot hold it exactly
    (the field is then a facet)."""
    if role in ("title", "claim", "type"):
        return text_of(value) or None if isinstance(value, str) else None
    if role in ("tags", "aliases"):
        return words_of(value)
    if role == "entities":
        return _entities(value)
    if role in ("created", "updated"):
        return instant_of(value)
    if role == "confidence":
        return _confidence(value)
    if role == "importance":
        return _count(value, 1, 10)
    if role == "reprieves":
        return _count(value, 0, 10**18)
    if role == "needs_revision":
        written = _plain(value)
        return {"true": True, "false": False}.get(written) if written else None
    if role in ("author", "session", "prompt", "turn"):
        return _line(value)
    if role in ("valid_from", "valid_until", "due"):
        written = _line(value)
        return written if written is not None and is_valid_datetime(written) else None
    if role == "task_status":
        written = _plain(value)
        return written if memory_type == "task" and written and is_task_status(
            written) else None
    if role == "edges":
        return _edges_of(value)
    raise ValueError(f"no place named {role}")


def facet_of(key: str, value: object) -> FacetField:
    """A field kept as a facet, with how it was written."""
    if value is None:
        return FacetField(key, EMPTY, ("",))
    if isinstance(value, str):
        return FacetField(key, QUOTED if isinstance(value, Quoted) else PLAIN, (value,))
    if isinstance(value, list) and all(v is None or isinstance(v, str) for v in value):
        codes = "".join(EMPTY if v is None else QUOTED if isinstance(v, Quoted) else PLAIN
                        for v in value)
        return FacetField(key, LIST + codes, tuple(v or "" for v in value))
    return FacetField(key, NESTED, (json.dumps(value, ensure_ascii=False),))


def read_front(fields: dict[str, object] | None) -> Front:
    """The mapping sorted into the memory's places; every other field a facet.
    ``fields`` is None when the note has no frontmatter block."""
    if fields is None:
        return Front()
    chosen: dict[str, str] = {}
    for place, spellings in ROLE_KEYS:
        first = next((k for k in spellings if k in fields and fields[k] is not None), None)
        if first is not None:
            chosen[first] = place
    written_type = fields.get("type") if chosen.get("type") == "type" else None
    memory_type = memory_type_of(written_type if isinstance(written_type, str) else None)
    placed: dict[str, object] = {}
    keys: list[tuple[str, str]] = []
    facets: list[FacetField] = []
    for name, value in fields.items():
        role = chosen.get(name)
        found = _placed(role, value, memory_type) if role is not None else None
        if role is not None and found is not None:
            placed[role] = found
            keys.append((name, role))
            if role == "type" and found != memory_type:
                facets.append(FacetField("type", PLAIN, (str(value),)))
            continue
        if name.startswith(OWN_FACET_PREFIX):
            continue
        facet = facet_of(name, value)
        facets.append(facet)
        keys.append((name, facet.code))
    return Front(
        title=_str(placed.get("title")), description=_str(placed.get("claim")),
        type=_str(placed.get("type")), memory_type=memory_type,
        tags=_strs(placed.get("tags")), aliases=_strs(placed.get("aliases")),
        entities=_strs(placed.get("entities")), created=_str(placed.get("created")),
        updated=_str(placed.get("updated")),
        confidence=placed.get("confidence"),  # type: ignore[arg-type]
        importance=placed.get("importance"),  # type: ignore[arg-type]
        author=_str(placed.get("author")), session=_str(placed.get("session")),
        prompt=_str(placed.get("prompt")), turn=_str(placed.get("turn")),
        valid_from=_str(placed.get("valid_from")),
        valid_until=_str(placed.get("valid_until")),
        reprieves=placed.get("reprieves"),  # type: ignore[arg-type]
        needs_revision=placed.get("needs_revision"),  # type: ignore[arg-type]
        task_status=placed.get("task_status"),  # type: ignore[arg-type]
        due=_str(placed.get("due")), facets=tuple(facets),
        edges=placed.get("edges") or (),  # type: ignore[arg-type]
        keys=tuple(keys))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strs(value: object) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else ()


__all__ = [
    "EMPTY",
    "LIST",
    "NESTED",
    "PLAIN",
    "QUOTED",
    "ROLES",
    "ROLE_KEYS",
    "TYPE_MAP",
    "FacetField",
    "Front",
    "facet_of",
    "memory_type_of",
    "number_text",
    "read_front",
    "text_of",
    "words_of",
]
