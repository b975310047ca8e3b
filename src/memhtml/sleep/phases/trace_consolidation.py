"""Phase 12, trace-consolidation: distil settled agent-session transcripts into memories
in the inbox, and hand the commitments they record to a person. One commit per
distilled memory, then one for the detected tasks.

**Input.** The run's ``TranscriptSource`` (the local ``transcripts_dir`` setting): one
JSON-lines file per session, the session id its stem. Every line is one JSON object:

- its *role* is ``role``, else ``message.role``, else ``type`` (a role that is not 1..32
  of ``[A-Za-z0-9_-]`` is shown as ``unknown``, so a line cannot forge another turn);
- its *text* is ``content``, else ``message.content``, else ``text``, where a content is
  a string, or a list of objects whose ``text`` strings are joined by newlines;
- a line whose ``type`` is ``"session_end"`` closes the session;
- a line with no text is ignored; a line that is not UTF-8 JSON, or not an object, is
  skipped and counted (``bad_lines``, over the sessions sent to the model).

**Which sessions.** Listed sessions already marked consolidated in the state plane are
left (``consolidated_before``). A transcript over ``TRANSCRIPT_MAX_BYTES`` is not read
and gets no watermark (``too_large``: a person may trim it). The rest is *settled* when
it is closed by a ``session_end`` line or unchanged for ``TRANSCRIPT_SETTLE_SECONDS``
before the run's stamp; an unsettled one is left for a later night (``unsettled``),
since a session still being written would be read in half and its watermark would
hide the rest. Settled sessions go oldest first, by ``(modified, session)``, at most
``TRACE_SESSIONS_PER_NIGHT`` a night (``deferred`` counts the rest; an old transcript
past the cap is not read at all). A settled session with no text is marked
consolidated without a call (``empty``) and takes no place in the cap. A transcript
that cannot be read is counted ``unreadable`` with a warning; a directory that cannot
be listed (moved, deleted, not a directory) is one warning and the phase writes
nothing: a night does not fail because a directory moved.

**One call per session**, not through the batching kernel: a session is one document,
not a row of a batch. Each call goes through a ``BudgetedModel`` over the run's budget
capped at ``TRACE_CALLS``; a spent budget skips every session not yet asked
(``budget_skipped``). The prompt is the session id (JSON-quoted) and its turns, one a
line as ``role: text``, each turn's whitespace collapsed (so a turn is one line and
cannot open another) and cut at ``TURN_CHARS``; turns are shown from the first until
``PROMPT_CHARS`` would be passed, and the prompt says how many were left out. The
system prompt and schema are constants of ``trace_prompt``.

**Answer.** ``{"memories": [...], "commitments": [...], "nothing_to_keep": bool}``,
each item with a ``quote``.
An answer off the schema (a confidence outside [0, 1], a type not offered, too many
items), a malformed answer or an unavailable model fails the session
(``failed_sessions``): it gets no watermark and is read again the next night. Each
quote must occur, whitespace collapsed and case folded, inside one turn the model was
shown; a memory or commitment whose quote does not is dropped (``unverified``). A
memory whose title, claim or a paragraph is a key, a number or a fragment, or is not
drawn from the turns shown (``sleep.grounded``), is dropped too
(``refused_ungrounded``), each a ``model-refused`` record in the run's ledger.

**Writes.** Each kept memory is a new file in ``areas/inbox/`` written through the
store's template (model text escaped, never pasted as markup), author ``agent:sleep``,
``memhtml-session`` the session id, its last paragraph the verified quote; one commit
each, naming the file and the session. A memory the store refuses (a blank title, a
NUL in its text, anything else the format will not hold) is skipped with a warning
(``refused``). A commitment not done with confidence at least ``COMMITMENT_FLOOR``
becomes a detected task through ``mint_tasks`` (the run's shared task budget), in one
last commit. Its evidence is a ``findings.SessionQuote``: the sentence and the session,
checked here against the transcript (``mint_tasks`` can only check a quote against a
memory file). Below the floor, a commitment is kept whole as a
``commitment-below-floor`` ledger record (``commitments_below_floor``); a done one
above it is counted (``commitments_done``) and needs no task. These tasks are
never swept: a session is read once, so a finding absent tonight says nothing.

**Watermarks.** A session earns a ``session-consolidated`` mark when something of it
landed (a memory written, a commitment kept), when its answer set ``nothing_to_keep``
and listed nothing (``nothing_to_keep``), or when it holds no text (``empty``). An
answered session that yielded nothing else, or whose answer was off the schema or
malformed, is *barren*: its night is counted in the state plane
(``CounterKey("session", id)``, once per run id, at phase time), it is a
``model-refused`` record (``session-yielded-nothing``, with ``nights``), and it is
asked again on a later night; on its ``TRACE_BARREN_NIGHTS``-th barren night it
becomes a detected task (rule ``session-unread``, its first turn quoted) and is
consumed once that task is open (``handed_to_person``). A session the model never
reached (unavailable) is not counted. The marks ride the ledger in the phase's last
commit and merge performs them, so a run thrown away leaves its sessions
unconsolidated.

**Dry run.** The listing and the reads that decide settledness happen; no call, no
write, no mark. ``would_call`` counts the sessions that would be asked.

Counts: ``sessions`` (listed), ``consolidated_before``, ``too_large``, ``unsettled``,
``unreadable``, ``settled`` (taken, empty and deferred), ``deferred``, ``empty``,
``bad_lines``, ``calls`` (granted by the budget), ``memories``, ``unverified``,
``refused``, ``commitments_below_floor``, ``commitments_done``, ``failed_sessions``,
``budget_skipped``, ``consolidated`` (watermarks earned), ``refused_ungrounded``,
``nothing_to_keep``, ``barren``, ``handed_to_person`` and the detected tasks'
``tasks_*``.

Reading the transcripts is in ``trace_sessions``; what the model is asked and how its
answer is read, in ``trace_prompt``. This module is the rule: what an answer writes,
which commitments become tasks, and which sessions earn a watermark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from returns.io import IO, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import (
    InvalidMemory,
    OverlayRefused,
    PathRefused,
    StateError,
)
from memhtml.contracts.services import (
    CounterKey,
    Detection,
    LanguageModel,
    StatePlane,
)
from memhtml.domain.thresholds import (
    COMMITMENT_FLOOR,
    TRACE_BARREN_NIGHTS,
    TRACE_CALLS,
)
from memhtml.sleep.budget import BudgetedModel
from memhtml.sleep.decisions import Decision
from memhtml.sleep.findings import Finding, SessionQuote, TaskCounts, digest_of_path, finding_digest
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import (
    CountValue,
    PhaseCommit,
    PhaseEnv,
    PhaseFault,
    PhaseResult,
    staged,
    staged_delta,
    without_model,
)
from memhtml.sleep.phases.trace_prompt import (
    QUOTE_CHARS,
    Asked,
    Commitment,
    Memory,
    ask_all,
    collapsed,
)
from memhtml.sleep.phases.trace_sessions import Survey, Transcript, survey
from memhtml.sleep.tasks import SLEEP_AUTHOR, commit_body, mint_tasks, open_tasks
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import INBOX
from memhtml.store.plan import Plan, write_step

PHASE: Final = "trace-consolidation"
NO_SOURCE: Final = "no transcripts_dir set: there are no transcripts to read"
TASK_TITLE_CHARS: Final = 80


# --------------------------------------------------------------------------- applying


@dataclass
class _Tally:
    """The night's applying, accumulated in one pass (local to ``apply_night``)."""

    memories: int = 0
    unverified: int = 0
    refused: int = 0
    below_floor: int = 0
    done: int = 0
    failed: int = 0
    budget_skipped: int = 0
    consolidated: int = 0
    ungrounded: int = 0
    nothing_to_keep: int = 0
    barren: list[Asked] = field(default_factory=list)
    """Sessions answered with nothing kept and no explicit ``nothing_to_keep`` (or
    with an answer off the schema): counted a night, asked again (module docstring)."""
    handed: int = 0
    commits: list[PhaseCommit] = field(default_factory=list)
    marks: list[PendingMark] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def memory_input(session: str, memory: Memory) -> WriteInput:
    """A distilled memory's fields, for the template; its last paragraph the quote."""
    cited = f"From session {session}: \u201c{memory.quote}\u201d"
    return WriteInput(title=memory.title, claim=memory.claim, memory_type=memory.memory_type,
                      body=(*memory.body, cited), author=SLEEP_AUTHOR, session_id=session)


