"""Answers of both dialects decoded to one mapping, then checked.

Whatever came back, the caller gets either the answer object, exactly as the model
wrote it and conforming to the request's schema, or ``ModelMalformed`` saying why not:
a refusal, a truncated answer, no call to the tool, text that is not a JSON object, an
answer over the size cap, or a response not shaped as the provider documents it. Every
branch returns a value; nothing here raises on any input, since a response is
untrusted bytes from the network.

A truncated answer is refused even where the text happens to parse: a model stopped at
its output cap may have dropped the members it would have named last, and a partial
answer applied as if whole is worse than a skipped batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, assert_never

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import ModelMalformed
from memhtml.contracts.services import ModelRequest
from memhtml.llm.json_text import encode_json, parse_json
from memhtml.llm.schema import check
from memhtml.llm.wire import Dialect

MAX_ANSWER_BYTES: Final = 256 * 1024
"""The default cap on one answer's serialized size (256 KiB). A phase's answer names
members by short keys; one far larger is a model looping or an attack on the reader."""

ANTHROPIC_FINISHED: Final = frozenset({"tool_use", "end_turn"})
"""Stop reasons of a finished Messages answer. Anything else (``max_tokens``,
``refusal``, ``pause_turn``, one added later) is not taken as a whole answer."""
ANTHROPIC_TRUNCATED: Final = frozenset({"max_tokens", "model_context_window_exceeded"})

OPENAI_FINISHED: Final = frozenset({"stop"})
"""The one finish reason of a whole chat-completions answer."""

_DETAIL_CHARS = 300

Answer = Result[Mapping[str, object], ModelMalformed]


def decode_answer(dialect: Dialect, raw: bytes | str, request: ModelRequest, model_id: str,
                  max_answer_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    """The checked answer in a provider's response body ``raw`` to ``request``: parsed,
    taken out of the dialect's envelope, capped, then checked against the schema."""
    def extract(payload: object) -> Answer:
        match dialect:
            case "anthropic":
                return answer_of_anthropic(payload, request.tool_name, model_id,
                                           max_answer_bytes)
            case "openai":
                return answer_of_openai(payload, model_id, max_answer_bytes)
            case _ as never:
                assert_never(never)

    return parse_json(raw).alt(
        lambda reason: ModelMalformed(model_id, f"the response is {reason}"),
    ).bind(extract).bind(lambda answer: check(request.schema, answer, model_id=model_id))


def answer_of_anthropic(payload: object, tool_name: str, model_id: str,
                        max_answer_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    """The ``input`` of the one ``tool_use`` block calling ``tool_name`` in a Messages
    API response (not yet checked against the schema)."""
    if not isinstance(payload, dict):
        return _malformed(model_id, "the response is not a JSON object")
    if payload.get("type") == "error":
        return _malformed(model_id, f"the response is an error: {_error_detail(payload)}")
    if payload.get("type") != "message":
        return _malformed(model_id, f"the response is not a message (type "
                                    f"{_short(payload.get('type'))})")
    stop = payload.get("stop_reason")
    if stop == "refusal":
        return _malformed(model_id, "the model refused to answer")
    if stop in ANTHROPIC_TRUNCATED:
        return _malformed(model_id, f"the answer was cut off (stop_reason {stop!r})")
    if stop not in ANTHROPIC_FINISHED:
        return _malformed(model_id, f"the answer did not finish (stop_reason {_short(stop)})")
    content = payload.get("content")
    if not isinstance(content, list):
        return _malformed(model_id, "the response has no content list")
    calls = [block for block in content if isinstance(block, dict)
             and block.get("type") == "tool_use" and block.get("name") == tool_name]
    if not calls:
        kinds = sorted({str(block.get("type")) for block in content if isinstance(block, dict)})
        return _malformed(model_id, f"no call to the tool {tool_name!r} (content: "
                                    f"{', '.join(kinds) or 'empty'})")
    if len(calls) > 1:
        return _malformed(model_id, f"the tool {tool_name!r} was called {len(calls)} times; "
                                    "one answer was asked for")
    answer = calls[0].get("input")
    if not isinstance(answer, dict):
        return _malformed(model_id, "the tool call's input is not a JSON object")
    return encode_json(answer).alt(lambda reason: ModelMalformed(model_id, reason)).bind(
        lambda encoded: _capped(answer, len(encoded), max_answer_bytes, model_id))


def answer_of_openai(payload: object, model_id: str,
                     max_answer_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    """The object parsed from ``choices[0].message.content`` of a chat-completions
    response (not yet checked against the schema)."""
    if not isinstance(payload, dict):
        return _malformed(model_id, "the response is not a JSON object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        if "error" in payload:
            return _malformed(model_id, f"the response is an error: {_error_detail(payload)}")
        return _malformed(model_id, "the response has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(first, dict) or not isinstance(message, dict):
        return _malformed(model_id, "the first choice has no message")
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        return _malformed(model_id, "the message's refusal is not a string")
    if refusal:
        return _malformed(model_id, "the model refused to answer")
    finish = first.get("finish_reason")
    if finish == "length":
        return _malformed(model_id, "the answer was cut off (finish_reason 'length')")
    if finish == "content_filter":
        return _malformed(model_id, "the provider's content filter withheld the answer")
    if finish not in OPENAI_FINISHED:
        return _malformed(model_id, f"the answer did not finish (finish_reason "
                                    f"{_short(finish)})")
    content = message.get("content")
    if not isinstance(content, str):
        return _malformed(model_id, "the message has no text content")
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > max_answer_bytes:
        # Refused before parsing: the cap also bounds the work spent on a bad answer.
        return _capped({}, size, max_answer_bytes, model_id)

    def as_object(value: object) -> Answer:
        if not isinstance(value, dict):
            return _malformed(model_id, "the content is JSON but not an object")
        return Success(value)

    return parse_json(content).alt(
        lambda reason: ModelMalformed(model_id, f"the content is {reason}"),
    ).bind(as_object)


def _capped(answer: Mapping[str, object], size: int, cap: int, model_id: str) -> Answer:
    if size > cap:
        return _malformed(model_id, f"the answer is {size} bytes, over the {cap}-byte cap")
    return Success(answer)


def _malformed(model_id: str, reason: str) -> Answer:
    return Failure(ModelMalformed(model_id, reason))


def _short(value: object) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 3] + "..."


def _error_detail(payload: Mapping[str, object]) -> str:
    """A provider's error object in a line: its type and message, shortened."""
    error = payload.get("error")
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        text = f"{kind}: {message}" if kind is not None else str(message)
    else:
        text = str(error)
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 3] + "..."
