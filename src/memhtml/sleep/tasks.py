"""Detected tasks: what a night declined to decide, handed to a person as a task file.

A phase that meets a decision it will not make alone (a merge the veto refused, an
alias pair in the review band, a contradiction seen once) states it as a ``Finding``
and this module turns it into an ordinary task memory. Being a task is the whole
safety story: every phase excludes tasks, so a detected task is never scored, linked,
folded or read back by the detector that wrote it.

What makes the queue usable rather than noise:

- **The path is the key.** ``areas/tasks/det-<12 hex>-<slug>.html``, the hex a sha256
  over the detector's name and its canonical finding (a string the detector builds in
  a sorted, stable form). A second night producing the same finding finds the file
  by its digest instead of opening a twin, and the check needs no index: the tree is
  the record. The content hash cannot serve, since two open tasks with one body are
  two real pieces of work.
- **An unchanged finding writes nothing.** The task stands as it was written: a night
  that finds it again leaves the file alone (counted ``unchanged``), so an unchanged
  store makes no commit. Only a finding whose words changed (a detection count, a
  measured ratio) rewrites its task's article with the detector's new text, every
  line of its head kept (``refreshed``); and only while nobody edited the article:
  a person's note in it stands (``edited``).
- **Evidence is checked, never trusted.** A quoted sentence is looked up,
  whitespace collapsed, in the file it names as the plan sees it; when it is not
  there the task is refused and counted, so a fabricated citation never reaches a
  person's queue. A measurement (a similarity ratio, the predicate that fired, a
  detection count) says it is one, because no sentence in the corpus states it.
- **Ten a night across detectors, signal first**, through the run's ``TaskBudget``;
  what the cap turns away is counted as overflow. Commitments, then contradictions,
  then refused merges, then entity reviews (``phase.TASK_PRIORITY``): a review
  detector, which runs first, leaves half the places free while a detector above it
  is still to run tonight, and open reviews never keep a commitment out. An open
  task's finding holds its place first, so a detector's first ten stay the ten.
- **Every task is a decision.** Each task opened or rewritten is recorded as the
  detector's decision (``sleep.decisions``), its rule the detector's and its figures
  the evidence's (a veto's predicate and cosine, a ratio, a detection count, a quote).
- **Author separation.** ``memhtml-author: agent:sleep`` and the tags ``detected``
  plus the detector's name tell the machine's queue from a person's by metadata.
- **Self-cleaning.** ``close_stale`` marks done (and so archives, as ``memhtml task
  status done`` does) each open task of a detector whose finding it no longer
  produces, with ``no longer detected`` in the commit body, but only on a night that
  judged the detector's whole candidate set: a throttled night cannot tell "gone"
  from "never asked". The closed task carries the tag ``no-longer-detected``, and
  that tag is how a later night tells the sweep's close from a person's.
- **A person's close stands.** A detected task a person marked done (so archived)
  is not opened again while its finding stands (counted as ``dismissed``). A task the
  sweep closed is opened again when its finding comes back; if the sweep then closes
  it a second time the same year, its archive goes to the year's next folder
  (``archive/<YYYY>-2/``); where a file that is not a memory holds the name, it is
  marked done where it stands, and opened again from there.
- **A close is an act, not a file.** What counts as a person's close is read from the
  branch's history (``dismissed_digests``): the commit that moved the task under
  ``archive/`` must be a door's (``task status ... done`` or ``archive``: its
  ``Memhtml-Op`` trailer, a ``Memhtml-Path`` for both paths, memhtml as committer, no
  run's trailers), dated no later than the run, and must really have moved it (its
  parent held the task, it holds the archived copy). An archived copy that arrived any
  other way (planted by a pull, committed with plain git) closes nothing: the task is
  opened again, with a warning naming the copy. A colleague's close on another clone
  is the same door commit, carried here by sync, and stands.

The finding and its evidence, the digest and path that name its task, and the counts
handed back are in ``sleep.findings``; this module writes, refreshes and closes the
task files, and reads a person's close from the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from functools import reduce
from typing import Final, Literal, TypeAlias, assert_never

from returns.io import IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import GitError
from memhtml.contracts.ops import Put
from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import CommitInfo, Repository, Signature, TreeEntry
from memhtml.format import add_meta, content_hash, remove_meta, set_meta
from memhtml.head import IndexedView
from memhtml.sleep.contract import SLEEP_PHASES
from memhtml.sleep.decisions import Decision, FigureValue
from memhtml.sleep.findings import (
    Evidence,
    Finding,
    Measurement,
    Quote,
    SessionQuote,
    TaskCounts,
    digest_of_path,
    finding_digest,
    task_path,
)
from memhtml.sleep.phase import TaskBudget
from memhtml.store.errors import StoreError, describe, is_refusal
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import (
    ARCHIVE,
    TASKS,
    archive_path,
    archive_rank,
    original_of_archived,
)
from memhtml.store.plan import Plan, render_write, task_status_step, write_step

SLEEP_AUTHOR: Final = "agent:sleep"
DETECTED_TAG: Final = "detected"
NO_LONGER_DETECTED: Final = "no longer detected"
SWEPT_TAG: Final = "no-longer-detected"
"""Set on a detected task the sweep closes; a closed task without it was closed by a
person, whose decision stands."""
"""The commit-body line of a task the sweep closed."""

DISMISSING_OPS: Final = frozenset({"task-status", "archive"})
"""The doors whose commit can close a detected task: ``task status PATH done`` (which
archives it) and ``archive PATH``."""
DISMISSAL_SCAN: Final = 100_000
"""Most commits naming a detected task's archive path that the history read looks at
(one walk over the messages, newest first)."""
_OP: Final = "Memhtml-Op"
_PATH: Final = "Memhtml-Path"
_RUN: Final = "Memhtml-Run"

TASK_RULES: Final = {
    "dedup-merge": "merge-vetoed",
    "entity-resolution": "entity-review",
    "edge-typing": "contradiction-waiting",
    "trace-consolidation": "session-commitment",
    "task-detection": "open-commitment",
}
"""The rule a detected task's decision names, by detector (``detected-task`` for any
other)."""


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def quote_holds(view: IndexedView, quote: Quote) -> bool:
    """Whether the memory at ``quote.path`` states the sentence, whitespace collapsed
    on both sides (in its title or its article text)."""
    sentence = _collapsed(quote.sentence)
    record = view.get(to_tree_path(quote.path))
    if not sentence or record is None:
        return False
    return sentence in _collapsed(record.title) or sentence in _collapsed(record.body_text)


def _live_detected(view: IndexedView) -> dict[str, MemoryRecord]:
    """Digest -> the live record at a detected task's path (the least path on a clash)."""
    out: dict[str, MemoryRecord] = {}
    for path in sorted(view.indexes.records.keys()):
        digest = digest_of_path(path)
        record = view.get(path)
        if digest is None or record is None or digest in out:
            continue
        if not record.archived and record.status == "active":
            out[digest] = record
    return out


