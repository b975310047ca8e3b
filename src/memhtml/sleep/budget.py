"""How many model calls a run may make, and the model that asks before each one.

``--max-llm-calls N`` is one allowance for the whole run: every deep phase draws on
the same ``CallBudget``, so the figure the caller set is the most the night can spend,
whatever the phases' own caps add up to. A phase that also caps itself takes
``budget.capped(n)``: a sub-budget that refuses past its own ``n`` *and* whenever the
shared one is spent, so one phase cannot starve the ones after it beyond its cap, and
no cap lets a phase spend past the run's.

The budget is asked before a call, not told after one: a call that fails (malformed,
unavailable) was still made and still costs. ``BudgetedModel`` puts that question in
front of any ``LanguageModel`` and answers ``BudgetExhausted`` without calling when
it is refused, so the batching kernel can tell a spent night (stop asking, count what
was never asked) from a bad answer (skip one batch, go on).

``--max-llm-seconds N`` is the same kind of allowance in wall-clock time: the seconds
spent waiting on the model, summed over every call of the run. A call is asked only
while some remain, and is told what remains (``ModelRequest.time_limit``), so the
model gives up (closing its connection) rather than overrun the night; once they are
spent, what was not asked is skipped with the reason, as a spent call budget is.

Like ``TaskBudget`` this is a counter made by the run and threaded through it, never
a module global, so two runs in one process hold two budgets. What it refuses is
counted, so a night pressing on its allowance shows it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from returns.io import IOFailure, IOResult

from memhtml.contracts.errors import BudgetExhausted, ModelError
from memhtml.contracts.services import LanguageModel, ModelRequest


class CallBudget:
    """An allowance of model calls: ``limit`` of them, or any number when ``None``.

    ``parent`` is the budget this one also draws from (see ``capped``); ``name``
    says whose allowance it is in a refusal's reason."""

    def __init__(self, limit: int | None = None, *, name: str = "the run's",
                 parent: CallBudget | None = None, spent: int = 0,
                 seconds: float | None = None,
                 timer: Callable[[], float] = time.monotonic) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"a call budget cannot be negative: {limit}")
        if spent < 0:
            raise ValueError(f"calls spent cannot be negative: {spent}")
        if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"a time budget must be a number of seconds, 0 or more: "
                             f"{seconds}")
        self.limit = limit
        self.name = name
        self.parent = parent
        self.seconds = seconds
        """Wall-clock seconds the run may spend in model calls (None: no limit); only
        the run's own budget holds one, and its sub-budgets draw on it."""
        self.timer = timer
        self.seconds_used = 0.0
        self.time_refused = 0
        """Calls not made because the time budget was spent."""
        self.used = spent
        """Calls this budget granted (a resumed run's starts at what its first attempt
        recorded spending)."""
        self.refused = 0
        """Calls this budget turned away (its own limit or its parent's)."""

    @property
    def remaining(self) -> int | None:
        """Calls still grantable (``None``: no limit here or above). A parent's
        remainder bounds a sub-budget's."""
        own = None if self.limit is None else self.limit - self.used
        above = None if self.parent is None else self.parent.remaining
        if own is None:
            return above
        return own if above is None else min(own, above)

    def capped(self, limit: int | None, *, name: str = "the phase's") -> CallBudget:
        """A sub-budget for one phase: at most ``limit`` calls (``None``: no cap of
        its own), each also drawn from this one."""
        return CallBudget(limit, name=name, parent=self)

    @property
    def root(self) -> CallBudget:
        return self if self.parent is None else self.parent.root

    def seconds_left(self) -> float | None:
        """Seconds of model time the run has left (None: no time budget)."""
        root = self.root
        return None if root.seconds is None else max(root.seconds - root.seconds_used, 0.0)

    def try_time(self) -> str | None:
        """None while model time is left, else why a call may not be made."""
        left = self.seconds_left()
        if left is None or left > 0:
            return None
        root = self.root
        root.time_refused += 1
        return f"the run's budget of {root.seconds:g} model seconds is spent"

    def spend_seconds(self, seconds: float) -> None:
        """Count ``seconds`` spent in one call against the run's time budget."""
        root = self.root
        root.seconds_used += max(seconds, 0.0)

    def take(self) -> bool:
        """Grant one call, or refuse it (and count the refusal)."""
        return self.try_take() is None

    def try_take(self) -> str | None:
        """Grant one call (``None``), or say why not. A sub-budget's own cap is
        checked first, so a phase at its cap never spends the run's allowance."""
        if self.limit is not None and self.used >= self.limit:
            self.refused += 1
            return f"{self.name} budget of {self.limit} model calls is spent"
        if self.parent is not None:
            above = self.parent.try_take()
            if above is not None:
                self.refused += 1
                return above
        self.used += 1
        return None

    def counts(self) -> dict[str, int | None]:
        """``calls_used``, ``calls_refused`` and ``call_limit``, for a phase's counts."""
        return {"calls_used": self.used, "calls_refused": self.refused,
                "call_limit": self.limit}

    def timer_now(self) -> float:
        return self.root.timer()


@dataclass(frozen=True)
class BudgetedModel:
    """A ``LanguageModel`` that asks ``budget`` before every call, and answers
    ``BudgetExhausted`` without calling ``model`` when it is refused."""

    model: LanguageModel
    budget: CallBudget

    @property
    def model_id(self) -> str:
        return self.model.model_id

    def complete_json(self, request: ModelRequest) -> IOResult[Mapping[str, object], ModelError]:
        refusal = self.budget.try_time() or self.budget.try_take()
        if refusal is not None:
            return IOFailure(BudgetExhausted(refusal))
        left = self.budget.seconds_left()
        if left is not None:
            limit = left if request.time_limit is None else min(left, request.time_limit)
            request = replace(request, time_limit=limit)
        started = self.budget.timer_now()
        try:
            return self.model.complete_json(request)
        finally:
            self.budget.spend_seconds(self.budget.timer_now() - started)
