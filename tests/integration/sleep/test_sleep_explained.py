"""Every decision of a sleep run explained, a night with nothing to do left alone, and
a commitment given its task before the reviews, through the real command line on a
store built with ``memhtml write``.

The system clock is pinned (the CLI reads no other), so a store's memories can be
written years before the night, and two nights can run at the same instant. No
embedder; no model but for the commitment, where a chat-completions server on loopback
plays one (``llm = openai`` and its URL, as a person configures a local server).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import lxml.html
import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.domain.retention import SIGNAL_NAMES
from memhtml.domain.thresholds import EVICT_THRESHOLD
from memhtml.sleep.contract import SLEEP_PHASES, decisions_path, report_path
from memhtml.sleep.phase import HELD_BACK
from memhtml.sleep.phases.trace_prompt import TOOL_NAME as TRACE_TOOL
from memhtml.store.site import is_generated_path
from tests.integration.cli.cli_support import call_text
from tests.integration.store.checkout_support import clean_environment

NIGHT = datetime(2026, 11, 30, 4, 0, 0, tzinfo=UTC)
STALE = "areas/inbox/old-standup-room.html"
KEEPER = "areas/inbox/deploy-window.html"
COPY = "areas/inbox/deploy-window-copy.html"
SAFE, UNSAFE = "areas/inbox/deploy-step.html", "areas/inbox/deploy-step-again.html"


@dataclass
class Clock:
    at: datetime = NIGHT


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    pinned = Clock()
    monkeypatch.setattr(SystemClock, "now", lambda self: pinned.at)
    return pinned


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clock: Clock) -> dict[str, str]:
    return clean_environment(monkeypatch, tmp_path / "home")


def cli(capsys: pytest.CaptureFixture[str], *tokens: str) -> tuple[int, Any, str]:
    """One command in this process, ``--json``: exit code, the answer, stderr."""
    code, out, err = call_text(capsys, *tokens, "--json")
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out) if out.strip() else None, err


def text_of(capsys: pytest.CaptureFixture[str], *tokens: str) -> str:
    code, out, err = call_text(capsys, *tokens)
    assert code == 0 and "Traceback" not in out + err, out + err
    return out


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def write(capsys: pytest.CaptureFixture[str], clock: Clock, root: Path, at: datetime,
          title: str, claim: str, *more: str) -> str:
    """``memhtml write`` at ``at``; the path it wrote."""
    clock.at = at
    code, out, err = cli(capsys, "write", "--title", title, "--claim", claim, *more,
                         "--store", str(root))
    assert code == 0, (out, err)
    path: str = out["path"]
    return path


def vetoed_pair(capsys: pytest.CaptureFixture[str], clock: Clock, root: Path) -> None:
    """One claim twice, the second body flipping the first's: a fold the veto refuses."""
    at = NIGHT - timedelta(days=1)
    assert write(capsys, clock, root, at, "Deploy step", "Deploy step safety.", "--body",
                 "The deploy step is safe.", "--importance", "8") == SAFE
    assert write(capsys, clock, root, at, "Deploy step again", "Deploy step safety.",
                 "--body", "The deploy step is not safe.", "--importance", "8",
                 "--allow-duplicate") == UNSAFE


@pytest.fixture
def store(tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
          clock: Clock) -> Path:
    """A published store: a dozen fresh memories, a vetoed pair, a stale episode written
    three years before the night, and one memory written twice."""
    root = tmp_path / "store"
    code, out, err = cli(capsys, "init", str(root))
    assert code == 0, (out, err)
    assert write(capsys, clock, root, NIGHT - timedelta(days=3 * 365), "Old standup room",
                 "The standup moved to the small room for one week.", "--type", "episodic",
                 "--importance", "1") == STALE
    for n in range(12):
        write(capsys, clock, root, NIGHT - timedelta(days=2), f"Service {n} port",
              f"Service number {n} listens on port {8000 + n}.", "--importance", "8")
    assert write(capsys, clock, root, NIGHT - timedelta(days=2), "Deploy window",
                 "Deploys happen on Tuesdays.", "--importance", "8") == KEEPER
    assert write(capsys, clock, root, NIGHT - timedelta(days=1), "Deploy window copy",
                 "Deploys happen on Tuesdays.", "--importance", "8",
                 "--allow-duplicate") == COPY
    vetoed_pair(capsys, clock, root)
    code, out, err = cli(capsys, "publish", "--store", str(root))
    assert code == 0 and out["committed"], (out, err)
    clock.at = NIGHT
    return root


