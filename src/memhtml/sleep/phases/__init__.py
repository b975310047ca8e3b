"""The phase bodies: one function per phase name, total over ``SleepPhase``.

``body_for`` matches over every name with ``assert_never`` in its last arm, so a name
added to ``SleepPhase`` without a body is a type error, not a run that silently skips
it; ``PHASE_BODIES`` is the same mapping as a value (a test checks it covers
``SLEEP_PHASES``). It lives here rather than in ``contract`` because the bodies import
the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import assert_never

from memhtml.sleep.contract import SLEEP_PHASES, SleepPhase
from memhtml.sleep.phase import PhaseBody
from memhtml.sleep.phases.arc_synthesis import arc_synthesis
from memhtml.sleep.phases.compress import compress
from memhtml.sleep.phases.confidence_decay import confidence_decay
from memhtml.sleep.phases.dedup_merge import dedup_merge
from memhtml.sleep.phases.edge_typing import edge_typing
from memhtml.sleep.phases.entity_resolution import entity_resolution
from memhtml.sleep.phases.integrity import integrity
from memhtml.sleep.phases.person_links import person_links
from memhtml.sleep.phases.placement_triage import placement_triage
from memhtml.sleep.phases.preflight import preflight
from memhtml.sleep.phases.relationship_mining import relationship_mining
from memhtml.sleep.phases.report import report
from memhtml.sleep.phases.reprieve import reprieve
from memhtml.sleep.phases.retention_triage import retention_triage
from memhtml.sleep.phases.state_export import state_export
from memhtml.sleep.phases.task_detection import task_detection
from memhtml.sleep.phases.trace_consolidation import trace_consolidation


def body_for(phase: SleepPhase) -> PhaseBody:
    """The body that runs ``phase``."""
    match phase:
        case "preflight":
            return preflight
        case "dedup-merge":
            return dedup_merge
        case "entity-resolution":
            return entity_resolution
        case "person-links":
            return person_links
        case "relationship-mining":
            return relationship_mining
        case "edge-typing":
            return edge_typing
        case "confidence-decay":
            return confidence_decay
        case "arc-synthesis":
            return arc_synthesis
        case "retention-triage":
            return retention_triage
        case "compress":
            return compress
        case "reprieve":
            return reprieve
        case "trace-consolidation":
            return trace_consolidation
        case "task-detection":
            return task_detection
        case "placement-triage":
            return placement_triage
        case "integrity":
            return integrity
        case "state-export":
            return state_export
        case "report":
            return report
        case _ as never:
            assert_never(never)


PHASE_BODIES: Mapping[SleepPhase, PhaseBody] = MappingProxyType(
    {phase: body_for(phase) for phase in SLEEP_PHASES})
"""Every phase's body, in run order."""

__all__ = ["PHASE_BODIES", "body_for"]
