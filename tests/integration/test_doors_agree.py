"""Every door says the same thing about the same request.

The command line (the cyclopts app, called with tokens) and the MCP server (a real
server process, through the official client over stdio) are walked whole: every tool
``tools/list`` publishes and every command the app registers. For each: every
argument is described; a path that names no memory answers ``ERR_NOT_FOUND``
wherever a path names the memory a call is about; an argument name means one thing
wherever it appears (``GLOSSARY``), and a command and the tool that does its work use
the same names. Then the rules both doors hold a write to (a duplicate claim, a
dangling edge) and a folder's listing are asked of each door and the answers compared.

One server session serves the whole module: the fixture asks every MCP question up
front (none of them writes) and the tests read the answers.
"""

from __future__ import annotations

import asyncio
import json
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cyclopts import App
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent, Tool

from memhtml.cli.app import app
from memhtml.contracts.record import Link
from memhtml.head.search import SearchArm
from memhtml.store import WriteInput, task_add, write
from tests.integration.mcp.mcp_support import (
    SCENARIO_TIMEOUT_S,
    make_store,
    ok,
    outside_store,
    served,
)

MISSING = "areas/inbox/never-written.html"
DISK = "areas/ops/disk.html"
RUNNER = "areas/ops/ci/runner.html"
LUNCH = "areas/inbox/lunch.html"


@dataclass(frozen=True)
class Meaning:
    """What an argument name means, wherever a door uses it."""

    kind: str
    """Its JSON type (an array's items' type: ``entity`` is one or several entities)."""
    means: str


GLOSSARY: dict[str, Meaning] = {
    "path": Meaning("string", "the memory the call is about (for a write, the one it makes)"),
    "target": Meaning("string", "the memory an edge points at"),
    "rel": Meaning("string", "an edge's relation"),
    "link": Meaning("object", "edges from the memory, each a rel and a target"),
    "at": Meaning("string", "a commit or ref the call reads"),
    "as_of": Meaning("string", "a date or instant: what the store held then, valid then"),
    "dir": Meaning("string", "a folder of the store"),
    "prefix": Meaning("string", "a folder the hits must be under"),
    "recursive": Meaning("boolean", "the folder's subfolders count too"),
    "query": Meaning("string", "the words to search for"),
    "limit": Meaning("integer", "at most this many in the answer"),
    "depth": Meaning("integer", "hops out from the memory"),
    "since": Meaning("string", "a date or instant: changed at or after it"),
    "tier": Meaning("string", "how much of a memory to read"),
    "all": Meaning("boolean", "finished tasks too"),
    "type": Meaning("string", "a memory type"),
    "entity": Meaning("string", "an entity as type:name"),
    "tag": Meaning("string", "a tag"),
    "title": Meaning("string", "a memory's title"),
    "claim": Meaning("string", "a memory's claim"),
    "body": Meaning("string", "plain-text paragraphs"),
    "body_html": Meaning("string", "the body as an HTML fragment"),
    "confidence": Meaning("number", "how sure, 0 to 1"),
    "importance": Meaning("integer", "how much it matters, 1 to 10"),
    "author": Meaning("string", "who stated the fact"),
    "session_id": Meaning("string", "the writing session"),
    "valid_from": Meaning("string", "a date or instant the fact holds from"),
    "valid_until": Meaning("string", "a date or instant the fact holds until"),
    "due": Meaning("string", "a task's due date or instant"),
    "status": Meaning("string", "a task's status"),
    "allow_duplicate": Meaning("boolean", "store a claim a live memory already holds"),
}

NAMES_A_NEW_FILE = {"memory_write"}
"""Tools whose ``path`` names the file they make, not one that must exist."""

EXAMPLES: dict[str, Any] = {
    "path": MISSING, "target": DISK, "rel": "relates_to", "entity": "person:ada",
    "status": "done", "title": "Probe", "claim": "A probe claim.", "query": "disk",
    "to": "areas/elsewhere/",
}
"""A valid value for each argument a call needs besides the missing path."""

