"""Answers of both dialects: one mapping out, or ModelMalformed for every failure shape."""

from __future__ import annotations

import json

import pytest
from returns.result import Failure, Success

from memhtml.contracts.errors import ModelMalformed
from memhtml.contracts.services import ModelRequest
from memhtml.llm import MAX_ANSWER_BYTES, answer_of_anthropic, answer_of_openai, decode_answer

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"keep": {"type": "array", "items": {"type": "string"}},
                   "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["keep", "confidence"],
}
REQUEST = ModelRequest(system="s", prompt="p", schema=SCHEMA, tool_name="judge",
                       max_output_tokens=100)
ANSWER: dict[str, object] = {"keep": ["m1", "m2"], "confidence": 0.9}


def anthropic(content: list[object], stop: object = "tool_use") -> dict[str, object]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "a",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def tool_use(value: object, name: str = "judge") -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": value}


def openai(content: object, finish: object = "stop", refusal: object = None
           ) -> dict[str, object]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "o",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": refusal}}]}


def raw(payload: object) -> bytes:
    return json.dumps(payload).encode("utf-8")


def reason_of(result: object) -> str:
    assert isinstance(result, Failure), result
    error = result.failure()
    assert isinstance(error, ModelMalformed)
    assert error.model_id == "the-model"
    return error.reason


# -- the happy path -------------------------------------------------------------------


def test_anthropic_answer_is_the_tool_input() -> None:
    payload = anthropic([{"type": "text", "text": "Sure."}, tool_use(ANSWER)])
    assert decode_answer("anthropic", raw(payload), REQUEST, "the-model") == Success(ANSWER)


def test_anthropic_end_turn_with_the_tool_call_is_whole() -> None:
    payload = anthropic([tool_use(ANSWER)], stop="end_turn")
    assert decode_answer("anthropic", raw(payload), REQUEST, "the-model") == Success(ANSWER)


def test_openai_answer_is_the_parsed_content() -> None:
    payload = openai(json.dumps(ANSWER))
    assert decode_answer("openai", raw(payload), REQUEST, "the-model") == Success(ANSWER)


def test_both_dialects_converge_on_one_mapping() -> None:
    one = decode_answer("anthropic", raw(anthropic([tool_use(ANSWER)])), REQUEST, "m")
    two = decode_answer("openai", raw(openai(json.dumps(ANSWER))), REQUEST, "m")
    assert one == two == Success(ANSWER)


# -- anthropic failure shapes ---------------------------------------------------------


@pytest.mark.parametrize(("payload", "needle"), [
    (anthropic([{"type": "text", "text": "I think m1 and m2."}], stop="end_turn"),
     "no call to the tool 'judge' (content: text)"),
    (anthropic([], stop="end_turn"), "content: empty"),
    (anthropic([tool_use(ANSWER, name="other")]), "no call to the tool 'judge'"),
    (anthropic([tool_use(ANSWER), tool_use(ANSWER)]), "called 2 times"),
    (anthropic([{"type": "text", "text": "I can't help with that."}], stop="refusal"),
     "refused"),
    (anthropic([tool_use({"keep": ["m1"]})], stop="max_tokens"), "cut off"),
    (anthropic([tool_use(ANSWER)], stop="model_context_window_exceeded"), "cut off"),
    (anthropic([tool_use(ANSWER)], stop="pause_turn"), "did not finish"),
    (anthropic([tool_use(ANSWER)], stop=None), "did not finish"),
    (anthropic([tool_use("not an object")]), "input is not a JSON object"),
    (anthropic([tool_use(None)]), "input is not a JSON object"),
    ({**anthropic([tool_use(ANSWER)]), "content": "text"}, "no content list"),
    ({**anthropic([tool_use(ANSWER)]), "type": "completion"}, "not a message"),
    ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     "error: overloaded_error: Overloaded"),
    ([1, 2], "not a JSON object"),
    ("message", "not a JSON object"),
])
def test_anthropic_failure_shapes(payload: object, needle: str) -> None:
    reason = reason_of(answer_of_anthropic(payload, "judge", "the-model"))
    assert needle in reason
    assert reason_of(decode_answer("anthropic", raw(payload), REQUEST, "the-model")) == reason


# -- openai failure shapes -------------------------------------------------------------


