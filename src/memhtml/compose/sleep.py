"""The sleep run's wiring: ``SleepDeps`` from ``Services``, and the merge gate.

``memhtml.sleep`` takes its gate as a parameter and has no default, so the gate a merge
runs behind is chosen here, visibly: ``head_gate``, the head's own gate
(``gate_heads``) over the store's own records at the run's base and tip, lexical and
deterministic, needing no embedder, network or credential, passing a run that loses
no memory its base found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from returns.result import Failure, Result, Success

from memhtml.compose.run import perform
from memhtml.compose.services import Services, space_of
from memhtml.compose.settings import SettingsError
from memhtml.contracts.services import DocumentEmbedder
from memhtml.contracts.transcripts import TranscriptSource
from memhtml.domain.thresholds import VECTOR_COVERAGE_HARD_FLOOR
from memhtml.head import HeadVersion
from memhtml.sleep.deps import Gate, GateVerdict, PhaseProgress, SleepDeps


def head_gate(base: HeadVersion, tip: HeadVersion) -> GateVerdict:
    """``gate_heads`` over the two versions, as the verdict merge reads. A merge is
    refused for loss, not for rank drift: it passes when every memory the base found
    is still found (itself, where the run moved it, or its keeper), whatever the MRR
    did, since a recorded retitle or a new canonical moves ranks inside the top k
    without losing anything (docs/design.md, "The merge gate sees loss"). The MRR and
    the inversions ride along in the detail."""
    from memhtml.head import describe_head_gate_failure, gate_heads

    report = gate_heads(base, tip)
    passed = not report.unfound
    summary = (describe_head_gate_failure(report) if not passed else
               f"head gate: {report.probes} probes; every memory the base found is found "
               f"(MRR {report.mrr_before:.4f} -> {report.mrr:.4f})")
    return GateVerdict(passed, summary, {
        "mode": report.mode, "probes": report.probes, "k": report.k,
        "mrr_before": report.mrr_before, "mrr": report.mrr, "floor": report.floor,
        "inversions_before": report.inversions_before,
        "inversions": len(report.inversions), "added": report.added,
        "removed": report.removed, "unfound": list(report.unfound),
        "followed": report.followed, "forgotten": report.forgotten,
    }, tuple(f"{path}: the base found it; neither it nor a memory standing for it is "
             f"in the top {report.k} of its own title or claim now"
             for path in report.unfound))


def coverage_floor(text: str) -> Result[float, SettingsError]:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (VECTOR_COVERAGE_HARD_FLOOR <= value <= 1.0):
        return Failure(SettingsError(
            f"vector_coverage_floor must be a number from {VECTOR_COVERAGE_HARD_FLOOR} to 1, "
            f"not {text!r}"))
    return Success(value)


def grace_days(text: str) -> Result[float, SettingsError]:
    """The ``retention_grace_days`` setting as days: a finite number, 0 or more.

    Refused otherwise, never replaced by the default: the value decides what a run may
    archive, and a typo read as "no grace" would archive every young memory."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0.0):
        return Failure(SettingsError(
            f"retention_grace_days must be a number of days, 0 or more, not {text!r}"))
    return Success(value)


def archive_share(text: str) -> Result[float, SettingsError]:
    """The ``sleep_archive_share`` setting as a share in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        return Failure(SettingsError(
            f"sleep_archive_share must be a number from 0 to 1 (0.1 is a tenth of the live "
            f"memories), not {text!r}"))
    return Success(value)


def transcripts_source(value: str | None) -> Result[TranscriptSource | None, SettingsError]:
    """The transcripts directory the ``transcripts_dir`` setting names (None: unset).

    ``~`` is expanded; a relative path is refused rather than resolved, because a sleep
    run is started from wherever its scheduler stands, and a directory that changes
    with the caller's working directory would send different files each time. The
    directory need not exist yet: a missing one is a warning of the run's, not a
    refusal, since a night must not fail because a directory moved."""
    from memhtml.adapters.transcripts import DirectoryTranscripts

    if value is None or not value.strip():
        return Success(None)
    try:
        root = Path(value).expanduser()
    except RuntimeError as exc:  # ~ or ~user with no home to expand to
        return Failure(SettingsError(f"transcripts_dir {value!r}: {exc}"))
    if not root.is_absolute():
        return Failure(SettingsError(
            f"transcripts_dir must be an absolute path (or start with ~), not {value!r}"))
    return Success(DirectoryTranscripts(root))


def _embedder(services: Services) -> tuple[DocumentEmbedder | None, str | None]:
    """The embedder a run uses, its width known, or why it cannot be used."""
    match services.embedder:
        case Failure(error):
            return None, error.reason
        case Success(None):
            return None, None
        case Success(embedder):
            match perform(space_of(embedder, resolve=True)):
                case Success(_):
                    return embedder, None
                case Failure(error):
                    return None, error.reason
    return None, "the embedder could not be built"


def _model_notes(services: Services) -> Callable[[], tuple[str, ...]] | None:
    """The configured model's notes on its endpoint, when it keeps any."""
    from memhtml.adapters.llm import HttpLanguageModel

    model = services.language_model
    return model.notes if isinstance(model, HttpLanguageModel) else None


def sleep_deps(services: Services, gate: Gate, progress: PhaseProgress | None = None
               ) -> Result[SleepDeps, SettingsError]:
    """The run's dependencies over these services and the gate the caller picked; a
    store with no state plane, a floor, grace period or archive share that is not a
    number in its range, or a relative ``transcripts_dir`` is refused."""
    state = services.state
    if state is None:
        return Failure(SettingsError("this store has no state plane (.git/memhtml/state.db); "
                                     "a sleep run needs one"))
    if services.language_model_error is not None:
        # A model setting that cannot be used must not quietly become a run without one.
        return Failure(services.language_model_error)
    embedder, problem = _embedder(services)

    def built(floor: float, grace: float, share: float,
              transcripts: TranscriptSource | None) -> SleepDeps:
        deps = SleepDeps(
            git=services.git, clock=services.clock, author=services.agent, state=state,
            gate=gate, main=services.settings.branch, embedder=embedder,
            embedder_name=services.embedder_name, embedder_problem=problem,
            model=services.language_model, model_notes=_model_notes(services),
            transcripts=transcripts,
            vectors=services.vectors, coverage_floor=floor,
            retention_grace_days=grace,
            archive_share=share,
            snapshots=services.snapshots(), worktree=services.worktree,
            git_dir=services.git_dir, journals=services.journals)
        return deps if progress is None else replace(deps, progress=progress)

    settings = services.settings
    return coverage_floor(settings.vector_coverage_floor).bind(
        lambda floor: grace_days(settings.retention_grace_days).bind(
            lambda grace: archive_share(settings.sleep_archive_share).bind(
                lambda share: transcripts_source(settings.transcripts_dir).map(
                    lambda transcripts: built(floor, grace, share, transcripts)))))

