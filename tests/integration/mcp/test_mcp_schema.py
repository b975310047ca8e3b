"""tools/list over stdio: every tool, its strict input schema and its annotations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.types import Tool

from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES, TASK_STATUSES
from tests.integration.mcp.mcp_support import make_store, run

TOOLS = {
    "memory_write", "memory_search", "memory_read", "memory_related", "memory_correct",
    "memory_archive", "memory_link", "memory_label", "task_add", "task_status", "task_list",
    "memory_status", "memory_recent", "memory_context", "memory_list", "memory_restore",
}
READS = {"memory_search", "memory_read", "memory_related", "task_list", "memory_status",
         "memory_recent", "memory_context", "memory_list"}
DESTRUCTIVE = {"memory_correct", "memory_archive"}
IDEMPOTENT_WRITES = {"memory_link", "memory_label", "task_status", "memory_restore"}
REQUIRED = {
    "memory_write": {"title", "claim"},
    "memory_search": {"query"},
    "memory_read": {"path"},
    "memory_related": {"path"},
    "memory_correct": {"path"},
    "memory_archive": {"path"},
    "memory_link": {"path", "rel", "target"},
    "memory_label": {"path", "entity"},
    "task_add": {"title", "claim"},
    "task_status": {"path", "status"},
    "task_list": set(),
    "memory_status": set(),
    "memory_recent": set(),
    "memory_context": {"path"},
    "memory_list": set(),
    "memory_restore": {"path"},
}
def _enum(schema: dict[str, Any], prop: dict[str, Any]) -> list[str]:
    """The enum a property allows, through an ``anyOf`` with null, an array's items, or
    a ``$ref`` into the schema's definitions."""
    if "$ref" in prop:
        return _enum(schema, schema["$defs"][prop["$ref"].rsplit("/", 1)[-1]])
    if "enum" in prop:
        return list(prop["enum"])
    if "items" in prop:
        return _enum(schema, prop["items"])
    for option in prop.get("anyOf", []):
        if option.get("type") != "null":
            return _enum(schema, option)
    raise AssertionError(f"no enum in {prop}")


def test_tools_schemas_and_annotations(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    listed: list[Tool] = []

    async def scenario(session: ClientSession) -> None:
        listed.extend((await session.list_tools()).tools)

    run(root, scenario)
    tools = {tool.name: tool for tool in listed}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        schema = tool.input_schema
        assert tool.description and 30 < len(tool.description) < 400, name
        assert "\n" not in tool.description
        assert set(schema.get("required", [])) == REQUIRED[name], name
        assert schema["additionalProperties"] is False, name
        for prop_name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), (name, prop_name)
            assert "title" not in prop and "anyOf" not in prop, (name, prop_name)
        notes = tool.annotations
        assert notes is not None, name
        # an unset hint is the spec's default: read-only and idempotent default false
        assert bool(notes.read_only_hint) is (name in READS), name
        assert notes.destructive_hint is (name in DESTRUCTIVE), name
        assert bool(notes.idempotent_hint) is (name in READS | IDEMPOTENT_WRITES), name
        assert notes.open_world_hint is False, name

    def props(name: str) -> dict[str, Any]:
        return dict(tools[name].input_schema["properties"])

    write = tools["memory_write"].input_schema
    assert _enum(write, props("memory_write")["type"]) == list(MEMORY_TYPES)
    link_item = props("memory_write")["link"]["items"]
    assert link_item["additionalProperties"] is False
    assert set(link_item["properties"]) == {"rel", "target"}
    # search names the types memory_write lists rather than list the ten again
    assert props("memory_search")["type"]["items"] == {"type": "string"}
    assert "memory_write" in props("memory_search")["type"]["description"]
    assert _enum(tools["memory_link"].input_schema,
                 props("memory_link")["rel"]) == list(EDGE_RELS)
    assert _enum(tools["task_status"].input_schema,
                 props("task_status")["status"]) == list(TASK_STATUSES)
    assert _enum(tools["task_add"].input_schema,
                 props("task_add")["status"]) == list(TASK_STATUSES)
    assert _enum(tools["memory_read"].input_schema,
                 props("memory_read")["tier"]) == ["gist", "summary", "details", "all"]
    assert props("memory_write")["importance"]["maximum"] == 10
    assert props("memory_search")["limit"]["maximum"] == 50
