"""Anthropic's memory tool served by a real store (pygit2, a temp directory): every
command through the SDK's own handler base class, each change one commit naming the
command, and a scripted model on loopback driving the SDK's tool runner."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pygit2
import pytest
from anthropic import Anthropic
from anthropic.lib.tools import ToolError

from memhtml.adapters.clock import FixedClock
from memhtml.compose import Settings, init_repository, open_services, value_of
from memhtml.memory_tool import MemhtmlMemoryTool, StoreNotOpenedError
from memhtml.store import init_store
from tests.integration.loopback_http import serving_on_loopback

CLOCK = FixedClock(datetime(2026, 12, 7, 9, 0, tzinfo=UTC))
NOTE = "# Coffee\n\nThe user takes coffee black, no sugar.\n\n- prefers dark roast\n"


def _store(root: Path) -> Path:
    value_of(init_repository(root))
    made = value_of(open_services(Settings(store=root), clock=CLOCK, require_store=False))
    value_of(init_store(made.store().deps))
    return root


@pytest.fixture
def tool(tmp_path: Path) -> Iterator[MemhtmlMemoryTool]:
    root = _store(tmp_path / "store")
    served = MemhtmlMemoryTool(services=value_of(open_services(Settings(store=root),
                                                               clock=CLOCK)))
    yield served
    served.close()


def call(tool: MemhtmlMemoryTool, **command: Any) -> str:
    return str(tool.call(command))


def refused(tool: MemhtmlMemoryTool, **command: Any) -> str:
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    return str(caught.value)


def commits(tool: MemhtmlMemoryTool) -> list[str]:
    repo = pygit2.Repository(str(tool._gate.services.settings.store))
    return [c.message for c in repo.walk(repo.head.target)]


def test_each_command_is_one_commit_naming_it(tool: MemhtmlMemoryTool) -> None:
    before = len(commits(tool))
    assert call(tool, command="create", path="/memories/coffee.md", file_text=NOTE) == \
        "File created successfully at: /memories/coffee.md"
    assert call(tool, command="view", path="/memories/coffee.md") == (
        "Here's the content of /memories/coffee.md with line numbers:\n"
        + "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(NOTE.split("\n"), 1)))
    said = call(tool, command="str_replace", path="/memories/coffee.md",
                old_str="dark roast", new_str="light roast")
    assert "light roast" in said
    call(tool, command="insert", path="/memories/coffee.md", insert_line=5,
         insert_text="- orders at 9am")
    assert call(tool, command="view", path="/memories/coffee.md").endswith(
        "     5\t- prefers light roast\n     6\t- orders at 9am\n     7\t")
    call(tool, command="rename", old_path="/memories/coffee.md",
         new_path="/memories/people/coffee.md")
    call(tool, command="delete", path="/memories/people")
    messages = commits(tool)[: len(commits(tool)) - before]
    subjects = [m.splitlines()[0] for m in reversed(messages)]
    assert subjects == [
        "memhtml memory-tool: create /memories/coffee.md",
        "memhtml memory-tool: str_replace /memories/coffee.md",
        "memhtml memory-tool: insert /memories/coffee.md",
        "memhtml memory-tool: rename /memories/coffee.md /memories/people/coffee.md",
        "memhtml memory-tool: delete /memories/people",
    ]
    assert all("\nMemhtml-Memory-Tool: " in m for m in messages)


def test_an_edit_keeps_the_memory_where_it_is_and_git_keeps_the_version_before(
        tool: MemhtmlMemoryTool) -> None:
    call(tool, command="create", path="/memories/coffee.md", file_text=NOTE)
    call(tool, command="str_replace", path="/memories/coffee.md", old_str="black",
         new_str="with oat milk")
    root = Path(tool._gate.services.settings.store)
    html = (root / "coffee.html").read_text()
    assert "<mark>The user takes coffee with oat milk, no sugar.</mark>" in html
    assert 'memhtml-created" content="2026-12-07T09:00:00Z"' in html
    assert not list((root / "archive").rglob("*.html"))
    log = subprocess.run(["git", "-C", str(root), "log", "-p", "--format=%s", "--",
                          "coffee.html"], capture_output=True, text=True, check=True).stdout
    assert "-<p><mark>The user takes coffee black" in log


def test_delete_archives_and_restore_brings_it_back(tool: MemhtmlMemoryTool) -> None:
    call(tool, command="create", path="/memories/a/one.md", file_text="One fact here.\n")
    call(tool, command="create", path="/memories/a/two.md", file_text="Two facts here.\n")
    said = call(tool, command="delete", path="/memories/a")
    assert said.startswith("Successfully deleted /memories/a (its 2 memories are kept")
    assert refused(tool, command="view", path="/memories/a/one.md").startswith(
        "The path /memories/a/one.md does not exist")
    root = Path(tool._gate.services.settings.store)
    assert sorted(p.name for p in (root / "archive").rglob("*.html")) == ["one.html",
                                                                          "two.html"]
    from memhtml.store import restore

    value_of(restore(tool._gate.store, "a/one.html"))
    assert "One fact here." in call(tool, command="view", path="/memories/a/one.md")


def test_rename_moves_and_links_follow(tool: MemhtmlMemoryTool) -> None:
    from memhtml.store import link

    call(tool, command="create", path="/memories/a.md", file_text="Alpha is first.\n")
    call(tool, command="create", path="/memories/b.md", file_text="Beta is second.\n")
    value_of(link(tool._gate.store, "b.html", "relates_to", "a.html"))
    view = call(tool, command="view", path="/memories/b.md")
    assert "relates_to" in view and "[[a]]" in view
    call(tool, command="rename", old_path="/memories/a.md", new_path="/memories/x/alpha.md")
    root = Path(tool._gate.services.settings.store)
    assert 'href="/x/alpha.html"' in (root / "b.html").read_text()
    call(tool, command="str_replace", path="/memories/b.md", old_str="second",
         new_str="the second")
    assert 'href="/x/alpha.html"' in (root / "b.html").read_text()


def test_an_edit_of_a_linked_memory_keeps_it_markdown(tool: MemhtmlMemoryTool) -> None:
    from memhtml.store import link

    note = "# Beta\n\nBeta is the second memory here.\n"
    call(tool, command="create", path="/memories/a.md", file_text="Alpha is first.\n")
    call(tool, command="create", path="/memories/b.md", file_text=note)
    value_of(link(tool._gate.store, "b.html", "relates_to", "a.html"))
    before = call(tool, command="view", path="/memories/b.md")
    call(tool, command="str_replace", path="/memories/b.md", old_str="second",
         new_str="final")
    assert call(tool, command="view", path="/memories/b.md") == before.replace(
        "second", "final")
    html = (Path(tool._gate.services.settings.store) / "b.html").read_text()
    assert 'content="b.md"' in html and "<pre" not in html
    assert "<mark>Beta is the final memory here.</mark>" in html


def test_text_the_markdown_reader_would_change_is_kept_verbatim(
        tool: MemhtmlMemoryTool) -> None:
    xml = "<customer>\n  <name>Ada</name>\n  <tier>gold ``` </tier>\n</customer>"
    call(tool, command="create", path="/memories/customer.xml", file_text=xml)
    shown = call(tool, command="view", path="/memories/customer.xml")
    assert shown.split("\n", 1)[1] == "\n".join(
        f"{n:>6}\t{line}" for n, line in enumerate(xml.split("\n"), 1))
    call(tool, command="str_replace", path="/memories/customer.xml", old_str="gold",
         new_str="platinum")
    assert "platinum" in call(tool, command="view", path="/memories/customer.xml")


def test_the_folder_view_lists_two_levels_and_hides_the_archive(
        tool: MemhtmlMemoryTool) -> None:
    for path in ("/memories/a.md", "/memories/p/b.md", "/memories/p/q/c.md"):
        call(tool, command="create", path=path, file_text=f"Fact at {path}.\n")
    call(tool, command="create", path="/memories/gone.md", file_text="Gone soon.\n")
    call(tool, command="delete", path="/memories/gone.md")
    listing = call(tool, command="view", path="/memories")
    rows = [line.split("\t")[1] for line in listing.splitlines()[1:]]
    assert rows == ["/memories", "/memories/a.md", "/memories/p/", "/memories/p/b.md",
                    "/memories/p/q/"]


def test_a_folder_named_like_a_file_is_reached_by_its_listed_path(
        tool: MemhtmlMemoryTool) -> None:
    call(tool, command="create", path="/memories/notes.md", file_text="Notes itself.\n")
    call(tool, command="create", path="/memories/notes/inner.md", file_text="Inner one.\n")
    listing = call(tool, command="view", path="/memories")
    assert "\t/memories/notes/\n" in listing and "\t/memories/notes.md\n" in listing
    assert call(tool, command="view", path="/memories/notes/").endswith(
        "\t/memories/notes/inner.md")
    assert refused(tool, command="str_replace", path="/memories/notes/", old_str="Notes",
                   new_str="N") == "The path /memories/notes/ is not a file."
    call(tool, command="rename", old_path="/memories/notes/", new_path="/memories/kept/")
    call(tool, command="delete", path="/memories/kept/")
    assert "Notes itself." in call(tool, command="view", path="/memories/notes")
    assert refused(tool, command="view", path="/memories/kept/inner.md").startswith(
        "The path /memories/kept/inner.md does not exist")
    assert "Notes itself." in call(tool, command="view", path="/memories/notes.md/")


@pytest.mark.parametrize(("command", "expected"), [
    ({"command": "view", "path": "/memories/../../etc/passwd"}, "would escape"),
    ({"command": "view", "path": "/memories/%2e%2e/%2e%2e/etc"}, "percent-encoded"),
    ({"command": "create", "path": "/etc/x.md", "file_text": "x"}, "must start with"),
    ({"command": "create", "path": "/memories/.git/config", "file_text": "x"}, "hidden"),
    ({"command": "create", "path": "/memories/a\\..\\b.md", "file_text": "x"}, "backslash"),
    ({"command": "create", "path": "/memories/big.md", "file_text": "x" * 300_000},
     "limit on one memory file"),
    ({"command": "create", "path": 7, "file_text": "x"}, "`path` must be a string"),
    ({"command": "insert", "path": "/memories/a.md", "insert_line": "two",
      "insert_text": "x"}, "whole line number"),
    ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory"),
    ({"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
     "Cannot rename the /memories directory"),
    ({"command": "str_replace", "path": "/memories/none.md", "old_str": "a",
      "new_str": "b"}, "does not exist"),
    ({"command": "create", "path": "/memories/archive/x.md", "file_text": "x y z"},
     "archive"),
])
def test_hostile_commands_are_refused_and_change_nothing(
        tool: MemhtmlMemoryTool, command: dict[str, Any], expected: str) -> None:
    before = commits(tool)
    assert expected in refused(tool, **command)
    assert commits(tool) == before


def test_create_over_an_existing_file_and_a_person_s_uncommitted_edit_are_refused(
        tool: MemhtmlMemoryTool) -> None:
    call(tool, command="create", path="/memories/a.md", file_text="Alpha is first.\n")
    assert refused(tool, command="create", path="/memories/a.md",
                   file_text="Other.\n") == "File /memories/a.md already exists"
    root = Path(tool._gate.services.settings.store)
    (root / "a.html").write_text((root / "a.html").read_text().replace("first", "1st"))
    before = commits(tool)
    said = refused(tool, command="str_replace", path="/memories/a.md", old_str="first",
                   new_str="second")
    assert "uncommitted" in said
    assert commits(tool) == before
    assert "1st" in (root / "a.html").read_text()


def test_a_directory_that_is_not_a_store_is_said_at_construction(tmp_path: Path) -> None:
    with pytest.raises(StoreNotOpenedError, match="no git repository"):
        MemhtmlMemoryTool(tmp_path)


class _ScriptedModel(BaseHTTPRequestHandler):
    """A Messages API on loopback that answers with the next scripted turn and keeps
    every request it was sent."""

    script: ClassVar[list[list[dict[str, Any]]]] = []
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        turn = len(type(self).seen) - 1
        content = type(self).script[turn]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        answer = json.dumps({
            "id": f"msg_{turn}", "type": "message", "role": "assistant",
            "model": body["model"], "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def text(result: dict[str, Any]) -> str:
    """A tool result's text, sent as a string or as text blocks."""
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content)


