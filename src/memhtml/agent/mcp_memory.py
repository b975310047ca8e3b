"""The official MCP memory server's knowledge graph, read for import.

That server keeps its graph in one JSON-lines file: ``{"type": "entity", "name",
"entityType", "observations": [...]}`` and ``{"type": "relation", "from", "to",
"relationType"}``, one object a line. ``read_graph`` reads it whole or refuses it
whole, every problem named by line (a line that is not JSON or not an object, an
unknown ``type``, a field missing or of the wrong type, a name or observation past
its bound, more than ``MAX_ITEMS`` items), so an import never lands half a graph.

What becomes of it (``memories_of``): an entity is one memory in ``FOLDER``, titled by
its name, its first observation the claim and the rest its body, labelled with the
entity ``<entityType>:<name>`` (the type folded to the entity grammar's lowercase
word). An entity named twice is one memory with both lines' observations, in order,
each once. A relation is an edge from its ``from`` memory to its ``to`` memory: its
type when it is one of the format's relations (``part_of``, ``caused_by``...), else
``relates_to``; either way its words are kept as a line of the source memory's body
("works_at: Acme Corp"), so no relation type is lost to the vocabulary. A relation
naming an entity the file does not hold is kept as that line alone.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from memhtml.contracts.vocabulary import EDGE_RELS

FOLDER: Final = "resources/mcp-memory/"
MAX_ITEMS: Final = 100_000
MAX_TEXT: Final = 10_000
"""The longest name, type or observation taken, in characters."""
SHOWN: Final = 20

_SLUG = re.compile(r"[^a-z0-9]+")
_TYPE = re.compile(r"[^a-z0-9_-]+")


@dataclass
class Entity:
    name: str
    entity_type: str
    observations: list[str] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)
    """``(relationType, to)`` of its outgoing relations, in file order."""


@dataclass(frozen=True)
class Graph:
    entities: dict[str, Entity]
    relations: tuple[tuple[str, str, str], ...]
    """``(from, relationType, to)``, in file order, each once."""


def _text(value: object, what: str, line: int, problems: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"line {line}: {what} is not a non-empty string")
        return None
    if len(value) > MAX_TEXT or "\x00" in value:
        problems.append(f"line {line}: {what} is longer than {MAX_TEXT} characters or "
                        "holds a NUL")
        return None
    return value.strip()


def read_graph(data: bytes) -> Graph | list[str]:
    """The graph in ``data``, or every problem with it (see the module docstring)."""
    problems: list[str] = []
    entities: dict[str, Entity] = {}
    relations: list[tuple[str, str, str]] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [f"the file is not UTF-8: {exc}"]
    items = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        items += 1
        if items > MAX_ITEMS:
            return [*problems, f"more than {MAX_ITEMS} items; split the graph"]
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        if not isinstance(item, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        kind = item.get("type")
        if kind == "entity":
            name = _text(item.get("name"), "name", number, problems)
            etype = _text(item.get("entityType"), "entityType", number, problems)
            seen = item.get("observations", [])
            if not isinstance(seen, list):
                problems.append(f"line {number}: observations is not a list")
                continue
            notes = [_text(o, f"observation {i}", number, problems)
                     for i, o in enumerate(seen, start=1)]
            if name is None or etype is None or any(n is None for n in notes):
                continue
            entity = entities.setdefault(name, Entity(name, etype))
            for note in notes:
                if note is not None and note not in entity.observations:
                    entity.observations.append(note)
        elif kind == "relation":
            ends = [_text(item.get(k), k, number, problems)
                    for k in ("from", "relationType", "to")]
            if all(e is not None for e in ends):
                triple = (str(ends[0]), str(ends[1]), str(ends[2]))
                if triple not in relations:
                    relations.append(triple)
        else:
            problems.append(f"line {number}: type {kind!r} is neither entity nor relation")
    if problems:
        return problems
    for source, rel, target in relations:
        if source in entities:
            entities[source].relations.append((rel, target))
    return Graph(entities, tuple(relations))


def entity_label(entity: Entity) -> str:
    """``<type>:<name>``, the type folded to the entity grammar (lowercase letters,
    digits, ``_`` and ``-``, a letter first)."""
    folded = unicodedata.normalize("NFKD", entity.entity_type).encode("ascii", "ignore")
    kind = _TYPE.sub("-", folded.decode().lower()).strip("-")
    if not kind or not kind[0].isalpha():
        kind = f"x{kind}" if kind else "entity"
    return f"{kind}:{' '.join(entity.name.split())}"


def paths_of(entities: Sequence[Entity], taken: set[str]) -> dict[str, str]:
    """Each entity's path in ``FOLDER``: its name's slug, a counter after a slug
    another entity (or a file already there, ``taken``) holds."""
    return slug_paths(FOLDER, [e.name for e in entities], taken)


def slug_paths(folder: str, names: Sequence[str], taken: set[str]) -> dict[str, str]:
    """Each name's path in ``folder``: its slug (ASCII letters, digits and hyphens),
    with a counter after a slug another name, or a path in ``taken``, holds; names
    are placed in sorted order, so the answer depends on the set only."""
    found: dict[str, str] = {}
    used = set(taken)
    for name in sorted(set(names)):
        folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore")
        slug = _SLUG.sub("-", folded.decode().lower()).strip("-")[:60].strip("-") or "entity"
        path, n = f"{folder}{slug}.html", 2
        while path in used:
            path, n = f"{folder}{slug}-{n}.html", n + 1
        used.add(path)
        found[name] = path
    return found


def edge_of(relation: str) -> str:
    """The format's relation a relation type names, else ``relates_to``."""
    word = "_".join(relation.lower().replace("-", " ").split())
    return word if word in EDGE_RELS else "relates_to"


__all__ = ["FOLDER", "Entity", "Graph", "edge_of", "entity_label", "paths_of", "read_graph",
           "slug_paths"]
