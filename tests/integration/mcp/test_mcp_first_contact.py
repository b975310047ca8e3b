"""The server as a model meets it: strict arguments, plain errors, informative hits,
duplicates declined, the browsing tools, a small tools/list, and a whole session
that uses only the words the tool definitions publish.

Every call goes through the official client over stdio to a real server process on
a real store.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.types import Tool

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.store import Store, StoreDeps, WriteInput, link, write
from tests.integration.mcp.mcp_support import (
    OUTSIDE_AUTHOR,
    data,
    git_cli,
    make_store,
    ok,
    refused,
    run,
    text_of,
)

TOOLS_JSON_MAX = 12_400
"""The budget for the whole tools/list answer, in bytes of compact JSON: every byte
of it sits in a model's context on every turn. 12,000 until search took a time
(``as_of``) and its hits' fields were all described, which came to 12,1xx."""

LEAKS = ("pydantic", "validation error", "http://", "https://", "Traceback", "Error executing")


def _head(root: Path) -> str:
    return git_cli(root, "rev-parse", "HEAD").strip()


def _clean(text: str) -> None:
    """A tool error a model reads: a stable code first, no library internals."""
    assert re.match(r"^ERR_[A-Z_]+: ", text), text
    for leak in LEAKS:
        assert leak not in text, (leak, text)


