"""Every change of a run, next to the decision that made it; what no decision covers,
counted apart.

``sleep review`` and the run's report show the same reading of ``base..tip``, built
here from three things read off the branch: the paths the run changed, the run's
decisions (``sleep.decisions``), and the paths each sweep commit changed. Each changed
path falls in exactly one part:

- **generated**: a site page ``render_site`` owns (``store.site.is_generated_path``:
  listings, readable pages, the sitemap). Integrity regenerates them from the memories;
  they are counted, never listed among the memory changes a person reviews;
- **run records**: the run's own files under ``.memhtml/`` (report, ledger, decisions,
  the exported access log); listed, with no decision (they are the record, not a
  decision about a memory);
- **decided**: a path some decision names (as its file, or where its file went);
  listed with each decision's phase, rule, figures and commit;
- **swept**: a path only a sweep phase (``SWEEP_PHASES``: confidence-decay, which
  lowers every unreinforced confidence) changed; counted per phase, since a sweep
  decides nothing about one file in particular;
- **unexplained**: anything else: a change no phase recorded as its decision (a hand
  commit on the branch, or a phase that forgot to say). Listed, so it cannot pass
  unseen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from types import MappingProxyType
from typing import Final

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import GitError
from memhtml.contracts.services import Repository
from memhtml.sleep.contract import SLEEP_PHASES, SWEEP_PHASES, SleepPhase
from memhtml.sleep.decisions import DecidingCommit, Decision, RunDecisions, run_decisions
from memhtml.store.site import is_generated_path

RUN_RECORDS: Final = ".memhtml/"
"""Where a run's own files live (report, ledger, decisions, the access export)."""


@dataclass(frozen=True)
class Explanation:
    """``base..tip`` read against the run's decisions (module docstring)."""

    decided: tuple[tuple[str, tuple[Decision, ...]], ...]
    """Each decided path (as ``changed`` names it, an archive or move destination folded
    into its origin) with its decisions, sorted by path."""
    records: tuple[str, ...]
    generated: tuple[str, ...]
    swept: Mapping[SleepPhase, int] = field(default_factory=lambda: MappingProxyType({}))
    unexplained: tuple[str, ...] = ()
    unread: int = 0
    """Decision lines left out (unparsable, or not added by the run's own commit)."""

    @property
    def decisions(self) -> int:
        return sum(len(found) for _, found in self.decided)


def is_run_record(path: str) -> bool:
    return path.startswith(RUN_RECORDS)


def explain(changed: Iterable[str], decisions: RunDecisions,
            swept: Mapping[SleepPhase, Iterable[str]] | None = None) -> Explanation:
    """Each changed path in its part. ``swept`` holds, per sweep phase, the paths its
    commits changed."""
    paths = sorted(set(changed))
    named: dict[str, list[Decision]] = {}
    destinations: set[str] = set()
    for decision in decisions.decisions:
        named.setdefault(decision.path, []).append(decision)
        if decision.to is not None and decision.to != decision.path:
            destinations.add(decision.to)
            named.setdefault(decision.to, [])
    by_sweep = {phase: frozenset(found) for phase, found in (swept or {}).items()}
    generated: list[str] = []
    records: list[str] = []
    decided: list[tuple[str, tuple[Decision, ...]]] = []
    unexplained: list[str] = []
    counted: dict[SleepPhase, int] = {}
    held = set(paths)
    for path in paths:
        if is_generated_path(path):
            generated.append(path)
        elif is_run_record(path):
            records.append(path)
        elif named.get(path):
            decided.append((path, tuple(named[path])))
        elif path in destinations and _origin_listed(path, decisions.decisions, held):
            continue
        else:
            sweep = next((p for p in SLEEP_PHASES if path in by_sweep.get(p, ())), None)
            if sweep is None:
                unexplained.append(path)
            else:
                counted[sweep] = counted.get(sweep, 0) + 1
    return Explanation(tuple(decided), tuple(records), tuple(generated),
                       MappingProxyType(counted), tuple(unexplained), decisions.unread)


def _origin_listed(path: str, decisions: Sequence[Decision], held: set[str]) -> bool:
    """Whether a decision that sent its file to ``path`` is listed under that file: a
    destination is shown on its origin's row, not as a row of its own."""
    return any(d.to == path and d.path in held for d in decisions)


def moves_of(decisions: Iterable[Decision]) -> Mapping[str, str]:
    """Origin -> destination of every ``moved`` decision (a re-filed memory)."""
    return MappingProxyType({d.path: d.to for d in decisions
                             if d.action == "moved" and d.to is not None})


def read_explanation(git: Repository, run_id: str, base: str, tip: str,
                     commits: Sequence[DecidingCommit]) -> IOResult[Explanation, GitError]:
    """``explain`` over what the branch holds: the paths ``base..tip`` changed, the
    run's decisions as its ``commits`` (oldest first) added them, and each sweep
    commit's own changes (against its first parent)."""
    if base == tip:
        return IOSuccess(explain((), RunDecisions()))
    changed: IOResult[tuple[str, ...], GitError] = git.changed_paths(base, tip)

    def sweep(so_far: IOResult[dict[SleepPhase, frozenset[str]], GitError],
              commit: DecidingCommit) -> IOResult[dict[SleepPhase, frozenset[str]], GitError]:
        phase, parent = commit.phase, commit.parent
        if phase is None or phase not in SWEEP_PHASES or parent is None:
            return so_far
        own: IOResult[tuple[str, ...], GitError] = git.changed_paths(parent, commit.sha)
        return so_far.bind(lambda found: own.map(lambda paths: {
            **found, phase: found.get(phase, frozenset()) | frozenset(paths)}))

    start: IOResult[dict[SleepPhase, frozenset[str]], GitError] = IOSuccess({})
    swept = reduce(sweep, commits, start)
    return changed.bind(lambda paths: run_decisions(git, run_id, commits).bind(
        lambda decided: swept.map(lambda by_sweep: explain(paths, decided, by_sweep))))