def commitment_finding(session: str, commitment: Commitment) -> Finding:
    """A commitment as a detected task. Its canonical finding is the session and the
    statement; the quote, checked against the transcript here, is stated in the task."""
    statement = commitment.statement
    title = statement if len(statement) <= TASK_TITLE_CHARS else \
        statement[:TASK_TITLE_CHARS].rstrip() + "..."
    return Finding(
        detector=PHASE,
        finding=f"{session} | {statement}",
        title=f"Commitment: {title}",
        statement=(f"Session {session} recorded a commitment that it does not show done: "
                   f"{statement} Do it, or close this task if it is done or dropped."),
        evidence=SessionQuote(session, commitment.quote),
    )


_PER_MEMORY: Final = (InvalidMemory, OverlayRefused, PathRefused, Refused)
"""Store errors that are about the one file a step would write (model text the format
will not take, a path it may not use): that memory is skipped, the night goes on."""


def _is_refusal(error: StoreError) -> bool:
    return isinstance(error, _PER_MEMORY)


def _consolidated(tally: _Tally, session: str) -> None:
    tally.marks.append(PendingMark.of("session-consolidated", session=session))
    tally.consolidated += 1


def _commitments(tally: _Tally, session: str, commitments: Sequence[Commitment]) -> None:
    for commitment in commitments:
        if commitment.confidence < COMMITMENT_FLOOR:
            tally.below_floor += 1
            tally.marks.append(PendingMark.of(
                "commitment-below-floor", statement=commitment.statement,
                confidence=commitment.confidence, session=session, done=commitment.done))
        elif commitment.done:
            tally.done += 1
        else:
            tally.findings.append(commitment_finding(session, commitment))


