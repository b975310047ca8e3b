"""Time in ``memory_search`` through the official client: a span named in the query
puts that time's memories first and is reported under ``when``; ``as_of`` searches
what the store held then; every hit says when its fact holds."""

from __future__ import annotations

from pathlib import Path

from mcp import ClientSession

from tests.integration.mcp.mcp_support import data, make_store, refused, run


def _article(claim: str, happened: str) -> str:
    return (f"<p><mark>{claim}</mark> It happened on "
            f'<time datetime="{happened}">{happened}</time>.</p>')


def test_a_time_in_the_query_and_as_of_over_the_wire(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        august = data(await session.call_tool("memory_write", {
            "title": "Cache moved", "claim": "",
            "body_html": _article("The cache moved to Redis.", "2023-08-14")}))["path"]
        await session.call_tool("memory_write", {
            "title": "Cache sizing", "claim": "",
            "body_html": _article("The cache cache holds a day of sessions.", "2024-02-01")})
        found = data(await session.call_tool(
            "memory_search", {"query": "cache in August 2023"}))
        assert found["hits"][0]["path"] == august
        assert found["hits"][0]["holds_since"] == "2023-08-14"
        assert found["when"]["phrase"] == "August 2023"
        assert found["when"]["start"] == "2023-08-01"
        later = data(await session.call_tool(
            "memory_search", {"query": "cache", "as_of": "2099-01-01"}))
        assert later["when"]["as_of"] == "2099-01-01T23:59:59Z"
        assert len(later["hits"]) == 2
        plain = data(await session.call_tool("memory_search", {"query": "cache"}))
        assert plain.get("when") is None
        early = await session.call_tool("memory_search",
                                        {"query": "cache", "as_of": "1999-01-01"})
        assert "held nothing as of 1999-01-01" in refused(early)
        bad = await session.call_tool("memory_search",
                                      {"query": "cache", "as_of": "last tuesday"})
        assert "is not a date" in refused(bad)

    run(root, scenario)