@pytest.mark.parametrize(("payload", "needle"), [
    (openai(None, refusal="I can't help with that."), "refused"),
    (openai('{"keep": ["m1"', finish="length"), "cut off"),
    (openai(json.dumps(ANSWER), finish="length"), "cut off"),
    (openai(json.dumps(ANSWER), finish="content_filter"), "content filter"),
    (openai(json.dumps(ANSWER), finish="tool_calls"), "did not finish"),
    (openai(json.dumps(ANSWER), finish=None), "did not finish"),
    (openai("Here is the JSON: {}"), "not valid JSON"),
    (openai('```json\n{"keep": [], "confidence": 1}\n```'), "not valid JSON"),
    (openai('{"keep": ["m1"'), "not valid JSON"),
    (openai("[1, 2]"), "JSON but not an object"),
    (openai('"text"'), "JSON but not an object"),
    (openai('{"confidence": NaN, "keep": []}'), "NaN is not a JSON number"),
    (openai('{"confidence": 1, "confidence": 0, "keep": []}'), "appears twice"),
    (openai(None), "no text content"),
    (openai([{"type": "text", "text": "{}"}]), "no text content"),
    (openai(json.dumps(ANSWER), refusal=7), "refusal is not a string"),
    ({"choices": []}, "no choices"),
    ({"object": "chat.completion"}, "no choices"),
    ({"choices": ["x"]}, "no message"),
    ({"choices": [{"finish_reason": "stop"}]}, "no message"),
    ({"error": {"type": "invalid_request_error", "message": "bad\n schema"}},
     "error: invalid_request_error: bad schema"),
    (None, "not a JSON object"),
])
def test_openai_failure_shapes(payload: object, needle: str) -> None:
    reason = reason_of(answer_of_openai(payload, "the-model"))
    assert needle in reason
    assert reason_of(decode_answer("openai", raw(payload), REQUEST, "the-model")) == reason


# -- through decode_answer: the body, the cap, the schema -----------------------------


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
@pytest.mark.parametrize("body", [b"", b"<html>502 Bad Gateway</html>", b'{"a": 1',
                                  b"\xff\xfe\x00garbage", b"[" * 100_000])
def test_a_body_that_is_not_json_is_malformed(dialect: str, body: bytes) -> None:
    reason = reason_of(decode_answer(dialect, body, REQUEST, "the-model"))  # type: ignore[arg-type]
    assert reason.startswith("the response is not valid JSON")


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_an_off_schema_answer_is_malformed_with_its_path(dialect: str) -> None:
    bad = {"keep": ["m1", 2], "confidence": "0.9"}
    payload = anthropic([tool_use(bad)]) if dialect == "anthropic" else openai(json.dumps(bad))
    reason = reason_of(decode_answer(dialect, raw(payload), REQUEST, "the-model"))  # type: ignore[arg-type]
    assert "$.keep[1]: expected string, got number" in reason
    assert "$.confidence: expected number, got string" in reason


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_an_answer_over_the_cap_is_malformed(dialect: str) -> None:
    big = {"keep": ["m" * 1000] * 300, "confidence": 0.5}  # about 300 KB serialized
    payload = anthropic([tool_use(big)]) if dialect == "anthropic" else openai(json.dumps(big))
    reason = reason_of(decode_answer(dialect, raw(payload), REQUEST, "the-model"))  # type: ignore[arg-type]
    assert f"over the {MAX_ANSWER_BYTES}-byte cap" in reason
    # The cap is a parameter: a larger one lets the same answer through.
    assert decode_answer(dialect, raw(payload), REQUEST, "the-model",  # type: ignore[arg-type]
                         max_answer_bytes=1 << 20) == Success(big)


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_an_answer_at_the_cap_passes(dialect: str) -> None:
    small = {"keep": ["m1"], "confidence": 1}
    size = len(json.dumps(small, separators=(",", ":")).encode())
    payload = (anthropic([tool_use(small)]) if dialect == "anthropic"
               else openai(json.dumps(small, separators=(",", ":"))))
    assert decode_answer(dialect, raw(payload), REQUEST, "the-model",  # type: ignore[arg-type]
                         max_answer_bytes=size) == Success(small)
    assert isinstance(decode_answer(dialect, raw(payload), REQUEST, "the-model",  # type: ignore[arg-type]
                                    max_answer_bytes=size - 1), Failure)


def test_decoding_accepts_text_as_well_as_bytes() -> None:
    text = json.dumps(openai(json.dumps(ANSWER)))
    assert decode_answer("openai", text, REQUEST, "the-model") == Success(ANSWER)
