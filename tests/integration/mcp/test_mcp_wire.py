"""What the server answers to what is not a call it knows: an unknown tool is a tool
error with its code, and a stdin line that is not a JSON-RPC message is answered with
JSON-RPC 2.0's error (-32700 for a line that is not JSON, -32600 for JSON that is not
a request, with the request's id when it can be read, else null).

Raw lines are written to a real server process's stdin and its replies read off its
stdout; the official client then runs a session over the same process's pipes, so
what is checked is that one bad line costs nothing but its own answer.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from memhtml.mcp.tools import TOOL_NAMES
from memhtml.mcp.transport import refusal_of
from tests.integration.mcp.mcp_support import (
    SCENARIO_TIMEOUT_S,
    data,
    make_store,
    refused,
    run,
    server_environment,
)

# -- an unknown tool ------------------------------------------------------------------


def test_an_unknown_tool_is_a_tool_error_with_its_code(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("memory_serch", {"query": "kettle"})
        text = refused(result)
        assert text.startswith("ERR_UNKNOWN_TOOL: "), text
        assert "'memory_serch'" in text and "did you mean 'memory_search'" in text, text
        assert all(name in text for name in TOOL_NAMES), text
        assert result.structured_content == {"error": "ERR_UNKNOWN_TOOL",
                                             "message": text.removeprefix("ERR_UNKNOWN_TOOL: ")}

        huge = "x" * 100_000
        text = refused(await session.call_tool(huge, {}))
        assert text.startswith("ERR_UNKNOWN_TOOL: ") and len(text) < 2_000, len(text)
        for name in ("", "Memory_Search", "memory_search ", "tools/list", "\u0000"):
            assert refused(await session.call_tool(name, {})).startswith("ERR_UNKNOWN_TOOL: ")
        # the server keeps serving, and every real tool is still listed
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == set(TOOL_NAMES)
        assert data(await session.call_tool("memory_status", {}))["memories"] == 0

    run(root, scenario)


# -- lines that are not messages: the rule, over generated lines ---------------------------

_ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=12))
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)
_requests = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": _ids, "method": st.text(min_size=1, max_size=20)},
    optional={"params": st.dictionaries(st.text(max_size=6), _json_values, max_size=3)})
_members = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])


@st.composite
def _broken_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A valid request with one member dropped or given a value of another kind."""
    request: dict[str, Any] = dict(draw(_requests))
    member = draw(_members)
    if draw(st.booleans()):
        request.pop(member, None)
    else:
        request[member] = draw(_json_values)
    return request


_lines = st.one_of(
    st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t),
    _json_values.map(json.dumps),
    _requests.map(json.dumps),
    _broken_requests().map(json.dumps),
)


def _sdk_parse(line: str) -> object:
    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        return None


def _json_of(line: str) -> tuple[bool, object]:
    try:
        return True, json.loads(line)
    except ValueError:
        return False, None


@settings(max_examples=300)
@given(line=_lines)
def test_every_line_is_passed_on_or_answered_and_an_answer_never_invents_an_id(
        line: str) -> None:
    answer = refusal_of(line)
    message = _sdk_parse(line)
    parsed, value = _json_of(line)
    if not line.strip():
        assert answer is None
        return
    if answer is None:
        # passed on: the SDK reads it as a message, and a request keeps its id
        assert message is not None, line
        assert not (isinstance(message, JSONRPCNotification) and isinstance(value, dict)
                    and "id" in value), line
        return
    # answered: a JSON-RPC error the SDK's own parser reads back, with a standard code
    wire = answer.model_dump_json(by_alias=True, exclude_unset=True)
    assert isinstance(jsonrpc_message_adapter.validate_json(wire), JSONRPCError)
    assert json.loads(wire)["id"] == answer.id  # "id": null is written, not left out
    assert answer.error.code in (PARSE_ERROR, INVALID_REQUEST)
    if not parsed:
        assert answer.error.code == PARSE_ERROR and answer.id is None, line
    else:
        assert answer.error.code == INVALID_REQUEST, line
        assert answer.id is None or (isinstance(value, dict) and value.get("id") == answer.id
                                     and "method" in value), (line, answer.id)


@settings(max_examples=100)
@given(request=_requests)
def test_a_valid_request_is_never_answered_by_the_transport(request: dict[str, Any]) -> None:
    line = json.dumps(request)
    assert refusal_of(line) is None
    assert isinstance(_sdk_parse(line), JSONRPCRequest)


_WRONG = {"method": [5, [], None, True, {}], "params": [5, [], "x", True],
          "jsonrpc": ["1.0", 2, None, ""]}
"""Values of the wrong kind for each member (a null params is the SDK's to read as
none, so it is not among them)."""


@settings(max_examples=100)
@given(request=_requests, wrong=st.sampled_from(sorted(_WRONG)).flatmap(
    lambda member: st.tuples(st.just(member), st.sampled_from(_WRONG[member]))))
def test_a_request_with_an_id_but_the_wrong_shape_is_answered_with_its_id(
        request: dict[str, Any], wrong: tuple[str, object]) -> None:
    member, value = wrong
    broken = {**request, member: value}
    answer = refusal_of(json.dumps(broken))
    assert answer is not None, broken
    assert answer.error.code == INVALID_REQUEST
    assert answer.id == request["id"]


