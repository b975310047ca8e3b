"""Every door through the wire: write, search, read by tier, relate, correct, archive,
label, and the task lifecycle, each answer checked against what the store then holds."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import ClientSession

from memhtml.store import read
from tests.integration.mcp.mcp_support import (
    data,
    make_store,
    ok,
    outside_store,
    run,
    text_of,
)

ARTICLE = (
    "<p><mark>Deploys go out on Tuesdays after the standup.</mark> The release train "
    "leaves at ten.</p><details><summary>Fridays are frozen.</summary>"
    "<p>Nothing ships on a Friday afternoon.</p></details>"
)


def test_write_search_read_tiers(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        wrote = data(await session.call_tool("memory_write", {
            "title": "Deploy day", "claim": "", "body_html": ARTICLE,
            "entity": ["project:memhtml"], "tag": ["ops"], "importance": 7,
        }))
        path = wrote["path"]
        assert path == "areas/inbox/deploy-day.html"
        assert wrote["changed"] == [path]
        assert len(wrote["commit"]) == 40

        hits = data(await session.call_tool("memory_search", {"query": "tuesday deploys"}))
        assert [h["path"] for h in hits["hits"]] == [path]
        hit = hits["hits"][0]
        assert hit["claim"] == "Deploys go out on Tuesdays after the standup."
        assert hit["score"] > 0
        assert hit["arms"] == ["lexical"]
        assert [r["arm"] for r in hit["ranks"]] == ["lexical"]
        assert hit["ranks"][0]["rank"] == 1 and hit["ranks"][0]["score"] > 0
        assert (hit["title"], hit["type"], hit["status"], hit["valid"]) == (
            "Deploy day", "semantic", "active", True)
        assert hit["updated"].startswith("20")
        # the text a model reads is compact JSON with the same hit and no empty fields
        found = await session.call_tool("memory_search", {"query": "tuesday deploys"})
        assert text_of(found).startswith('{"hits":[{"path":"areas/inbox/deploy-day.html",')
        assert "valid_until" not in text_of(found) and "null" not in text_of(found)
        narrowed = data(await session.call_tool(
            "memory_search", {"query": "deploys", "entity": ["project:other"]}))
        assert narrowed["hits"] == []
        typed = data(await session.call_tool(
            "memory_search", {"query": "deploys", "type": ["semantic"], "tag": ["ops"]}))
        assert len(typed["hits"]) == 1

        tiers = {}
        for tier in ("gist", "summary", "details", "all"):
            result = await session.call_tool("memory_read", {"path": path, "tier": tier})
            tiers[tier] = data(result)["text"]
            assert json.loads(text_of(result))["text"] == tiers[tier]
        assert tiers["gist"] == "Deploys go out on Tuesdays after the standup."
        assert tiers["summary"].startswith(tiers["gist"])
        assert "Fridays are frozen." in tiers["summary"]
        assert "Nothing ships on a Friday afternoon." in tiers["details"]
        assert "<mark>" not in tiers["details"]
        assert tiers["all"].startswith("<!doctype html>")
        assert '<meta name="memhtml-importance" content="7">' in tiers["all"]
        default = data(await session.call_tool("memory_read", {"path": path}))
        assert default["tier"] == "summary"

        # an older commit can still be read
        old = data(await session.call_tool("memory_read", {
            "path": path, "tier": "gist", "at": wrote["commit"]}))
        assert old["text"] == tiers["gist"]

        status = data(await session.call_tool("memory_status", {}))
        assert status["memories"] == 1
        assert status["by_type"] == {"semantic": 1}
        assert status["commit"] == wrote["commit"]

    run(root, scenario)
    store = outside_store(root)
    assert ok(read(store, "areas/inbox/deploy-day.html", "gist")).startswith("Deploys")


def test_link_label_related_correct_archive(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        cause = data(await session.call_tool("memory_write", {
            "title": "Disk full", "claim": "The build host's disk filled up on May 3.",
            "type": "episodic"}))["path"]
        effect = data(await session.call_tool("memory_write", {
            "title": "Build outage", "claim": "Builds failed for two hours on May 3.",
            "type": "episodic",
            "link": [{"rel": "caused_by", "path": cause}]}))["path"]

        linked = data(await session.call_tool("memory_link", {
            "path": cause, "rel": "leads_to", "target": effect}))
        assert linked["path"] == cause and linked["changed"] == [cause]
        again = data(await session.call_tool("memory_link", {
            "path": cause, "rel": "leads_to", "target": effect}))
        assert again["changed"] == [] and again["commit"] == linked["commit"]

        labelled = data(await session.call_tool("memory_label", {
            "path": effect, "entity": "system:ci"}))
        assert labelled["changed"] == [effect]
        by_entity = data(await session.call_tool("memory_search", {
            "query": "builds failed", "entity": ["system:ci"]}))
        assert [h["path"] for h in by_entity["hits"]] == [effect]

        edges = data(await session.call_tool("memory_related", {"path": effect}))
        assert edges["outbound"] == [{"rel": "caused_by", "path": cause, "exists": True}]
        assert edges["inbound"] == [{"rel": "leads_to", "path": cause, "exists": True}]

        corrected = data(await session.call_tool("memory_correct", {
            "path": effect, "title": "Build outage",
            "claim": "Builds failed for three hours on May 3."}))
        new = corrected["path"]
        assert new != effect and new.startswith("areas/inbox/build-outage")
        archived = corrected["archived_to"]
        assert archived.startswith("archive/") and archived.endswith("/" + effect)
        assert {new, archived, effect, cause} <= set(corrected["changed"])
        hits = data(await session.call_tool("memory_search", {"query": "builds failed"}))
        found = [h["path"] for h in hits["hits"]]
        # The correction ranks first; the cause ("the build host") matches "builds" by
        # its stem; the superseded version is never returned.
        assert found[0] == new and archived not in found and effect not in found
        old = data(await session.call_tool("memory_read", {"path": archived, "tier": "all"}))
        assert "memhtml-superseded-by" in old["text"]
        # the cause's edge now points at the correction, the memory it meant
        edges = data(await session.call_tool("memory_related", {"path": cause}))
        assert edges["outbound"] == [{"rel": "leads_to", "path": new, "exists": True}]
        new_edges = data(await session.call_tool("memory_related", {"path": new}))
        assert {"rel": "supersedes", "path": archived, "exists": True} in new_edges["outbound"]

        gone = data(await session.call_tool("memory_archive", {"path": cause}))
        assert gone["path"] == cause
        assert gone["archived_to"].endswith("/" + cause)
        hits = data(await session.call_tool("memory_search", {"query": "disk filled"}))
        assert hits["hits"] == []
        status = data(await session.call_tool("memory_status", {}))
        assert status["by_status"] == {"active": 1, "archived": 2}

    run(root, scenario)


def test_task_lifecycle(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        late = data(await session.call_tool("task_add", {
            "title": "Rotate keys", "claim": "Rotate the deploy keys.",
            "due": "2020-01-01"}))["path"]
        assert late == "areas/tasks/rotate-keys.html"
        later = data(await session.call_tool("task_add", {
            "title": "Write docs", "claim": "Document the MCP server.",
            "due": "2999-01-01", "status": "doing"}))["path"]
        listed = data(await session.call_tool("task_list", {}))["tasks"]
        assert [(t["path"], t["status"], t["overdue"]) for t in listed] == [
            (late, "todo", True), (later, "doing", False)]

        blocked = data(await session.call_tool("task_status", {
            "path": late, "status": "blocked"}))
        assert blocked["changed"] == [late] and blocked["archived_to"] is None
        done = data(await session.call_tool("task_status", {"path": later, "status": "done"}))
        assert done["archived_to"].endswith("/" + later)
        listed = data(await session.call_tool("task_list", {}))["tasks"]
        assert [(t["path"], t["status"]) for t in listed] == [(late, "blocked")]
        everything = data(await session.call_tool("task_list", {"all": True}))
        assert {t["status"] for t in everything["tasks"]} == {"blocked", "done"}
        status = data(await session.call_tool("memory_status", {}))
        assert status["tasks"] == {"blocked": 1, "done": 1}
        assert status["overdue"] == 1

    run(root, scenario)