COUNTERPARTS: dict[str, str] = {
    "write": "memory_write", "correct": "memory_correct", "read": "memory_read",
    "search": "memory_search", "related": "memory_related", "archive": "memory_archive",
    "link": "memory_link", "label": "memory_label", "restore": "memory_restore",
    "list": "memory_list", "status": "memory_status", "task add": "task_add",
    "task status": "task_status", "task list": "task_list",
}
"""Each command and the tool that does the same work through the same door."""

ONE_DOOR_ONLY: dict[str, tuple[set[str], set[str]]] = {
    # (names only the command has, names only the tool has), and why:
    # a whole file, aliases and a due date are given at a terminal; the provenance
    # fields are what an agent writes on its own behalf.
    "write": ({"file", "alias", "due"},
              {"author", "valid_from", "valid_until", "session_id"}),
    "correct": ({"file", "alias", "due"},
                {"author", "valid_from", "valid_until", "session_id"}),
    # the command's task fields are shared with write's (a link, a folder)
    "task add": ({"link", "dir"}, set()),
}
"""Where a command and its tool differ in names, on purpose."""


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # As the command line's own tests do: a developer's MEMHTML_* settings must not
    # reach the commands called here (the cache directory stays, see tests/conftest).
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name not in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER"):
            monkeypatch.delenv(name)


def _leaves(parent: App, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, App]]:
    for name in parent:
        if name.startswith("-"):
            continue
        child = parent[name]
        if child.default_command is not None:
            yield " ".join((*prefix, name)), child
        yield from _leaves(child, (*prefix, name))


COMMANDS = dict(sorted(_leaves(app)))


@dataclass(frozen=True)
class Param:
    name: str
    positional: bool
    help: str
    default: object


def _params(command: str) -> list[Param]:
    """A command's own parameters (the shared --store, --json and --scope left out)."""
    out = []
    for argument in COMMANDS[command].assemble_argument_collection(parse_docstring=True):
        info = argument.field_info
        if argument.parameter.name == ("*",) or info.name in ("store", "json", "scope"):
            continue  # a flattened group of options, or the options every command takes
        out.append(Param(info.name, info.kind is info.POSITIONAL_ONLY,
                         argument.parameter.help or "", info.default))
    return out


# -- the MCP answers, asked once -----------------------------------------------------------


@dataclass
class Answers:
    root: Path
    tools: dict[str, Tool]
    missing: dict[str, CallToolResult]
    """Each tool whose ``path`` must name a memory, called with one that names none."""
    calls: dict[str, CallToolResult]


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


def _seed(root: Path) -> None:
    store = outside_store(root)
    for path, claim, links in (
            (DISK, "The build disk filled up.", ()),
            (RUNNER, "The CI runner has 50 GB of disk.", (Link("relates_to", DISK),)),
            (LUNCH, "Lunch is at noon.", ())):
        ok(write(store, WriteInput(title=path.rsplit("/", 1)[-1], claim=claim, path=path,
                                   links=links)))
    ok(task_add(store, "Rotate the key", "Rotate the payment key.", "2026-06-01"))


