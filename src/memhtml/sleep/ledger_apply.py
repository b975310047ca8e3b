"""A merged run's ledger performed on the state plane, mark by mark.

``sleep merge`` moves main first and applies the ledger after (``sleep.merge``);
this is the applying: a ``session-consolidated`` mark marks its session
consolidated, a promotion mark is checked against the counter the plane holds, and a
record kind applies as nothing. A failure is counted and reported, never a reason
to stop the rest or fail the merge. It is its own module because it writes only to
the state plane, which outlives every branch, while the merge moves refs and the
checkout; it reads nothing of the merge but the ledger it is handed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.services import CounterKey, CounterKind
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.ledger import RECORD_KINDS, Ledger, PendingMark


@dataclass(frozen=True, slots=True)
class _Applied:
    applied: int
    failed: str | None


def apply_ledger(deps: SleepDeps, run_id: str, ledger: Ledger) -> IOResult[_Applied, SleepError]:
    """Perform each mark on the state plane; a failure is counted and reported, and
    never stops the rest or fails the merge."""
    state = deps.state
    at = deps.clock.now()
    sessions = [str(m.get("session")) for m in ledger.of_kind("session-consolidated")]
    problems: list[str] = []

    def consolidated() -> IOResult[int, SleepError]:
        if not sessions:
            return IOSuccess(0)
        marked: IOResult[tuple[str, ...], StateError] = state.mark_consolidated(
            sessions, run_id, at)
        return marked.map(lambda _: len(sessions)).lash(
            lambda error: _noted(problems, f"consolidation marks: {error.reason}"))

    def promoted() -> IOResult[int, SleepError]:
        def then(total: IOResult[int, SleepError], mark: PendingMark) -> IOResult[int, SleepError]:
            kind: CounterKind = "edge" if mark.kind == "edge-promoted" else "entity"
            key, wanted = str(mark.get("key")), mark.get("detections")

            def judged(have: int) -> int:
                if isinstance(wanted, int) and have >= wanted:
                    return 1
                problems.append(f"{kind} counter {key!r} holds {have} detection(s); the run "
                                f"promoted at {wanted}")
                return 0

            held: IOResult[int, StateError] = state.detections(CounterKey(kind, key))
            one: IOResult[int, SleepError] = held.map(judged).lash(
                lambda error: _noted(problems, f"counter read: {error.reason}"))
            return total.bind(lambda so_far: one.map(lambda n: so_far + n))

        marks = (*ledger.of_kind("edge-promoted"), *ledger.of_kind("entity-promoted"))
        start: IOResult[int, SleepError] = IOSuccess(0)
        return reduce(then, marks, start)

    below = sum(len(ledger.of_kind(kind)) for kind in RECORD_KINDS)
    return consolidated().bind(lambda done: promoted().map(
        lambda more: _Applied(done + more + below, "; ".join(problems) or None)))


def _noted(problems: list[str], problem: str) -> IOResult[int, SleepError]:
    problems.append(problem)
    return IOSuccess(0)
