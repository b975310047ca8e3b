"""The strict answer check, over the small JSON-Schema subset the phases use.

A model's answer decides what sleep writes into files, so it is read the way untrusted
input is: every violation is listed with its JSON path, and nothing is coerced. ``"1"``
is not a number, ``true`` is not a number (Python's ``bool`` is an ``int``, so this is
checked by hand), and ``1.0`` is not an integer. The last one is a choice: JSON text
``1.0`` parses to a Python ``float``, and the answer is handed on unchanged, so
accepting it for an integer field would put a float where the phase indexes, counts or
slices, or would mean converting it, which is the coercion this check exists to refuse.

Strictness also covers the schema itself. A keyword outside the subset is refused by
``validate_schema`` rather than skipped, because a skipped ``pattern`` or ``anyOf``
would read as a constraint and hold nothing. An object schema is closed: a missing
``additionalProperties`` means ``false``, and ``true`` is refused. Every declared
property must be listed in ``required`` (an optional field is a type list with
``"null"``): that is what OpenAI's strict structured output demands, so one schema
serves both dialects and a phase's mistake is caught here, not as an HTTP 400 at night.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import VIOLATION_SEPARATOR, ModelMalformed
from memhtml.llm.errors import RequestRefused

SCHEMA_TYPES: Final = ("object", "array", "string", "number", "integer", "boolean", "null")
"""The JSON kinds a ``type`` may name."""

KEYWORDS_BY_TYPE: Final[Mapping[str, frozenset[str]]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "string": frozenset({"minLength", "maxLength"}),
    "number": frozenset({"minimum", "maximum"}),
    "integer": frozenset({"minimum", "maximum"}),
}
"""The keywords that constrain one kind of value: each needs its kind in ``type``."""

GENERAL_KEYWORDS: Final = frozenset({"type", "enum", "const"})
ANNOTATION_KEYWORDS: Final = frozenset({"description"})
"""Allowed because they guide the model; they constrain nothing, so the check reads none."""

SUPPORTED_KEYWORDS: Final = (GENERAL_KEYWORDS | ANNOTATION_KEYWORDS
                             | frozenset().union(*KEYWORDS_BY_TYPE.values()))

MAX_REPORTED_VIOLATIONS: Final = 20
"""Violations spelled out in a failure's reason; the rest are counted. An oversized or
adversarial answer can break thousands of rules, and the reason lands in reports."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOWN_CHARS = 120
_COUNT = "a non-negative integer"


# --------------------------------------------------------------------------- JSON kinds


def json_kind(value: object) -> str | None:
    """The JSON kind of a Python value as ``json.loads`` builds it: ``integer`` for an
    int, ``number`` for a finite float, and ``None`` for anything JSON cannot carry (a
    NaN, a tuple, an object with a key that is not a string)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return "object"
    return None


def json_equal(left: object, right: object) -> bool:
    """Equality of two JSON values that never coerces: ``1``, ``1.0`` and ``true`` are
    three different values here, though Python's ``==`` calls them equal."""
    kind = json_kind(left)
    if kind is None or kind != json_kind(right):
        return False
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            json_equal(left[key], right[key]) for key in left)
    return left == right


def _is_json(value: object) -> bool:
    kind = json_kind(value)
    if kind == "array" and isinstance(value, list):
        return all(_is_json(item) for item in value)
    if kind == "object" and isinstance(value, dict):
        return all(_is_json(item) for item in value.values())
    return kind is not None


def _matches(kind: str | None, types: Sequence[str]) -> bool:
    # An integer is a number; a float is never an integer (see the module's docstring).
    return kind is not None and (kind in types or (kind == "integer" and "number" in types))


def _types_of(schema: Mapping[str, object]) -> tuple[str, ...] | None:
    declared = schema.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        return tuple(str(t) for t in declared)
    return None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


# --------------------------------------------------------------------------- the schema


def validate_schema(schema: object) -> Result[Mapping[str, object], RequestRefused]:
    """``schema`` unchanged when it stays inside the subset, else every problem with its
    place (``#/properties/groups/items``). The root must be an object schema: both
    dialects hand the model an object (a tool's input, a strict response format)."""
    problems: list[str] = []
    if not isinstance(schema, Mapping):
        return Failure(RequestRefused("#: a schema must be a JSON object"))
    if schema.get("type") != "object":
        problems.append('#: the root schema must have "type": "object"')
    _schema_problems(schema, "#", problems)
    if problems:
        return Failure(RequestRefused(VIOLATION_SEPARATOR.join(problems)))
    return Success(schema)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_bound(value: object) -> bool:
    return json_kind(value) in {"integer", "number"}


