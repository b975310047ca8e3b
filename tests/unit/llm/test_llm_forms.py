"""The openai body's structured-output forms, a streamed answer put back together, and
output caps sized to the answer's schema."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.contracts.services import ModelRequest
from memhtml.llm import (
    assemble,
    closed_schema,
    decode_answer,
    encode_json,
    event_data,
    example_answer,
    is_final,
    openai_body,
    violations,
)
from memhtml.llm.caps import FLOOR_TOKENS, answer_chars, output_token_cap

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["same", "different"]},
        "why": {"type": "string", "minLength": 8, "maxLength": 120},
        "confidence": {"type": "number", "minimum": 0.5, "maximum": 1},
        "keys": {"type": "array", "minItems": 2, "maxItems": 4,
                 "items": {"type": "string", "maxLength": 4}},
        "note": {"type": ["string", "null"], "maxLength": 10},
    },
    "required": ["verdict", "why", "confidence", "keys", "note"],
}
REQUEST = ModelRequest(system="Compare the notes.", prompt="m1: a\nm2: b", schema=SCHEMA,
                       tool_name="judge_pair", max_output_tokens=300)


def body(form: str, **options: object) -> dict[str, object]:
    built = openai_body(REQUEST, "m", None, "max_tokens", form, **options)  # type: ignore[arg-type]
    assert isinstance(built, Success), built
    sent: dict[str, object] = built.unwrap()
    return sent


def test_json_object_is_llama_cpp_pythons_spelling_with_the_whole_schema() -> None:
    sent = body("json_object")
    assert sent["response_format"] == {"type": "json_object", "schema": closed_schema(SCHEMA)}
    assert sent["max_tokens"] == 300


def test_prompt_form_has_no_response_format_and_writes_schema_and_example() -> None:
    sent = body("prompt")
    assert "response_format" not in sent
    messages = sent["messages"]
    assert isinstance(messages, list)
    system = messages[0]["content"]
    assert system.startswith("Compare the notes.\n\nAnswer format (judge_pair)")
    shown = system.split("\n")
    assert json.loads(shown[shown.index(next(line for line in shown if "JSON schema" in line))
                            + 1]) == closed_schema(SCHEMA)
    example = json.loads(shown[-1])
    assert violations(SCHEMA, example) == ()
    # The user message is the batch alone, unchanged.
    assert messages[1] == {"role": "user", "content": REQUEST.prompt}


def test_stream_is_asked_only_when_wanted_and_extra_body_cannot_set_it() -> None:
    assert body("json_schema", stream=True)["stream"] is True
    assert "stream" not in body("json_schema")
    for extra in ({"stream": False}, {"response_format": {"type": "text"}}):
        refused = openai_body(REQUEST, "m", extra, "max_tokens", "prompt")
        assert isinstance(refused, Failure)


def test_an_unknown_form_is_refused() -> None:
    assert isinstance(openai_body(REQUEST, "m", None, "max_tokens", "yaml"),  # type: ignore[arg-type]
                      Failure)


# -- the example answer ----------------------------------------------------------------

LEAF = st.sampled_from([
    {"type": "string", "maxLength": 30},
    {"type": "string", "minLength": 12},
    {"type": "integer", "minimum": 3, "maximum": 9},
    {"type": "number", "maximum": -2},
    {"type": "boolean"},
    {"type": ["string", "null"]},
    {"type": "string", "enum": ["x", "y"]},
    {"const": 7},
])
NODES = st.recursive(LEAF, lambda inner: st.one_of(
    st.builds(lambda items, low: {"type": "array", "items": items, "minItems": low},
              inner, st.integers(0, 3)),
    st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), inner, min_size=1,
                    max_size=4).map(lambda props: {"type": "object", "properties": props,
                                                   "required": sorted(props)})), max_leaves=8)


@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), NODES, min_size=1,
                       max_size=4))
def test_the_example_answer_conforms_to_any_schema_of_the_subset(
        properties: Mapping[str, object]) -> None:
    schema = {"type": "object", "properties": dict(properties),
              "required": sorted(properties)}
    assert violations(schema, example_answer(schema)) == ()


# -- streams ---------------------------------------------------------------------------


def sse(*payloads: object) -> list[str]:
    lines: list[str] = [": keep-alive\n", "\n"]
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        lines += ["event: x\n", f"data: {data}\n", "\n"]
    return lines


def chunk(content: str | None, finish: str | None = None) -> dict[str, object]:
    delta = {} if content is None else {"content": content}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_an_openai_stream_decodes_as_the_plain_answer_would() -> None:
    answer = {"verdict": "same", "why": "the same deploy", "confidence": 0.9,
              "keys": ["m1", "m2"], "note": None}
    text = json.dumps(answer)
    events = event_data(sse(chunk(text[:9]), chunk(text[9:]), chunk(None, "stop"), "[DONE]"))
    assert is_final("openai", events[-1])
    payload = assemble("openai", events)
    assert isinstance(payload, Success)
    decoded = decode_answer("openai", encode_json(payload.unwrap()).unwrap(), REQUEST, "m")
    assert decoded == Success(answer)


def test_a_stream_cut_at_its_cap_is_refused_as_the_plain_answer_is() -> None:
    events = event_data(sse(chunk('{"verdict": "sa'), chunk(None, "length"), "[DONE]"))
    payload = assemble("openai", events).unwrap()
    decoded = decode_answer("openai", encode_json(payload).unwrap(), REQUEST, "m")
    assert isinstance(decoded, Failure)
    assert "cut off" in decoded.failure().reason


def test_an_anthropic_stream_rebuilds_the_tool_call() -> None:
    answer = {"verdict": "different", "why": "two other hosts", "confidence": 0.75,
              "keys": ["m1", "m2"], "note": "n"}
    text = json.dumps(answer)
    events = event_data(sse(
        {"type": "message_start", "message": {"type": "message", "id": "x", "content": [],
                                              "stop_reason": None}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "t", "name": "judge_pair", "input": {}}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": text[:11]}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": text[11:]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"}))
    assert is_final("anthropic", events[-1])
    payload = assemble("anthropic", events).unwrap()
    decoded = decode_answer("anthropic", encode_json(payload).unwrap(), REQUEST, "m")
    assert decoded == Success(answer)


@pytest.mark.parametrize("events", [[], ["not json"], ["[1, 2]"],
                                    [json.dumps({"choices": "x"})],
                                    [json.dumps({"choices": [{"index": 0,
                                                              "delta": {"content": 3}}]})]])
def test_a_stream_that_adds_up_to_nothing_says_why(events: list[str]) -> None:
    assert isinstance(assemble("openai", events), Failure)


def test_an_error_event_becomes_the_error_body_the_decoder_names() -> None:
    payload = assemble("openai", [json.dumps({"error": {"message": "overloaded"}})]).unwrap()
    decoded = decode_answer("openai", encode_json(payload).unwrap(), REQUEST, "m")
    assert isinstance(decoded, Failure) and "overloaded" in decoded.failure().reason


# -- output caps ---------------------------------------------------------------------


def test_the_cap_is_the_schemas_bound_within_floor_and_ceiling() -> None:
    chars = answer_chars(SCHEMA)
    widest = json.dumps({"verdict": "different", "why": "x" * 120, "confidence": -1.0e-300,
                         "keys": ["abcd"] * 4, "note": "y" * 10}, separators=(",", ":"))
    assert chars >= len(widest)
    assert FLOOR_TOKENS <= output_token_cap(SCHEMA, 4096) < 4096
    assert output_token_cap(SCHEMA, 50) == 50


def test_an_open_array_grows_with_the_members_offered() -> None:
    schema = {"type": "object", "required": ["pairs"], "properties": {
        "pairs": {"type": "array", "items": {"type": "string", "maxLength": 40}}}}
    caps = [output_token_cap(schema, 100_000, members) for members in (4, 40, 400)]
    assert caps[0] <= caps[1] < caps[2]