def _use(n: int, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": command}


def test_a_scripted_model_drives_the_sdk_tool_runner_over_loopback(
        tool: MemhtmlMemoryTool) -> None:
    _ScriptedModel.seen = []
    _ScriptedModel.script = [
        [_use(1, command="view", path="/memories")],
        [_use(2, command="create", path="/memories/user/coffee.md", file_text=NOTE),
         _use(3, command="view", path="/memories/../secrets")],
        [_use(4, command="str_replace", path="/memories/user/coffee.md",
              old_str="no sugar", new_str="one sugar")],
        [{"type": "text", "text": "Noted: black coffee, one sugar."}],
    ]
    with serving_on_loopback(_ScriptedModel) as base:
        client = Anthropic(api_key="test-key", base_url=base, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=512, tools=[tool],
            messages=[{"role": "user", "content": "Remember how I take my coffee."}])
        final = runner.until_done()
    assert final.content[0].type == "text"
    sent = _ScriptedModel.seen
    assert sent[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = {block["tool_use_id"]: block
               for request in sent[1:] for block in request["messages"][-1]["content"]}
    assert text(results["toolu_1"]).startswith("Here're the files")
    assert text(results["toolu_2"]) == "File created successfully at: /memories/user/coffee.md"
    assert results["toolu_3"]["is_error"] is True
    assert "would escape /memories" in text(results["toolu_3"])
    assert "is_error" not in results["toolu_4"]
    shown = call(tool, command="view", path="/memories/user/coffee.md")
    assert "one sugar" in shown
    subjects = [m.splitlines()[0] for m in commits(tool)[:2]]
    assert subjects == ["memhtml memory-tool: str_replace /memories/user/coffee.md",
                        "memhtml memory-tool: create /memories/user/coffee.md"]


def test_a_memory_kept_verbatim_keeps_what_its_frontmatter_says(
        tool: MemhtmlMemoryTool) -> None:
    """Text the markdown reader would change is kept whole as a code block; the
    frontmatter it starts with still gives the memory its type, tags and entities."""
    text = ("---\nname: Canary gate\ntype: procedural\ntags:\n- deploy\nentities:\n"
            "- service:checkout\n---\n\n<dl><dt>gate</dt><dd>5% for 10 min</dd></dl>\n")
    call(tool, command="create", path="/memories/canary.md", file_text=text)
    assert call(tool, command="view", path="/memories/canary.md").split("\n", 1)[1] == \
        "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.rstrip("\n").split("\n"),
                                                            1))
    call(tool, command="str_replace", path="/memories/canary.md", old_str="10 min",
         new_str="15 min")
    record = tool._gate.store.head()._inner_value.unwrap().get("canary.html")
    assert record is not None
    assert (record.memory_type, record.tags, record.entities) == (
        "procedural", ("deploy",), ("service:checkout",))
    assert "15 min" in call(tool, command="view", path="/memories/canary.md")
