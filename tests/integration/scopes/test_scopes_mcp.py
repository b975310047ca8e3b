"""Scopes over MCP, with the official client and a real server process: search and
memory_list span the scopes, each hit naming its scope; memory_read and every write
take ``scope``; a read-only, unknown or broken scope is refused with its code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import ClientSession

from tests.integration.cli.cli_support import git_log
from tests.integration.mcp.mcp_support import SCENARIO_TIMEOUT_S, data, served, text_of
from tests.integration.scopes.conftest import Stores, write


def _serve(stores: Stores, scenario: object) -> None:
    async def main() -> None:
        env = {"XDG_CONFIG_HOME": str(stores.config.parent.parent)}
        async with served(stores.own, env) as session:
            await scenario(session)  # type: ignore[operator]

    asyncio.run(asyncio.wait_for(main(), SCENARIO_TIMEOUT_S))


def test_reads_span_the_scopes_and_writes_need_a_writable_one(
        stores: Stores, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    mine = write(capsys, stores.own, "Deploy window", "Deploys happen on Tuesdays.")
    theirs = write(capsys, stores.team, "Deploy freeze", "Deploys freeze on Fridays.")
    before = git_log(stores.team)

    async def scenario(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "scope" in tools["memory_search"].input_schema["properties"]
        assert "scope" in tools["memory_write"].input_schema["properties"]
        found = data(await session.call_tool("memory_search", {"query": "deploys"}))
        assert [(h["scope"], h["path"]) for h in found["hits"]] == [
            ("own", mine), ("team", theirs)]
        named = data(await session.call_tool("memory_search",
                                             {"query": "deploys", "scope": "team"}))
        assert [(h["scope"], h["path"]) for h in named["hits"]] == [("team", theirs)]
        read = data(await session.call_tool("memory_read", {"path": theirs,
                                                            "scope": "team"}))
        assert "Fridays" in read["text"]
        missing = await session.call_tool("memory_read", {"path": theirs})
        assert missing.is_error and text_of(missing).startswith("ERR_NOT_FOUND")
        listed = data(await session.call_tool("memory_list", {}))
        assert {(m["scope"], m["path"]) for m in listed["memories"]} == {
            ("own", mine), ("team", theirs)}
        assert listed["total"] == 2
        refused = await session.call_tool("memory_write", {
            "title": "T", "claim": "A team fact.", "scope": "team"})
        assert refused.is_error and text_of(refused).startswith("ERR_SCOPE_REFUSED")
        assert "read only" in text_of(refused)
        unknown = await session.call_tool("memory_archive", {"path": mine,
                                                             "scope": "nowhere"})
        assert unknown.is_error and text_of(unknown).startswith("ERR_SCOPE_REFUSED")

    _serve(stores, scenario)
    assert git_log(stores.team) == before, "nothing written to a read-only scope"

    broken = tmp_path / "not-a-store"
    broken.mkdir()
    stores.scopes(f'[scopes.team]\npath = "{stores.team}"\nwritable = true\n'
                  f'[scopes]\nbroken = "{broken}"\n')

    async def writable(session: ClientSession) -> None:
        landed = data(await session.call_tool("memory_write", {
            "title": "Team fact", "claim": "The team retro is on Mondays.",
            "scope": "team"}))
        assert (stores.team / landed["path"]).is_file()
        assert not (stores.own / landed["path"]).exists()
        found = data(await session.call_tool("memory_search", {"query": "retro"}))
        assert [(h["scope"], h["path"]) for h in found["hits"]] == [("team", landed["path"])]
        assert f"scope broken ({broken}) cannot be used" in found["note"]
        stuck = await session.call_tool("memory_read", {"path": mine, "scope": "broken"})
        assert stuck.is_error and text_of(stuck).startswith("ERR_SCOPE_UNUSABLE")

    _serve(stores, writable)


def test_with_no_scope_configured_the_argument_is_not_published(
        stores: Stores) -> None:
    stores.scopes("")

    async def scenario(session: ClientSession) -> None:
        tools = (await session.list_tools()).tools
        assert all("scope" not in tool.input_schema["properties"] for tool in tools)
        named = await session.call_tool("memory_search", {"query": "x", "scope": "team"})
        assert named.is_error and text_of(named).startswith("ERR_UNKNOWN_ARGUMENT"), \
            text_of(named)
        found = data(await session.call_tool("memory_search", {"query": "x"}))
        assert found["hits"] == []

    _serve(stores, scenario)