def _archived_detected(view: IndexedView) -> dict[str, MemoryRecord]:
    """Digest -> the newest archived copy of a detected task (``archive/<YYYY>/...``,
    the latest year, and in it the latest ordinal: ``archive/<YYYY>-2/``)."""
    out: dict[str, MemoryRecord] = {}
    for path in sorted(view.indexes.records.keys(),
                       key=lambda p: (archive_rank(p) or (0, 0), p), reverse=True):
        original = original_of_archived(path)
        digest = None if original is None else digest_of_path(original)
        record = view.get(path)
        if digest is not None and record is not None and digest not in out:
            out[digest] = record
    return out


def _evidence_text(evidence: Evidence) -> str:
    match evidence:
        case Quote(path=path, sentence=sentence):
            where = to_document_path(to_tree_path(path))
            return f"Evidence, quoted from {where}: \u201c{_collapsed(sentence)}\u201d"
        case Measurement(kind=kind, value=value):
            shown = f"{value:.4f}" if isinstance(value, float) else str(value)
            return f"Evidence, measured ({kind}): {shown}"
        case SessionQuote(session=session, sentence=sentence):
            return (f"Evidence, quoted from session {session}: "
                    f"\u201c{_collapsed(sentence)}\u201d")
        case _ as never:
            assert_never(never)


