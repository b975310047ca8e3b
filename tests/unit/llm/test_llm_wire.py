"""Request bodies: each dialect's shape, deterministic bytes, and every refusal."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

import pytest
from returns.result import Failure, Success

from memhtml.contracts.services import ModelRequest
from memhtml.llm import (
    RequestRefused,
    anthropic_body,
    closed_schema,
    merge_extra,
    openai_body,
    request_body,
    request_bytes,
)

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "rel": {"type": "string", "enum": ["supports", "none"]},
        "why": {"type": "string", "maxLength": 200},
        "pairs": {"type": "array", "items": {"type": "object", "properties": {
            "key": {"type": "string", "minLength": 2}}, "required": ["key"]}},
    },
    "required": ["rel", "why", "pairs"],
}
REQUEST = ModelRequest(system="Type the edge.", prompt="m1 -> m2", schema=SCHEMA,
                       tool_name="type_edges", max_output_tokens=512)


def body_of(result: object) -> dict[str, object]:
    assert isinstance(result, Success), result
    body = result.unwrap()
    assert isinstance(body, dict)
    return body


def refusal_of(result: object) -> str:
    assert isinstance(result, Failure), result
    error = result.failure()
    assert isinstance(error, RequestRefused)
    return error.reason


# -- shapes ---------------------------------------------------------------------------


def test_anthropic_body_forces_the_tool_and_caches_system_and_tool() -> None:
    body = body_of(anthropic_body(REQUEST, "a-model"))
    assert set(body) == {"model", "max_tokens", "system", "tools", "tool_choice", "messages"}
    assert body["model"] == "a-model"
    assert body["max_tokens"] == 512
    assert body["system"] == [{"type": "text", "text": "Type the edge.",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["tool_choice"] == {"type": "tool", "name": "type_edges"}
    assert body["messages"] == [{"role": "user", "content": "m1 -> m2"}]
    tools = body["tools"]
    assert isinstance(tools, list) and len(tools) == 1
    tool = tools[0]
    assert tool["name"] == "type_edges"
    assert tool["cache_control"] == {"type": "ephemeral"}
    assert isinstance(tool["description"], str) and tool["description"]
    assert tool["input_schema"] == closed_schema(SCHEMA)


def test_openai_body_asks_for_a_strict_json_schema() -> None:
    body = body_of(openai_body(REQUEST, "o-model"))
    assert set(body) == {"model", "max_completion_tokens", "messages", "response_format"}
    assert body["max_completion_tokens"] == 512
    assert body["messages"] == [{"role": "system", "content": "Type the edge."},
                                {"role": "user", "content": "m1 -> m2"}]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "type_edges", "strict": True,
        "schema": closed_schema(SCHEMA)}}


def test_openai_token_field_can_be_the_older_name_for_local_servers() -> None:
    body = body_of(openai_body(REQUEST, "local", token_field="max_tokens"))
    assert body["max_tokens"] == 512
    assert "max_completion_tokens" not in body


def test_the_schema_is_sent_closed_at_every_depth_and_the_request_is_untouched() -> None:
    closed = closed_schema(SCHEMA)
    assert closed["additionalProperties"] is False
    pairs = closed["properties"]["pairs"]  # type: ignore[index]
    assert pairs["items"]["additionalProperties"] is False
    assert "additionalProperties" not in SCHEMA
    assert "additionalProperties" not in SCHEMA["properties"]["pairs"]["items"]  # type: ignore[index]


BOUNDED: dict[str, object] = {
    "type": "object",
    "properties": {
        "members": {"type": "array", "minItems": 2, "maxItems": 3,
                    "items": {"type": "string", "enum": ["m1", "m2", "m3"],
                              "minLength": 2, "maxLength": 2}},
        "canonical": {"type": "string", "minLength": 1, "maxLength": 200},
        "verdict": {"type": "string", "enum": ["same", "different"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["confidence", "verdict", "canonical", "members"],
}
"""Declared in reasoning order, which is not alphabetical, ``required`` in another."""


def _sent_schemas(raw: bytes) -> list[object]:
    """Every schema a request's bytes carry, parsed with its objects' order kept."""
    body = json.loads(raw)
    found: list[object] = []
    for tool in body.get("tools", []):
        found.append(tool["input_schema"])
    fmt = body.get("response_format") or {}
    if "json_schema" in fmt:
        found.append(fmt["json_schema"]["schema"])
    if "schema" in fmt:
        found.append(fmt["schema"])
    return found


@pytest.mark.parametrize(("dialect", "form"), [
    ("anthropic", "json_schema"), ("openai", "json_schema"), ("openai", "json_object")])
def test_the_wire_schema_keeps_the_declared_property_order_and_every_bound(
        dialect: str, form: str) -> None:
    request = replace(REQUEST, schema=BOUNDED)
    raw = request_bytes(dialect, request, "m", form=form).unwrap()  # type: ignore[arg-type]
    (schema,) = _sent_schemas(raw)
    assert isinstance(schema, dict)
    order = ["members", "canonical", "verdict", "confidence"]
    assert list(schema["properties"]) == order
    assert schema["required"] == order
    # Every bound the phase stated reaches the decoder, as stated.
    assert schema["properties"]["members"]["minItems"] == 2
    assert schema["properties"]["members"]["maxItems"] == 3
    assert schema["properties"]["members"]["items"] == {
        "enum": ["m1", "m2", "m3"], "maxLength": 2, "minLength": 2, "type": "string"}
    assert schema["properties"]["canonical"]["minLength"] == 1
    assert schema["properties"]["canonical"]["maxLength"] == 200
    assert schema["properties"]["confidence"]["minimum"] == 0
    assert schema["properties"]["confidence"]["maximum"] == 1
    # Everything outside a schema's properties is still sorted.
    assert list(json.loads(raw)) == sorted(json.loads(raw))


def test_the_prompt_form_shows_the_schema_and_its_example_in_the_declared_order() -> None:
    request = replace(REQUEST, schema=BOUNDED)
    system = body_of(openai_body(request, "m", form="prompt"))["messages"]
    assert isinstance(system, list)
    text = str(system[0]["content"])
    shown = text.index('"properties":{"members"')
    assert shown < text.index('"canonical"', shown) < text.index('"verdict"', shown) \
        < text.index('"confidence"', shown)
    assert '{"members":["m1","m2"],"canonical":"text","verdict":"same","confidence":0.0}' \
        in text


# -- bytes ------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_equal_requests_give_equal_bytes(dialect: str) -> None:
    twin = ModelRequest(system="Type the edge.", prompt="m1 -> m2",
                        schema=json.loads(json.dumps(SCHEMA)), tool_name="type_edges",
                        max_output_tokens=512)
    first = request_bytes(dialect, REQUEST, "m")  # type: ignore[arg-type]
    second = request_bytes(dialect, twin, "m")  # type: ignore[arg-type]
    assert first == second
    assert isinstance(first.unwrap(), bytes)


def test_bytes_are_canonical_json_in_utf8() -> None:
    request = replace(REQUEST, prompt="déjà vu — \"quoted\"")
    raw = request_bytes("anthropic", request, "m").unwrap()
    assert "déjà vu — ".encode() in raw
    # No spaces, and sorted keys everywhere but in a schema's properties (and its
    # required list), which keep their declared order.
    body = json.loads(raw)
    assert raw == json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    schema = body["tools"][0].pop("input_schema")
    assert list(schema["properties"]) == list(SCHEMA["properties"])  # type: ignore[call-overload]
    assert schema["required"] == SCHEMA["required"]
    assert json.dumps(body, sort_keys=True) == json.dumps(body)


def test_only_the_prompt_differs_between_two_batches_of_a_phase() -> None:
    one = body_of(anthropic_body(REQUEST, "m"))
    two = body_of(anthropic_body(replace(REQUEST, prompt="m3 -> m4"), "m"))
    assert {k for k in one if one[k] != two[k]} == {"messages"}


def test_request_body_dispatches_on_the_dialect() -> None:
    assert request_body("anthropic", REQUEST, "m") == anthropic_body(REQUEST, "m")
    assert request_body("openai", REQUEST, "m", token_field="max_tokens") == openai_body(
        REQUEST, "m", token_field="max_tokens")


# -- extra_body -----------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_extra_body_adds_fields(dialect: str) -> None:
    extra = {"metadata": {"run": "r1"}, "temperature": 0}
    body = body_of(request_body(dialect, REQUEST, "m", extra))  # type: ignore[arg-type]
    assert body["metadata"] == {"run": "r1"}
    assert body["temperature"] == 0


@pytest.mark.parametrize(("dialect", "field"), [
    ("anthropic", "model"), ("anthropic", "tools"), ("anthropic", "max_tokens"),
    ("anthropic", "tool_choice"), ("openai", "response_format"), ("openai", "messages"),
    ("openai", "max_completion_tokens"),
])
def test_extra_body_never_replaces_a_field(dialect: str, field: str) -> None:
    reason = refusal_of(request_body(dialect, REQUEST, "m", {field: "x"}))  # type: ignore[arg-type]
    assert repr(field) in reason and "replace" in reason


def test_extra_body_may_add_max_tokens_only_where_the_body_lacks_it() -> None:
    # openai with the newer field: the older one is a new field, so it is added.
    body = body_of(openai_body(REQUEST, "m", {"max_tokens": 10}))
    assert body["max_tokens"] == 10
    assert "replace" in refusal_of(openai_body(REQUEST, "m", {"max_tokens": 10},
                                               token_field="max_tokens"))


def test_extra_body_may_not_ask_for_a_stream() -> None:
    assert "'stream'" in refusal_of(anthropic_body(REQUEST, "m", {"stream": True}))


def test_extra_body_that_is_not_json_is_refused_as_bytes() -> None:
    reason = refusal_of(request_bytes("openai", REQUEST, "m", {"x": float("nan")}))
    assert "JSON" in reason
    assert isinstance(request_bytes("openai", REQUEST, "m", {"x": {1, 2}}), Failure)


def test_merge_extra_lists_every_problem() -> None:
    extra: Mapping[str, object] = {"model": 1, "stream": True, 3: "x"}  # type: ignore[dict-item]
    reason = refusal_of(merge_extra({"model": "m"}, extra))
    assert "strings" in reason and "'model'" in reason and "'stream'" in reason


# -- refused requests -----------------------------------------------------------------


@pytest.mark.parametrize(("change", "needle"), [
    ({"tool_name": "has space"}, "tool name"),
    ({"tool_name": ""}, "tool name"),
    ({"tool_name": "x" * 65}, "tool name"),
    ({"max_output_tokens": 0}, "max_output_tokens"),
    ({"max_output_tokens": True}, "max_output_tokens"),
    ({"system": "  \n"}, "system prompt is blank"),
    ({"prompt": ""}, "prompt is blank"),
    ({"schema": {"type": "object", "properties": {"a": {"type": "string",
                                                        "pattern": "x"}},
                 "required": ["a"]}}, "'pattern' is outside"),
    ({"schema": {"type": "array", "items": {"type": "string"}}}, "root schema"),
])
@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_a_request_either_provider_would_refuse_is_refused_here(
        dialect: str, change: dict[str, object], needle: str) -> None:
    request = replace(REQUEST, **change)  # type: ignore[arg-type]
    assert needle in refusal_of(request_bytes(dialect, request, "m"))  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_a_blank_model_id_is_refused(dialect: str) -> None:
    assert "model id" in refusal_of(request_bytes(dialect, REQUEST, " "))  # type: ignore[arg-type]


def test_an_unknown_token_field_is_refused() -> None:
    assert "token field" in refusal_of(
        openai_body(REQUEST, "m", token_field="max_new_tokens"))  # type: ignore[arg-type]


def test_all_problems_are_reported_at_once() -> None:
    request = replace(REQUEST, tool_name="bad name", prompt="", max_output_tokens=-1)
    reason = refusal_of(anthropic_body(request, ""))
    for needle in ("model id", "tool name", "max_output_tokens", "prompt is blank"):
        assert needle in reason
