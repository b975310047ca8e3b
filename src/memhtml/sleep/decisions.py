"""Decision records: why a run changed each file it changed, with the figures behind it.

Every phase that archives, folds, merges, moves, rewrites or creates a file says so as
a ``Decision``: the phase, what it did (``action``), the rule that decided it (a stable
name, ``RULES`` says it in words), the file (and where it went, and the files it was
decided against), and the figures the rule read, as a small flat mapping of names to
numbers or words (a retention score with its eight signals and band; a cosine and the
veto predicate that fired; the model answer's batch and key). A person reading
``sleep review`` or the report sees for each change what was decided and on what
evidence, and a gate can tell a change some phase decided from one nobody did.

**Where they live.** The runner appends each commit's decisions, one JSON line each,
to ``.memhtml/sleep/<run-id>.<phase>.decisions.jsonl`` in that very commit (a file per
phase, so a person's revert of one phase's commit takes its records with it; the ledger's way:
appended, deduplicated by the rendered line), so a change and its reason land together
or not at all, and a resumed run writes the file the uninterrupted one would. A line
does not name its commit (it is inside it); a reader attributes each line to the run
commit that added it (``run_decisions``), and a line a commit that is not the run's
own added (a hand commit on the branch), or one naming another phase than its commit's,
is no decision of the run's and is left out, counted.

The file is the run's record, read only as a blob of the run's commits, never as state:
a line that does not parse (not JSON, a field of the wrong type, a phase or action
outside the vocabulary, past the size bounds) is counted and skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import GitError
from memhtml.contracts.services import Repository, TreeEntry
from memhtml.sleep.contract import SLEEP_PHASES, SleepPhase, decisions_path
from memhtml.sleep.ledger import append_lines

if TYPE_CHECKING:
    from memhtml.domain.retention import RetentionScore

DecisionAction: TypeAlias = Literal[
    "archived", "folded", "merged", "moved", "rewritten", "created",
]
"""What a decision did to its file: ``archived`` (moved under ``archive/`` because it
scored out or lapsed), ``folded`` (archived as a copy of a keeper), ``merged`` (archived
into a canonical that absorbs it), ``moved`` (re-filed to another live path),
``rewritten`` (its bytes changed in place: a link, a name, a date), ``created`` (a
file the run made: a task, a canonical, an arc, a distilled memory)."""
DECISION_ACTIONS: Final[tuple[DecisionAction, ...]] = get_args(DecisionAction)

FigureValue: TypeAlias = int | float | str | bool | None
Figures: TypeAlias = Mapping[str, FigureValue]
"""A decision's figures: flat, one name to one number or word, so a figure reads the same
in the JSON, the review's text and the report page."""

MAX_LINE_BYTES: Final = 16_384
"""A decision line past this is not read (a record, not a document)."""
MAX_FIGURES: Final = 48
MAX_TEXT: Final = 400
"""A string figure, a rule, is cut at this many characters when written and refused
past it when read."""
MAX_PATH: Final = 4_096
MAX_RELATED: Final = 16

RULES: Final[Mapping[str, str]] = MappingProxyType({
    # dedup-merge
    "content-hash-twin": "the same article (content hash): one memory written twice",
    "frame-key-twin": "the same claim in the same words (frame key)",
    "near-duplicate-cosine": "cosine above the merge floor and no veto fired",
    "model-group": "the language model grouped them as one memory; no veto fired",
    "keeper-supersedes": "kept the older copy; it now links supersedes to the folded one",
    "merge-vetoed": "a fold the divergence veto refused, handed to a person as a task",
    # retention-triage, reprieve
    "evict-band": "retention score in the evict band",
    "reprieve-extended": "its validity lapsed and its reprieve score earned more time",
    "reprieve-lapsed": "its validity lapsed and its reprieve did not earn more time",
    # compress
    "canonical-written": "the language model wrote one canonical for these members",
    "absorbed-by-canonical": "the canonical carries all of its facts (model answer)",
    "episode-part-of": "a dated episode summarised by a canonical: kept, linked part_of",
    # entity-resolution, person-links, edge-typing
    "entity-names-merged": "entity names that are one subject, rewritten to the survivor",
    "person-file": "a person named by memories and no person file yet",
    "about-person": "linked about_person to the person file of a person it names",
    "typed-edge": "the language model typed the pair's relation above the floor",
    "contradiction-corroborated": "a contradiction two separate readings found",
    # task minting, arcs, traces
    "detected-task": "a finding handed to a person as a task",
    "entity-review": "two names the rules could not settle, handed to a person as a task",
    "contradiction-waiting": "a contradiction seen fewer times than promotion asks, "
                             "handed to a person as a task",
    "session-commitment": "a commitment an agent session recorded and did not show done",
    "open-commitment": "a commitment a memory records that nothing shows done",
    "no-longer-detected": "its finding was not found again on a night that judged all",
    "arc-written": "the language model wrote an arc over these memories",
    "part-of-arc": "a memory an arc covers, linked part_of it",
    "distilled-from-session": "a memory distilled from an agent session's transcript",
    # model text refused (sleep.grounded), a ledger record rather than a change
    "text-blank": "model text left blank",
    "text-key-or-number": "model text that is a key or a number, not words",
    "text-fragment": "model text that is a fragment, not a sentence",
    "text-not-drawn": "model text not drawn from the memories it stands for",
    "member-not-carried": "an absorbed member's claim the canonical does not carry",
    "session-yielded-nothing": "a session whose answer kept nothing and did not say "
                               "nothing was worth keeping",
    "session-unread": "a session that yielded nothing on several nights, handed to a "
                      "person as a task",
    # placement, integrity
    "placed": "the language model placed an inbox memory in a topic directory",
    "href-to-archive": "a link into a memory now archived, pointed at its archive path",
    "links-followed": "its links into a file the phase moved now point where it went",
    "href-dropped": "a link to a file that is gone, removed",
})
"""Every rule a phase records, in words. A rule missing here reads as its own name."""