def task_input(finding: Finding) -> WriteInput:
    """The task file's fields: rendered by the write door's own template, so the file
    passes the format check like any task a person adds."""
    return WriteInput(
        title=finding.title,
        claim=finding.statement,
        memory_type="task",
        body=(_evidence_text(finding.evidence),
              f"Finding ({finding.detector}): {finding.finding}"),
        tags=(DETECTED_TAG, finding.detector),
        author=SLEEP_AUTHOR,
        task_status="todo",
        path=task_path(finding),
    )



def _figures(finding: Finding) -> dict[str, FigureValue]:
    """A task decision's figures: the evidence (a measurement under its kind, a quote
    and where it is from) and what the detector measured besides."""
    out: dict[str, FigureValue] = {}
    match finding.evidence:
        case Measurement(kind=kind, value=value):
            out[kind] = value
        case Quote(sentence=sentence):
            out["quote"] = _collapsed(sentence)
        case SessionQuote(session=session, sentence=sentence):
            out |= {"session": session, "quote": _collapsed(sentence)}
    out.update(dict(finding.figures))
    return out


def task_decision(finding: Finding, path: str, *, rewritten: bool = False,
                  to: str | None = None) -> Decision | None:
    """The detector's decision for a task it opened (or rewrote), or None for a
    detector that is not a phase."""
    for phase in SLEEP_PHASES:
        if phase == finding.detector:
            related = finding.related
            if isinstance(finding.evidence, Quote):
                related = (*related, to_tree_path(finding.evidence.path))
            return Decision.of(phase, "rewritten" if rewritten else "created", path,
                               finding.rule or TASK_RULES.get(finding.detector,
                                                              "detected-task"), to=to,
                               related=tuple(dict.fromkeys(related)),
                               figures=_figures(finding))
    return None


def _finding_line(finding: Finding) -> str:
    return f"Finding ({finding.detector}): {finding.finding}"


def _says(record: MemoryRecord, finding: Finding) -> bool:
    """Whether the task states the finding as tonight words it: its title, its claim,
    its evidence line and its finding line (whatever a person added beside them)."""
    text = _collapsed(record.body_text)
    return (_collapsed(record.title) == _collapsed(finding.title)
            and _collapsed(record.claim) == _collapsed(finding.statement)
            and _collapsed(_evidence_text(finding.evidence)) in text
            and _collapsed(_finding_line(finding)) in text)


def _article(html: str) -> tuple[int, int] | None:
    """Where the one ``<article>`` element of a file the template wrote starts and ends
    (None when there is not exactly one)."""
    start, end = html.find("<article"), html.find("</article>")
    if start < 0 or end < start or html.count("<article") != 1 \
            or html.count("</article>") != 1:
        return None
    return start, end + len("</article>")


def _pristine(plan: Plan, record: MemoryRecord, finding: Finding) -> bool:
    """Whether the task's article is exactly what the template wrote for some wording of
    this finding (its claim, one evidence line, its finding line), so nobody edited it:
    only then may a new wording replace it."""
    text, claim = _collapsed(record.body_text), _collapsed(record.claim)
    line = _collapsed(_finding_line(finding))
    if not (claim and text.startswith(claim) and text.endswith(line)):
        return False
    evidence = text[len(claim):len(text) - len(line)].strip()
    then = replace(task_input(finding), title=record.title, claim=record.claim,
                   body=(evidence, _finding_line(finding)))
    rendered: Result[str, StoreError] = render_write(plan, then)
    return is_successful(rendered) and content_hash(rendered.unwrap()) == record.content_hash


def _restated(plan: Plan, record: MemoryRecord, finding: Finding) -> str | None:
    """The task's file with the finding as tonight words it: its article replaced by the
    template's, every line of its head kept (when it was created, the status and
    whatever else a person set there). None when the article cannot be replaced."""
    made: Result[str, StoreError] = render_write(plan, task_input(finding))
    if not is_successful(made):
        return None
    fresh = made.unwrap()
    old, new = _article(record.html), _article(fresh)
    if old is None or new is None:
        return None
    return record.html[:old[0]] + fresh[new[0]:new[1]] + record.html[old[1]:]


Refresh: TypeAlias = Literal["unchanged", "refreshed", "edited"]


