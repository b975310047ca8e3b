"""placement-triage in a real ``--deep`` run on a real repository, with a scripted model
bound in the run's dependencies: an inbox memory is filed under the topic the model
names with its inbound link rewritten on the branch, and the touched-set guard holds
in the run and on resume. The file person-links decided something about (it gained an
``about_person`` link) stays in the inbox, also when that phase's commit exists only on
the branch, written by an earlier invocation of the run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from memhtml.adapters.git import PygitService
from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.services import init_repository
from memhtml.contracts.errors import ModelError, ModelMalformed
from memhtml.contracts.record import Link
from memhtml.contracts.services import ModelRequest
from memhtml.head import HeadVersion
from memhtml.sleep.contract import SleepPhase
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.phase import PhaseRecord
from memhtml.sleep.phases.placement_triage import TOOL_NAME
from memhtml.sleep.resume import resume_sleep
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep, version_at
from memhtml.store import WriteInput, init_store, write
from tests.integration.sleep.sleep_support import RUN_AT, RUN_ID, deps_at, services_at
from tests.unit.sleep.fake_model import ScriptedModel, offered

WRITE_AT = RUN_AT - timedelta(days=1)
TOPIC = "areas/ops/runbook.html"
LONE = "areas/inbox/deploy-window.html"
PERSONAL = "areas/inbox/call-with-ines.html"
POINTER = "areas/notes/pointer.html"
TITLES = {"Deploy window": LONE, "Call with Ines": PERSONAL}


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
    doors = services_at(root, WRITE_AT).store()
    for data in (
        WriteInput(title="Runbook", claim="Deploys go out on Tuesdays.", path=TOPIC),
        WriteInput(title="Deploy window", claim="The deploy window closes at 16:00.",
                   path=LONE),
        WriteInput(title="Call with Ines", claim="Ines asked for the quarterly numbers.",
                   path=PERSONAL, entities=("person:Ines Garcia",)),
        WriteInput(title="Pointer", claim="See the deploy window note.", path=POINTER,
                   links=(Link("relates_to", "/" + LONE),)),
    ):
        value_of(write(doors, data))
    return root


def respond(request: ModelRequest) -> Mapping[str, object] | ModelError:
    """Files both inbox notes under ``areas/ops``; every other phase's call is refused
    (its batch is skipped, as a malformed answer's is)."""
    if request.tool_name != TOOL_NAME:
        return ModelMalformed("scripted", "not this test's phase")
    items = [{"key": key, "place": "areas/ops", "confidence": 0.9}
             for key, text in offered(request).items()
             if text.split("\n", 1)[0].removeprefix("title: ") in TITLES]
    return {"placements": items}


def deps_with(root: Path, model: ScriptedModel) -> SleepDeps:
    return replace(deps_at(root), model=model)


def record_of(report: RunReport, phase: SleepPhase) -> PhaseRecord:
    return next(r for r in report.phases if r.phase == phase)


def tip_version(root: Path, report: RunReport) -> HeadVersion:
    return value_of(version_at(deps_at(root), report.head_sha))


def offered_titles(model: ScriptedModel) -> set[str]:
    return {text.split("\n", 1)[0].removeprefix("title: ")
            for r in model.requests if r.tool_name == TOOL_NAME
            for text in offered(r).values()}


def assert_filed(root: Path, report: RunReport, model: ScriptedModel) -> None:
    placement = record_of(report, "placement-triage")
    assert placement.status == "done", placement
    assert placement.counts["moved"] == 1 and placement.counts["touched"] == 1, placement
    assert placement.counts["guard_unknown"] == 0
    assert offered_titles(model) == {"Deploy window"}, "a pinned file is not even offered"
    after = tip_version(root, report)
    assert after.get(LONE) is None and after.get("areas/ops/deploy-window.html") is not None
    assert after.get(PERSONAL) is not None, "the file person-links linked stays put"
    pointer = after.get(POINTER)
    assert pointer is not None
    assert [link.href for link in pointer.links] == ["/areas/ops/deploy-window.html"]
    git = value_of(PygitService.open(root / ".git"))
    info = value_of(git.commit_info(placement.commits[0]))
    assert ("Memhtml-Phase", "placement-triage") in info.trailers


def test_a_deep_run_files_an_inbox_memory_and_spares_a_decided_one(store: Path) -> None:
    model = ScriptedModel(respond=respond)
    report = value_of(run_sleep(deps_with(store, model), RunOptions(deep=True)))
    assert report.ok, [(r.phase, r.status, r.reason) for r in report.phases]
    linked = record_of(report, "person-links")
    assert linked.status == "done" and linked.commits, linked
    assert_filed(store, report, model)


def test_the_guard_holds_on_resume(store: Path) -> None:
    # The first invocation stops after person-links committed (only it was asked for);
    # the resume knows that commit only from the branch.
    first = value_of(run_sleep(deps_at(store), RunOptions(
        deep=True, phases=frozenset({"person-links"}))))
    assert record_of(first, "person-links").commits
    assert record_of(first, "placement-triage").status == "not-selected"
    model = ScriptedModel(respond=respond)
    resumed = value_of(resume_sleep(deps_with(store, model), RUN_ID))
    assert resumed.ok, [(r.phase, r.status, r.reason) for r in resumed.phases]
    assert resumed.resumed and record_of(resumed, "person-links").status == "skipped"
    assert_filed(store, resumed, model)


def test_without_deep_nothing_is_asked_or_moved(store: Path) -> None:
    model = ScriptedModel(respond=respond)
    report = value_of(run_sleep(deps_with(store, model)))
    placement = record_of(report, "placement-triage")
    assert placement.reason and "--deep" in placement.reason and not placement.commits
    assert offered_titles(model) == set()
    assert tip_version(store, report).get(LONE) is not None
