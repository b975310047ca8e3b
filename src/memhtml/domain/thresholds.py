"""Every threshold and cap the curation run reads, in one table.

The values are the measured ones the sleep design settled on. Each constant sits
here rather than beside its one reader so that a change to a threshold is a
change to this file, reviewable as such, and so the phases and the pure scoring
code can never disagree about a number.
"""

from __future__ import annotations

from typing import Final

# --- the merge gate -------------------------------------------------------------

ARCHIVE_SHARE: Final = 0.10
"""The most of a base's live memories a run may archive with nothing standing for
them before merge refuses it (the ``sleep_archive_share`` store setting's default):
forgetting is what retention is for, a night that forgets a tenth of a store at once
is what a person must look at first."""

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

# --- arc-synthesis ----------------------------------------------------------------

ARC_MIN_MEMBERS: Final = 5
"""Members a community needs before it is offered: below this the links already say
what connects a handful of notes, and an arc would be a paraphrase of them."""
ARCS_PER_NIGHT: Final = 5
"""Arcs written a night at most (one writing call each)."""
ARC_MIN_COVERED: Final = 3
"""Members an arc must cover to be written: the graph's own community floor
(``domain.graph.MIN_COMMUNITY_SIZE``); an arc over two notes is a link."""
ARC_TRIAGE_BATCH: Final = 20
"""Communities a triage call judges."""
ARC_TRIAGE_CANDIDATES: Final = 3 * ARC_TRIAGE_BATCH
"""Candidates offered a night at most."""
ARC_WRITE_MEMBERS: Final = 40
"""Members a writing call shows at most (oldest first): the prompt's bound for a
sprawling community; the rest are not covered tonight."""

# --- trace-consolidation ------------------------------------------------------------

TRANSCRIPT_SETTLE_SECONDS: Final = 1800
"""A transcript is settled, and may be distilled, once it has not changed for this long
(or it is closed by its own last line): a session still being written would be read
half, and its watermark would then hide the rest."""
TRANSCRIPT_MAX_BYTES: Final = 2_000_000
"""A transcript larger than this is not read (counted ``too_large``): one session must
not be able to fill a prompt or the run's memory."""
TRACE_SESSIONS_PER_NIGHT: Final = 20
"""Sessions distilled a night at most, one call each; the rest wait, oldest first."""

# --- deep sleep and placement-triage ----------------------------------------------

LATERAL_COSINE: Final = 0.72
"""The floor of the grouping band: ``--deep`` mining adds pairs in
[``LATERAL_COSINE``, ``MINING_COSINE``) as ``laterally_related``, read only by the deep
phases' community grouping."""
ENTITY_HUB_CLAIMANTS: Final = 64
"""An entity claimed by more active memories than this is a hub (a project name, the
user), not a subject: deep compress does not group by it."""
DEEP_COMPRESS_PASSES: Final = 3
"""Compress passes a deep run makes at most, each only while the one before folded."""
PLACEMENT_CONFIDENCE_FLOOR: Final = 0.7
"""A placement the model proposes is made only at or above this confidence; below it
the memory stays in the inbox (``below_floor``)."""
PLACEMENT_NEW_TOPICS: Final = 5
"""New topic directories placement-triage may create a run; the rest of its answers
must name a directory that exists."""
PLACEMENT_CANDIDATES: Final = 400
"""Inbox memories offered a night at most, oldest first."""
PLACEMENT_BATCH: Final = 20
"""Inbox memories a placement call judges."""

# --- model-call caps, one per phase ------------------------------------------------
# Each phase's own guarantee: its input caps already bound a night below these, and
# ``--max-llm-calls`` is one budget over them all.

DEDUP_CALLS: Final = -(-DEDUP_COMPONENTS_PER_NIGHT * DEDUP_COMPONENT_CAP
                       // DEDUP_MEMBERS_PER_CALL)
"""A full night of components at the largest size, packed."""
ENTITY_CALLS: Final = 40
"""Forty shards of ``ENTITY_BATCH_SIZE`` names: more than a personal store holds."""
EDGE_TYPING_CALLS: Final = -(-EDGE_TYPING_CANDIDATES // EDGE_TYPING_PAIRS_PER_CALL)
"""Every candidate the night may offer, and no more."""
ARC_CALLS: Final = ARC_TRIAGE_CANDIDATES // ARC_TRIAGE_BATCH + ARCS_PER_NIGHT
"""Every triage call plus one writing call per arc."""
COMPRESS_CALLS: Final = COMPRESS_CANDIDATES // 2
"""Every batch holds at least two candidates, so the candidate cap bounds it."""
TASK_DETECTION_CALLS: Final = -(-TASK_DETECTION_SCAN // TASK_DETECTION_BATCH)
"""One per batch of a full scan."""
TRACE_CALLS: Final = TRACE_SESSIONS_PER_NIGHT
TRACE_BARREN_NIGHTS: Final = 3
"""Nights a transcript session may be answered with nothing kept (and no explicit
``nothing_to_keep``) before trace-consolidation stops asking and hands it to a person
as a task: a weak model's empty answer must not consume a session, nor may one
session be asked forever."""
"""One per session distilled."""
PLACEMENT_CALLS: Final = -(-PLACEMENT_CANDIDATES // PLACEMENT_BATCH)
"""One per batch of a full night's candidates."""

# --- retention-triage and reprieve ---------------------------------------------

KEEP_THRESHOLD: Final = 0.7
"""A composite strictly above this keeps; exactly 0.7 falls to the compress band."""

EVICT_THRESHOLD: Final = 0.3
"""A composite at or below this evicts; exactly 0.3 is evicted."""

RETENTION_GRACE_DAYS: Final = 30.0
"""Days from a memory's ``memhtml-created`` during which retention never archives it,
whatever its score. A memory written this month has had no time to be read, linked or
corroborated, and those are most of what the score weighs: on night one every fresh
procedure scored at the evict band's edge. The default of the store setting
``retention_grace_days``."""

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