def _refresh(plan: Plan, record: MemoryRecord, finding: Finding
             ) -> Result[tuple[Plan, Refresh], StoreError]:
    """The open task of a finding found again. Left exactly as it is when it states the
    finding as tonight words it (``unchanged``), or when the words changed but a person
    edited its article (``edited``: their edit wins; the finding is still the same
    pair). Otherwise its article is rewritten to tonight's words (``refreshed``); and
    a task the sweep had closed is opened again."""
    reopen = SWEPT_TAG in record.tags and record.task_status == "done"
    html = record.html
    outcome: Refresh = "unchanged"
    if not _says(record, finding):
        restated = _restated(plan, record, finding) if _pristine(plan, record, finding) \
            else None
        if restated is None:
            outcome = "edited"
        else:
            html, outcome = restated, "refreshed"
    if reopen:
        # The sweep closed it where it stood; its finding is back: open it again.
        html = set_meta(remove_meta(html, "memhtml-tag", SWEPT_TAG),
                        "memhtml-task-status", "todo")
        outcome = "refreshed"
    if html == record.html:
        return Success((plan, outcome))
    html = set_meta(html, "memhtml-updated", plan.now)
    return plan.apply(Put(record.path, html)).map(lambda after: (after, outcome))


def mint_tasks(plan: Plan, findings: Iterable[Finding], budget: TaskBudget, *,
               dismissed: frozenset[str]) -> Result[tuple[Plan, TaskCounts], StoreError]:
    """Each finding as a task file, left alone (or rewritten, when its words changed)
    when its task is open, in the order of (detector, finding) so the budget's places
    go to the same findings every run.

    ``dismissed`` holds the digests whose task a person closed through a door, as
    ``dismissed_digests`` read them from the history (``PhaseEnv.dismissed``): only
    those stay closed. An archived copy of a finding's task that is not among them
    closes nothing; the task is opened again and a warning names the copy.

    Findings whose task is already open go first, and each holds a place in the
    night's budget (it stands even when none is left): a re-stated finding is one of
    the night's ten, so a detector over the cap does not open ten more tasks every
    night while the first ten wait. A finding given twice is one finding. A refused
    quote costs no budget. A store refusal (a path held by a file that is not the
    finding's task) is counted as blocked with a warning; only the view breaking
    fails the whole call. Each task opened or rewritten is a decision (``decisions``).
    """
    unique = {finding_digest(f.detector, f.finding): f for f in reversed(list(findings))}
    existing = _live_detected(plan.view)
    archived = _archived_detected(plan.view)
    ordered = sorted(unique.values(), key=lambda f: (
        finding_digest(f.detector, f.finding) not in existing, f.detector, f.finding))
    current = plan
    minted = refreshed = unchanged = edited = 0
    refused_quote = overflow = blocked = dismissed_count = 0
    warnings: list[str] = []
    decisions: list[Decision] = []
    for finding in ordered:
        evidence = finding.evidence
        if isinstance(evidence, Quote) and not quote_holds(current.view, evidence):
            refused_quote += 1
            continue
        held = existing.get(finding_digest(finding.detector, finding.finding))
        if held is not None:
            if held.memory_type != "task":
                blocked += 1
                warnings.append(f"{held.path} is a {held.memory_type} memory, not the task "
                                f"of {finding.detector}'s finding; left alone")
                continue
            budget.occupy(finding.detector)
            match _refresh(current, held, finding):
                case Success((after, "refreshed")):
                    current = after
                    refreshed += 1
                    decisions += _decided(finding, held.path, rewritten=True)
                case Success((_, "edited")):
                    edited += 1
                case Success(_):
                    unchanged += 1
                case Failure(error):
                    return Failure(error)
            continue
        digest = finding_digest(finding.detector, finding.finding)
        closed = archived.get(digest)
        if closed is not None and SWEPT_TAG not in closed.tags:
            if digest in dismissed:
                dismissed_count += 1
                continue
            warnings.append(f"{closed.path} holds a closed copy of this finding's task that "
                            "no door closed (no task status or archive commit moved it "
                            "there); the task is opened again")
        if not budget.take(finding.detector):
            overflow += 1
            continue
        match write_step(current, task_input(finding), op="task-add"):
            case Success(stepped):
                current = stepped.plan
                minted += 1
                decisions += _decided(finding, stepped.outcome.primary or task_path(finding))
            case Failure(error) if is_refusal(error):
                blocked += 1
                warnings.append(f"{task_path(finding)} not written: {describe(error)}")
            case Failure(error):
                return Failure(error)
    return Success((current, TaskCounts(
        minted=minted, refreshed=refreshed, refused_quote=refused_quote, overflow=overflow,
        blocked=blocked, dismissed=dismissed_count, unchanged=unchanged, edited=edited,
        warnings=tuple(warnings), decisions=tuple(decisions))))


