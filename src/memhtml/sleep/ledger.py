"""The pending-mark ledger: ``.memhtml/sleep/<run-id>.pending.jsonl`` on the run branch.

Some writes a phase earns cannot be made while it runs, because they land in this
clone's state plane, which outlives the branch: a consolidation watermark written
during a run that is then thrown away would leave a transcript behind a row saying it
was handled. So the phase records the write as one JSON line in a committed file on
its own branch, and ``merge`` performs it after main has moved. The file, not a table,
is the record for the same reason the trailers are the resume mechanism: a run's facts
are its commits.

Lines are appended and deduplicated by their rendered text, so a resume re-recording a
mark it already earned appends nothing. Each line is one JSON object with sorted keys
and a ``kind``:

- ``session-consolidated`` ``{"session"}``: a transcript session the run distilled;
  merge marks it consolidated.
- ``edge-promoted`` / ``entity-promoted`` ``{"key", "detections"}``: a corroborated
  promotion the run wrote. The counter itself is bumped at phase time (a discarded
  night still read the corpus); merge checks the plane holds at least that many
  detections, so a plane that lost the row reads as a shortfall. Optionally
  ``"since"`` (the base commit of the reading before) and ``"by"`` (the write, not a
  sleep run's, that made this reading independent of it: ``sleep.readings``), and for
  an entity merge ``"prompt"`` (the sha256 of the prompt the cluster was answered in),
  so a promotion says what it rests on.
- ``commitment-below-floor`` ``{"statement", "confidence", "session", "done"}``: a
  record, not a write: a commitment that scored below ``COMMITMENT_FLOOR``, kept so the
  floor's refusals can be reviewed. Merge applies it as nothing.
- ``compress-refused`` ``{"path", "rule", "detail"}``: a record, not a write: a memory
  compress would not fold whatever the model answered (an arc, a person's file,
  something another phase of the run made or decided on, one side of a pair the veto
  refuses or a person is asked about), with the rule that protected it and the
  particulars in plain words. Merge applies it as nothing.
- ``model-refused`` ``{"phase", "rule", "subject", "detail"}``: a record, not a write:
  model-written text a phase would not write (``sleep.grounded``: a key, a number or a
  fragment as a title, claim or paragraph, text not drawn from what it stands for, an
  absorbed member's claim the canonical does not carry), or a member a model grouped
  that ``sleep.protected`` keeps, or a session that yielded nothing. ``subject`` names
  what was refused (a canonical's members, an arc's community, a session), ``detail``
  says why in plain words; optional figures: ``overlap`` and ``floor`` (the shares the
  rule compared), ``part`` (the title, the claim, a paragraph, a member), ``batch``
  (1-based) and ``nights`` (a session's nights without a yield). Merge applies it as
  nothing.

Beside the marks the ledger carries the run's *decision records*: why a phase did what
it did to one file, with the figures it decided on, so a review or the report can say
"archived from the evict band: score 0.28 (recency 0.1, ...)" from what was committed
rather than by re-deriving it. They are lines like the marks (appended in the commit
that made the decision, deduplicated, resume-safe) but no write and no pending state:
``read_ledger`` keeps them apart (``Ledger.decisions``), so a merge neither applies nor
counts them.

- ``retention-archived`` ``{"path", "rule", "score", "band", "created_age_days",
  "grace_days", and one field per retention signal: "recency", "access_frequency",
  "confidence", "pagerank", "bridge_importance", "reinforcement", "importance",
  "contested_status"}``, and ``"arrived_age_days"`` when known: a memory
  retention-triage archived. ``rule`` is ``evict-band``; ``path`` the memory's path
  before the move; the signals are each in [0, 1], rounded to four places, and
  ``score`` is their weighted sum as banded; the grace period read the smaller of the
  two ages (days since created, days since it came onto the branch).

A line that does not parse (not JSON, not an object, an unknown kind, a field missing
or of the wrong type) is counted and skipped, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

MarkKind: TypeAlias = Literal[
    "session-consolidated", "edge-promoted", "entity-promoted", "commitment-below-floor",
    "retention-archived", "compress-refused", "model-refused",
]
MARK_KINDS: Final[tuple[MarkKind, ...]] = get_args(MarkKind)
DECISION_KINDS: Final[frozenset[MarkKind]] = frozenset({"retention-archived"})
"""Kinds that record a decision the run made, not a write it owes: read apart from the
marks (``Ledger.decisions``), never applied or counted by a merge."""
RECORD_KINDS: Final[tuple[MarkKind, ...]] = ("commitment-below-floor", "compress-refused",
                                             "model-refused")
"""The kinds read among the marks that record a decision rather than defer a write:
merge applies them as nothing (and counts them applied, so pending and applied agree)."""

RETENTION_SIGNALS: Final[tuple[str, ...]] = (
    "recency", "access_frequency", "confidence", "pagerank", "bridge_importance",
    "reinforcement", "importance", "contested_status",
)
"""The retention scorer's eight signal names, as a ``retention-archived`` record spells
its fields (``domain.retention.SIGNAL_NAMES``; a test holds the two equal)."""

MarkValue: TypeAlias = str | int | float | bool | None

_FIELDS: Final[Mapping[MarkKind, Mapping[str, tuple[type, ...]]]] = {
    "session-consolidated": {"session": (str,)},
    "edge-promoted": {"key": (str,), "detections": (int,)},
    "entity-promoted": {"key": (str,), "detections": (int,)},
    "commitment-below-floor": {"statement": (str,), "confidence": (int, float),
                               "session": (str,), "done": (bool,)},
    "retention-archived": {"path": (str,), "rule": (str,), "score": (int, float),
                           "band": (str,), "created_age_days": (int, float),
                           "grace_days": (int, float),
                           **dict.fromkeys(RETENTION_SIGNALS, (int, float))},
    "compress-refused": {"path": (str,), "rule": (str,), "detail": (str,)},
    "model-refused": {"phase": (str,), "rule": (str,), "subject": (str,), "detail": (str,)},
}
"""The fields each kind must carry, and their JSON types (a bool is not an int here)."""

_OPTIONAL: Final[Mapping[MarkKind, Mapping[str, tuple[type, ...]]]] = {
    "retention-archived": {"arrived_age_days": (int, float)},
    "edge-promoted": {"since": (str,), "by": (str,)},
    "entity-promoted": {"since": (str,), "by": (str,), "prompt": (str,)},
    "model-refused": {"overlap": (int, float), "floor": (int, float), "part": (str,),
                      "batch": (int,), "nights": (int,)},
}
"""Fields a kind may carry beside its required ones; a line without them still parses
(a record written before the field existed), a line with one of the wrong type does
not."""


@dataclass(frozen=True, slots=True)
class PendingMark:
    """One earned write (or record), as a kind and its fields."""

    kind: MarkKind
    fields: tuple[tuple[str, MarkValue], ...]

    @staticmethod
    def of(kind: MarkKind, **fields: MarkValue) -> PendingMark:
        return PendingMark(kind, tuple(sorted(fields.items())))

    def get(self, name: str) -> MarkValue:
        return dict(self.fields).get(name)

    def line(self) -> str:
        """The ledger line: one JSON object, keys sorted, no spaces, no newline."""
        return json.dumps({"kind": self.kind, **dict(self.fields)}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Ledger:
    """A ledger as read: the marks in file order, and how many lines did not parse;
    the decision records apart, in file order."""

    marks: tuple[PendingMark, ...] = ()
    unparsed: int = 0
    decisions: tuple[PendingMark, ...] = ()
    """Lines of a ``DECISION_KINDS`` kind: why the run did what it did, not a write."""

    def of_kind(self, kind: MarkKind) -> tuple[PendingMark, ...]:
        return tuple(mark for mark in self.marks if mark.kind == kind)


def _well_typed(value: object, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def parse_line(line: str) -> PendingMark | None:
    """The mark a ledger line holds, or None when it does not parse as one."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if kind not in MARK_KINDS:
        return None
    chosen: MarkKind = kind
    wanted = _FIELDS[chosen]
    if any(not _well_typed(data.get(name), types) for name, types in wanted.items()):
        return None
    optional = _OPTIONAL.get(chosen, {})
    if any(name in data and not _well_typed(data[name], types)
           for name, types in optional.items()):
        return None
    names = [*wanted, *(name for name in optional if name in data)]
    return PendingMark(chosen, tuple(sorted((name, data[name]) for name in names)))


