"""Output caps sized to the answer: the most tokens an answer of a schema can need.

A phase's answer is small and bounded (keys, a verdict, a confidence, a short claim),
so a flat cap of thousands of tokens buys nothing but the time a weak model spends
looping to it: on a small local model one call ran ten minutes to a 4,096-token cap.
The cap sent is therefore the schema's own bound, in characters, turned into tokens
with room to spare, and never above the phase's ceiling. Where the schema leaves a
size open (an array with no ``maxItems``, a string with no ``maxLength``) a stated
default stands in: an array of a batch's answer holds at most one entry a member, and
an open array inside one of those (a cluster's members) at most ``NESTED_ITEMS`` or its
``minItems``, since the entries of all of them together name each member once at most.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Final

CHARS_PER_TOKEN: Final = 3.0
"""Characters of compact JSON a token covers at the least, across the tokenizers of
the models in use (keys and punctuation tokenize worse than prose)."""
MARGIN: Final = 1.25
"""Room for the whitespace a decoder may put between tokens, and for escapes."""
FLOOR_TOKENS: Final = 128
"""No cap below this: the answer of the smallest schema still needs its punctuation."""
OPEN_STRING_CHARS: Final = 600
"""The length a string with no ``maxLength`` is counted at."""
OPEN_ITEMS: Final = 16
"""The entries an array with no ``maxItems`` is counted at, when the caller names no
member count."""
NESTED_ITEMS: Final = 2
"""The entries an open array inside an open array is counted at (see above)."""
_NUMBER_CHARS: Final = 24


def answer_chars(schema: Mapping[str, object], items: int | None = None,
                 *, nested: bool = False) -> int:
    """The most characters of compact JSON an answer to ``schema`` can take, arrays
    with no ``maxItems`` counted at ``items`` entries (default ``OPEN_ITEMS``), or at
    ``NESTED_ITEMS`` when ``nested`` inside one such."""
    open_items = OPEN_ITEMS if items is None else max(items, 1)
    if "const" in schema:
        return _encoded(schema["const"])
    members = schema.get("enum")
    if isinstance(members, list) and members:
        return max(_encoded(member) for member in members)
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared
    kinds = [t for t in types if isinstance(t, str)] if isinstance(types, list) else []
    return max((_kind_chars(kind, schema, open_items, nested) for kind in kinds), default=4)


def output_token_cap(schema: Mapping[str, object], ceiling: int,
                     items: int | None = None) -> int:
    """The output cap to send for an answer to ``schema``: its bound in tokens with
    ``MARGIN``, at least ``FLOOR_TOKENS`` and at most ``ceiling`` (the phase's own)."""
    bound = math.ceil(answer_chars(schema, items) / CHARS_PER_TOKEN * MARGIN)
    return max(1, min(ceiling, max(FLOOR_TOKENS, bound)))


def _kind_chars(kind: str, schema: Mapping[str, object], items: int, nested: bool) -> int:
    if kind == "object":
        properties = schema.get("properties")
        named = list(properties.items()) if isinstance(properties, Mapping) else []
        inner = sum(_encoded(name) + 1 + (answer_chars(sub, items, nested=nested)
                                          if isinstance(sub, Mapping) else 4)
                    for name, sub in named)
        return 2 + inner + max(len(named) - 1, 0)
    if kind == "array":
        most, least = schema.get("maxItems"), schema.get("minItems")
        bounded = isinstance(most, int) and not isinstance(most, bool)
        floor = least if isinstance(least, int) and not isinstance(least, bool) else 0
        count = most if isinstance(most, int) and bounded else (
            max(NESTED_ITEMS, floor) if nested else items)
        sub = schema.get("items")
        each = answer_chars(sub, items, nested=nested or not bounded) \
            if isinstance(sub, Mapping) else 4
        return 2 + count * (each + 1)
    if kind == "string":
        most = schema.get("maxLength")
        return 2 + (most if isinstance(most, int) and not isinstance(most, bool)
                    else OPEN_STRING_CHARS)
    if kind in {"number", "integer"}:
        return _NUMBER_CHARS
    if kind == "boolean":
        return 5
    return 4


def _encoded(value: object) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return OPEN_STRING_CHARS