def _required(tool: Tool, path: str) -> dict[str, Any]:
    schema = tool.input_schema
    arguments = {name: EXAMPLES[name] for name in schema.get("required", [])}
    arguments["path"] = path
    return arguments


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = make_store(tmp_path_factory.mktemp("doors"))
    _seed(root)
    got = Answers(root, {}, {}, {})

    async def scenario(session: ClientSession) -> None:
        got.tools.update({t.name: t for t in (await session.list_tools()).tools})
        for name, tool in sorted(got.tools.items()):
            if "path" in tool.input_schema["properties"] and name not in NAMES_A_NEW_FILE:
                got.missing[name] = await session.call_tool(name, _required(tool, MISSING))
        asked: dict[str, tuple[str, dict[str, Any]]] = {
            "dangling_link": ("memory_link", {"path": DISK, "rel": "relates_to",
                                              "target": MISSING}),
            "dangling_write": ("memory_write", {
                "title": "Probe", "claim": "A claim with two edges nowhere.",
                "link": [{"rel": "relates_to", "target": "areas/x/one.html"},
                         {"rel": "supports", "target": DISK},
                         {"rel": "supports", "target": "/areas/x/two.html"}]}),
            "duplicate": ("memory_write", {"title": "Lunch again",
                                           "claim": "  lunch IS at\tnoon. "}),
            "list": ("memory_list", {"dir": "areas/ops"}),
            "list_flat": ("memory_list", {"dir": "areas/ops", "recursive": False}),
            "list_missing": ("memory_list", {"dir": "areas/none/"}),
            "search": ("memory_search", {"query": "disk"}),
            "read": ("memory_read", {"path": RUNNER}),
            # the old word for an edge's far end passes the arguments' check (and the
            # write is then refused for its claim, so nothing is written)
            "old_word": ("memory_write", {
                "title": "Lunch", "claim": "Lunch is at noon.",
                "link": [{"rel": "supports", "path": DISK}]}),
            "both_words": ("memory_write", {
                "title": "Lunch", "claim": "Lunch is at noon.",
                "link": [{"rel": "supports", "path": DISK, "target": DISK}]}),
        }
        for key, (tool_name, arguments) in asked.items():
            got.calls[key] = await session.call_tool(tool_name, arguments)

    async def main() -> None:
        async with served(root) as session:
            await scenario(session)

    asyncio.run(asyncio.wait_for(main(), SCENARIO_TIMEOUT_S))
    return got