def _decided(finding: Finding, path: str, *, rewritten: bool = False) -> list[Decision]:
    decision = task_decision(finding, path, rewritten=rewritten)
    return [] if decision is None else [decision]


def dismissed_digests(git: Repository, at: str, view: IndexedView, stamp: datetime,
                      committer: Signature | None) -> IOResult[frozenset[str], GitError]:
    """The digests of the detected tasks a person closed through a door, as the history
    of ``at`` records it (``view`` is the version at ``at``).

    A candidate is an archived copy of a detected task the sweep did not close (no
    ``no-longer-detected`` tag). It is a person's close when a commit reachable from
    ``at`` moved the task there and that commit is a door's: a ``Memhtml-Op`` among
    ``DISMISSING_OPS``, no ``Memhtml-Run`` (a run's commit is the machine's), a
    ``Memhtml-Path`` naming both the task and its archived copy, ``committer`` as its
    committer (memhtml signs every door's commit so; None checks nothing), dated no
    later than ``stamp`` in a year no later than it; and the trees agree: its first
    parent held the task and not the copy, it holds the copy and not the task. One walk
    over the messages finds the candidates' commits (``commits_mentioning``); only
    theirs are read further. A colleague's close reaches this clone as that very commit
    (sync keeps both sides' history), so it stands here too.
    """
    candidates: dict[str, str] = {}
    for path in sorted(view.indexes.records.keys()):
        original = original_of_archived(path)
        digest = None if original is None else digest_of_path(original)
        record = view.get(path)
        if digest is not None and record is not None and SWEPT_TAG not in record.tags:
            candidates[path] = digest
    if not candidates:
        return IOSuccess(frozenset())

    def claims(found: tuple[CommitInfo, ...]) -> list[tuple[CommitInfo, str, str]]:
        out: list[tuple[CommitInfo, str, str]] = []
        for info in found:
            if not _door_close(info, stamp, committer):
                continue
            named = {value for name, value in info.trailers if name.lower() == _PATH.lower()}
            for path in sorted(named):
                original = original_of_archived(path)
                if (path in candidates and original is not None and original in named
                        and _archive_year(path) <= stamp.year):
                    out.append((info, path, original))
        return out

    def verified(so_far: IOResult[frozenset[str], GitError],
                 claim: tuple[CommitInfo, str, str]) -> IOResult[frozenset[str], GitError]:
        info, copy, task = claim
        if not info.parents:
            return so_far

        def holds(entries: tuple[TreeEntry, ...]) -> frozenset[str]:
            return frozenset(e.path for e in entries)

        def judge(done: frozenset[str]) -> IOResult[frozenset[str], GitError]:
            if candidates[copy] in done:
                return IOSuccess(done)
            after: IOResult[tuple[TreeEntry, ...], GitError] = git.entries_at(
                info.sha, [copy, task])
            before: IOResult[tuple[TreeEntry, ...], GitError] = git.entries_at(
                info.parents[0], [copy, task])
            return after.bind(lambda now: before.map(lambda then: (
                done | {candidates[copy]}
                if holds(now) == {copy} and holds(then) == {task} else done)))

        return so_far.bind(judge)

    needle = f"/{TASKS}det-"
    found: IOResult[tuple[CommitInfo, ...], GitError] = git.commits_mentioning(
        at, needle, DISMISSAL_SCAN)
    start: IOResult[frozenset[str], GitError] = IOSuccess(frozenset())
    return found.bind(lambda infos: reduce(verified, claims(infos), start))


def _door_close(info: CommitInfo, stamp: datetime, committer: Signature | None) -> bool:
    """Whether ``info`` is a door's commit that may close a task: a closing op, no
    run's trailer, memhtml's committer, not dated after ``stamp``."""
    ops = {value for name, value in info.trailers if name.lower() == _OP.lower()}
    ran = any(name.lower() == _RUN.lower() for name, _ in info.trailers)
    return (bool(ops & DISMISSING_OPS) and not ran
            and (committer is None or info.committer == committer) and info.time <= stamp)


