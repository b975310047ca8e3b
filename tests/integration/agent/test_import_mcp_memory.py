"""``memhtml import mcp-memory``: the MCP memory server's graph into memories and edges
through a real process, once; and every hostile file refused whole, nothing landed (those
commands forked from a warm interpreter, on one store the refusals share: each checks
that the store's tip did not move)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.agent.test_agent_loop import run
from tests.integration.warm_cli import memhtml

GRAPH = [
    {"type": "entity", "name": "John_Smith", "entityType": "person",
     "observations": ["Speaks fluent Spanish", "Graduated in 2019"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization",
     "observations": ["An AI safety company"]},
    {"type": "entity", "name": "John_Smith", "entityType": "person",
     "observations": ["Likes hiking", "Speaks fluent Spanish"]},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "part_of"},
    {"type": "relation", "from": "John_Smith", "to": "Nobody", "relationType": "knows"},
]


def _new_store(where: Path) -> tuple[Path, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHTML_")}
    env.update(HOME=str(where / "home"), XDG_CONFIG_HOME=str(where / "config"),
               MEMHTML_EMBEDDER="none", GIT_AUTHOR_NAME="Ada Person",
               GIT_AUTHOR_EMAIL="ada@example.org", GIT_COMMITTER_NAME="Ada Person",
               GIT_COMMITTER_EMAIL="ada@example.org")
    root = where / "store"
    done = memhtml("init", str(root), env=env)
    assert done.returncode == 0, done.stderr
    return root, env


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return _new_store(tmp_path)


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The store every refusal is tried on."""
    return _new_store(tmp_path_factory.mktemp("refusing"))


def head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_graph_becomes_memories_and_edges_in_one_commit_once(
        store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = store
    graph = tmp_path / "memory.jsonl"
    graph.write_text("\n".join(json.dumps(x) for x in GRAPH) + "\n", "utf-8")
    before = head(root)
    done = run(env, "import", "mcp-memory", str(graph), "--json", "--store", str(root))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert sorted(answer["written"]) == ["resources/mcp-memory/anthropic.html",
                                         "resources/mcp-memory/john-smith.html"]
    assert answer["links"] == 2 and answer["relations_as_text"] == 1
    assert subprocess.run(["git", "rev-list", "--count", f"{before}..HEAD"], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip() == "1"
    john = run(env, "read", "resources/mcp-memory/john-smith.html", "--tier", "all",
               "--json", "--store", str(root))
    record = json.loads(john.stdout)
    text = json.dumps(record)
    for words in ("Speaks fluent Spanish", "Graduated in 2019", "Likes hiking",
                  "works_at: Anthropic", "knows: Nobody", "person:John_Smith"):
        assert words in text, words
    assert text.count("Speaks fluent Spanish") >= 1
    related = run(env, "related", "resources/mcp-memory/john-smith.html", "--store", str(root))
    assert "part_of /resources/mcp-memory/anthropic.html" in related.stdout
    assert "relates_to /resources/mcp-memory/anthropic.html" in related.stdout
    again = run(env, "import", "mcp-memory", str(graph), "--json", "--store", str(root))
    assert again.returncode == 0 and json.loads(again.stdout)["commit"] is None
    assert len(json.loads(again.stdout)["kept"]) == 2


@pytest.mark.parametrize("content", [
    b'{"type":"entity","name":"A","entityType":"t","observations":["x"]}\nnot json\n',
    b'[1,2,3]\n',
    b'{"type":"entity","name":"A","entityType":"t","observations":"x"}\n',
    b'{"type":"relation","from":"A","to":null,"relationType":"knows"}\n',
    b'{"type":"entity","name":"' + b"x" * 20_000 + b'","entityType":"t","observations":[]}\n',
    b"\xff\xfe\x00garbage",
    b'{"type":"secret"}\n',
    b"[" * 100_000,
])
def test_a_hostile_graph_is_refused_whole(refusing: tuple[Path, dict[str, str]],
                                          tmp_path: Path, content: bytes) -> None:
    root, env = refusing
    graph = tmp_path / "memory.jsonl"
    graph.write_bytes(content)
    before = head(root)
    done = memhtml("import", "mcp-memory", str(graph), "--store", str(root), env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "nothing imported" in done.stdout + done.stderr
    assert head(root) == before
    assert not (root / "resources" / "mcp-memory").exists()


def test_what_is_not_a_file_is_refused(refusing: tuple[Path, dict[str, str]],
                                       tmp_path: Path) -> None:
    root, env = refusing
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for source in (fifo, tmp_path, tmp_path / "missing.jsonl"):
        done = memhtml("import", "mcp-memory", str(source), "--store", str(root), env=env)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