def read_ledger(data: bytes | None) -> Ledger:
    """A ledger file's marks and decision records; None (no file) is the empty ledger.
    Blank lines are not counted; a line that is not UTF-8 or does not parse is."""
    if data is None:
        return Ledger()
    marks: list[PendingMark] = []
    decisions: list[PendingMark] = []
    unparsed = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            unparsed += 1
            continue
        mark = parse_line(text)
        if mark is None:
            unparsed += 1
        elif mark.kind in DECISION_KINDS:
            decisions.append(mark)
        else:
            marks.append(mark)
    return Ledger(tuple(marks), unparsed, tuple(decisions))


def append_marks(data: bytes | None, marks: Iterable[PendingMark]) -> tuple[bytes | None, int]:
    """The file with each mark's line appended unless a line of the same text is
    already there (or was appended just before); and how many lines were added. Lines
    already in the file are kept as they are, unparsable ones included."""
    return append_lines(data, (mark.line() for mark in marks))


def append_lines(data: bytes | None, lines: Iterable[str]) -> tuple[bytes | None, int]:
    """``data`` with each line appended unless the same text is there already (or was
    appended just before), and how many were added: the rule every run record file
    (the ledger, the decision files) is written by, so a resumed run writes the same
    bytes as an uninterrupted one."""
    existing = b"" if data is None else data
    present = {raw.decode("utf-8", "replace") for raw in existing.split(b"\n") if raw.strip()}
    added: list[str] = []
    for line in lines:
        if line not in present:
            present.add(line)
            added.append(line)
    if not added:
        return data, 0
    prefix = existing if not existing or existing.endswith(b"\n") else existing + b"\n"
    return prefix + "".join(f"{line}\n" for line in added).encode("utf-8"), len(added)
