"""Laws of the wire schema's bounds: every length and count bound sent is at most
``WIRE_REPEAT_LIMIT`` (what llama.cpp's grammar parser takes), closing a schema keeps
it valid and never loosens it, and within the limit it changes no answer's verdict.

``tests/integration/llm/test_grammar_compiles.py`` holds every phase's schema to the
real grammar compiler; these laws hold any schema of the subset to the rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from memhtml.llm import validate_schema, violations
from memhtml.llm.wire import WIRE_REPEAT_LIMIT, closed_schema
from tests.property.schema_strategies import Schema, schema_and_value

BOUND_PAIRS = (("minLength", "maxLength"), ("minItems", "maxItems"))
wide = st.integers(min_value=0, max_value=3 * WIRE_REPEAT_LIMIT)


@st.composite
def long_strings(draw: st.DrawFn) -> Schema:
    low, high = sorted(draw(st.tuples(wide, wide)))
    schema: Schema = {"type": "string", "maxLength": high}
    if draw(st.booleans()):
        schema["minLength"] = low
    return schema


@st.composite
def long_arrays(draw: st.DrawFn, items: st.SearchStrategy[Schema]) -> Schema:
    low, high = sorted(draw(st.tuples(wide, wide)))
    schema: Schema = {"type": "array", "items": draw(items), "maxItems": high}
    if draw(st.booleans()):
        schema["minItems"] = low
    return schema


wide_nodes = st.recursive(
    long_strings(),
    lambda inner: st.one_of(
        long_arrays(inner),
        st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), inner,
                        min_size=1, max_size=3).map(
            lambda props: {"type": "object", "properties": props,
                           "required": sorted(props)})),
    max_leaves=6)
wide_roots = st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), wide_nodes,
                             min_size=1, max_size=3).map(
    lambda props: {"type": "object", "properties": props, "required": sorted(props)})


def nodes(schema: Schema) -> Iterator[Schema]:
    yield schema
    for sub in schema.get("properties", {}).values():
        yield from nodes(sub)
    items = schema.get("items")
    if isinstance(items, dict):
        yield from nodes(items)


def pairs(original: Schema, closed: Schema) -> Iterator[tuple[Schema, Schema]]:
    yield original, closed
    for name, sub in original.get("properties", {}).items():
        yield from pairs(sub, closed["properties"][name])
    if isinstance(original.get("items"), dict):
        yield from pairs(original["items"], closed["items"])


@given(wide_roots)
def test_every_bound_sent_is_within_the_grammar_limit(schema: Schema) -> None:
    assert isinstance(validate_schema(schema), Success)
    closed = closed_schema(schema)
    assert isinstance(validate_schema(closed), Success)
    for node in nodes(closed):
        for low_key, high_key in BOUND_PAIRS:
            low, high = node.get(low_key, 0), node.get(high_key, WIRE_REPEAT_LIMIT)
            assert 0 <= low <= high <= WIRE_REPEAT_LIMIT, node


@given(wide_roots)
def test_closing_never_loosens_a_bound(schema: Schema) -> None:
    for original, closed in pairs(schema, closed_schema(schema)):
        for _, high_key in BOUND_PAIRS:
            if high_key in original:
                assert closed[high_key] <= original[high_key]
                assert closed[high_key] == min(original[high_key], WIRE_REPEAT_LIMIT)


@given(schema_and_value())
def test_within_the_limit_closing_changes_no_verdict(pair: tuple[Schema, Any]) -> None:
    schema, value = pair
    assert violations(closed_schema(schema), value) == violations(schema, value)