@dataclass(frozen=True)
class Decision:
    """One decision of one phase about one file (see the module docstring)."""

    phase: SleepPhase
    action: DecisionAction
    path: str
    """The file decided on, as the base held it (a created file: its new path)."""
    rule: str
    figures: Figures = field(default_factory=lambda: MappingProxyType({}))
    to: str | None = None
    """Where the file went (its archive path, its new place), when it left its path."""
    related: tuple[str, ...] = ()
    """The files it was decided against (the keeper it folded into, the canonical that
    absorbs it, the pair it was vetoed with, the members a canonical absorbs)."""
    commit: str | None = None
    """The run commit that made the change, filled when read back from the branch."""

    @staticmethod
    def of(phase: SleepPhase, action: DecisionAction, path: str, rule: str, *,
           to: str | None = None, related: Iterable[str] = (),
           figures: Mapping[str, FigureValue] | None = None) -> Decision:
        """A decision with its figures written as they will read back: floats to six
        places (a non-finite one as null), long words cut."""
        shown = {str(k): _figure(v) for k, v in sorted((figures or {}).items())}
        return Decision(phase, action, path, _cut(rule), MappingProxyType(shown), to,
                        tuple(related))

    @property
    def words(self) -> str:
        """The rule in plain words."""
        return RULES.get(self.rule, self.rule)

    def line(self) -> str:
        """The file's line: one JSON object, keys sorted, no commit (see the module)."""
        data: dict[str, object] = {"phase": self.phase, "action": self.action,
                                   "path": self.path, "rule": self.rule,
                                   "figures": dict(self.figures)}
        if self.to is not None:
            data["to"] = self.to
        if self.related:
            data["related"] = list(self.related)
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)

    def figures_text(self) -> str:
        """The figures as ``name=value`` words, in name order."""
        return " ".join(f"{k}={_shown(v)}" for k, v in self.figures.items())


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "..."


def _figure(value: FigureValue) -> FigureValue:
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    if isinstance(value, str):
        return _cut(value)
    return value


def _shown(value: FigureValue) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.1f}"
    return str(value)


# -- figures a rule reads -----------------------------------------------------------------


def retention_figures(scored: RetentionScore, **more: FigureValue) -> dict[str, FigureValue]:
    """A retention score's figures: the composite, its band, and each of the eight
    signals under its own name (``domain.retention.SIGNAL_NAMES``)."""
    from memhtml.domain.retention import SIGNAL_NAMES

    out: dict[str, FigureValue] = {"score": scored.score, "band": scored.band}
    out.update({name: getattr(scored.signals, name) for name in SIGNAL_NAMES})
    out.update(more)
    return out


def model_figures(batch: int | None, key: str | None, **more: FigureValue
                  ) -> dict[str, FigureValue]:
    """Where a model's answer named a member: the batch (1-based, in the phase's call
    order) and the key the member was offered under in it."""
    return {"batch": batch, "key": key, **more}


def added_links(base: Mapping[str, tuple[tuple[str, str], ...]],
                after: Mapping[str, tuple[tuple[str, str], ...]]
                ) -> tuple[tuple[str, str, str], ...]:
    """(path, rel, href) of every link a path holds in ``after`` and did not in
    ``base`` (each path's links as (rel, href) pairs), sorted: what a phase that writes
    links decided, read off its plan rather than threaded through its steps."""
    out: set[tuple[str, str, str]] = set()
    for path, links in after.items():
        before = set(base.get(path, ()))
        out.update((path, rel, href) for rel, href in links if (rel, href) not in before)
    return tuple(sorted(out))


# -- the file ----------------------------------------------------------------------------


