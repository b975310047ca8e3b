"""A night's model phase through the CLI against each local server's way of spelling
structured output, and against a model too slow for the night's time budget.

The scripted server on loopback plays each dialect (``model_server``): llama-cpp-python
refusing OpenAI's ``json_schema`` with its HTTP 500, servers that take only their own
field (Ollama's ``format``, vLLM's ``guided_json``, llama.cpp's ``json_schema``), and
one that streams without end. memhtml is the real CLI, speaking real HTTP: what it
sent, in which form, and whether it hung up are read off the server's own log.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.adapters.llm import STRUCTURED_MEMORY_FILE
from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.services import init_repository
from memhtml.sleep.phases.task_detection import TOOL_NAME
from memhtml.store import WriteInput, init_store, write
from tests.integration.cli.cli_support import call_text
from tests.integration.sleep.model_server import Log, serving_model
from tests.integration.sleep.sleep_support import RUN_AT, services_at
from tests.integration.store.checkout_support import clean_environment

NOTES = 45
"""Three task-detection batches of twenty (the last of five)."""
PHASE = ("--phase", "task-detection")


def no_findings(tool: str, offered: Mapping[str, str]) -> Mapping[str, object]:
    return {"findings": []} if tool == TOOL_NAME else {}


@dataclass
class Night:
    root: Path
    url: str
    log: Log


def build(root: Path) -> None:
    value_of(init_repository(root))
    services = value_of(open_services(Settings(store=root), require_store=False))
    value_of(init_store(services.store().deps))
    doors = services_at(root, RUN_AT - timedelta(days=1)).store()
    for n in range(NOTES):
        value_of(write(doors, WriteInput(
            title=f"Note {n}", claim=f"The rota for week {n} is settled.",
            path=f"areas/ops/note-{n}.html")))


@contextlib.contextmanager
def night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialect: str,
          structured: str | None = None) -> Iterator[Night]:
    clean_environment(monkeypatch, tmp_path / "home")
    at = RUN_AT
    monkeypatch.setattr(SystemClock, "now", lambda self: at)
    root = tmp_path / "store"
    build(root)
    with serving_model(no_findings, dialect) as (url, log):
        for name, value in {"MEMHTML_LLM": "openai", "MEMHTML_LLM_URL": url,
                            "MEMHTML_LLM_MODEL": "loopback",
                            **({"MEMHTML_LLM_STRUCTURED": structured} if structured else {})
                            }.items():
            monkeypatch.setenv(name, value)
        yield Night(root, url, log)


def run(capsys: pytest.CaptureFixture[str], n: Night, *tokens: str) -> tuple[int, Any]:
    code, out, err = call_text(capsys, "sleep", "run", *PHASE, *tokens, "--store",
                               str(n.root), "--json")
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out)


def phase(report: Mapping[str, Any]) -> Mapping[str, Any]:
    found = [p for p in report["phases"] if p["phase"] == "task-detection"]
    assert len(found) == 1
    return dict(found[0])


def memory(root: Path) -> dict[str, object]:
    data = json.loads((root / ".git" / "memhtml" / STRUCTURED_MEMORY_FILE).read_text())
    assert isinstance(data, dict)
    return data


def test_llama_cpp_python_refuses_json_schema_once_then_json_object_is_used_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with night(tmp_path, monkeypatch, "llama-cpp-python") as n:
        code, report = run(capsys, n)
        assert code == 0, report
        counts = phase(report)["counts"]
        assert counts["batches"] == 3 and counts["failed_batches"] == 0, counts
        # One refusal, never resent: the same bytes would get the same HTTP 500.
        assert n.log.form_log() == [("json_schema", 500), ("json_object", 200),
                                    ("json_object", 200), ("json_object", 200)]
        assert all(n.log.streamed)
        notes = " ".join(report["notes"])
        assert "refused the json_schema structured-output form" in notes
        assert "Input should be 'text' or 'json_object'" in notes
        assert "remembered in" in notes
        remembered = memory(n.root)["endpoints"]
        assert remembered == {f"{n.url}/chat/completions loopback": "json_object"}
        # Nothing of it is in the working tree: it is this clone's state, under .git.
        assert [p for p in n.root.rglob(STRUCTURED_MEMORY_FILE)
                if ".git" not in p.relative_to(n.root).parts] == []

        # The next night starts where the last one ended: no refusal at all.
        at = RUN_AT + timedelta(days=1)
        monkeypatch.setattr(SystemClock, "now", lambda self: at)
        code, again = run(capsys, n)
        assert code == 0, again
        assert n.log.form_log()[4:] == [("json_object", 200)] * 3
        assert "remembered from an earlier run" in " ".join(again["notes"])


def test_a_server_taking_json_schema_is_asked_in_it_and_nothing_is_remembered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with night(tmp_path, monkeypatch, "openai") as n:
        code, report = run(capsys, n)
        assert code == 0, report
        assert n.log.form_log() == [("json_schema", 200)] * 3
        assert report["notes"] == []
        assert not (n.root / ".git" / "memhtml" / STRUCTURED_MEMORY_FILE).exists()


@pytest.mark.parametrize("dialect", ["ollama", "vllm", "llama.cpp"])
def test_a_server_knowing_only_its_own_field_is_asked_in_the_prompt(
        dialect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with night(tmp_path, monkeypatch, dialect) as n:
        code, report = run(capsys, n)
        assert code == 0, report
        assert phase(report)["counts"]["failed_batches"] == 0
        assert n.log.form_log() == [("json_schema", 400), ("json_object", 400),
                                    ("prompt", 200), ("prompt", 200), ("prompt", 200)]
        # The prompt form's system prompt carries the schema and an example answer.
        assert n.log.tools() == [TOOL_NAME] * 3
        assert memory(n.root)["endpoints"] == {
            f"{n.url}/chat/completions loopback": "prompt"}


def test_a_form_chosen_by_hand_is_never_stepped_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with night(tmp_path, monkeypatch, "llama-cpp-python", structured="json_schema") as n:
        code, report = run(capsys, n)
        record = phase(report)
        # A batch the model could not answer is skipped and counted; the night goes on.
        assert code == 0 and record["counts"]["failed_batches"] == 3, record
        assert "refuses the json_schema structured-output form" in json.dumps(record)
        # One request a batch, each refused once and never resent.
        assert n.log.form_log() == [("json_schema", 500)] * 3
        assert not (n.root / ".git" / "memhtml" / STRUCTURED_MEMORY_FILE).exists()


def test_a_slow_model_is_hung_up_on_at_the_time_budget_and_the_rest_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with night(tmp_path, monkeypatch, "slow") as n:
        code, report = run(capsys, n, "--max-llm-seconds", "1")
        record = phase(report)
        counts = record["counts"]
        assert counts["batches"] == 3
        assert counts["calls"] == 1 and counts["budget_skipped"] == 2, counts
        text = json.dumps(record)
        assert "timed out after 1s" in text
        assert "budget of 1 model seconds is spent" in text
        # One request, never retried, and the server saw the client hang up (the write
        # after the close fails): it stops generating the abandoned answer.
        assert len(n.log.form_log()) == 1
        assert hung_up(n.log) == 1
        assert code == 0, report


def hung_up(log: Log) -> int:
    """The disconnects the server saw, once its handler noticed (it notices at its next
    write, a moment after the close; polled, never timed)."""
    for _ in range(400):
        if log.hung_up():
            break
        time.sleep(0.025)
    return log.hung_up()