def phase_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in report["phases"] if p["phase"] == name)
    return found


def test_review_and_the_report_give_each_change_its_phase_rule_and_figures(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store))
    base = git(store, "rev-parse", "main").strip()
    code, report, err = cli(capsys, "sleep", "run", *s)
    assert code == 0 and report["branch"], (report, err)
    run_id, tip = report["run_id"], report["head_sha"]
    code, review, err = cli(capsys, "sleep", "review", run_id, *s)
    assert code == 0, err
    files = {f["path"]: f for f in review["files"]}

    # The stale episode: archived from the evict band, with its score, band and signals.
    stale = files[STALE]
    assert (stale["change"], stale["to"]) == ("archived", f"archive/2026/{STALE}")
    (evicted,) = stale["decisions"]
    assert (evicted["phase"], evicted["action"], evicted["rule"]) == (
        "retention-triage", "archived", "evict-band")
    figures = evicted["figures"]
    assert set(SIGNAL_NAMES) <= figures.keys()
    assert figures["band"] == "evict" and figures["score"] <= EVICT_THRESHOLD
    assert figures["memory_type"] == "episodic" and figures["age_days"] >= 3 * 365
    assert evicted["commit"] == phase_of(report, "retention-triage")["commits"][-1]

    # The copy folded into the older file, which now links supersedes to it.
    copy, keeper = files[COPY], files[KEEPER]
    assert (copy["change"], keeper["change"]) == ("archived", "meta-only")
    (folded,) = copy["decisions"]
    assert (folded["phase"], folded["action"], folded["rule"], folded["related"]) == (
        "dedup-merge", "folded", "content-hash-twin", [KEEPER])
    assert folded["figures"] == {"cosine": 1.0, "source": "hash"}
    assert [d["rule"] for d in keeper["decisions"]] == ["keeper-supersedes"]
    dedup_commit = phase_of(report, "dedup-merge")["commits"][-1]
    assert folded["commit"] == keeper["decisions"][0]["commit"] == dedup_commit

    # The refused fold: a review task naming the predicate that fired.
    (task,) = [f for f in review["files"] if f["path"].startswith("areas/tasks/det-")]
    assert task["change"] == "created"
    (vetoed,) = task["decisions"]
    assert (vetoed["rule"], vetoed["figures"]["predicate"], vetoed["figures"]["source"],
            sorted(vetoed["related"])) == ("merge-vetoed", "negation", "frame",
                                           sorted([SAFE, UNSAFE]))

    # Every memory change has its decision; generated pages are counted, not listed.
    changed = git(store, "diff", "--name-only", base, tip).split()
    pages = [p for p in changed if is_generated_path(p)]
    assert pages and review["generated"] == len(pages)
    assert not any(is_generated_path(f["path"]) for f in review["files"])
    assert review["unexplained"] == [] and review["decisions_unread"] == 0
    for f in review["files"]:
        assert f["decisions"] or f["path"].startswith(".memhtml/"), f
    assert {f["path"] for f in review["files"]} >= {
        report_path(run_id), decisions_path(run_id, "retention-triage")}

    # `sleep run` carried the same decisions, phase by phase.
    for phase in ("retention-triage", "dedup-merge"):
        ran = {(d["path"], d["rule"]) for d in phase_of(report, phase)["decisions"]}
        reviewed = {(d["path"], d["rule"]) for f in review["files"] for d in f["decisions"]
                    if d["phase"] == phase}
        assert ran == reviewed

    # The text review says it in words.
    words = text_of(capsys, "sleep", "review", run_id, *s)
    assert f"archived     {STALE} -> archive/2026/{STALE}" in words
    assert "retention-triage: evict-band (retention score in the evict band)" in words
    assert "band=evict" in words and f"@ {evicted['commit'][:10]}" in words
    assert f"{len(pages)} generated site page(s) counted apart" in words

    # The committed report page shows the same rows.
    page = lxml.html.fromstring(git(store, "show", f"{tip}:{report_path(run_id)}"))
    (decided,) = [t for t in page.iter("table")
                  if [th.text_content() for th in t.iter("th")][:3] == ["file", "action",
                                                                         "phase"]]
    rows = [[td.text_content() for td in tr.iter("td")] for tr in decided.iter("tr")][1:]
    shown = {(row[0].split(" \u2192 ")[0].split(" (with ")[0], row[2], row[3].split(":")[0],
              row[5]) for row in rows}
    expected = {(f["path"], d["phase"], d["rule"], d["commit"][:10])
                for f in review["files"] for d in f["decisions"]}
    assert shown == expected
    stale_row = next(row for row in rows if row[0].startswith(STALE))
    assert f"score={figures['score']}" in stale_row[4] and "band=evict" in stale_row[4]
    assert f"generated site pages: {len(pages)}" in page.text_content()


