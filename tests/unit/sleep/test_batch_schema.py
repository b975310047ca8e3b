"""Each batch's schema, built for a decoder that compiles it to a grammar: it names the
batch's own keys and nothing else, its prompt's example answer is one it accepts, and
the wire carries it in the order and with the bounds the phase declared."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.contracts.services import ModelRequest
from memhtml.llm import request_bytes
from memhtml.llm.schema import validate_schema, violations
from memhtml.llm.wire import WIRE_REPEAT_LIMIT
from memhtml.sleep.batch import (
    EXAMPLE_HEADING,
    KEY_DESCRIPTION,
    BatchSpec,
    after_claim,
    batch_schema,
    key_for,
    mint,
    request_for,
)

arc_synthesis, compress_prompt, dedup_prompt, edge_typing, entity_resolution, placement_triage, \
    task_detection = (importlib.import_module(f"memhtml.sleep.phases.{name}") for name in (
        "arc_synthesis", "compress_prompt", "dedup_prompt", "edge_typing", "entity_resolution",
        "placement_triage", "task_detection"))
# Imported as modules: the package exports each phase's runner under the module's name.

SPECS: Mapping[str, BatchSpec[Any, Any]] = {
    "arc-triage": arc_synthesis.TRIAGE_SPEC,
    "arc-write": arc_synthesis.WRITE_SPEC,
    "compress": compress_prompt.SPEC,
    "dedup-merge": dedup_prompt.SPEC,
    "edge-typing": edge_typing.SPEC,
    "entity-resolution": entity_resolution.SPEC,
    "placement-triage": placement_triage.spec_for(()),
    "task-detection": task_detection.SPEC,
}
"""Every phase that asks through the kernel, with its own schema."""

STRANGERS = ("m0", "M1", " m1", "m1 ", "m01", "101", "", "priya-nair (0.47)",
             "areas/x.html")
"""Values models were seen to name where a key belongs, and near misses of a key."""


def _spec(name: str) -> BatchSpec[str, Any]:
    # Rows are plain strings: the schema and the example depend on the keys alone.
    spec: BatchSpec[str, Any] = replace(SPECS[name], render=str)
    return spec


def _is_key(node: Mapping[str, object]) -> bool:
    described = node.get("description")
    return isinstance(described, str) and described.startswith(KEY_DESCRIPTION)


def _key_fields(node: Mapping[str, object]) -> int:
    """How many key fields a schema declares, at any depth."""
    found = 1 if _is_key(node) else 0
    properties = node.get("properties")
    for sub in (properties.values() if isinstance(properties, Mapping) else ()):
        found += _key_fields(sub) if isinstance(sub, Mapping) else 0
    items = node.get("items")
    return found + (_key_fields(items) if isinstance(items, Mapping) else 0)


def _filled(schema: Mapping[str, object], value: object,
            key: Callable[[], str]) -> object:
    """``value`` (an answer of ``schema``'s shape) with every key in it drawn anew."""
    if _is_key(schema):
        return key()
    if isinstance(value, dict):
        properties = schema["properties"]
        assert isinstance(properties, Mapping)
        return {name: _filled(properties[name], item, key) for name, item in value.items()}
    if isinstance(value, list):
        items = schema["items"]
        assert isinstance(items, Mapping)
        return [_filled(items, item, key) for item in value]
    return value


def _example(request: ModelRequest) -> object:
    """The example answer a batch's prompt ends with."""
    heading, _, shown = request.prompt.rpartition("\n")
    assert heading.endswith(EXAMPLE_HEADING)
    return json.loads(shown)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_phase_declares_its_keys_as_key_fields(name: str) -> None:
    assert _key_fields(SPECS[name].schema) >= 1


@given(data=st.data(), name=st.sampled_from(sorted(SPECS)))
def test_a_batch_schema_accepts_exactly_the_answers_naming_its_offered_keys(
        data: st.DataObject, name: str) -> None:
    spec = _spec(name)
    size = data.draw(st.integers(1, spec.size), label="members")
    keys = tuple(key_for(i) for i in range(size))
    schema = batch_schema(spec.schema, keys)
    assert validate_schema(schema).unwrap() is schema
    named: list[str] = []

    def key() -> str:
        value = data.draw(st.one_of(
            st.sampled_from(keys), st.sampled_from(STRANGERS),
            st.sampled_from((key_for(size), key_for(spec.size + 1))), st.text(max_size=6)),
            label="key")
        named.append(value)
        return value

    request = request_for(spec, mint([f"row {i}" for i in range(size)]))
    answer = _filled(schema, _example(request), key)
    assert named, "the example names no key"
    found = violations(schema, answer)
    assert (found == ()) == all(value in keys for value in named), (named, found)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("members", [1, 2, 3, 8])
def test_the_example_answer_in_each_prompt_fits_its_batch_schema(name: str,
                                                                 members: int) -> None:
    spec = _spec(name)
    rows = [f"row {i}" for i in range(min(members, spec.size))]
    request = request_for(spec, mint(rows))
    example = _example(request)
    assert violations(request.schema, example) == ()
    # It names only this batch's keys, and the text of no member.
    assert all(row not in json.dumps(example) for row in rows)
    assert request.prompt.count(rows[-1]) == 1


@pytest.mark.parametrize("name", sorted(SPECS))
def test_equal_sized_batches_share_one_schema_so_the_prefix_stays_cacheable(
        name: str) -> None:
    spec = _spec(name)
    one = request_for(spec, mint(["a"] * spec.size))
    two = request_for(spec, mint(["b"] * spec.size))
    assert one.schema == two.schema
    assert one.prompt != two.prompt


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize(("dialect", "form"), [
    ("anthropic", "json_schema"), ("openai", "json_schema"), ("openai", "json_object")])
def test_the_wire_carries_the_batch_schema_in_declared_order_with_its_bounds(
        name: str, dialect: str, form: str) -> None:
    spec = _spec(name)
    request = request_for(spec, mint(["row"] * min(3, spec.size)))
    raw = request_bytes(dialect, request, "m", form=form).unwrap()  # type: ignore[arg-type]
    body = json.loads(raw)
    sent = (body["tools"][0]["input_schema"] if dialect == "anthropic"
            else body["response_format"].get("json_schema", body["response_format"])["schema"])
    _assert_same_order_and_bounds(request.schema, sent)


def _assert_same_order_and_bounds(declared: Mapping[str, object], sent: object) -> None:
    assert isinstance(sent, dict)
    for keyword in ("enum", "minimum", "maximum", "type"):
        assert sent.get(keyword) == declared.get(keyword), keyword
    for keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        # Sent as declared, at most what a grammar parser takes (WIRE_REPEAT_LIMIT).
        bound = declared.get(keyword)
        expected = min(bound, WIRE_REPEAT_LIMIT) if isinstance(bound, int) else bound
        assert sent.get(keyword) == expected, keyword
    properties = declared.get("properties")
    if isinstance(properties, Mapping):
        assert list(sent["properties"]) == list(properties)
        assert sent["required"] == list(properties)
        assert sent["additionalProperties"] is False
        for prop, sub in properties.items():
            assert isinstance(sub, Mapping)
            _assert_same_order_and_bounds(sub, sent["properties"][prop])
    items = declared.get("items")
    if isinstance(items, Mapping):
        _assert_same_order_and_bounds(items, sent["items"])


def test_reasoning_order_members_before_what_they_make() -> None:
    def order(schema: Mapping[str, object], *path: str) -> list[str]:
        node: Any = schema
        for step in path:
            node = node["properties"][step]["items"] if step else node
        return list(node["properties"])

    assert order(compress_prompt.SCHEMA, "canonicals")[0] == "absorbs"
    assert order(arc_synthesis.WRITE_SCHEMA)[0] == "covers"
    entity = order(entity_resolution.SCHEMA, "clusters")
    assert entity.index("members") < entity.index("canonical") < entity.index("confidence")
    for schema, where in ((edge_typing.SCHEMA, "verdicts"),
                          (task_detection.SCHEMA, "findings"),
                          (placement_triage.SCHEMA, "placements")):
        assert order(schema, where)[-1] == "confidence"


@given(claim=st.text(st.characters(codec="utf-8", categories=("L", "N", "Zs")),
                     min_size=1, max_size=40).filter(str.strip),
       rest=st.text(max_size=40))
def test_a_members_claim_is_not_repeated_by_its_text(claim: str, rest: str) -> None:
    shown = after_claim(f"{claim} {rest}", claim)
    assert shown == " ".join(rest.split())
    # Text that does not open with the claim is shown whole.
    assert after_claim(f"x{claim}", f"y{claim}") == " ".join(f"x{claim}".split())


def test_the_session_prompt_ends_with_an_example_its_schema_accepts() -> None:
    trace = importlib.import_module("memhtml.sleep.phases.trace_prompt")
    request = trace.request_for(trace.Shown("Session: \"s\"\n\nTurns:\nuser: hello", ("hello",)))
    assert violations(request.schema, _example(request)) == ()
    quote = list(request.schema["properties"]["commitments"]["items"]["properties"])
    assert quote == ["quote", "statement", "done", "confidence"]
