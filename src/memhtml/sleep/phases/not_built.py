"""The body of a phase that is not written yet: it says so and writes nothing."""

from __future__ import annotations

from returns.io import IOResult, IOSuccess

from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult

NOT_BUILT = "not built"


def not_built(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """No counts, no commit, no mark: a later part of the sleep work fills it in."""
    return IOSuccess(PhaseResult(status="not-built", reason=NOT_BUILT))