def _write_memories(env: PhaseEnv, plan: Plan, before: dict[str, bytes | None],
                    tally: _Tally, session: str, memories: Sequence[Memory]
                    ) -> Result[tuple[Plan, dict[str, bytes | None]], StoreError]:
    for memory in memories:
        if not (memory.title and memory.claim):
            tally.refused += 1
            tally.warnings.append(f"a memory of session {session} not written: its title "
                                  "or claim is blank")
            continue
        match write_step(plan, memory_input(session, memory), INBOX):
            case Success(stepped):
                plan = stepped.plan
                path = stepped.outcome.primary or ""
            case Failure(error) if _is_refusal(error):
                tally.refused += 1
                tally.warnings.append(f"a memory of session {session} not written: "
                                      f"{describe(error)}")
                continue
            case Failure(error):
                return Failure(error)
        after = staged(plan)
        decided = Decision.of(PHASE, "created", path, "distilled-from-session",
                              figures={"session": session, "quote": memory.quote,
                                       "memory_type": memory.memory_type})
        tally.commits.append(PhaseCommit(f"{path} distilled from session {session}",
                                         staged_delta(env.version, before, after),
                                         f"memhtml-session: {session}",
                                         decisions=(decided,)))
        before = after
        tally.memories += 1
    return Success((plan, before))


@dataclass
class _Sessions:
    """The sessions applied, before the night's tasks: the tally, the plan, and the
    bytes it staged at the last commit."""

    tally: _Tally
    plan: Plan
    before: dict[str, bytes | None]


def apply_sessions(env: PhaseEnv, asked: Sequence[Asked], empty: Sequence[Transcript]
                   ) -> Result[_Sessions, StoreError]:
    """Every answered session applied in order over the last (one commit per memory),
    and the marks it earned. A session is consolidated when its answer said nothing
    is worth keeping or when something of it landed (a memory written, a commitment
    kept); any other answered session is barren and left for the night's counters."""
    tally = _Tally()
    for transcript in empty:
        _consolidated(tally, transcript.session)
    plan = Plan.start(env.version, env.now)
    before: dict[str, bytes | None] = {}
    for item in asked:
        session = item.transcript.session
        if item.status == "budget-skipped":
            tally.budget_skipped += 1
            continue
        if item.status == "failed" or item.reading is None:
            tally.failed += 1
            tally.warnings.append(f"session {session} not consolidated: {item.reason}")
            if item.answered:
                tally.barren.append(item)
            continue
        reading = item.reading
        tally.unverified += reading.unverified
        tally.ungrounded += len(reading.faults)
        tally.marks += [fault.mark(PHASE, f"session {session}") for fault in reading.faults]
        written = tally.memories
        match _write_memories(env, plan, before, tally, session, reading.memories):
            case Success((plan, before)):
                pass
            case Failure(error):
                return Failure(error)
        _commitments(tally, session, reading.commitments)
        if tally.memories > written or reading.commitments:
            _consolidated(tally, session)
        elif reading.nothing_to_keep:
            tally.nothing_to_keep += 1
            _consolidated(tally, session)
        else:
            tally.barren.append(item)
    return Success(_Sessions(tally, plan, before))