def _schema_problems(node: object, where: str, out: list[str]) -> None:
    if not isinstance(node, Mapping) or not all(isinstance(key, str) for key in node):
        out.append(f"{where}: a schema must be a JSON object")
        return
    for keyword in sorted(set(node) - SUPPORTED_KEYWORDS):
        out.append(f"{where}: the keyword {keyword!r} is outside the supported subset")
    types = _type_problems(node, where, out)
    for keyword in sorted((set(node) & SUPPORTED_KEYWORDS) - GENERAL_KEYWORDS
                          - ANNOTATION_KEYWORDS):
        owners = [kind for kind, keywords in KEYWORDS_BY_TYPE.items() if keyword in keywords]
        if not set(owners) & set(types):
            out.append(f"{where}: {keyword!r} needs {' or '.join(owners)} in 'type'")
    if "description" in node and not isinstance(node["description"], str):
        out.append(f"{where}: 'description' must be a string")
    _value_problems(node, types, where, out)
    if "object" in types:
        _object_problems(node, where, out)
    if "array" in types:
        if "items" not in node:
            out.append(f"{where}: an array schema needs 'items'")
        else:
            _schema_problems(node["items"], f"{where}/items", out)
        _range_problems(node, "minItems", "maxItems", _is_count, _COUNT, where, out)
    if "string" in types:
        _range_problems(node, "minLength", "maxLength", _is_count, _COUNT, where, out)
    if "number" in types or "integer" in types:
        _range_problems(node, "minimum", "maximum", _is_bound, "a finite number", where,
                        out)


def _type_problems(node: Mapping[str, object], where: str, out: list[str]) -> tuple[str, ...]:
    if "type" not in node:
        if "enum" not in node and "const" not in node:
            out.append(f"{where}: a schema must declare 'type' (or 'enum' or 'const')")
        return ()
    declared = node["type"]
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        out.append(f"{where}: 'type' must be a type name or a non-empty list of them")
        return ()
    unknown = [n for n in names if n not in SCHEMA_TYPES]
    if unknown:
        out.append(f"{where}: unknown type {', '.join(map(repr, unknown))}")
    if len(set(names)) != len(names):
        out.append(f"{where}: 'type' repeats a name")
    return tuple(n for n in names if n in SCHEMA_TYPES)


def _value_problems(node: Mapping[str, object], types: tuple[str, ...], where: str,
                    out: list[str]) -> None:
    """``enum`` and ``const`` hold JSON values of a declared type: a member the type
    rules out could never be answered, which is a mistake in the schema."""
    offered: list[object] = []
    if "enum" in node:
        members = node["enum"]
        if not isinstance(members, list) or not members:
            out.append(f"{where}: 'enum' must be a non-empty list")
        else:
            offered.extend(members)
    if "const" in node:
        offered.append(node["const"])
    for member in offered:
        if not _is_json(member):
            out.append(f"{where}: {_shown(member)} in 'enum'/'const' is not a JSON value")
        elif types and not _matches(json_kind(member), types):
            out.append(f"{where}: {_shown(member)} in 'enum'/'const' is not of its 'type'")


def _object_problems(node: Mapping[str, object], where: str, out: list[str]) -> None:
    properties = node.get("properties")
    if not isinstance(properties, Mapping):
        out.append(f"{where}: an object schema needs 'properties' (an object, maybe empty)")
        properties = {}
    for name in sorted(properties, key=str):
        _schema_problems(properties[name], f"{where}/properties/{name}", out)
    if "additionalProperties" in node and node["additionalProperties"] is not False:
        out.append(f"{where}: 'additionalProperties' may only be false (answers are closed)")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        out.append(f"{where}: 'required' must be a list of property names")
        return
    if len(set(required)) != len(required):
        out.append(f"{where}: 'required' repeats a name")
    undeclared = sorted(set(required) - set(properties))
    if undeclared:
        out.append(f"{where}: 'required' names undeclared {', '.join(map(repr, undeclared))}")
    optional = sorted(set(properties) - set(required))
    if optional:
        out.append(f"{where}: every property must be required (make an optional one "
                   f"nullable instead): {', '.join(map(repr, optional))}")


def _range_problems(node: Mapping[str, object], low: str, high: str,
                    valid: Callable[[object], bool], what: str, where: str,
                    out: list[str]) -> None:
    bad = [keyword for keyword in (low, high) if keyword in node and not valid(node[keyword])]
    for keyword in bad:
        out.append(f"{where}: {keyword!r} must be {what}")
    lo, hi = node.get(low), node.get(high)
    if not bad and isinstance(lo, int | float) and isinstance(hi, int | float) and lo > hi:
        out.append(f"{where}: {low!r} exceeds {high!r}")


# --------------------------------------------------------------------------- the answer