def _tools_json(tools: list[Tool]) -> str:
    return json.dumps({"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                                 for t in tools]}, separators=(",", ":"))


def test_unknown_and_bad_arguments_are_plain_tool_errors(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        tools = (await session.list_tools()).tools
        for tool in tools:
            assert tool.input_schema["additionalProperties"] is False, tool.name
        before = _head(root)

        # the CLI's word for the memory type is the tool's word
        wrote = data(await session.call_tool("memory_write", {
            "title": "Rollback", "claim": "Roll back with the deploy script's undo flag.",
            "type": "procedural"}))
        read = data(await session.call_tool("memory_read", {"path": wrote["path"]}))
        assert read["type"] == "procedural"
        before = _head(root)

        # another name is refused, naming it, the tool's word for it, and every valid one
        result = await session.call_tool("memory_write", {
            "title": "Kettle", "claim": "The kettle is descaled on Mondays.",
            "memory_type": "procedural", "entities": ["place:office"]})
        text = refused(result)
        _clean(text)
        assert text.startswith("ERR_UNKNOWN_ARGUMENT: ")
        assert "'entities', 'memory_type'" in text
        assert "'memory_type' is 'type' here" in text and "'entities' is 'entity' here" in text
        write_tool = next(t for t in tools if t.name == "memory_write")
        assert "Valid arguments: " + ", ".join(write_tool.input_schema["properties"]) in text
        assert result.structured_content == {"error": "ERR_UNKNOWN_ARGUMENT",
                                             "message": text.split(": ", 1)[1]}
        assert _head(root) == before

        # a value outside the closed vocabulary lists the ten types
        text = refused(await session.call_tool("memory_write", {
            "title": "Kettle", "claim": "The kettle is descaled on Mondays.", "type": "fact"}))
        _clean(text)
        assert text.startswith("ERR_INVALID_ARGUMENTS: ")
        assert "type is 'fact', not one of: " + ", ".join(MEMORY_TYPES) in text
        assert _head(root) == before

        # every kind of bad value reads as words
        bad_values: list[tuple[str, dict[str, object], str]] = [
            ("memory_write", {"claim": "No title."}, "title is required"),
            ("memory_search", {"query": "x", "limit": 0}, "limit must be at least 1"),
            ("memory_search", {"query": "x", "limit": "many"}, "limit must be a whole number"),
            ("memory_write", {"title": "T", "claim": "C.", "confidence": 2},
             "confidence must be at most 1"),
            ("memory_write", {"title": "T", "claim": "C.",
                              "link": [{"rel": "blames", "target": "areas/inbox/x.html"}]},
             "link[0].rel is 'blames', not one of: supersedes, contradicts"),
            ("memory_write", {"title": "T", "claim": "C.",
                              "link": [{"rel": "supports", "href": "areas/inbox/x.html"}]},
             "link[0] has no field 'href' (its fields: rel, target; 'href' is 'target' here)"),
            ("memory_write", {"title": "T", "claim": "x" * 10_001}, "claim is over the cap"),
            ("memory_read", {"path": "areas/inbox/x.html", "tier": "everything"},
             "tier is 'everything', not one of: gist, summary, details, all"),
            ("task_list", {"include_done": True}, "'include_done' is 'all' here"),
            # search publishes its types as memory_write's, and still lists them when wrong
            ("memory_search", {"query": "x", "type": ["gossip"]},
             "type[0] is 'gossip', not one of: episodic, semantic"),
        ]
        for name, arguments, words in bad_values:
            text = refused(await session.call_tool(name, arguments))
            _clean(text)
            assert words in text, (words, text)
        assert _head(root) == before

        # a store refusal carries its code and what to do next
        text = refused(await session.call_tool("memory_read", {"path": "areas/inbox/no.html"}))
        _clean(text)
        assert text.startswith("ERR_NOT_FOUND: ") and "memory_search" in text

    run(root, scenario)


def test_hits_reads_and_edges_carry_what_a_model_needs(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        old = data(await session.call_tool("memory_write", {
            "title": "Office wifi", "claim": "The office wifi password is on the fridge.",
            "valid_until": "2020-01-31", "entity": ["place:office"]}))["path"]
        new = data(await session.call_tool("memory_write", {
            "title": "Guest wifi", "claim": "The guest wifi password is at reception.",
            "body": ["Ask the person at the desk.", "It changes every month."],
            "entity": ["place:office"], "tag": ["it"],
            "link": [{"rel": "relates_to", "target": old}]}))["path"]

        found = data(await session.call_tool("memory_search", {"query": "wifi password"}))
        hits = {h["path"]: h for h in found["hits"]}
        assert set(hits) == {old, new}
        assert hits[old]["valid"] is False and hits[old]["valid_until"] == "2020-01-31"
        assert hits[new]["valid"] is True
        for path, title in ((old, "Office wifi"), (new, "Guest wifi")):
            hit = hits[path]
            assert (hit["title"], hit["type"], hit["status"]) == (title, "semantic", "active")
            assert re.match(r"^\d{4}-\d{2}-\d{2}T", hit["updated"])
            assert hit["ranks"] and hit["ranks"][0]["arm"] == "lexical"

        read = data(await session.call_tool("memory_read", {"path": new}))
        assert read["tier"] == "summary"
        assert read["text"].startswith("The guest wifi password is at reception.")
        assert "Ask the person at the desk." in read["text"]
        assert read["entities"] == ["place:office"] and read["tags"] == ["it"]
        # the same words memory_write takes, so a read's links can be written back
        assert read["links"] == [{"rel": "relates_to", "target": old}]
        assert (read["type"], read["status"], read["valid"]) == ("semantic", "active", True)
        assert read["created"] and read["updated"]
        model_text = json.loads(text_of(await session.call_tool("memory_read", {"path": new})))
        assert model_text["links"] == read["links"] and "due" not in model_text

        edges = data(await session.call_tool("memory_related", {"path": old}))
        assert edges["inbound"] == [{"rel": "relates_to", "path": new, "exists": True}]
        assert all(e["exists"] is not None for e in edges["inbound"] + edges["outbound"])

    run(root, scenario)


def test_a_duplicate_claim_commits_nothing_unless_asked(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        first = data(await session.call_tool("memory_write", {
            "title": "Standup", "claim": "Standup is at 9:30 every weekday."}))
        before = _head(root)
        again = await session.call_tool("memory_write", {
            "title": "Standup time", "claim": "  standup IS at 9:30\nevery   weekday. "})
        text = refused(again)
        _clean(text)
        assert text.startswith("ERR_DUPLICATE_CLAIM: ")
        assert again.structured_content is not None
        assert again.structured_content["error"] == "ERR_DUPLICATE_CLAIM"
        assert f"{first['path']} already holds this claim" in text
        assert "allow_duplicate" in text and "memory_correct" in text
        assert _head(root) == before
        # different punctuation is a different claim
        other = data(await session.call_tool("memory_write", {
            "title": "Standup later", "claim": "Standup is at 9:31 every weekday."}))
        assert other["changed"] == [other["path"]]
        # asked for, a copy is stored
        copy = data(await session.call_tool("memory_write", {
            "title": "Standup copy", "claim": "Standup is at 9:30 every weekday.",
            "allow_duplicate": True}))
        assert copy["path"] != first["path"] and copy["changed"] == [copy["path"]]
        # an archived memory's claim is free to be written again
        data(await session.call_tool("memory_archive", {"path": first["path"]}))
        data(await session.call_tool("memory_archive", {"path": copy["path"]}))
        fresh = data(await session.call_tool("memory_write", {
            "title": "Standup", "claim": "Standup is at 9:30 every weekday."}))
        assert fresh["changed"] == [fresh["path"]] and fresh.get("note") is None

    run(root, scenario)


def _store_at(root: Path, when: str) -> Store:
    from datetime import datetime

    git = ok(PygitService.open(root / ".git"))
    clock = FixedClock(datetime.fromisoformat(when.replace("Z", "+00:00")))
    return Store(StoreDeps(git=git, clock=clock, author=OUTSIDE_AUTHOR,
                           worktree=root, journals=JournalFiles(root / ".git")))


def test_recent_context_and_list(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    written: dict[str, str] = {}
    for when, title, claim, entities, folder in [
        ("2026-05-01T09:00:00Z", "Disk full", "The build disk filled up.", ("system:ci",),
         "areas/ops/"),
        ("2026-05-02T09:00:00Z", "Build outage", "Builds failed for two hours.", (),
         "areas/ops/"),
        ("2026-05-03T09:00:00Z", "Runner", "The CI runner has 50 GB of disk.", ("system:ci",),
         "areas/ops/ci/"),
        ("2026-05-04T09:00:00Z", "Lunch", "Lunch is at noon.", (), None),
    ]:
        landed = ok(write(_store_at(root, when), WriteInput(
            title=title, claim=claim, entities=entities, directory=folder)))
        assert landed.primary is not None
        written[title] = landed.primary
    ok(link(_store_at(root, "2026-05-02T10:00:00Z"), written["Build outage"], "caused_by",
            written["Disk full"]))

    async def scenario(session: ClientSession) -> None:
        recent = data(await session.call_tool("memory_recent", {"limit": 3}))["memories"]
        assert [m["path"] for m in recent] == [
            written["Lunch"], written["Runner"], written["Build outage"]]
        since = data(await session.call_tool("memory_recent", {"since": "2026-05-03"}))
        assert [m["path"] for m in since["memories"]] == [written["Lunch"], written["Runner"]]

        near = data(await session.call_tool("memory_context", {
            "path": written["Build outage"]}))
        assert [(n["path"], n["depth"]) for n in near["nodes"]] == [
            (written["Build outage"], 0), (written["Disk full"], 1)]
        assert near["edges"] == [{"source": written["Build outage"], "rel": "caused_by",
                                  "target": written["Disk full"]}]
        far = data(await session.call_tool("memory_context", {
            "path": written["Build outage"], "depth": 2}))
        assert [(n["path"], n["depth"]) for n in far["nodes"]] == [
            (written["Build outage"], 0), (written["Disk full"], 1), (written["Runner"], 2)]
        assert far["shared"] == [{"entity": "system:ci",
                                  "paths": sorted([written["Disk full"], written["Runner"]])}]
        assert far["truncated"] is False
        cut = data(await session.call_tool("memory_context", {
            "path": written["Build outage"], "depth": 2, "limit": 1}))
        assert len(cut["nodes"]) == 2 and cut["truncated"] is True
        text = refused(await session.call_tool("memory_context", {"path": "areas/x.html"}))
        _clean(text)
        text = refused(await session.call_tool("memory_context", {
            "path": written["Runner"], "depth": 9}))
        assert "depth must be at most 3" in text

        top = data(await session.call_tool("memory_list", {}))
        assert top["dir"] == "" and top["total"] == 4
        assert [m["path"] for m in top["memories"]] == sorted(written.values())
        assert top["dirs"] == [{"path": "areas/", "memories": 4}]
        flat = data(await session.call_tool("memory_list", {"recursive": False}))
        assert (flat["memories"], flat["total"], flat["dirs"]) == ([], 0, top["dirs"])
        ops = data(await session.call_tool("memory_list", {"dir": "/areas/ops"}))
        assert ops["dir"] == "areas/ops/"
        assert [m["path"] for m in ops["memories"]] == sorted(
            [written["Disk full"], written["Build outage"], written["Runner"]])
        assert ops["dirs"] == [{"path": "areas/ops/ci/", "memories": 1}]
        assert ops["total"] == 3
        direct = data(await session.call_tool("memory_list", {"dir": "areas/ops/",
                                                              "recursive": False}))
        assert [m["path"] for m in direct["memories"]] == sorted(
            [written["Disk full"], written["Build outage"]])
        assert direct["dirs"] == ops["dirs"] and direct["total"] == 2
        cut = data(await session.call_tool("memory_list", {"dir": "areas/", "limit": 1}))
        assert len(cut["memories"]) == 1 and cut["total"] == 4
        text = refused(await session.call_tool("memory_list", {"dir": "areas/none"}))
        _clean(text)
        assert text.startswith("ERR_NOT_FOUND")

    run(root, scenario)


def test_tool_definitions_fit_the_budget(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    size: list[int] = []

    async def scenario(session: ClientSession) -> None:
        size.append(len(_tools_json((await session.list_tools()).tools).encode("utf-8")))

    run(root, scenario)
    assert size[0] < TOOLS_JSON_MAX, size


class Caller:
    """Builds each call from the published schemas alone: every argument name used
    must be one ``tools/list`` shows for that tool, and every required one is given."""

    def __init__(self, session: ClientSession, tools: list[Tool]) -> None:
        self.session = session
        self.schemas = {t.name: t.input_schema for t in tools}
        self.descriptions = {t.name: t.description or "" for t in tools}

    def name_for(self, tool: str, *candidates: str) -> str:
        """The first of ``candidates`` the tool publishes, as a model would pick the
        schema's word for a concept."""
        props = self.schemas[tool]["properties"]
        return next(c for c in candidates if c in props)

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        schema = self.schemas[tool]
        assert set(arguments) <= set(schema["properties"]), (tool, arguments.keys())
        assert set(schema.get("required", [])) <= set(arguments), tool
        return data(await self.session.call_tool(tool, arguments))


def test_a_session_built_only_from_the_published_words(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        model = Caller(session, (await session.list_tools()).tools)
        assert "memory_correct" in model.descriptions["memory_write"] or \
            "correct" in model.descriptions["memory_correct"]
        kind = model.name_for("memory_write", "memory_type", "type", "kind")
        about = model.name_for("memory_write", "entities", "entity")
        types = model.schemas["memory_write"]["properties"][kind]["enum"]
        assert "procedural" in types

        deploy = await model.call("memory_write", {
            "title": "Deploy day", "claim": "Deploys to production happen on Tuesdays.",
            kind: "procedural", about: ["service:checkout"]})
        await model.call("memory_write", {
            "title": "Freeze", "claim": "Nothing is deployed during the December freeze.",
            about: ["service:checkout"]})

        found = await model.call("memory_search", {"query": "deploys production"})
        top = found["hits"][0]
        assert top["path"] == deploy["path"] and top["type"] == "procedural"

        tier = model.name_for("memory_read", "tier")
        summary = "summary" if "summary" in model.schemas["memory_read"]["properties"][tier][
            "enum"] else "gist"
        read = await model.call("memory_read", {"path": top["path"], tier: summary})
        assert read["text"].startswith("Deploys to production happen on Tuesdays.")

        corrected = await model.call("memory_correct", {
            "path": top["path"], "title": "Deploy day",
            "claim": "Deploys to production happen on Wednesdays.",
            about: ["service:checkout"]})
        assert corrected["archived_to"].startswith("archive/")
        again = await model.call("memory_read", {"path": corrected["path"]})
        assert again["type"] == "procedural", "a correction keeps the memory's type"

        recent = await model.call("memory_recent", {
            model.name_for("memory_recent", "limit"): 5})
        assert recent["memories"][0]["path"] == corrected["path"]
        context = await model.call("memory_context", {"path": corrected["path"]})
        reached = {n["path"] for n in context["nodes"]}
        assert corrected["archived_to"] in reached
        assert context["shared"] == [{"entity": "service:checkout", "paths": sorted(reached)}]
        assert {"source": corrected["path"], "rel": "supersedes",
                "target": corrected["archived_to"]} in context["edges"]

    run(root, scenario)
