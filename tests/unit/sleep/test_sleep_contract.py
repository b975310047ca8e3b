"""The contract: seventeen phases in spec order, what gates what, a body for every name,
and the run id's shape."""

from __future__ import annotations

from typing import get_args

from memhtml.sleep.contract import (
    HARD_PREREQUISITES,
    LLM_PHASES,
    SLEEP_PHASES,
    SWEEP_PHASES,
    SleepPhase,
    branch_of,
    is_run_id,
    ledger_path,
    report_path,
    run_id_for,
    run_id_of_branch,
    run_order,
)
from memhtml.sleep.phases import PHASE_BODIES, body_for

SPEC_ORDER = (
    "preflight", "dedup-merge", "entity-resolution", "person-links", "relationship-mining",
    "edge-typing", "confidence-decay", "arc-synthesis", "retention-triage", "compress",
    "reprieve", "trace-consolidation", "task-detection", "placement-triage", "integrity",
    "state-export", "report",
)


def test_seventeen_phases_in_spec_order() -> None:
    assert SLEEP_PHASES == SPEC_ORDER
    assert get_args(SleepPhase) == SPEC_ORDER


def test_eight_phases_call_a_model() -> None:
    assert len(LLM_PHASES) == 8
    assert set(LLM_PHASES) <= set(SLEEP_PHASES)
    assert set(LLM_PHASES) == {"dedup-merge", "entity-resolution", "edge-typing",
                               "arc-synthesis", "compress", "trace-consolidation",
                               "task-detection", "placement-triage"}
    assert SWEEP_PHASES == ("confidence-decay",)


def test_hard_prerequisites() -> None:
    gated_by_preflight = {after for before, after in HARD_PREREQUISITES if before == "preflight"}
    assert gated_by_preflight == set(SLEEP_PHASES) - {"preflight"}
    others = {pair for pair in HARD_PREREQUISITES if pair[0] != "preflight"}
    assert others == {("dedup-merge", "compress"), ("dedup-merge", "retention-triage")}
    for before, after in HARD_PREREQUISITES:
        assert SLEEP_PHASES.index(before) < SLEEP_PHASES.index(after)


def test_every_phase_has_a_body() -> None:
    assert tuple(PHASE_BODIES) == SLEEP_PHASES
    for phase in SLEEP_PHASES:
        assert PHASE_BODIES[phase] is body_for(phase)


def test_run_ids() -> None:
    assert run_id_for("2026-11-29", 1) == "2026-11-29"
    assert run_id_for("2026-11-29", 3) == "2026-11-29-3"
    assert branch_of("2026-11-29-3") == "sleep/2026-11-29-3"
    assert run_id_of_branch("sleep/2026-11-29-3") == "2026-11-29-3"
    assert run_id_of_branch("refs/heads/sleep/2026-11-29") == "2026-11-29"
    assert run_id_of_branch("sleep/notes") is None
    assert run_id_of_branch("main") is None
    assert not is_run_id("2026-11-29-1")
    assert sorted(["2026-11-29-10", "2026-11-29-2", "2026-11-29", "2026-11-28-3"],
                  key=run_order) == ["2026-11-28-3", "2026-11-29", "2026-11-29-2",
                                     "2026-11-29-10"]
    assert report_path("2026-11-29") == ".memhtml/sleep/2026-11-29.html"
    assert ledger_path("2026-11-29") == ".memhtml/sleep/2026-11-29.pending.jsonl"
