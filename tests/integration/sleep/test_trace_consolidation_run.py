"""trace-consolidation in a real run on a real repository, with transcripts in a real
directory and a scripted model bound in the run's dependencies: the memories land on
the run branch with the watermarks in its ledger, and only a merge marks the sessions
consolidated. A run merged is not read again; a run left unmerged, or aborted, leaves
its sessions to be read by the next one."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memhtml.adapters.transcripts import DirectoryTranscripts
from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.services import init_repository
from memhtml.contracts.errors import ModelError, ModelMalformed
from memhtml.contracts.services import ModelRequest
from memhtml.sleep.contract import ledger_path
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.ledger import read_ledger
from memhtml.sleep.merge import merge_run
from memhtml.sleep.phase import PhaseRecord
from memhtml.sleep.phases.trace_prompt import TOOL_NAME
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep, version_at
from memhtml.sleep.runs import abort_run
from memhtml.store import WriteInput, init_store, write
from tests.integration.sleep.sleep_support import RUN_AT, RUN_ID, deps_at, services_at
from tests.unit.sleep.fake_model import ScriptedModel

NEXT_NIGHT = RUN_AT + timedelta(days=1)
SESSIONS = ("s-alpha", "s-beta")
ONLY_TRACE = RunOptions(phases=frozenset({"trace-consolidation"}))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "store"
    value_of(init_repository(root))
    services = value_of(open_services(Settings(store=root), require_store=False))
    value_of(init_store(services.store().deps))
    doors = services_at(root, RUN_AT - timedelta(days=2)).store()
    value_of(write(doors, WriteInput(title="Runbook", claim="Deploys go out on Tuesdays.",
                                     path="areas/ops/runbook.html")))
    return root


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for n, session in enumerate(SESSIONS):
        path = folder / f"{session}.jsonl"
        path.write_text(json.dumps({"role": "user", "content": f"The {session} cache TTL is "
                                                               f"{300 + n} seconds."}) + "\n")
        at = (RUN_AT - timedelta(hours=6)).timestamp()
        os.utime(path, (at, at))
    return folder


def respond(request: ModelRequest) -> Mapping[str, object] | ModelError:
    """One memory per session, quoting it; every other phase's call is refused."""
    if request.tool_name != TOOL_NAME:
        return ModelMalformed("scripted", "not this test's phase")
    session = json.loads(request.prompt.split("\n", 1)[0].removeprefix("Session: "))
    return {"memories": [{"title": f"Cache TTL of {session}",
                          "claim": f"The {session} cache TTL is fixed.", "body": [],
                          "memory_type": "semantic", "quote": f"The {session} cache TTL"}],
            "commitments": [], "nothing_to_keep": False}


def deps_for(root: Path, folder: Path, model: ScriptedModel, at: datetime = RUN_AT
             ) -> SleepDeps:
    return replace(deps_at(root, at), model=model, transcripts=DirectoryTranscripts(folder))


def traced(report: RunReport) -> PhaseRecord:
    return next(r for r in report.phases if r.phase == "trace-consolidation")


def unconsolidated(root: Path) -> tuple[str, ...]:
    return value_of(deps_at(root).state.unconsolidated(SESSIONS))


def asked(model: ScriptedModel) -> list[str]:
    return [json.loads(r.prompt.split("\n", 1)[0].removeprefix("Session: "))
            for r in model.requests if r.tool_name == TOOL_NAME]


def test_a_merged_run_marks_its_sessions_and_the_next_run_skips_them(
        store: Path, transcripts: Path) -> None:
    model = ScriptedModel(respond=respond)
    report = value_of(run_sleep(deps_for(store, transcripts, model), ONLY_TRACE))
    record = traced(report)
    assert record.status == "done", record
    assert record.counts["memories"] == 2 and record.marks == 2
    assert len(record.commits) == 2, "one commit per distilled memory"
    assert asked(model) == list(SESSIONS)
    tip = value_of(version_at(deps_at(store), report.head_sha))
    inbox = [r for r in tip.records() if r.path.startswith("areas/inbox/")]
    assert sorted(r.session_id or "" for r in inbox) == list(SESSIONS)
    git = deps_at(store).git
    (entry,) = value_of(git.entries_at(report.head_sha, [ledger_path(RUN_ID)]))
    ledger = read_ledger(value_of(git.read_blobs([entry.blob_id]))[entry.blob_id])
    assert [m.get("session") for m in ledger.of_kind("session-consolidated")] == list(SESSIONS)
    assert unconsolidated(store) == SESSIONS, "nothing is marked before the merge"

    merged = value_of(merge_run(deps_at(store), RUN_ID))
    assert merged.merged, merged
    assert unconsolidated(store) == ()

    again = ScriptedModel(respond=respond)
    second = value_of(run_sleep(deps_for(store, transcripts, again, NEXT_NIGHT), ONLY_TRACE))
    assert traced(second).counts["consolidated_before"] == 2
    assert asked(again) == [] and traced(second).commits == ()


def test_an_unmerged_run_leaves_its_sessions_to_the_next(store: Path, transcripts: Path
                                                         ) -> None:
    first = value_of(run_sleep(deps_for(store, transcripts, ScriptedModel(respond=respond)),
                               ONLY_TRACE))
    assert traced(first).marks == 2
    again = ScriptedModel(respond=respond)
    second = value_of(run_sleep(deps_for(store, transcripts, again, NEXT_NIGHT), ONLY_TRACE))
    assert asked(again) == list(SESSIONS)
    assert traced(second).counts["consolidated_before"] == 0
    assert unconsolidated(store) == SESSIONS


def test_an_aborted_run_leaves_its_sessions_unconsolidated(store: Path, transcripts: Path
                                                           ) -> None:
    value_of(run_sleep(deps_for(store, transcripts, ScriptedModel(respond=respond)),
                       ONLY_TRACE))
    value_of(abort_run(deps_at(store), RUN_ID))
    assert unconsolidated(store) == SESSIONS
    again = ScriptedModel(respond=respond)
    value_of(run_sleep(deps_for(store, transcripts, again, NEXT_NIGHT), ONLY_TRACE))
    assert asked(again) == list(SESSIONS)