def _text(value: object, limit: int) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def parse_decision(line: str) -> Decision | None:
    """The decision a line holds, or None when it is not one (module docstring)."""
    if len(line.encode("utf-8", "replace")) > MAX_LINE_BYTES:
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    phase, action = data.get("phase"), data.get("action")
    if phase not in SLEEP_PHASES or action not in DECISION_ACTIONS:
        return None
    path, rule = _text(data.get("path"), MAX_PATH), _text(data.get("rule"), MAX_TEXT)
    figures, related, to = data.get("figures", {}), data.get("related", []), data.get("to")
    if path is None or rule is None or not isinstance(figures, dict) \
            or len(figures) > MAX_FIGURES or not isinstance(related, list) \
            or len(related) > MAX_RELATED:
        return None
    if to is not None and _text(to, MAX_PATH) is None:
        return None
    kept: dict[str, FigureValue] = {}
    for name, value in figures.items():
        if len(name) > MAX_TEXT or not _plain_figure(value):
            return None
        kept[name] = value
    others = tuple(r for r in related if _text(r, MAX_PATH) is not None)
    if len(others) != len(related):
        return None
    chosen_phase: SleepPhase = phase
    chosen_action: DecisionAction = action
    return Decision(chosen_phase, chosen_action, path, rule,
                    MappingProxyType(dict(sorted(kept.items()))), to, others)


def _plain_figure(value: object) -> bool:
    if isinstance(value, str):
        return len(value) <= MAX_TEXT
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int))


def _lines(data: bytes | None) -> list[str]:
    if not data:
        return []
    return [raw.decode("utf-8", "replace") for raw in data.split(b"\n") if raw.strip()]


def append_decisions(data: bytes | None, decisions: Iterable[Decision]
                     ) -> tuple[bytes | None, int]:
    """The file with each decision's line appended unless the same line is there
    already; and how many were added (the ledger's rule, ``ledger.append_lines``)."""
    return append_lines(data, (decision.line() for decision in decisions))


@dataclass(frozen=True)
class RunDecisions:
    """A run's decisions as its branch records them, each with the commit that made
    it, in commit order; and the lines left out (unparsable, or not the run's own)."""

    decisions: tuple[Decision, ...] = ()
    unread: int = 0

    def about(self, path: str) -> tuple[Decision, ...]:
        """The decisions naming ``path`` as their file or where it went."""
        return tuple(d for d in self.decisions if path in (d.path, d.to))


@dataclass(frozen=True, slots=True)
class DecidingCommit:
    """What attribution needs of one commit between the base and the tip: its sha and
    the phase it is the run's commit of (None: not a commit of the run)."""

    sha: str
    phase: SleepPhase | None
    parent: str | None = None
    """Its first parent (what a sweep commit's own changes are read against)."""


def run_decisions(git: Repository, run_id: str, commits: Sequence[DecidingCommit]
                  ) -> IOResult[RunDecisions, GitError]:
    """The decisions the run's commits (oldest first, as ``commits_between`` lists
    them) added to their phases' decision files, each attributed to the commit that
    added it. A commit that is not the run's own adds no decision."""
    held: dict[str, tuple[str | None, frozenset[str]]] = {}

    def step(so_far: IOResult[RunDecisions, GitError], commit: DecidingCommit
             ) -> IOResult[RunDecisions, GitError]:
        if commit.phase is None:
            return so_far
        path = decisions_path(run_id, commit.phase)

        def at(found: RunDecisions) -> IOResult[RunDecisions, GitError]:
            blob, seen = held.get(path, (None, frozenset()))

            def keep(state: tuple[RunDecisions, str | None, frozenset[str]]
                     ) -> RunDecisions:
                held[path] = (state[1], state[2])
                return state[0]

            return _at(git, path, commit, found, blob, seen).map(keep)

        return so_far.bind(at)

    start: IOResult[RunDecisions, GitError] = IOSuccess(RunDecisions())
    return reduce(step, commits, start)


def _at(git: Repository, path: str, commit: DecidingCommit, found: RunDecisions,
        blob: str | None, seen: frozenset[str]
        ) -> IOResult[tuple[RunDecisions, str | None, frozenset[str]], GitError]:
    entries: IOResult[tuple[TreeEntry, ...], GitError] = git.entries_at(commit.sha, [path])

    def read(held: tuple[TreeEntry, ...]
             ) -> IOResult[tuple[RunDecisions, str | None, frozenset[str]], GitError]:
        now = held[0].blob_id if held and not held[0].is_symlink else None
        if now == blob:
            return IOSuccess((found, blob, seen))
        if now is None:
            return IOSuccess((found, None, frozenset()))
        blobs: IOResult[Mapping[str, bytes], GitError] = git.read_blobs([now])
        return blobs.map(lambda got: _added(found, commit, now, seen, got.get(now)))

    return entries.bind(read)


def _added(found: RunDecisions, commit: DecidingCommit, blob: str, seen: frozenset[str],
           data: bytes | None) -> tuple[RunDecisions, str | None, frozenset[str]]:
    lines = _lines(data)
    fresh = [line for line in lines if line not in seen]
    kept: list[Decision] = []
    unread = 0
    for line in fresh:
        decision = parse_decision(line)
        if decision is None or commit.phase is None or decision.phase != commit.phase:
            unread += 1
            continue
        kept.append(replace(decision, commit=commit.sha))
    return (RunDecisions((*found.decisions, *kept), found.unread + unread), blob,
            seen | frozenset(lines))
