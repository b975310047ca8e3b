"""Every threshold and cap the curation run reads, in one table.

The values are the measured ones the sleep design settled on. Each constant sits
here rather than beside its one reader so that a change to a threshold is a
change to this file, reviewable as such, and so the phases and the pure scoring
code can never disagree about a number.
"""

from __future__ import annotations

from typing import Final

# --- dedup-merge ---------------------------------------------------------------

NEAR_DUPLICATE_THRESHOLD: Final = 0.92
"""Cosine a mined pair must strictly exceed to be proposed as one memory written twice."""

MAX_MERGE_PAIRS: Final = 100
"""Merges committed per run, so a flood of near-duplicates cannot fan one commit out."""

DEDUP_RECALL_FLOOR: Final = 0.86
"""Cosine at which candidates are mined for the model, which settles the 0.86-0.92 band."""

DEDUP_COMPONENT_CAP: Final = 8
"""Largest connected component of candidates offered to the model as one question."""

DEDUP_COMPONENTS_PER_NIGHT: Final = 300
DEDUP_MEMBERS_PER_CALL: Final = 40

# --- entity-resolution ---------------------------------------------------------

AUTO_MERGE_THRESHOLD: Final = 0.85
"""Character overlap at or above which two names merge with no model call."""

REVIEW_THRESHOLD: Final = 0.75
"""Character overlap at or above which (below auto-merge) a pair is counted for review."""

ENTITY_CONFIDENCE_FLOOR: Final = 0.7
ENTITY_PROMOTION_DETECTIONS: Final = 2
ENTITY_BATCH_SIZE: Final = 500

# --- relationship-mining and edge-typing ---------------------------------------

MINING_COSINE: Final = 0.85
MINING_K: Final = 5
MINING_SAMPLE: Final = 2000
EDGE_TYPING_COSINE: Final = 0.80
EDGE_TYPING_K: Final = 5
EDGE_TYPING_CANDIDATES: Final = 200
EDGE_TYPING_DETECTIONS: Final = 2
EDGE_TYPING_PAIRS_PER_CALL: Final = 30
EDGE_PROMOTIONS_PER_NIGHT: Final = 50

EDGE_CONFIDENCE_FLOOR: Final = 0.7
"""A typed edge the model proposes is written only at or above this confidence; below
it (or ``none``) the pair stays a mined ``relates_to``. ``contradicts`` above it bumps
its counter and lands at ``EDGE_TYPING_DETECTIONS``."""

# --- confidence-decay ----------------------------------------------------------

CONFIDENCE_COMMIT_DELTA: Final = 0.005
"""Smallest confidence change worth rewriting a file for."""

# --- compress and task-detection ------------------------------------------------

COMPRESS_BATCH: Final = 8
COMPRESS_CANDIDATES: Final = 2000
TASK_DETECTION_SCAN: Final = 200
TASK_DETECTION_BATCH: Final = 20
TASK_DETECTION_CONFIDENCE: Final = 0.7
DETECTED_TASKS_PER_NIGHT: Final = 10

# --- retention-triage and reprieve ---------------------------------------------

KEEP_THRESHOLD: Final = 0.7
"""A composite strictly above this keeps; exactly 0.7 falls to the compress band."""

EVICT_THRESHOLD: Final = 0.3
"""A composite at or below this evicts; exactly 0.3 is evicted."""

DEFAULT_CONFIDENCE: Final = 1.0
"""The confidence of a file that states none (the format's files table owns this
default; the parser substitutes nothing, so an omission stays readable as one)."""
REPRIEVE_FLOOR: Final = 0.5
REPRIEVE_DAYS: Final = 14
MAX_REPRIEVES: Final = 3

# --- preflight: the vector plane -----------------------------------------------

VECTOR_COVERAGE_HARD_FLOOR: Final = 0.5
"""Below this share of embeddable active memories holding a vector, preflight refuses
the run: every cosine pass would compare a sample of the corpus against itself and
call the rest unique, a corrupt night behind a green report."""

VECTOR_COVERAGE_FLOOR: Final = 0.95
"""Below this (and at or above the hard floor) preflight warns, records the coverage
in its counts and lets the run go on. The default of ``vector_coverage_floor``."""

COMMITMENT_FLOOR: Final = 0.7
"""Confidence below which a commitment the consolidator extracted is not written as a
task; it is kept whole in the run's ledger as ``commitment-below-floor`` instead."""
