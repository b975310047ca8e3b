"""The stdio transport, with an answer for every line that is not a message.

The SDK's stdio server parses each line of stdin and, when a line is not a JSON-RPC
message, hands the parse error to the dispatcher, which logs it and drops it: a
client that sent a malformed request waits for an answer that never comes. JSON-RPC
2.0 says what to answer: a line that is not JSON is a parse error (-32700), and JSON
that is not a valid request is an invalid request (-32600), each with the request's
id when one can be read from it, else ``null``. So the SDK is given stdin through
``CheckedLines``: every line goes on to it unchanged, except one that would be
dropped, which is answered on the SDK's own write stream (so it never tears another
reply) and not passed on. The server keeps serving either way.

What is answered: a line that is not JSON; JSON that is not an object (an array
included: MCP has no batches); an object that is not a request, notification or
response; and a request whose ``id`` is not a string or an integer (the SDK would
take it for a notification, which is never answered). A blank line is not a request
and is passed on, as before, for the SDK to skip.

Reading stdin ourselves means the SDK no longer claims descriptor 0, so it is
claimed here the SDK's way: the wire is read from a private duplicate while fd 0
points at the null device, so a child process (git) that reads its stdin reads
nothing rather than the client's next request.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO

import anyio
from anyio.abc import ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

SHOWN_CHARS = 80
"""How much of a bad line an error's data quotes: enough to find it in a log."""


def _shown(line: str) -> str:
    text = line.strip()
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _error(request_id: int | str | None, code: int, message: str, line: str,
           why: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
        code=code, message=message, data={"reason": why, "line": _shown(line)}))


def _valid_id(value: object) -> bool:
    """An id MCP accepts: a string, or an integer that is not a boolean."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _parsed(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


def refusal_of(line: str) -> JSONRPCError | None:
    """The JSON-RPC error that answers ``line``, or None when the line goes on to the
    SDK (a message it parses, or a blank line)."""
    if not line.strip():
        return None
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            return _error(None, PARSE_ERROR, "Parse error", line, "the line is not JSON")
        obj = _parsed(line)
        if not isinstance(obj, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request", line,
                          "a message is a JSON object (batches are not supported)")
        request_id = obj.get("id")
        known = request_id if "method" in obj and _valid_id(request_id) else None
        return _error(known, INVALID_REQUEST, "Invalid Request", line,
                      "not a JSON-RPC 2.0 request, notification or response")
    if isinstance(message, JSONRPCNotification):
        obj = _parsed(line)
        if isinstance(obj, dict) and "id" in obj:
            return _error(None, INVALID_REQUEST, "Invalid Request", line,
                          "a request's id is a string or an integer")
    return None


class CheckedLines:
    """stdin's lines for the SDK's reader; a line the SDK would drop is answered on
    the write stream instead (once ``answer_on`` has named it) and not passed on."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._replies: ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_on(self, replies: ObjectSendStream[SessionMessage]) -> None:
        self._replies = replies
        self._ready.set()

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._lines.__anext__()
            refusal = refusal_of(line)
            if refusal is None:
                return line
            await self._ready.wait()
            assert self._replies is not None
            try:
                await self._replies.send(SessionMessage(refusal))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return line  # the server is closing: nothing is listening for it


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire's end of stdin, with fd 0 pointed at the null device while serving and
    restored after. The duplicate is never closed: a worker thread may still be
    blocked reading it when serving ends (the SDK keeps its own open for the same
    reason)."""
    private = _diverted_stdin()
    if private is None:  # no descriptors to move (Windows, a closed fd 0): in place
        yield sys.stdin.buffer
        return
    try:
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


def _diverted_stdin() -> int | None:
    """A private duplicate of fd 0, with fd 0 then pointed at the null device; None
    (and fd 0 as it was) when either step cannot be taken."""
    if sys.platform == "win32":
        return None
    import fcntl

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(private)
        return None
    return private


class _Unowned(io.TextIOWrapper):
    """A text layer that leaves its buffer open when it is closed or collected: the
    buffer is the process's stdin where there is no duplicate."""

    def close(self) -> None:
        with suppress(ValueError):
            self.detach()


def text_lines(stream: BinaryIO) -> AsyncIterator[str]:
    """``stream``'s lines as UTF-8 text (a byte that is not UTF-8 becomes U+FFFD, as
    the SDK reads them), each read on a worker thread."""
    wrapped: Any = anyio.wrap_file(_Unowned(stream, encoding="utf-8", errors="replace"))
    iterator: AsyncIterator[str] = wrapped.__aiter__()
    return iterator
