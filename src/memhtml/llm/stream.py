"""A streamed answer put back together: server-sent events to the body a plain request
would have got.

Requests are streamed so that giving up on one closes the connection, and a server
stops generating what nobody will read (a plain request left behind keeps a local
server busy for minutes, and the calls after it queue). The decoder, though, reads one
response body; so the events are assembled here into exactly that body, and every check
the decoder makes (finish reason, refusal, one tool call, the schema) applies to a
streamed answer as to any other. Pure and total: events are untrusted bytes, and
whatever they hold comes back as a value or a reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, assert_never

from returns.result import Failure, Result, Success

from memhtml.llm.json_text import parse_json
from memhtml.llm.wire import Dialect

DONE: Final = "[DONE]"
"""The data line that ends an openai stream (an anthropic one ends on ``message_stop``)."""


def event_data(lines: Iterable[str]) -> tuple[str, ...]:
    """The ``data`` of each event in a server-sent-event text, its lines joined as the
    format says (``event``, ``id``, comments and blank keep-alives carry nothing the
    answer needs: every payload names its own type)."""
    out: list[str] = []
    pending: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if pending:
                out.append("\n".join(pending))
                pending = []
            continue
        if line.startswith("data:"):
            value = line[len("data:"):]
            pending.append(value[1:] if value.startswith(" ") else value)
    if pending:
        out.append("\n".join(pending))
    return tuple(out)


def is_final(dialect: Dialect, data: str) -> bool:
    """Whether ``data`` is the event after which the stream holds nothing more."""
    if dialect == "openai":
        return data.strip() == DONE
    return '"message_stop"' in data and _type_of(data) == "message_stop"


def assemble(dialect: Dialect, events: Sequence[str]) -> Result[dict[str, object], str]:
    """The response body the events of one streamed answer add up to, or why they add up
    to none."""
    parsed: list[dict[str, object]] = []
    for data in events:
        if data.strip() == DONE:
            continue
        value = parse_json(data)
        if isinstance(value, Failure):
            return Failure(f"a streamed event is {value.failure()}")
        payload = value.unwrap()
        if not isinstance(payload, dict):
            return Failure("a streamed event is not a JSON object")
        parsed.append(payload)
    if not parsed:
        return Failure("the stream ended before any answer")
    match dialect:
        case "openai":
            return _openai(parsed)
        case "anthropic":
            return _anthropic(parsed)
        case _ as never:
            assert_never(never)


def _openai(chunks: Sequence[dict[str, object]]) -> Result[dict[str, object], str]:
    content: list[str] = []
    refusal: list[str] = []
    finish: object = None
    for chunk in chunks:
        if "error" in chunk:
            return Success({"error": chunk["error"]})
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return Failure("a streamed chunk has no choices list")
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for key, into in (("content", content), ("refusal", refusal)):
                    piece = delta.get(key)
                    if isinstance(piece, str):
                        into.append(piece)
                    elif piece is not None:
                        return Failure(f"a streamed delta's {key} is not a string")
            if choice.get("finish_reason") is not None:
                finish = choice.get("finish_reason")
    message: dict[str, object] = {"role": "assistant",
                                  "content": "".join(content) if content else None,
                                  "refusal": "".join(refusal) if refusal else None}
    return Success({"object": "chat.completion",
                    "choices": [{"index": 0, "finish_reason": finish, "message": message}]})


def _anthropic(events: Sequence[dict[str, object]]) -> Result[dict[str, object], str]:
    message: dict[str, object] | None = None
    blocks: dict[int, dict[str, object]] = {}
    partial: dict[int, list[str]] = {}
    stop: object = None
    for event in events:
        kind = event.get("type")
        if kind == "error":
            return Success({"type": "error", "error": event.get("error")})
        if kind == "message_start" and isinstance(event.get("message"), dict):
            start = event["message"]
            message = dict(start) if isinstance(start, Mapping) else None
        elif kind == "content_block_start":
            index, block = event.get("index"), event.get("content_block")
            if not isinstance(index, int) or not isinstance(block, dict):
                return Failure("a streamed content block has no index or body")
            blocks[index] = dict(block)
        elif kind == "content_block_delta":
            index, delta = event.get("index"), event.get("delta")
            if not isinstance(index, int) or index not in blocks or not isinstance(delta, dict):
                return Failure("a streamed delta names no open content block")
            if delta.get("type") == "input_json_delta" \
                    and isinstance(delta.get("partial_json"), str):
                partial.setdefault(index, []).append(str(delta["partial_json"]))
            elif delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                blocks[index]["text"] = str(blocks[index].get("text", "")) + str(delta["text"])
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and "stop_reason" in delta:
                stop = delta["stop_reason"]
    if message is None:
        return Failure("the stream carried no message_start")
    for index, pieces in partial.items():
        text = "".join(pieces)
        value = parse_json(text) if text.strip() else Success({})
        if isinstance(value, Failure):
            return Failure(f"a streamed tool input is {value.failure()}")
        blocks[index]["input"] = value.unwrap()
    return Success({**message, "content": [blocks[i] for i in sorted(blocks)],
                    "stop_reason": stop})


def _type_of(data: str) -> object:
    value = parse_json(data)
    if isinstance(value, Success) and isinstance(value.unwrap(), dict):
        return value.unwrap().get("type")
    return None
