"""Outside commits are seen by the next call; bad input is a tool error and the server
keeps serving; concurrent calls all land."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from mcp import ClientSession
from mcp.types import CallToolResult

from memhtml.format import NewMemoryInput, render_template
from memhtml.store import WriteInput, write
from tests.integration.mcp.mcp_support import (
    data,
    git_cli,
    make_store,
    ok,
    outside_store,
    refused,
    run,
)


def test_outside_commits_are_visible_to_the_next_call(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    other = outside_store(root)

    async def scenario(session: ClientSession) -> None:
        assert data(await session.call_tool("memory_search", {"query": "kettle"}))["hits"] == []
        # warm the server's head, then move the branch under it through the library
        ok(write(other, WriteInput(title="Kettle", claim="The office kettle is descaled "
                                                         "every Monday.")))
        hits = data(await session.call_tool("memory_search", {"query": "kettle descaled"}))
        assert [h["path"] for h in hits["hits"]] == ["areas/inbox/kettle.html"]

        # and through the git command line, as a person would
        html = render_template(NewMemoryInput(
            title="Printer", claim="The printer on floor two needs A4 paper.",
            memory_type="semantic", at="2026-05-02T09:00:00Z"))
        target = root / "areas" / "inbox" / "printer.html"
        target.write_text(html, encoding="utf-8")
        git_cli(root, "add", "areas/inbox/printer.html")
        git_cli(root, "-c", "user.name=Person", "-c", "user.email=person@example.org",
                "commit", "-q", "-m", "add a printer note by hand")
        hits = data(await session.call_tool("memory_search", {"query": "printer paper"}))
        assert [h["path"] for h in hits["hits"]] == ["areas/inbox/printer.html"]
        status = data(await session.call_tool("memory_status", {}))
        assert status["memories"] == 2
        assert status["commit"] == git_cli(root, "rev-parse", "HEAD").strip()

        # the server's own write lands on top of both
        mine = data(await session.call_tool("memory_write", {
            "title": "Stapler", "claim": "The stapler lives in the second drawer."}))
        assert git_cli(root, "rev-parse", "HEAD").strip() == mine["commit"]

    run(root, scenario)


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        async def ping() -> None:
            status = data(await session.call_tool("memory_status", {}))
            assert status["memories"] == 0

        text = refused(await session.call_tool("memory_write", {
            "title": "Labelled", "claim": "A claim.", "entity": ["Nope"]}))
        assert text.startswith("ERR_")
        assert "entity 'Nope' is not type:name" in text
        await ping()

        text = refused(await session.call_tool("memory_write", {
            "title": "Unmarked", "claim": "", "body_html": "<p>No mark.</p>"}))
        assert "not a valid memory" in text and "has no <mark>" in text
        await ping()

        for tool, args in [
            ("memory_read", {"path": "../outside.html"}),
            ("memory_read", {"path": "/etc/passwd"}),
            ("memory_related", {"path": "areas/../../x.html"}),
            ("memory_archive", {"path": "../../etc/passwd"}),
            ("memory_write", {"title": "Escape", "claim": "A claim.",
                              "path": "../escape.html"}),
            ("memory_write", {"title": "Escape", "claim": "A claim.",
                              "dir": "../elsewhere"}),
            ("memory_write", {"title": "Git", "claim": "A claim.",
                              "path": ".git/hooks/x.html"}),
        ]:
            text = refused(await session.call_tool(tool, args))
            assert "refused" in text, (tool, args, text)
            await ping()

        text = refused(await session.call_tool("memory_read", {"path": "areas/inbox/none.html"}))
        assert text.startswith("ERR_NOT_FOUND: ")
        text = refused(await session.call_tool("memory_write", {
            "title": "Bad type", "claim": "A claim.", "type": "gossip"}))
        assert "type is 'gossip', not one of: episodic, semantic" in text
        text = refused(await session.call_tool("memory_read", {
            "path": "areas/inbox/x.html", "tier": "everything"}))
        assert "tier" in text
        text = refused(await session.call_tool("task_status", {
            "path": "areas/inbox/none.html", "status": "done"}))
        assert "no memory at areas/inbox/none.html" in text
        text = refused(await session.call_tool("memory_link", {
            "path": "areas/inbox/none.html", "rel": "supports",
            "target": "areas/inbox/other.html"}))
        assert "no memory" in text
        await ping()
        wrote = data(await session.call_tool("memory_write", {
            "title": "Still here", "claim": "The server answers after every refusal."}))
        assert wrote["path"] == "areas/inbox/still-here.html"

    run(root, scenario)


def test_twenty_concurrent_calls_all_succeed(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    other = outside_store(root)
    outside_paths: list[str] = []

    def outside_writer() -> None:
        # a second writer in another process-like handle, racing the server's writes
        for i in range(5):
            landed = ok(write(other, WriteInput(title=f"Outside {i}",
                                                claim=f"Outside note number {i}.")))
            assert landed.primary is not None
            outside_paths.append(landed.primary)

    async def scenario(session: ClientSession) -> None:
        data(await session.call_tool("memory_write", {
            "title": "Seed", "claim": "A seed note about concurrency."}))
        calls = []
        for i in range(20):
            if i % 2:
                calls.append(session.call_tool("memory_search", {"query": "note concurrency"}))
            else:
                calls.append(session.call_tool("memory_write", {
                    "title": f"Note {i}", "claim": f"Concurrent note number {i}."}))
        racer = threading.Thread(target=outside_writer)
        racer.start()
        results: list[CallToolResult] = await asyncio.gather(*calls)
        await asyncio.to_thread(racer.join)
        answers = [data(result) for result in results]
        written = {a["path"] for a in answers[0::2]}
        assert len(written) == 10
        for searched in answers[1::2]:
            assert searched["hits"], searched
        status = data(await session.call_tool("memory_status", {}))
        assert status["memories"] == 1 + 10 + 5
        hits = data(await session.call_tool("memory_search", {
            "query": "concurrent outside note number", "limit": 50}))
        assert {h["path"] for h in hits["hits"]} >= written | set(outside_paths)

    run(root, scenario)
