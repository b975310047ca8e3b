"""A ``--deep`` night that files inbox notes under a topic, through the real command
line on a real repository: the run's moves merge (each read as the same memory kept,
never as lost), search finds the notes at their new paths, and ``memhtml read`` and
``memhtml log`` of an old path say where the note went.

The model is an OpenAI-compatible endpoint served on loopback, configured the way a
person configures one (``MEMHTML_LLM*``). It files every inbox note it is offered
under ``areas/ops`` (a topic the store already has) and answers every other phase's
question off its schema, so those phases skip their batches and write nothing: what
this night moves is placement's alone.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memhtml.sleep.phases.placement_triage import TOOL_NAME as PLACE_TOOL
from tests.integration.cli.cli_support import call, call_text
from tests.integration.sleep.sleep_support import git_cli

TOPIC = "areas/ops"
NOTES = [
    ("Deploy window", "The deploy window closes at sixteen hundred."),
    ("Pager rotation", "The pager rotates to the next engineer every Monday."),
    ("Rollback drill", "A rollback drill runs on the first Thursday of the month."),
]


def _reply(content: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
        "model": "loopback",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }).encode()


def _placements(prompt: str) -> dict[str, object]:
    """Every offered member filed under ``TOPIC``, surely."""
    keys = [json.loads(line)["key"] for line in prompt.split("\n")
            if line.startswith('{"key": ')]
    return {"placements": [{"key": key, "place": TOPIC, "confidence": 0.9} for key in keys]}


class _Model(BaseHTTPRequestHandler):
    asked: list[str]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        tool = body["response_format"]["json_schema"]["name"]
        self.asked.append(tool)
        answer = (_placements(body["messages"][-1]["content"]) if tool == PLACE_TOOL
                  else {"off": "schema"})
        data = _reply(json.dumps(answer))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def model() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []
    handler = type("Bound", (_Model,), {"asked": asked})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", asked
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name not in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER"):
            monkeypatch.delenv(name)
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    return root


def test_a_deep_night_that_files_notes_merges_and_the_old_paths_point_on(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    s = ("--store", str(store), "--json")
    code, _ = call(capsys, "write", "--title", "Ops runbook", "--claim",
                   "The ops runbook lives in the wiki.", "--dir", f"{TOPIC}/", *s)
    assert code == 0
    inbox: dict[str, str] = {}
    for title, claim in NOTES:
        code, written = call(capsys, "write", "--title", title, "--claim", claim, *s)
        assert code == 0, written
        inbox[title] = written["path"]
    assert all(p.startswith("areas/inbox/") for p in inbox.values())

    with model() as (url, asked):
        monkeypatch.setenv("MEMHTML_LLM", "openai")
        monkeypatch.setenv("MEMHTML_LLM_URL", url)
        monkeypatch.setenv("MEMHTML_LLM_MODEL", "loopback")
        code, report = call(capsys, "sleep", "run", "--deep", *s)
    assert code == 0, report
    assert PLACE_TOOL in asked
    placement = next(p for p in report["phases"] if p["phase"] == "placement-triage")
    assert placement["counts"]["moved"] == len(NOTES), placement
    run_id = report["run_id"]
    moved = {title: f"{TOPIC}/{path.rsplit('/', 1)[-1]}" for title, path in inbox.items()}

    code, merged = call(capsys, "sleep", "merge", run_id, *s)
    assert code == 0 and merged["merged"], merged
    assert sorted(tuple(pair) for pair in merged["moved"]) == sorted(
        (inbox[t], moved[t]) for t in inbox)
    assert git_cli(store, "status", "--porcelain") == "", "the checkout followed main"

    for title, claim in NOTES:
        new, old = moved[title], inbox[title]
        assert (store / new).is_file() and not (store / old).exists()
        code, found = call(capsys, "search", claim, *s)
        assert code == 0 and found["hits"][0]["path"] == new, found
        code, answer = call(capsys, "read", old, *s)
        assert code == 1 and answer["code"] == "ERR_MOVED", answer
        assert answer["error"].startswith(f"{old} was moved to {new} on "), answer
        assert "(commit " in answer["error"]
        code, read = call(capsys, "read", new, "--tier", "gist", *s)
        assert code == 0 and read["text"] == claim
        code, log = call(capsys, "log", old, *s)
        assert code == 0 and (log["went"], log["now_at"]) == ("moved", new), log
        assert "placement-triage" in log["commits"][0]["subject"]
        code, out, _ = call_text(capsys, "log", old, "--store", str(store))
        assert code == 0 and f"was moved to {new}" in out