def unread_finding(transcript: Transcript, nights: int) -> Finding:
    """A session barren for ``nights`` nights, as a task: a person reads it. Its
    evidence is the session's first turn as shown (a quote of the transcript)."""
    session = transcript.session
    first = collapsed(transcript.turns[0].text)[:QUOTE_CHARS] if transcript.turns else ""
    return Finding(
        detector=PHASE, finding=f"{session} | nothing kept",
        title=f"Session {session[:TASK_TITLE_CHARS]}: nothing kept after {nights} nights",
        statement=(f"Session {session} was read on {nights} nights and no answer kept "
                   "anything of it, nor said that nothing in it is worth keeping. Read "
                   "it and write what matters, or close this task if nothing does."),
        evidence=SessionQuote(session, first), figures=(("nights", nights),),
        rule="session-unread")


def finish_night(env: PhaseEnv, done: _Sessions, nights: Mapping[str, int]
                 ) -> Result[tuple[_Tally, TaskCounts], StoreError]:
    """The night's tasks in one last commit: the commitments, and each barren session
    counted ``TRACE_BARREN_NIGHTS`` nights (``nights``: the session's count after
    tonight's), which is then consolidated once its task is open. A barren session
    below the count is a ``model-refused`` record and is asked again another night."""
    tally, plan, before = done.tally, done.plan, done.before
    unread: list[tuple[str, Finding]] = []
    for item in tally.barren:
        session = item.transcript.session
        count = nights.get(session, 0)
        if count >= TRACE_BARREN_NIGHTS:
            unread.append((session, unread_finding(item.transcript, count)))
            continue
        why = (f"its answer was not used ({item.reason})" if item.reading is None
               else "answered with nothing kept and no nothing_to_keep")
        tally.marks.append(PendingMark.of(
            "model-refused", phase=PHASE, rule="session-yielded-nothing",
            subject=f"session {session}", nights=count,
            detail=(f"{why} on night {count} of {TRACE_BARREN_NIGHTS}; asked again on a "
                    "later night")))
        tally.warnings.append(f"session {session} yielded nothing (night {count} of "
                              f"{TRACE_BARREN_NIGHTS}): not consolidated, asked again later")
    match mint_tasks(plan, [*tally.findings, *(f for _, f in unread)], env.budget,
                     dismissed=env.dismissed):
        case Success((plan, tasks)):
            pass
        case Failure(error):
            return Failure(error)
    held = {digest_of_path(task.path) for task in open_tasks(plan.view, PHASE)}
    for session, finding in unread:
        if finding_digest(PHASE, finding.finding) in held:
            tally.handed += 1
            _consolidated(tally, session)
        else:
            tally.warnings.append(f"session {session} yielded nothing on "
                                  f"{nights.get(session, 0)} nights and its task could not "
                                  "be opened tonight: asked again later")
    changes = staged_delta(env.version, before, staged(plan))
    if changes:
        tally.commits.append(PhaseCommit(
            f"{tasks.minted} detected task(s) from session commitments, "
            f"{tasks.refreshed} refreshed", changes, commit_body(tasks),
            decisions=tasks.decisions))
    tally.warnings.extend(tasks.warnings)
    return Success((tally, tasks))


def apply_night(env: PhaseEnv, asked: Sequence[Asked], empty: Sequence[Transcript],
                nights: Mapping[str, int] | None = None
                ) -> Result[tuple[_Tally, TaskCounts], StoreError]:
    """Every answered session applied in order over the last (one commit per memory),
    then the detected tasks in one commit, and the marks the night earned; ``nights``
    is each barren session's count after tonight (none: tonight is its first)."""
    return apply_sessions(env, asked, empty).bind(lambda done: finish_night(
        env, done, nights if nights is not None
        else {item.transcript.session: 1 for item in done.tally.barren}))


