"""Placeholder until the phase is written: it says so and writes nothing."""

from __future__ import annotations

from returns.io import IOResult

from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases.not_built import not_built


def placement_triage(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    return not_built(env)
