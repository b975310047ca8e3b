"""What a note had that its memory keeps elsewhere: the ``memhtml-source-shape`` meta.

A memory holds a note's values in their places (the title, the claim, the tags, the
facets), but not what the note looked like around them: which frontmatter keys it
used and in which order (``title`` or ``name``, ``date`` or ``created``), how each
other field was written (plain, quoted, a list), whether the claim paragraph was the
import's own addition, which tags came from ``--tag`` rather than the note, and which
were written only as ``#tags`` in the body. That is this value, kept in the head as
compact JSON so the export can write the note back as it was; search never sees it.

>>> shape = Shape(keys=(("name", "title"), ("type", "type"), ("owner", "=")),
...               lead=True, added=("imported",))
>>> encode_shape(shape)
'{"keys":[["name","title"],["type","type"],["owner","="]],"lead":true,"added":["imported"]}'
>>> decode_shape(encode_shape(shape)) == shape
True
>>> decode_shape("not json") is None
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["Shape", "decode_shape", "encode_shape"]


@dataclass(frozen=True, slots=True)
class Shape:
    keys: tuple[tuple[str, str], ...] | None = None
    """The frontmatter's keys in order, each with its place (``markdown_fields.ROLES``)
    or, for a facet, how it was written (``markdown_fields.PLAIN`` ...); None when the
    note had no frontmatter block."""
    lead: bool = False
    """The import added the claim's paragraph before the body (the note's claim is its
    ``description``, or a sentence the body could not mark where it stands)."""
    added: tuple[str, ...] = ()
    """Tags the import gave (``--tag``) that the note does not name."""
    body_tags: tuple[str, ...] = ()
    """Tags named only as ``#tags`` in the body, not in the frontmatter."""
    entities: tuple[str, ...] = ()
    """The entities the note's own ``entities`` field named (a re-import tells the
    note's labels from the store's by them)."""


def encode_shape(shape: Shape) -> str:
    """The meta's value: compact JSON, empty parts left out."""
    data: dict[str, object] = {}
    if shape.keys is not None:
        data["keys"] = [list(pair) for pair in shape.keys]
    if shape.lead:
        data["lead"] = True
    if shape.added:
        data["added"] = list(shape.added)
    if shape.body_tags:
        data["body_tags"] = list(shape.body_tags)
    if shape.entities:
        data["entities"] = list(shape.entities)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


def decode_shape(text: str | None) -> Shape | None:
    """The shape a meta's value says, or None when there is none or it does not read
    (a hand-edited value): the export then writes the memory as the store has it."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    keys = data.get("keys")
    pairs: tuple[tuple[str, str], ...] | None = None
    if keys is not None:
        if not isinstance(keys, list) or not all(
                isinstance(k, list) and len(k) == 2 and all(isinstance(x, str) for x in k)
                for k in keys):
            return None
        pairs = tuple((k[0], k[1]) for k in keys)
    added = _strings(data.get("added", []))
    body_tags = _strings(data.get("body_tags", []))
    entities = _strings(data.get("entities", []))
    if added is None or body_tags is None or entities is None:
        return None
    return Shape(pairs, data.get("lead") is True, added, body_tags, entities)
