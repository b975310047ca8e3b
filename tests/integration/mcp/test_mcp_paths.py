"""Non-portable names and oversized text through MCP: each a tool error, nothing
committed, and the server keeps serving."""

from __future__ import annotations

from pathlib import Path

from mcp import ClientSession

from memhtml.mcp.params import CLAIM_MAX, PATH_MAX, TITLE_MAX
from memhtml.store.write_checks import MAX_WRITE_BYTES
from tests.integration.mcp.mcp_support import data, git_cli, make_store, run, text_of


def test_bad_names_and_oversized_text_are_tool_errors(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    def head() -> str:
        return git_cli(root, "rev-parse", "HEAD").strip()

    base = {"title": "Kettle", "claim": "The office kettle is descaled every Monday."}
    attempts: list[tuple[str, dict[str, object], str]] = [
        ("memory_write", {**base, "dir": "areas/" + "k" * 300}, "255-byte"),
        ("memory_write", {**base, "dir": ".memhtml/x"}, "state directory"),
        ("memory_write", {**base, "dir": ".Memhtml/"}, "state directory"),
        ("memory_write", {**base, "path": "areas/inbox/con.html"}, "Windows device name CON"),
        ("memory_write", {**base, "path": "areas/LPT1/kettle.html"}, "LPT1"),
        ("memory_write", {**base, "dir": "Areas/Inbox"}, "differs only by case"),
        ("task_add", {"title": "Descale", "claim": "x" * (CLAIM_MAX + 1)}, "claim"),
        ("memory_write", {**base, "claim": "x" * (CLAIM_MAX + 1)}, "claim"),
        ("memory_write", {**base, "title": "t" * (TITLE_MAX + 1)}, "title"),
        ("memory_write", {**base, "path": "a/" * (PATH_MAX // 2 + 1) + "x.html"}, "path"),
        ("memory_write", {**base, "body": ["p" * 90_000] * 12}, f"{MAX_WRITE_BYTES}-byte"),
        ("memory_write", {**base, "confidence": 1.5}, "confidence"),
        ("memory_write", {**base, "importance": 0}, "importance"),
    ]

    async def scenario(session: ClientSession) -> None:
        before = head()
        for tool, arguments, words in attempts:
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments.keys(), text_of(result))
            assert words in text_of(result), text_of(result)[:400]
            assert head() == before, (tool, words)
        # Still serving: a good write lands, and a read finds it.
        landed = data(await session.call_tool("memory_write", base))
        assert landed["path"] == "areas/inbox/kettle.html"
        assert head() == landed["commit"]
        found = data(await session.call_tool("memory_read", {"path": landed["path"],
                                                             "tier": "gist"}))
        assert "descaled" in found["text"]

    run(root, scenario)
