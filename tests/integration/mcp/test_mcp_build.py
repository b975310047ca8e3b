"""``build_server`` in-process, through the SDK's in-memory client: the same tools
without a subprocess, for code that embeds the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp.client.client import Client

from memhtml.compose import Settings, open_services, value_of
from memhtml.mcp.server import build_server
from memhtml.mcp.tools import TOOL_NAMES
from tests.integration.mcp.mcp_support import data, make_store


def test_build_server_answers_in_process(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    server = build_server(value_of(open_services(Settings(store=root))))

    async def scenario() -> None:
        async with Client(server) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == set(TOOL_NAMES)
            wrote = data(await client.call_tool("memory_write", {
                "title": "Embedded", "claim": "The server also runs in-process."}))
            hits = data(await client.call_tool("memory_search", {"query": "in-process"}))
            assert [h["path"] for h in hits["hits"]] == [wrote["path"]]

    asyncio.run(asyncio.wait_for(scenario(), 60))