# -- lines that are not messages: the real server --------------------------------------------


class Wire:
    """A server process and its pipes: raw lines in, replies out, and the official
    client's streams bridged over the same pipes."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self._buffer = b""

    async def send(self, line: str) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(line.encode("utf-8") + b"\n")

    async def reply(self) -> dict[str, Any]:
        """The next line the server writes, as JSON."""
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        parsed = json.loads(line)
        assert isinstance(parsed, dict), parsed
        return parsed

    @asynccontextmanager
    async def session(self, stray: list[dict[str, Any]]) -> AsyncIterator[ClientSession]:
        """The official client over this process's pipes. A reply with no id the
        client sent (an answer to a raw line) goes to ``stray``, not the client."""
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage](0)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](0)

        async def pump_out() -> None:
            async with to_client:
                while True:
                    try:
                        raw = await self.reply()
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        return
                    if "error" in raw and (raw.get("id") is None
                                           or str(raw["id"]).startswith("raw-")):
                        stray.append(raw)
                        continue
                    message = jsonrpc_message_adapter.validate_python(raw)
                    await to_client.send(SessionMessage(message))

        async def pump_in() -> None:
            async with from_client:
                async for item in from_client:
                    await self.send(item.message.model_dump_json(by_alias=True,
                                                                 exclude_unset=True))

        async with anyio.create_task_group() as group:
            group.start_soon(pump_out)
            group.start_soon(pump_in)
            async with ClientSession(client_reads, client_writes) as session:
                yield session
            group.cancel_scope.cancel()


@asynccontextmanager
async def wired(root: Path) -> AsyncIterator[Wire]:
    with (root.parent / "server.log").open("wb") as log:
        process = await anyio.open_process(
            [sys.executable, "-m", "memhtml.mcp", "--store", str(root)],
            cwd=str(root.parent), env=server_environment(), stderr=log)
        try:
            yield Wire(process)
        finally:
            with suppress(Exception):
                assert process.stdin is not None
                await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


BAD_LINES: list[tuple[str, int, object]] = [
    ("{bad", PARSE_ERROR, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE_ERROR, None),
    ("\u00ff\u00fe not json at all", PARSE_ERROR, None),
    ("[]", INVALID_REQUEST, None),
    ('[{"jsonrpc":"2.0","id":2,"method":"ping"}]', INVALID_REQUEST, None),
    ('"a string"', INVALID_REQUEST, None),
    ("42", INVALID_REQUEST, None),
    ("null", INVALID_REQUEST, None),
    ('{"foo":1}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":"raw-3","method":5}', INVALID_REQUEST, "raw-3"),
    ('{"jsonrpc":"1.0","id":"raw-4","method":"ping"}', INVALID_REQUEST, "raw-4"),
    ('{"jsonrpc":"2.0","id":"raw-5","method":"tools/call","params":7}', INVALID_REQUEST,
     "raw-5"),
    ('{"jsonrpc":"2.0","id":[6],"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","method":7}', INVALID_REQUEST, None),
]


def _expect(reply: dict[str, Any], code: int, request_id: object, line: str) -> None:
    assert reply.get("jsonrpc") == "2.0", (line, reply)
    assert "id" in reply and reply["id"] == request_id, (line, reply)
    assert reply["error"]["code"] == code, (line, reply)


def test_each_bad_line_is_answered_and_the_server_keeps_serving(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario() -> None:
        async with wired(root) as wire:
            # before any session: every bad line has its answer, one line each, in order
            for line, code, request_id in BAD_LINES:
                await wire.send(line)
                _expect(await wire.reply(), code, request_id, line)
            # a blank line is not a request: nothing comes back for it, and the next
            # request is answered as the next line
            await wire.send("")
            await wire.send('{"jsonrpc":"2.0","id":"raw-ping","method":"ping"}')
            assert await wire.reply() == {"jsonrpc": "2.0", "id": "raw-ping", "result": {}}

            # the official client over the same process, with bad lines mid-session
            stray: list[dict[str, Any]] = []
            async with wire.session(stray) as session:
                await session.initialize()
                assert data(await session.call_tool("memory_status", {}))["memories"] == 0
                for line, _, _ in BAD_LINES:
                    await wire.send(line)
                wrote = data(await session.call_tool("memory_write", {
                    "title": "Wire", "claim": "The server answers after a bad line."}))
                assert wrote["path"] == "areas/inbox/wire.html"
                hits = data(await session.call_tool("memory_search", {"query": "bad line"}))
                assert [h["path"] for h in hits["hits"]] == ["areas/inbox/wire.html"]
                with anyio.fail_after(30):
                    while len(stray) < len(BAD_LINES):
                        await anyio.sleep(0.05)
            assert [(r["error"]["code"], r["id"]) for r in stray] == [
                (code, request_id) for _, code, request_id in BAD_LINES]

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))


@pytest.mark.parametrize("line", [line for line, _, _ in BAD_LINES])
def test_the_transport_answers_what_the_sdk_would_drop(line: str) -> None:
    """Each line of the wire test is one the SDK cannot read as a request it answers:
    without the transport it would have had no reply."""
    message = _sdk_parse(line)
    assert message is None or isinstance(message, JSONRPCNotification), line
    assert refusal_of(line) is not None