def violations(schema: Mapping[str, object], value: object) -> tuple[str, ...]:
    """Every way ``value`` breaks ``schema``, in document order, each as ``<JSON path>:
    <what>`` (``$.groups[2].members[0]: expected string, got number``). Empty when it
    conforms. ``schema`` is one that ``validate_schema`` accepted (``check`` makes sure);
    any value at all may be passed, and nothing raises."""
    out: list[str] = []
    _walk(schema, value, "$", out)
    return tuple(out)


def check(schema: Mapping[str, object], value: object, *,
          model_id: str = "") -> Result[Mapping[str, object], ModelMalformed]:
    """``value`` itself (never a converted copy) when it conforms to ``schema``, else
    ``ModelMalformed`` listing the violations. A schema outside the subset fails here
    too, so no caller can check against a keyword that is then ignored."""
    def conforms(valid: Mapping[str, object]) -> Result[Mapping[str, object], ModelMalformed]:
        found = violations(valid, value)
        if found or not isinstance(value, dict):
            return Failure(ModelMalformed(model_id, _reason(found or ("$: not an object",))))
        return Success(value)

    return validate_schema(schema).alt(
        lambda refused: ModelMalformed(model_id, f"the schema is refused: {refused.reason}"),
    ).bind(conforms)


def _reason(found: Sequence[str]) -> str:
    shown = list(found[:MAX_REPORTED_VIOLATIONS])
    if len(found) > MAX_REPORTED_VIOLATIONS:
        shown.append(f"and {len(found) - MAX_REPORTED_VIOLATIONS} more")
    return "off-schema answer: " + VIOLATION_SEPARATOR.join(shown)


def child_path(path: str, key: str) -> str:
    """The path of an object's member: ``$.groups``, or ``$["odd key"]`` for a key that
    is not an identifier (so a path can always be read back unambiguously)."""
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{_quoted(key)}]"


def _quoted(key: str) -> str:
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _walk(schema: Mapping[str, object], value: object, path: str, out: list[str]) -> None:
    kind = json_kind(value)
    types = _types_of(schema)
    if kind is None:
        out.append(f"{path}: not a JSON value ({type(value).__name__})"
                   if not isinstance(value, float) else f"{path}: a non-finite number")
        return
    if types is not None and not _matches(kind, types):
        out.append(f"{path}: expected {' or '.join(types)}, got {_got(kind, value, types)}")
        return
    if "const" in schema and not json_equal(value, schema["const"]):
        out.append(f"{path}: expected the constant {_shown(schema['const'])}")
        return
    members = schema.get("enum")
    if isinstance(members, list) and not any(json_equal(value, m) for m in members):
        out.append(f"{path}: {_shown(value)} is not one of {_shown(members)}")
        return
    if isinstance(value, dict):
        _walk_object(schema, value, path, out)
    elif isinstance(value, list):
        _walk_array(schema, value, path, out)
    elif isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", path, "length ", out)
    elif kind in {"integer", "number"} and isinstance(value, int | float):
        _bounds(value, schema, "minimum", "maximum", path, "", out)


def _got(kind: str, value: object, types: Sequence[str]) -> str:
    # Both numeric kinds read as "number"; a float offered for an integer says so, the
    # one case where "got number" alone would puzzle a reader.
    if kind == "number" and "integer" in types:
        return f"number {value!r}, which is not an integer"
    return "number" if kind == "integer" else kind


def _walk_object(schema: Mapping[str, object], value: dict[str, object], path: str,
                 out: list[str]) -> None:
    properties = schema.get("properties")
    declared: Mapping[str, object] = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in value:
            out.append(f"{child_path(path, name)}: required key missing")
    for key, item in value.items():
        sub = declared.get(key)
        if isinstance(sub, Mapping):
            _walk(sub, item, child_path(path, key), out)
        else:
            out.append(f"{child_path(path, key)}: undeclared key")


def _walk_array(schema: Mapping[str, object], value: list[object], path: str,
                out: list[str]) -> None:
    _bounds(len(value), schema, "minItems", "maxItems", path, "length ", out)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _walk(items, item, f"{path}[{index}]", out)


def _bounds(measure: float, schema: Mapping[str, object], low: str, high: str, path: str,
            label: str, out: list[str]) -> None:
    """Inclusive bounds on a number (``label`` empty) or on a length (``"length "``)."""
    lo, hi = schema.get(low), schema.get(high)
    if _is_bound(lo) and isinstance(lo, int | float) and measure < lo:
        out.append(f"{path}: {label}{measure!r}, below {low} {lo!r}")
    if _is_bound(hi) and isinstance(hi, int | float) and measure > hi:
        out.append(f"{path}: {label}{measure!r}, above {high} {hi!r}")
