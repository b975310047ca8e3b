"""``memhtml import chatgpt|claude``: an export becomes one episodic memory per
conversation and its transcript for the nightly run, through a real process; a hostile
export (not the shape, a zip bomb, a member path that climbs out, no member) is refused
whole with nothing landed."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from memhtml.compose import agent as compose_agent
from memhtml.sleep.phases.trace_sessions import parse_transcript
from tests.integration.agent.test_agent_loop import run
from tests.integration.cli.cli_support import call_text
from tests.integration.warm_cli import memhtml

CHATGPT = [{
    "title": "Deploy window question", "create_time": 1733560000.5, "id": "c-1",
    "conversation_id": "c-1", "current_node": "n3",
    "mapping": {
        "root": {"id": "root", "message": None, "parent": None, "children": ["n1"]},
        "n1": {"id": "n1", "parent": "root", "children": ["n2", "x"], "message": {
            "author": {"role": "user"}, "content": {"content_type": "text",
                                                    "parts": ["When do we deploy?"]}}},
        "x": {"id": "x", "parent": "n1", "children": [], "message": {
            "author": {"role": "assistant"}, "content": {"parts": ["an edited-away answer"]}}},
        "n2": {"id": "n2", "parent": "n1", "children": ["n3"], "message": {
            "author": {"role": "assistant"}, "content": {"parts": ["On Tuesdays."]}}},
        "n3": {"id": "n3", "parent": "n2", "children": [], "message": {
            "author": {"role": "user"}, "content": {"parts": ["Thanks, noted."]}}},
    }},
    {"title": "Empty", "create_time": 1733560001, "id": "c-2", "current_node": None,
     "mapping": {}},
]
CLAUDE = [{"uuid": "4b1c", "name": "Cart expiry", "created_at": "2026-11-02T10:00:00Z",
           "chat_messages": [
               {"sender": "human", "text": "How long do carts live?", "content": []},
               {"sender": "assistant", "text": "",
                "content": [{"type": "text", "text": "72 hours without activity."}]}]},
          {"uuid": "4b1c", "name": "A duplicate", "chat_messages": []}]


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHTML_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               MEMHTML_EMBEDDER="none", MEMHTML_TRANSCRIPTS_DIR=str(tmp_path / "transcripts"),
               GIT_AUTHOR_NAME="Ada Person", GIT_AUTHOR_EMAIL="ada@example.org",
               GIT_COMMITTER_NAME="Ada Person", GIT_COMMITTER_EMAIL="ada@example.org")
    root = tmp_path / "store"
    done = memhtml("init", str(root), env=env)
    assert done.returncode == 0, done.stderr
    return root, env


def head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


def zipped(path: Path, member: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("user.json", b"{}")
        archive.writestr(member, data)
    return path


@pytest.mark.parametrize(("kind", "export", "title", "first", "turns"), [
    ("chatgpt", CHATGPT, "Deploy window question", "When do we deploy?",
     ["user", "assistant", "user"]),
    ("claude", CLAUDE, "Cart expiry", "How long do carts live?", ["user", "assistant"]),
])
def test_an_export_becomes_memories_and_transcripts_once(
        store: tuple[Path, dict[str, str]], tmp_path: Path, kind: str,
        export: list[dict[str, Any]], title: str, first: str, turns: list[str]) -> None:
    root, env = store
    source = zipped(tmp_path / "export.zip", "folder/conversations.json",
                    json.dumps(export).encode())
    done = run(env, "import", kind, str(source), "--json", "--store", str(root))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    (path,) = answer["memories"]
    assert path.startswith(f"resources/chats/{kind}/") and answer["sessions"] == 1
    read = json.loads(run(env, "read", path, "--tier", "all", "--json", "--store",
                          str(root)).stdout)
    text = json.dumps(read)
    assert title in text and first in text and "episodic" in text
    (session,) = sorted((tmp_path / "transcripts").iterdir())
    parsed = parse_transcript(session.read_bytes())
    assert [t.role for t in parsed.turns] == turns and parsed.closed
    assert "edited-away" not in session.read_text("utf-8")
    again = run(env, "import", kind, str(source), "--json", "--store", str(root))
    assert json.loads(again.stdout)["commit"] is None and json.loads(again.stdout)["kept"] == 1


@pytest.mark.parametrize("content", [
    b"not json", b'{"a": 1}', b'[1, 2]', b'[{"title": "no mapping", "id": "x"}]',
    b"[" * 100_000, b"\xff\xfe",
])
def test_a_hostile_export_is_refused_whole(store: tuple[Path, dict[str, str]],
                                           tmp_path: Path, content: bytes) -> None:
    root, env = store
    source = tmp_path / "conversations.json"
    source.write_bytes(content)
    before = head(root)
    done = run(env, "import", "chatgpt", str(source), "--store", str(root))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert head(root) == before and not (tmp_path / "transcripts").exists()


def test_zips_that_hide_or_bloat_the_member_are_refused(
        store: tuple[Path, dict[str, str]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = store
    before = head(root)
    none = tmp_path / "none.zip"
    with zipfile.ZipFile(none, "w") as archive:
        archive.writestr("user.json", b"{}")
    done = run(env, "import", "claude", str(none), "--store", str(root))
    assert done.returncode == 1 and "no conversations.json" in done.stdout + done.stderr
    # A member that climbs out is read in memory by its name, never written anywhere.
    climbing = zipped(tmp_path / "climb.zip", "../../escape/conversations.json",
                      json.dumps(CLAUDE).encode())
    done = run(env, "import", "claude", str(climbing), "--store", str(root))
    assert done.returncode == 0 and not (tmp_path.parent / "escape").exists()
    landed = head(root)
    assert landed != before
    # A bomb: more than the cap once inflated, whatever its header says.
    monkeypatch.setenv("MEMHTML_TRANSCRIPTS_DIR", str(tmp_path / "transcripts"))
    monkeypatch.setattr(compose_agent, "EXPORT_MAX_BYTES", 1_000_000)
    bomb = zipped(tmp_path / "bomb.zip", "conversations.json", b" " * 5_000_000)
    code, out, err = call_text(capsys, "import", "chatgpt", str(bomb), "--store", str(root))
    assert code == 1 and "larger than 1000000 bytes" in out + err
    assert head(root) == landed, "the bomb landed nothing"