def _cli(capsys: pytest.CaptureFixture[str], root: Path, *tokens: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = app([*tokens, "--store", str(root), "--json"], result_action="return_value")
    out = capsys.readouterr().out
    return code, json.loads(out)


# -- every argument described --------------------------------------------------------------


def _described(schema: dict[str, Any], where: str) -> Iterator[str]:
    """Each property (nested ones, such as a link item's, too) with no description."""
    for name, prop in schema.get("properties", {}).items():
        if not str(prop.get("description", "")).strip():
            yield f"{where}.{name}"
        for inner in (prop, prop.get("items", {})):
            if inner.get("type") == "object":
                yield from _described(inner, f"{where}.{name}")


def test_every_tool_argument_is_described(answers: Answers) -> None:
    assert len(answers.tools) == 16
    bare = [hole for name, tool in sorted(answers.tools.items())
            for hole in _described(tool.input_schema, name)]
    assert bare == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_argument_is_described(command: str) -> None:
    bare = [p.name for p in _params(command) if not p.help.strip()]
    assert bare == [], command


# -- a missing path is not found, on every door --------------------------------------------


def test_every_tool_that_takes_a_path_is_walked(answers: Answers) -> None:
    takes = {name for name, tool in answers.tools.items()
             if "path" in tool.input_schema["properties"]}
    assert set(answers.missing) == takes - NAMES_A_NEW_FILE
    assert len(answers.missing) >= 9


def test_a_missing_path_is_not_found_on_every_tool(answers: Answers) -> None:
    codes = {name: (result.structured_content or {}).get("error")
             for name, result in answers.missing.items()}
    assert codes == dict.fromkeys(answers.missing, "ERR_NOT_FOUND")
    for name, result in answers.missing.items():
        assert result.is_error and MISSING in _text(result), (name, _text(result))
    listed = answers.calls["list_missing"]
    assert listed.is_error and _text(listed).startswith("ERR_NOT_FOUND: no memories under")


PATH_COMMANDS = sorted(name for name in COMMANDS
                       if any(p.positional and p.name == "path" for p in _params(name)))


def test_the_commands_that_take_a_path_are_the_expected_ones() -> None:
    expected = {"archive", "correct", "label", "link", "log", "move", "read", "related",
                "restore", "task status", "unlabel", "unlink"}
    assert set(PATH_COMMANDS) == expected


@pytest.mark.parametrize("command", PATH_COMMANDS)
def test_a_missing_path_is_not_found_on_every_command(
        answers: Answers, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    positionals = [p.name for p in _params(command) if p.positional]
    tokens = [MISSING if name == "path" else str(EXAMPLES[name]) for name in positionals]
    code, answer = _cli(capsys, answers.root, *command.split(), *tokens)
    assert code == 1, answer
    assert answer["code"] == "ERR_NOT_FOUND", (command, answer)
    assert MISSING in answer["error"]


def test_a_missing_folder_is_not_found_on_both_doors(
        answers: Answers, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = _cli(capsys, answers.root, "list", "areas/none/")
    assert (code, answer["code"]) == (1, "ERR_NOT_FOUND")
    assert f"ERR_NOT_FOUND: {answer['error']}" in _text(answers.calls["list_missing"])


# -- one word, one meaning -----------------------------------------------------------------


def _kind(prop: dict[str, Any]) -> str:
    inner = prop.get("items", prop) if prop.get("type") == "array" else prop
    return str(inner.get("type") or ("string" if "enum" in inner else "?"))


def test_an_argument_name_means_one_thing_on_every_tool(answers: Answers) -> None:
    seen: dict[str, set[str]] = {}
    for name, tool in answers.tools.items():
        for arg, prop in tool.input_schema["properties"].items():
            assert arg in GLOSSARY, f"{name}.{arg}: say what it means in GLOSSARY"
            seen.setdefault(arg, set()).add(_kind(prop))
    assert {arg: kinds for arg, kinds in seen.items() if kinds != {GLOSSARY[arg].kind}} == {}
    # the far end of an edge is `target` wherever an edge is given
    for name in ("memory_write", "memory_correct"):
        item = answers.tools[name].input_schema["properties"]["link"]["items"]
        assert set(item["properties"]) == {"rel", "target"}
    assert set(answers.tools["memory_link"].input_schema["required"]) == {
        "path", "rel", "target"}


@pytest.mark.parametrize("command", sorted(COUNTERPARTS))
def test_a_command_and_its_tool_use_the_same_names(answers: Answers, command: str) -> None:
    cli = {p.name for p in _params(command)}
    tool = set(answers.tools[COUNTERPARTS[command]].input_schema["properties"])
    only_cli, only_tool = ONE_DOOR_ONLY.get(command, (set(), set()))
    assert cli - tool == only_cli - tool, command
    assert tool - cli == only_tool - cli, command
    for shared in (cli & tool) - {"path"}:
        assert shared in GLOSSARY, (command, shared)


DEFAULTED_BY_THE_DOOR = {("write", "type"): "semantic"}
"""A command option left unset (None) where the command fills in, before the door,
the value the tool publishes (``cli.inputs.write_input``'s default type)."""


@pytest.mark.parametrize("command", sorted(COUNTERPARTS))
def test_a_command_and_its_tool_default_alike(answers: Answers, command: str) -> None:
    props = answers.tools[COUNTERPARTS[command]].input_schema["properties"]
    for param in _params(command):
        published = props.get(param.name, {}).get("default")
        if published is None:
            continue  # a tool leaves out a null or empty default: nothing to compare
        mine = param.default
        if mine is None:
            mine = DEFAULTED_BY_THE_DOOR[(command, param.name)]
        assert mine == published, (command, param.name, mine, published)


# -- the rules, asked of both doors --------------------------------------------------------


def test_a_duplicate_claim_is_refused_by_both_doors_naming_the_memory(
        answers: Answers, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = _cli(capsys, answers.root, "write", "--title", "Lunch again", "--claim",
                        "  lunch IS at\tnoon. ")
    assert (code, answer["code"]) == (1, "ERR_DUPLICATE_CLAIM")
    assert f"{LUNCH} already holds this claim" in answer["error"]
    tool = answers.calls["duplicate"]
    assert tool.is_error and _text(tool).startswith(f"ERR_DUPLICATE_CLAIM: {answer['error']}")
    # the way through is the same flag on both
    assert "--allow-duplicate" in answer["error"] and "allow_duplicate" in _text(tool)


def test_a_dangling_edge_is_refused_by_both_doors_naming_every_target(
        answers: Answers, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = _cli(capsys, answers.root, "write", "--title", "Probe", "--claim",
                        "A claim with two edges nowhere.", "--link",
                        "relates_to=areas/x/one.html", "--link", f"supports={DISK}",
                        "--link", "supports=/areas/x/two.html")
    assert (code, answer["code"]) == (1, "ERR_DANGLING_LINKS")
    assert answer["error"].startswith(
        "no memory at /areas/x/one.html, /areas/x/two.html to link to")
    tool = answers.calls["dangling_write"]
    assert _text(tool).startswith(f"ERR_DANGLING_LINKS: {answer['error']}")
    code, linked = _cli(capsys, answers.root, "link", DISK, "relates_to", MISSING)
    assert (code, linked["code"]) == (1, "ERR_DANGLING_LINKS")
    assert _text(answers.calls["dangling_link"]).startswith(
        f"ERR_DANGLING_LINKS: {linked['error']}")


def test_a_folder_lists_what_is_under_it_on_both_doors(
        answers: Answers, capsys: pytest.CaptureFixture[str]) -> None:
    for tool_key, flags, paths in (("list", (), [RUNNER, DISK]),
                                   ("list_flat", ("--no-recursive",), [DISK])):
        code, listed = _cli(capsys, answers.root, "list", "areas/ops", *flags)
        assert code == 0, listed
        over_mcp = answers.calls[tool_key].structured_content
        assert over_mcp is not None
        assert [m["path"] for m in listed["memories"]] == paths
        assert [m["path"] for m in over_mcp["memories"]] == paths
        assert listed["total"] == over_mcp["total"] == len(paths)
        assert listed["dirs"] == over_mcp["dirs"] == [{"path": "areas/ops/ci/",
                                                       "memories": 1}]


def test_every_field_and_arm_of_a_hit_is_documented(answers: Answers) -> None:
    description = answers.tools["memory_search"].description or ""
    hits = (answers.calls["search"].structured_content or {})["hits"]
    assert hits, "the search found the disk memories"
    for hit in hits:
        for field in hit:
            assert field in description, field
        for rank in hit["ranks"]:
            assert set(rank) == {"arm", "rank", "score"}
    for arm in typing.get_args(SearchArm):
        assert arm in description, arm
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `memory_search`"))
    for field in {*hits[0], *typing.get_args(SearchArm)}:
        assert field in row, field


def test_a_read_link_is_what_a_write_takes(answers: Answers) -> None:
    """memory_read's links carry the words memory_write's link items take, and the
    word link items were first published with is still read (unpublished)."""
    read = answers.calls["read"].structured_content or {}
    assert read["links"] == [{"rel": "relates_to", "target": DISK}]
    item = answers.tools["memory_write"].input_schema["properties"]["link"]["items"]
    assert set(read["links"][0]) == set(item["properties"]) == set(item["required"])
    assert _text(answers.calls["old_word"]).startswith("ERR_DUPLICATE_CLAIM: ")
    both = _text(answers.calls["both_words"])
    assert both.startswith("ERR_INVALID_ARGUMENTS: ") and "no field 'path'" in both


def test_an_edge_to_no_store_path_is_refused_alike_by_link_and_write(
        answers: Answers, capsys: pytest.CaptureFixture[str]) -> None:
    code, linked = _cli(capsys, answers.root, "link", DISK, "relates_to", "../out.html")
    assert (code, linked["code"]) == (1, "ERR_PATH_REFUSED")
    code, written = _cli(capsys, answers.root, "write", "--title", "Out", "--claim",
                         "An edge out of the store.", "--link", "relates_to=../out.html")
    assert (code, written["code"]) == (1, "ERR_PATH_REFUSED")
    assert written["error"] == linked["error"]
