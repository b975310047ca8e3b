"""The run's model-call budget, a phase's capped share of it, and the budgeted model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.io import IOFailure
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.unit.sleep.fake_model import ScriptedModel

from memhtml.contracts.errors import BudgetExhausted
from memhtml.contracts.services import ModelRequest
from memhtml.sleep.budget import BudgetedModel, CallBudget

SCHEMA: dict[str, object] = {"type": "object", "properties": {"ok": {"type": "boolean"}},
                             "required": ["ok"], "additionalProperties": False}
REQUEST = ModelRequest(system="judge", prompt="p", schema=SCHEMA, tool_name="answer",
                       max_output_tokens=64)


def _ok(_: ModelRequest) -> dict[str, object]:
    return {"ok": True}


def test_unlimited_budget_grants_every_call() -> None:
    budget = CallBudget()
    assert all(budget.take() for _ in range(1000))
    assert (budget.used, budget.refused, budget.remaining) == (1000, 0, None)


def test_limit_grants_that_many_then_counts_each_refusal() -> None:
    budget = CallBudget(3)
    assert [budget.take() for _ in range(5)] == [True, True, True, False, False]
    assert budget.counts() == {"calls_used": 3, "calls_refused": 2, "call_limit": 3}
    assert budget.remaining == 0


def test_zero_budget_grants_nothing() -> None:
    budget = CallBudget(0)
    assert not budget.take()
    assert budget.try_take() == "the run's budget of 0 model calls is spent"


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        CallBudget(-1)


def test_phase_cap_refuses_past_its_own_limit_without_spending_the_run() -> None:
    run = CallBudget(5)
    phase = run.capped(2)
    assert [phase.take() for _ in range(3)] == [True, True, False]
    assert (phase.used, phase.refused) == (2, 1)
    assert (run.used, run.refused, run.remaining) == (2, 0, 3)
    assert phase.try_take() == "the phase's budget of 2 model calls is spent"


def test_phases_share_the_run_budget() -> None:
    run = CallBudget(3)
    first, second = run.capped(2, name="dedup-merge's"), run.capped(5, name="edge-typing's")
    assert [first.take() for _ in range(2)] == [True, True]
    assert second.remaining == 1
    assert second.take()
    assert second.try_take() == "the run's budget of 3 model calls is spent"
    assert (second.used, second.refused) == (1, 1)
    assert (run.used, run.refused, run.remaining) == (3, 1, 0)


def test_uncapped_phase_is_bounded_by_the_run_only() -> None:
    run = CallBudget(2)
    phase = run.capped(None)
    assert phase.remaining == 2
    assert [phase.take() for _ in range(3)] == [True, True, False]


@given(limit=st.none() | st.integers(0, 20),
       caps=st.lists(st.none() | st.integers(0, 10), min_size=1, max_size=4),
       asks=st.lists(st.integers(0, 3), max_size=60))
def test_no_cap_lets_a_phase_spend_past_the_run(limit: int | None, caps: list[int | None],
                                                asks: list[int]) -> None:
    run = CallBudget(limit)
    phases = [run.capped(cap) for cap in caps]
    for ask in asks:
        phases[ask % len(phases)].take()
    assert run.used == sum(p.used for p in phases)
    assert limit is None or run.used <= limit
    for phase, cap in zip(phases, caps, strict=True):
        assert cap is None or phase.used <= cap
    assert sum(p.used + p.refused for p in phases) == len(asks)


def test_budgeted_model_answers_exhausted_without_calling() -> None:
    fake = ScriptedModel(respond=_ok)
    model = BudgetedModel(fake, CallBudget(2))
    results = [model.complete_json(REQUEST) for _ in range(3)]
    assert [is_successful(r) for r in results] == [True, True, False]
    assert results[2] == IOFailure(BudgetExhausted("the run's budget of 2 model calls is spent"))
    assert fake.calls == 2
    assert model.model_id == "scripted"


def test_a_failed_call_still_spends_a_call() -> None:
    fake = ScriptedModel(respond=_ok, malformed_calls=frozenset({1}))
    budget = CallBudget(2)
    model = BudgetedModel(fake, budget)
    assert not is_successful(model.complete_json(REQUEST))
    assert unsafe_perform_io(model.complete_json(REQUEST).unwrap()) == {"ok": True}
    assert (budget.used, fake.calls) == (2, 2)


# -- the time budget -------------------------------------------------------------------


class _Ticks:
    """A timer a test advances by hand: each call of the model costs what it says."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_time_budget_hands_each_call_what_is_left_and_refuses_once_spent() -> None:
    ticks = _Ticks()
    run = CallBudget(seconds=10.0, timer=ticks)
    phase = run.capped(None)
    seen: list[float | None] = []

    def slow(request: ModelRequest) -> dict[str, object]:
        seen.append(request.time_limit)
        ticks.now += 4.0
        return {"ok": True}

    model = BudgetedModel(ScriptedModel(respond=slow), phase)
    outcomes = [model.complete_json(REQUEST) for _ in range(4)]
    assert [is_successful(o) for o in outcomes] == [True, True, True, False]
    # 10 s: 10 left, then 6, then 2; the fourth call is never made.
    assert seen == [10.0, 6.0, 2.0]
    refusal = unsafe_perform_io(outcomes[3].failure())
    assert isinstance(refusal, BudgetExhausted)
    assert "budget of 10 model seconds is spent" in refusal.reason
    assert run.seconds_used == 12.0 and run.time_refused == 1
    # The refused call spent nothing of the call budget.
    assert phase.used == 3


def test_a_tighter_limit_of_the_request_stands() -> None:
    from dataclasses import replace

    seen: list[float | None] = []

    def record(request: ModelRequest) -> dict[str, object]:
        seen.append(request.time_limit)
        return {"ok": True}

    model = BudgetedModel(ScriptedModel(respond=record),
                          CallBudget(seconds=50.0, timer=_Ticks()))
    assert is_successful(model.complete_json(replace(REQUEST, time_limit=3.0)))
    assert is_successful(BudgetedModel(ScriptedModel(respond=record), CallBudget()
                                       ).complete_json(REQUEST))
    assert seen == [3.0, None]


@pytest.mark.parametrize("seconds", [-1.0, float("inf"), float("nan")])
def test_a_time_budget_must_be_a_finite_count_of_seconds(seconds: float) -> None:
    with pytest.raises(ValueError, match="time budget"):
        CallBudget(seconds=seconds)