def _archive_year(path: str) -> int:
    """The year an archive path names (``archive/<YYYY>/...``, ``archive/<YYYY>-2/...``)."""
    rank = archive_rank(path)
    return rank[0] if rank is not None else int(path[len(ARCHIVE):].split("/", 1)[0])


def open_tasks(view: IndexedView, detector: str) -> tuple[MemoryRecord, ...]:
    """The live detected tasks of ``detector`` not already closed by the sweep, in
    path order."""
    return tuple(
        record for _, record in sorted(_live_detected(view).items(), key=lambda kv: kv[1].path)
        if record.memory_type == "task" and DETECTED_TAG in record.tags
        and detector in record.tags and record.author == SLEEP_AUTHOR
        and not (record.task_status == "done" and SWEPT_TAG in record.tags)
    )


def close_stale(plan: Plan, detector: str, produced: frozenset[str], judged_all: bool
                ) -> Result[tuple[Plan, TaskCounts], StoreError]:
    """Mark done (and archive) each open task of ``detector`` whose finding is not in
    ``produced``, the canonical findings it made tonight; nothing unless
    ``judged_all``, the caller's word that tonight read the detector's whole
    candidate set. A close the store refuses (its archive path held by a file that is
    not a memory) is counted as blocked and the rest go on."""
    if not judged_all:
        return Success((plan, TaskCounts()))
    live = frozenset(finding_digest(detector, finding) for finding in produced)
    current = plan
    closed = blocked = 0
    warnings: list[str] = []
    decisions: list[Decision] = []
    for record in open_tasks(plan.view, detector):
        if digest_of_path(record.path) in live:
            continue
        match _swept(current, record):
            case Success(after):
                current = after
                closed += 1
                decisions += _closed(detector, record.path, after)
            case Failure(error) if is_refusal(error):
                blocked += 1
                warnings.append(f"{record.path} not closed: {describe(error)}")
            case Failure(error):
                return Failure(error)
    return Success((current, TaskCounts(closed=closed, blocked=blocked,
                                        warnings=tuple(warnings),
                                        decisions=tuple(decisions))))


def _closed(detector: str, path: str, plan: Plan) -> list[Decision]:
    """The sweep's decision about a task it closed: archived, or marked done where it
    stands when its archive path was taken."""
    for phase in SLEEP_PHASES:
        if phase == detector:
            if plan.view.get(path) is not None:
                return [Decision.of(phase, "rewritten", path, "no-longer-detected")]
            return [Decision.of(phase, "archived", path, "no-longer-detected",
                                to=archive_path(path, plan.year))]
    return []


def _swept(plan: Plan, record: MemoryRecord) -> Result[Plan, StoreError]:
    """``record`` closed by the sweep: tagged, marked done and archived; marked done
    where it stands when the archive refuses it (a file that is not a memory holds its
    archive path)."""
    tagged = add_meta(record.html, "memhtml-tag", SWEPT_TAG)

    def closed(marked: Plan) -> Result[Plan, StoreError]:
        archived = task_status_step(marked, record.path, "done", NO_LONGER_DETECTED)
        if isinstance(archived, Success):
            return archived.map(lambda stepped: stepped.plan)
        held = marked.view.get(record.path)
        if held is None:
            return archived.map(lambda stepped: stepped.plan)
        html = set_meta(set_meta(held.html, "memhtml-task-status", "done"),
                        "memhtml-updated", marked.now)
        return marked.apply(Put(record.path, html)).lash(lambda _: archived.map(
            lambda stepped: stepped.plan))

    return plan.apply(Put(record.path, tagged)).bind(closed)


def commit_body(counts: TaskCounts) -> str:
    """The commit-body line for a phase's detected tasks; a commit closing any says
    ``no longer detected``, as the task door's own close would."""
    parts: list[str] = []
    if counts.minted or counts.refreshed:
        parts.append(f"{counts.minted} detected task(s) opened, {counts.refreshed} refreshed")
    if counts.closed:
        parts.append(f"{counts.closed} detected task(s) closed: {NO_LONGER_DETECTED}")
    return "; ".join(parts)