def test_a_finished_run_reads_17_of_17_and_a_night_with_nothing_to_do_commits_nothing(
        tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    root = tmp_path / "store"
    s = ("--store", str(root))
    assert cli(capsys, "init", str(root))[0] == 0
    for n in range(3):
        write(capsys, clock, root, NIGHT - timedelta(days=2), f"Service {n} port",
              f"Service number {n} listens on port {8000 + n}.", "--importance", "8")
    vetoed_pair(capsys, clock, root)
    assert cli(capsys, "publish", *s)[0] == 0
    clock.at = NIGHT
    code, first, err = cli(capsys, "sleep", "run", *s)
    assert code == 0 and first["commits"] and not first["quiet"], (first, err)
    code, status, _ = cli(capsys, "sleep", "status", *s)
    assert [(r["run_id"], len(r["done"])) for r in status["runs"]] == [(first["run_id"], 17)]
    assert "17/17 done" in text_of(capsys, "sleep", "status", *s)
    # Phases with nothing to change are done, their counts on the report's commit.
    code, review, _ = cli(capsys, "sleep", "review", *s)
    assert [p["phase"] for p in review["phases"] if p["done"]] == list(SLEEP_PHASES)
    assert next(p for p in review["phases"] if p["phase"] == "reprieve")["counts"] == {
        "archived": 0, "expired": 0, "refused": 0, "reprieved": 0}
    code, merged, err = cli(capsys, "sleep", "merge", *s)
    assert code == 0 and merged["merged"], (merged, err)

    def everything() -> str:
        return git(root, "for-each-ref") + git(root, "rev-list", "--all", "--count")

    before = everything()
    main = git(root, "rev-parse", "main").strip()
    for later in (timedelta(0), timedelta(days=1)):
        # The same instant, then a day on: the vetoed pair's task stands as written,
        # nothing else has anything to do, and the night makes no commit at all.
        clock.at = NIGHT + later
        code, night, err = cli(capsys, "sleep", "run", *s)
        assert code == 0 and night["quiet"], (night, err)
        assert (night["branch"], night["commits"], night["head_sha"]) == (None, [], main)
        assert phase_of(night, "dedup-merge")["counts"]["tasks_unchanged"] == 1
        assert everything() == before, "no commit, no branch, no ref moved"
        code, status, _ = cli(capsys, "sleep", "status", *s)
        newest = status["runs"][0]
        assert (newest["run_id"], newest["state"], len(newest["done"]), newest["commits"]) == (
            night["run_id"], "nothing-to-do", 17, 0)
        code, merged, err = cli(capsys, "sleep", "merge", *s)
        assert code == 0 and merged["nothing_to_do"] and not merged["merged"], (merged, err)
        assert merged["run_id"] == night["run_id"] and merged["base"] == main
        code, reviewed, _ = cli(capsys, "sleep", "review", *s)
        assert code == 0 and reviewed["nothing_to_do"]
        assert "nothing to do" in text_of(capsys, "sleep", "run", *s)
        assert everything() == before
    assert git(root, "status", "--porcelain") == ""


# -- signal before noise: a commitment gets its task when reviews would fill the night ------

PROMISE = "I will send the migration report to Dana by Friday"
PAIRS = 12
"""Vetoed pairs: two more than the night's ten places."""


class ModelServer(BaseHTTPRequestHandler):
    """A chat-completions server on loopback. It reads every session as one commitment
    (quoting the transcript) and answers every other phase's question off its schema,
    so those batches are skipped and counted: only the commitment is the model's."""

    asked: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        tool = body["response_format"]["json_schema"]["name"]
        type(self).asked.append(tool)
        answer: dict[str, object] = {}
        if tool == TRACE_TOOL:
            answer = {"memories": [], "commitments": [
                {"statement": "Send the migration report to Dana by Friday.",
                 "confidence": 0.9, "done": False, "quote": PROMISE}],
                "nothing_to_keep": False}
        reply = {"id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
                 "model": "loopback",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": json.dumps(answer),
                                          "refusal": None}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def model_url() -> Iterator[str]:
    ModelServer.asked = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ModelServer)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_commitment_gets_its_task_when_refused_merges_would_take_every_place(
        tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock, model_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "store"
    s = ("--store", str(root))
    assert cli(capsys, "init", str(root))[0] == 0
    for n in range(PAIRS):
        at = NIGHT - timedelta(days=1)
        write(capsys, clock, root, at, f"Flag {n}", f"Feature flag {n} state.", "--body",
              f"The flag number {n} is enabled.", "--importance", "8")
        write(capsys, clock, root, at, f"Flag {n} again", f"Feature flag {n} state.",
              "--body", f"The flag number {n} is not enabled.", "--importance", "8",
              "--allow-duplicate")
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    (transcripts / "s-report.jsonl").write_text("".join(json.dumps(line) + "\n" for line in (
        {"role": "user", "content": "Can you get the migration report to Dana?"},
        {"role": "assistant", "content": f"{PROMISE}."},
        {"type": "session_end"})), encoding="utf-8")
    clock.at = NIGHT

    # Without a model nothing that finds commitments runs: the vetoes take all ten.
    code, alone, err = cli(capsys, "sleep", "run", "--dry-run", *s)
    assert code == 0, err
    vetoes = phase_of(alone, "dedup-merge")["counts"]
    assert (vetoes["vetoed"], vetoes["tasks_minted"], vetoes["tasks_overflow"]) == (
        PAIRS, 10, PAIRS - 10)

    monkeypatch.setenv("MEMHTML_LLM", "openai")
    monkeypatch.setenv("MEMHTML_LLM_URL", model_url)
    monkeypatch.setenv("MEMHTML_LLM_MODEL", "loopback")
    monkeypatch.setenv("MEMHTML_TRANSCRIPTS_DIR", str(transcripts))
    code, report, err = cli(capsys, "sleep", "run", *s)
    assert code == 0, (report, err)
    assert TRACE_TOOL in ModelServer.asked
    # The refused merges, found first, left half the night for what ranks above them.
    vetoes = phase_of(report, "dedup-merge")["counts"]
    assert (vetoes["tasks_minted"], vetoes["tasks_overflow"]) == (HELD_BACK, PAIRS - HELD_BACK)
    traced = phase_of(report, "trace-consolidation")["counts"]
    assert (traced["tasks_minted"], traced["tasks_overflow"]) == (1, 0), traced
    # The commitment's task is on the branch, explained.
    code, review, _ = cli(capsys, "sleep", "review", *s)
    tasks = [f for f in review["files"] if f["path"].startswith("areas/tasks/det-")]
    assert len(tasks) == HELD_BACK + 1
    (promise,) = [d for f in tasks for d in f["decisions"]
                  if d["phase"] == "trace-consolidation"]
    assert (promise["action"], promise["rule"], promise["figures"]) == (
        "created", "session-commitment", {"quote": PROMISE, "session": "s-report"})
    held = git(root, "show", f"{report['head_sha']}:{promise['path']}")
    assert "Send the migration report to Dana by Friday." in held
