"""JSON text in and out: one canonical encoding, one strict parse.

The canonical encoding (sorted keys, no spaces, UTF-8 as is) makes a request's bytes a
function of its content alone, so two runs over the same corpus send identical bytes
and a provider's prompt cache sees one prefix. The strict parse refuses what Python's
``json`` module quietly accepts but JSON does not: ``NaN`` and ``Infinity``, and an
object that repeats a key (the module would keep the last value, so one of two
conflicting answers would be dropped without a word).
"""

from __future__ import annotations

import json
import re
from typing import Final

from returns.pipeline import is_successful
from returns.result import Failure, Result, Success


def encode_json(value: object, *, ordered: bool = False) -> Result[bytes, str]:
    """The canonical UTF-8 bytes of ``value``, or why it is not JSON (a NaN, a key that
    is not a string, an object of no JSON kind, nesting too deep to encode). With
    ``ordered`` the objects keep the order they were built in, for a value whose order
    is meaningful and already canonical (a request body whose schema lists its
    properties in the order the answer is to be written: see ``wire.canonical_order``)."""
    try:
        text = json.dumps(value, sort_keys=not ordered, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
        # A lone surrogate is a str Python holds but UTF-8 cannot: refused here too
        # (UnicodeEncodeError is a ValueError).
        return Success(text.encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        return Failure(f"not encodable as JSON: {exc}")


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def parse_json(data: str | bytes) -> Result[object, str]:
    """The value of one JSON text, or why it is not one. Total: it never raises, even on
    nesting deeper than the parser can follow."""
    try:
        value = json.loads(data, parse_constant=_refuse_constant,
                           object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:
        # ValueError covers a decode error, a bad encoding (UnicodeDecodeError) and an
        # integer past the interpreter's digit limit.
        return Failure(f"not valid JSON: {exc}")
    if _may_hold_a_surrogate(data) and not is_successful(encode_json(value)):
        return Failure("not valid JSON text: a string holds a lone surrogate, which no "
                       "UTF-8 file can hold")
    return Success(value)


_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def _may_hold_a_surrogate(data: str | bytes) -> bool:
    """Whether a parsed value could carry a lone surrogate: only through a ``\\uD8..``
    to ``\\uDF..`` escape, or a text that already holds a surrogate. The cheap test keeps
    the re-encoding check off the common path."""
    if isinstance(data, bytes):
        # Read the bytes the way json.loads does (it accepts UTF-8, -16 and -32).
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    return _SURROGATE_ESCAPE.search(data) is not None
