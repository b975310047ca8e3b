"""Hypothesis strategies for the strict answer check's schema subset: schemas inside
it, values that conform to one, and the leaves a value can be broken at. Shared by the
check's own laws and the language-model contract."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from memhtml.llm.schema import child_path, json_kind

Schema = dict[str, Any]

# Names include ones a path must quote, so the law covers both path spellings.
names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True) | st.sampled_from(
    ["odd key", "a.b", 'q"t', "9x", ""])
small = st.integers(min_value=0, max_value=4)


@st.composite
def string_schemas(draw: st.DrawFn) -> Schema:
    if draw(st.booleans()):
        return {"type": "string", "enum": draw(st.lists(st.text(max_size=5), min_size=1,
                                                        max_size=4, unique=True))}
    schema: Schema = {"type": "string"}
    low, high = sorted(draw(st.tuples(small, small)))
    if draw(st.booleans()):
        schema["minLength"] = low
    if draw(st.booleans()):
        schema["maxLength"] = high
    return schema


@st.composite
def number_schemas(draw: st.DrawFn) -> Schema:
    kind = draw(st.sampled_from(["integer", "number"]))
    schema: Schema = {"type": kind}
    bound = st.integers(-50, 50) if kind == "integer" else st.floats(-50, 50)
    low, high = sorted(draw(st.tuples(bound, bound)))
    if draw(st.booleans()):
        schema["minimum"] = low
    if draw(st.booleans()):
        schema["maximum"] = high
    return schema


scalars = st.one_of(string_schemas(), number_schemas(),
                    st.just({"type": "boolean"}), st.just({"type": "null"}))


def nullable(schema: Schema) -> Schema:
    if schema["type"] == "null" or "enum" in schema:
        return schema
    return {**schema, "type": [schema["type"], "null"]}


def object_schema(properties: dict[str, Schema], closed: bool) -> Schema:
    schema: Schema = {"type": "object", "properties": properties,
                      "required": sorted(properties)}
    if closed:
        schema["additionalProperties"] = False
    return schema


@st.composite
def array_schema(draw: st.DrawFn, items: st.SearchStrategy[Schema]) -> Schema:
    schema: Schema = {"type": "array", "items": draw(items)}
    low, high = sorted(draw(st.tuples(small, small)))
    if draw(st.booleans()):
        schema["minItems"] = low
    if draw(st.booleans()):
        schema["maxItems"] = high
    return schema


nodes = st.recursive(
    st.one_of(scalars, scalars.map(nullable)),
    lambda inner: st.one_of(
        array_schema(inner),
        st.builds(object_schema, st.dictionaries(names, inner, max_size=3), st.booleans())),
    max_leaves=8,
)
roots = st.builds(object_schema, st.dictionaries(names, nodes, max_size=4), st.booleans())


def types_of(schema: Schema) -> list[str]:
    declared = schema["type"]
    return [declared] if isinstance(declared, str) else list(declared)


def values_for(schema: Schema) -> st.SearchStrategy[Any]:
    """Values that conform to ``schema``, one kind of its ``type`` at a time."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return st.one_of([_values_of_kind(schema, kind) for kind in types_of(schema)])


def _values_of_kind(schema: Schema, kind: str) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        low = schema.get("minLength", 0)
        return st.text(min_size=low, max_size=schema.get("maxLength", low + 6))
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.integers(min_value=None if low is None else math.ceil(low),
                           max_value=None if high is None else math.floor(high))
    if kind == "number":
        return st.floats(min_value=schema.get("minimum"), max_value=schema.get("maximum"),
                         allow_nan=False, allow_infinity=False)
    if kind == "array":
        low = schema.get("minItems", 0)
        return st.lists(values_for(schema["items"]), min_size=low,
                        max_size=schema.get("maxItems", low + 3))
    return st.fixed_dictionaries({name: values_for(sub)
                                  for name, sub in schema["properties"].items()})


@st.composite
def schema_and_value(draw: st.DrawFn) -> tuple[Schema, Any]:
    schema = draw(roots)
    return schema, draw(values_for(schema))


def leaves(schema: Schema, value: Any, path: str,
           where: tuple[Any, ...]) -> Iterator[tuple[str, tuple[Any, ...], Schema]]:
    """Every scalar in ``value``: its JSON path, its place as keys, and its schema."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(schema["properties"][key], item, child_path(path, key),
                              (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(schema["items"], item, f"{path}[{index}]", (*where, index))
    else:
        yield path, where, schema


WRONG_KINDS: list[Any] = ["text", 7, 2.5, True, None, [], {}]


def rules_out(schema: Schema, candidate: Any) -> bool:
    if "enum" in schema:
        return json_kind(candidate) != "string"
    kind = json_kind(candidate)
    allowed = types_of(schema)
    return kind not in allowed and not (kind == "integer" and "number" in allowed)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=20,
)
