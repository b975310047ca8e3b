"""Nights through the CLI with a weak model on loopback, answering as a small local
model answered: a canonical titled "Jenkins Backup for New Roes" whose claim and body
are the batch's keys (``m4``, ``m6``), canonicals claiming ``10`` and ``p20``, an arc of
keys, a duplicate group of everything, and ``{"commitments": [], "memories": []}`` for a
session holding a clear fact and a commitment. Every answer is the right shape for the
wire; code refuses each: no memory is archived, changed or written from that text, each
refusal is a ``model-refused`` record in the run's ledger with its rule and figures, and
the session is not consumed: it is asked again on the next nights, then handed to a
person as a task.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.sleep.contract import ledger_path
from tests.integration.cli.cli_support import call_text
from tests.integration.sleep.model_server import Log, serving_model
from tests.integration.sleep.sleep_support import RUN_AT
from tests.integration.store.checkout_support import clean_environment

pytestmark = pytest.mark.slow

OPS = "areas/ops/"
NOTES = (
    ("Jenkins backup", "The Jenkins backup runs nightly at 02:00 UTC."),
    ("Backup retention", "Jenkins backups are kept for thirty days."),
    ("Restore drill", "A restore from the Jenkins backup is rehearsed each quarter."),
    ("Backup bucket", "The Jenkins backup is copied to the storage bucket."),
    ("Backup alerts", "A failed Jenkins backup pages the build team."),
    ("Backup owner", "The build team owns the Jenkins backup job."),
)
"""One community of fading notes: every note links every earlier one."""
SESSION = "s-rotate"
FACT = "The staging database now lives on host db-7 in the west region."
PROMISE = "I will rotate the key on Friday."
PHASES = ("dedup-merge", "arc-synthesis", "compress", "trace-consolidation", "report")
"""dedup-merge has nothing to ask here (no vectors, no twins): its model groups are
held to the protections in its unit tests."""


def path_of(title: str) -> str:
    return f"{OPS}{title.lower().replace(' ', '-')}.html"


def weak(tool: str, offered: Mapping[str, str]) -> Mapping[str, object]:
    """The answers the issue quotes, each well formed."""
    keys = list(offered)
    if tool == "group_duplicate_memories":
        return {"groups": [{"members": keys}]} if len(keys) > 1 else {"groups": []}
    if tool == "choose_arcs":
        return {"communities": [{"key": key, "arc": True, "title": "p20"} for key in keys]}
    if tool == "write_arc":
        return {"claim": "10", "body": ["m3 m4 m5"], "covers": keys}
    if tool == "write_canonicals":
        return {"canonicals": [
            {"title": "Jenkins Backup for New Roes", "claim": "m4", "body": ["m4", "m6"],
             "absorbs": keys[0:2]},
            {"title": "Jenkins backup", "claim": "10", "body": ["m3 m4 m5"],
             "absorbs": keys[2:4]},
            {"title": "Backup", "claim": "p20", "body": [], "absorbs": keys[4:6]},
        ]}
    if tool == "distill_session":
        return {"commitments": [], "memories": []}
    return {}


@dataclass
class Clock:
    at: datetime


@dataclass
class Store:
    root: Path
    clock: Clock
    model: Log


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    clock = Clock(RUN_AT - timedelta(days=2))
    monkeypatch.setattr(SystemClock, "now", lambda self: clock.at)
    clean_environment(monkeypatch, tmp_path / "home")
    folder = tmp_path / "transcripts"
    folder.mkdir()
    lines = [{"role": "user", "content": FACT}, {"role": "assistant", "content": "Noted."},
             {"role": "user", "content": PROMISE}, {"type": "session_end"}]
    (folder / f"{SESSION}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with serving_model(weak) as (url, log):
        for name, value in {"MEMHTML_LLM": "openai", "MEMHTML_LLM_URL": url,
                            "MEMHTML_LLM_MODEL": "loopback",
                            "MEMHTML_TRANSCRIPTS_DIR": str(folder)}.items():
            monkeypatch.setenv(name, value)
        yield Store(tmp_path / "store", clock, log)


def cli(capsys: pytest.CaptureFixture[str], s: Store, *tokens: str) -> tuple[int, Any]:
    code, out, err = call_text(capsys, *tokens, "--store", str(s.root), "--json")
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out) if out.strip() else None


def build(capsys: pytest.CaptureFixture[str], s: Store) -> None:
    code, _ = cli(capsys, s, "init")
    assert code == 0
    written: list[str] = []
    for title, claim in NOTES:
        s.clock.at += timedelta(minutes=5)
        links = [token for p in written for token in ("--link", f"relates_to=/{p}")]
        code, done = cli(capsys, s, "write", "--title", title, "--claim", claim,
                         "--path", path_of(title), "--confidence", "0.6", *links)
        assert code == 0, done
        written.append(path_of(title))


def tree(repo: pygit2.Repository, rev: str) -> dict[str, str]:
    found: dict[str, str] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                found[f"{prefix}{entry.name}"] = str(entry.id)

    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return found


def night(capsys: pytest.CaptureFixture[str], s: Store) -> dict[str, Any]:
    tokens = [token for phase in PHASES for token in ("--phase", phase)]
    code, report = cli(capsys, s, "sleep", "run", *tokens)
    assert isinstance(report, dict), report
    bad = [(p["phase"], p["status"], p.get("reason")) for p in report["phases"]
           if p["status"] not in ("done", "not-selected")]
    assert code == 0 and not bad, bad
    return report


def ledger(repo: pygit2.Repository, report: Mapping[str, Any]) -> list[dict[str, Any]]:
    blob = repo.revparse_single(f"{report['head_sha']}:{ledger_path(report['run_id'])}")
    return [json.loads(line) for line in blob.peel(pygit2.Blob).data.decode().splitlines()]


def waiting(capsys: pytest.CaptureFixture[str], s: Store) -> int:
    code, plan = cli(capsys, s, "sleep", "plan")
    assert code == 0, plan
    return int(plan["transcripts_waiting"])


def test_a_weak_models_answers_are_refused_by_code_and_its_empty_answer_consumes_nothing(
        capsys: pytest.CaptureFixture[str], store: Store) -> None:
    s = store
    build(capsys, s)
    s.clock.at = RUN_AT
    assert waiting(capsys, s) == 1
    report = night(capsys, s)
    phases = {p["phase"]: p for p in report["phases"]}
    repo = pygit2.Repository(str(s.root))
    base, after = tree(repo, report["base_sha"]), tree(repo, report["head_sha"])
    # Every phase that writes model text was asked and answered in the right shape...
    assert {"choose_arcs", "write_arc", "write_canonicals", "distill_session"} <= set(
        s.model.tools())
    # ...and not one memory file was archived, rewritten or written from it.
    memories = {p: sha for p, sha in after.items() if not p.startswith(".memhtml/")}
    assert memories == {p: sha for p, sha in base.items() if not p.startswith(".memhtml/")}
    compress, arcs = phases["compress"]["counts"], phases["arc-synthesis"]["counts"]
    assert (compress["canonicals"], compress["archived"]) == (0, 0)
    assert compress["refused_ungrounded"] == 3
    assert (arcs["arcs"], arcs["refused_ungrounded"]) == (0, 1)
    assert phases["dedup-merge"]["counts"]["folded"] == 0
    traced = phases["trace-consolidation"]["counts"]
    assert (traced["consolidated"], traced["failed_sessions"]) == (0, 1)

    # Each refusal is a record with its rule and figures.
    records = [r for r in ledger(repo, report) if r["kind"] == "model-refused"]
    by_phase: dict[str, set[str]] = {}
    for record in records:
        by_phase.setdefault(record["phase"], set()).add(record["rule"])
        assert record["detail"] and record["subject"]
    assert by_phase["compress"] == {"text-key-or-number", "text-not-drawn"}
    assert by_phase["arc-synthesis"] == {"text-key-or-number"}
    assert by_phase["trace-consolidation"] == {"session-yielded-nothing"}
    roes = [r for r in records if r["phase"] == "compress" and r["part"] == "title"]
    assert [r["rule"] for r in roes] == ["text-not-drawn"]  # "new" and "roes" are no note's
    assert 0 <= roes[0]["overlap"] < roes[0]["floor"]
    (session,) = [r for r in records if r["phase"] == "trace-consolidation"]
    assert (session["subject"], session["nights"]) == (f"session {SESSION}", 1)
    assert not [r for r in ledger(repo, report) if r["kind"] == "session-consolidated"]

    # Merged, the session is still waiting: the empty answer consumed nothing.
    code, merged = cli(capsys, s, "sleep", "merge")
    assert code == 0, merged
    assert waiting(capsys, s) == 1

    # Asked again on the next night, then handed to a person on the third.
    s.clock.at = RUN_AT + timedelta(days=1)
    second = night(capsys, s)
    (again,) = [r for r in ledger(repo, second) if r["kind"] == "model-refused"
                and r["phase"] == "trace-consolidation"]
    assert again["nights"] == 2
    code, merged = cli(capsys, s, "sleep", "merge")
    assert code == 0, merged
    s.clock.at = RUN_AT + timedelta(days=2)
    third = night(capsys, s)
    counts = {p["phase"]: p for p in third["phases"]}["trace-consolidation"]["counts"]
    assert (counts["handed_to_person"], counts["consolidated"]) == (1, 1)
    final = tree(repo, third["head_sha"])
    tasks = [p for p in set(final) - set(tree(repo, third["base_sha"]))
             if p.startswith("areas/tasks/")]
    assert len(tasks) == 1, tasks
    text = repo.revparse_single(f"{third['head_sha']}:{tasks[0]}").peel(
        pygit2.Blob).data.decode()
    assert SESSION in text and "nothing kept after 3 nights" in text
    marked = [r for r in ledger(repo, third) if r["kind"] == "session-consolidated"]
    assert [r["session"] for r in marked] == [SESSION]