def count_barren(state: StatePlane, run_id: str, stamp: datetime, done: _Sessions
                 ) -> IO[tuple[Mapping[str, int], tuple[str, ...]]]:
    """Each barren session's night counted (``CounterKey("session", id)``, once per
    run, so a resume counts nothing twice): the counts after tonight, and a warning
    for each count the state plane would not keep (that session is then asked again,
    never handed on or consolidated on a count it does not hold)."""
    out: IO[tuple[Mapping[str, int], tuple[str, ...]]] = IO(({}, ()))
    for item in done.tally.barren:
        session = item.transcript.session

        def then(so_far: tuple[Mapping[str, int], tuple[str, ...]], session: str = session
                 ) -> IO[tuple[Mapping[str, int], tuple[str, ...]]]:
            bumped: IOResult[Detection, StateError] = state.bump(
                CounterKey("session", session), run_id, TRACE_BARREN_NIGHTS, stamp)

            def read(got: Result[Detection, StateError]
                     ) -> tuple[Mapping[str, int], tuple[str, ...]]:
                if is_successful(got):
                    return {**so_far[0], session: got.unwrap().detections}, so_far[1]
                return so_far[0], (*so_far[1], f"session {session}: its night was not "
                                               f"counted: {got.failure().reason}")

            return IO.from_ioresult(bumped).map(read)

        out = out.bind(then)
    return out


# --------------------------------------------------------------------------- the phase


def _result(survey: Survey, calls: int, tally: _Tally, tasks: TaskCounts) -> PhaseResult:
    counts: dict[str, CountValue] = {
        **survey.counts(), "calls": calls, "memories": tally.memories,
        "unverified": tally.unverified, "refused": tally.refused,
        "commitments_below_floor": tally.below_floor, "commitments_done": tally.done,
        "failed_sessions": tally.failed, "budget_skipped": tally.budget_skipped,
        "consolidated": tally.consolidated, "refused_ungrounded": tally.ungrounded,
        "nothing_to_keep": tally.nothing_to_keep, "barren": len(tally.barren),
        "handed_to_person": tally.handed, **tasks.as_counts()}
    return PhaseResult(counts=counts, commits=tuple(tally.commits), marks=tuple(tally.marks),
                       warnings=(*survey.warnings, *tally.warnings))


def _night(env: PhaseEnv, model: LanguageModel, found: Survey
           ) -> IOResult[PhaseResult, PhaseFault]:
    if env.dry_run:
        return IOSuccess(PhaseResult(counts={**found.counts(), "would_call": len(found.taken)},
                                     warnings=found.warnings))
    budget = env.calls.capped(TRACE_CALLS, name=f"{PHASE}'s")
    asker = BudgetedModel(model, budget)

    def finished(done: _Sessions, counted: tuple[Mapping[str, int], tuple[str, ...]]
                 ) -> Result[PhaseResult, PhaseFault]:
        done.tally.warnings.extend(counted[1])
        return finish_night(env, done, counted[0]).map(
            lambda night: _result(found, budget.used, night[0], night[1])).alt(
            lambda error: PhaseFault(describe(error)))

    def applied(asked: tuple[Asked, ...]) -> IO[Result[PhaseResult, PhaseFault]]:
        sessions = apply_sessions(env, asked, found.empty)
        if not is_successful(sessions):
            return IO(Failure(PhaseFault(describe(sessions.failure()))))
        done = sessions.unwrap()
        return count_barren(env.state, env.run_id, env.stamp, done).map(
            lambda counted: finished(done, counted))

    return IOResult.from_typecast(ask_all(asker, found.taken).bind(applied))


def trace_consolidation(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """The phase body (see the module docstring)."""
    model = env.model
    if model is None:
        return IOSuccess(without_model())
    source = env.transcripts
    if source is None:
        return IOSuccess(PhaseResult(counts={"skipped": "no transcripts_dir"},
                                     reason=NO_SOURCE))
    surveyed: IOResult[Survey, StateError] = survey(source, env.state, env.stamp)
    return surveyed.alt(lambda error: PhaseFault(
        f"the state plane could not say which sessions are consolidated: "
        f"{error.reason}")).bind(lambda found: _night(env, model, found))
