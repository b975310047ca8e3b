"""A first night on an ordinary store, through the command line a person runs: spellings
of one person merged and a third name in the review band make one review task, not one
per spelling; a dry run reports what the real run does, phase after phase (the entity
merges feed person-links); and a run killed part-way shows ``stopped, resume`` in
``sleep status`` until ``sleep resume`` finishes it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.cli.cli_support import call, call_text
from tests.integration.sleep.kill_support import CRASHED, RUN_ID, child, fresh
from tests.integration.sleep.sleep_support import git_cli
from tests.integration.store.checkout_support import clean_environment

pytestmark = pytest.mark.slow

NOTES = (
    ("Rota", "The weekend rota was swapped for the holidays.", "person:Katherine Lee"),
    ("Ledger", "The expense ledger was reconciled on Friday.", "person:Catherine Lee"),
    ("Approvals", "The expense ledger needs two approvals.", "person:Catherine Lee"),
    ("Standup", "Standup now starts at a quarter past nine.", "person:Kathryn Lee"),
    ("Deploys", "Deploys stop at four on Fridays.", "service:deploy-bot"),
)
""""Katherine Lee" and "Catherine Lee" are one name by their characters (merged);
"Kathryn Lee" is in the review band of both spellings."""
_DETECTED = re.compile(r"areas/tasks/det-[0-9a-f]{12}-[^/]+\.html")


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Path:
    clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    code, made = call(capsys, "init", str(root), "--json")
    assert code == 0, made
    for title, claim, entity in NOTES:
        code, wrote = call(capsys, "write", "--title", title, "--claim", claim, "--entity",
                           entity, "--store", str(root), "--json")
        assert code == 0, wrote
    return root


def _phase(report: dict[str, Any], name: str) -> dict[str, Any]:
    found = next(p for p in report["phases"] if p["phase"] == name)
    assert isinstance(found, dict)
    return found


def _tasks(root: Path, ref: str) -> list[str]:
    return [p for p in git_cli(root, "ls-tree", "-r", "--name-only", ref).splitlines()
            if _DETECTED.fullmatch(p)]


def test_spellings_merged_tonight_and_a_third_name_make_one_review_task(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    entities = _phase(report, "entity-resolution")["counts"]
    # Two pairs in the band ("kathryn lee" against each spelling), one question.
    assert (entities["merged"], entities["review_candidates"]) == (1, 2), entities
    assert entities["tasks_minted"] == 1, entities
    (task,) = _tasks(store, f"sleep/{report['run_id']}")
    text = git_cli(store, "show", f"sleep/{report['run_id']}:{task}")
    assert "catherine lee" in text and "kathryn lee" in text
    assert "also written \u201ckatherine lee\u201d" in text
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"], merged
    # The next night reads the same cluster (its spellings one name on main now) and
    # keeps the one task: the same file, its words brought up to date.
    code, again = call(capsys, "sleep", "run", *s)
    assert code == 0, again
    counts = _phase(again, "entity-resolution")["counts"]
    assert (counts["review_candidates"], counts["tasks_minted"]) == (1, 0), counts
    assert counts["tasks_unchanged"] + counts["tasks_refreshed"] == 1, counts
    assert _tasks(store, f"sleep/{again['run_id']}") == [task]


def test_a_dry_run_composes_each_phase_onto_the_next_as_the_real_run_does(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    before = git_cli(store, "for-each-ref", "--format=%(refname) %(objectname)")
    code, dry = call(capsys, "sleep", "run", "--dry-run", *s)
    assert code == 0, dry
    assert git_cli(store, "for-each-ref", "--format=%(refname) %(objectname)") == before
    code, real = call(capsys, "sleep", "run", *s)
    assert code == 0, real
    people = _phase(real, "person-links")["counts"]
    # The merged spellings are one person: two people, not three.
    assert (people["persons"], people["files_minted"]) == (2, 2), people
    for name in ("entity-resolution", "person-links", "relationship-mining",
                 "retention-triage", "integrity"):
        assert _phase(dry, name)["counts"] == _phase(real, name)["counts"], name


def test_a_killed_run_shows_stopped_resume_until_resumed(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    env = dict(os.environ)
    whole = child(fresh(store, tmp_path / "whole"), 0, env, tmp_path / "trace", "sleep",
                  "run", busy=False)
    assert whole.code == 0, whole.output
    # Killed just after the first phase commit moved the run's branch.
    k = next(n for n, event in enumerate(whole.events, start=1)
             if event.startswith("PygitService.commit returned"))
    crash = child(store, k + 1, env, tmp_path / "trace", "sleep", "run", busy=False)
    assert crash.code == CRASHED, crash.output
    s = ("--store", str(store))
    code, status = call(capsys, "sleep", "status", *s, "--json")
    assert code == 0
    (run,) = status["runs"]
    assert (run["run_id"], run["state"]) == (RUN_ID, "stopped"), run
    assert run["commits"] > 0 and "report" not in run["done"]
    code, out, err = call_text(capsys, "sleep", "status", *s)
    assert code == 0 and "stopped, resume" in out, out
    assert f"memhtml sleep resume {RUN_ID}" in out + err
    code, resumed = call(capsys, "sleep", "resume", RUN_ID, *s, "--json")
    assert code == 0, resumed
    code, status = call(capsys, "sleep", "status", RUN_ID, *s, "--json")
    assert status["runs"][0]["state"] == "mergeable", status
