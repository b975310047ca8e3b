"""Phase 10, compress: fold a community's fading memories into canonicals the model
writes. One commit per batch that wrote anything.

**Candidates.** Retention is scored as retention-triage scores it (the same facts, the
same graph of file links plus this run's mined edges), and the memories in the
``compress`` band are taken: active, not tasks, neither kept nor evicted. Each is
grouped by its community in that same graph. A candidate with no community is left
alone here: a community is the evidence that its members are about one thing, and
grouping the rest another way is the deep run's business (below). A community holding a
single candidate is not asked about either, since a canonical replaces at least two
memories.

**Order**, so the prompt bytes are a function of the corpus alone: communities by name
(their smallest member path, which ``domain.graph`` makes stable), and each community's
candidates oldest first by ``(created_at, path)``. At most ``COMPRESS_CANDIDATES`` are
taken in that order; the rest wait for another night (``capped``).

**Batches** hold one community each: ``COMPRESS_BATCH`` members at most, a community
that fits never split, a larger one cut into consecutive batches of its own
(``pack_groups``). A batch is one community so that the model only ever relates
memories the graph already relates. A cut that leaves a lone member is not asked about
(``lone``): no canonical can be made of one.

**The answer** is zero or more canonicals, each a title, a claim, short body paragraphs
and the keys of the members it absorbs. An answer off the schema, or naming any key the
batch did not offer (another batch's ``m99``, a path), is refused whole and the batch
skipped: its text may carry facts of a member it failed to name. Everything else is
code's decision:

- a canonical absorbing fewer than two members is skipped (``too_few``); one naming a
  member an earlier canonical of the same answer took is refused (``refused``);
- a canonical is written only if its text is the members' (``sleep.grounded``): its
  title, claim and each paragraph words, not a key, a number or a fragment, and drawn
  from the members' titles, claims and articles (``DRAWN_FLOOR`` of its content
  terms), and each member it would archive has its claim carried (``CARRIED_FLOOR`` of
  the claim's terms among the canonical's); otherwise it is refused whole
  (``refused_ungrounded``), its members left as they are, each fault a
  ``model-refused`` record in the run's ledger with the rule, the part and the overlap
  against its floor;
- the canonical is a new ``semantic`` memory by ``agent:sleep``, written through the
  template (model text is escaped, never pasted as markup) into the directory of its
  oldest member, carrying the members' entities;
- each absorbed member that is not a dated episode is archived superseded by the
  canonical (``archive_many_step``, which rewrites every href to it), and the canonical
  links ``supersedes`` to each archive path;
- a dated episode (``head.is_dated_episode``) is never archived: the day it records
  duplicates no other day. The canonical summarises it and links ``relates_to`` it, and
  it gains ``part_of`` the canonical (``episodes_kept``);
- a member the answer does not name stays active with its text as it was (only an
  href of its to an archived member follows that member): omission is the safe outcome
  of any answer.

A canonical is all or nothing: when the store refuses any of its steps (an archive path
already taken this year, a title the template refuses), none of it is written and it is
counted ``refused`` with a warning.

**What is never folded** (``sleep.protected``): before any batch is cut, a member of a
group that is an arc, a person's file, a task, something an earlier phase of this run
made or decided on, one side of a pair a person is asked about (an open dedup-merge or
edge-typing task), or one side of a near-duplicate pair the merge veto refuses is taken
out of the group (``protected``); a group left with one member is not asked about. A
canonical the answer writes over two near duplicates the veto refuses, or over two
memories linked ``contradicts``, is refused whole (``refused_protected``), whatever the
model answered. Each such member is a ``compress-refused`` record in the run's ledger,
with its rule and why, so the night says what it would not fold and not only how much.

Counts: ``candidates``, ``communities``, ``canonicals``, ``archived``, ``episodes_kept``,
``too_few``, ``refused``, ``refused_protected``, ``refused_ungrounded``, ``protected``,
``capped``, ``lone``,
``without_community``, ``singletons``,
and the kernel's ``batches``, ``calls``, ``failed_batches``, ``budget_skipped``,
``unknown_keys``; a dry run counts ``would_call`` and asks nothing.

**Deep sleep** (``--deep``) widens the reach in three ways and changes nothing else (the
answer's rules, the episode exemption and the commits are the same):

- *The deep graph.* Communities come from label propagation over the file links, the
  mined edges and relationship-mining's grouping band (``env.lateral``). Retention
  bands are still scored without the band: it may group memories, never decide which
  ones fade.
- *Entity groups.* A candidate the deep graph still leaves without a community may share
  an entity with others: for each entity in sorted order that 2 to
  ``ENTITY_HUB_CLAIMANTS`` active non-task memories claim, the candidates claiming it
  and not yet grouped form one group (``entity:<name>``), so a candidate joins the
  first such entity in that order. A group needs two candidates, as a community does.
  An entity claimed by more is a hub (the user's employer, a project's name): sharing
  it says nothing about a subject, so it is skipped (``hubs_skipped``, counted once per
  hub a community-less candidate claims). Entity groups follow every community in the
  prompt order (communities by name, then entities by name) and share its candidate
  cap; their members are ordered as a community's.
- *Passes.* A pass that folded (wrote at least one canonical) is followed by another,
  ``DEEP_COMPRESS_PASSES`` in all at most, since a canonical is a new neighbour and a
  new community member. The next pass selects from the version the last one left (the
  plan's view: archived members gone, canonicals present); each new canonical is
  embedded by ``env.embedder`` into a copy of the run's vector cache, and its edges in
  both bands (``relationship_mining.neighbour_edges``, the mining phase's k and floors)
  join the mined and band sets, while edges to archived members drop out. A spent
  budget (the run's, or this phase's cap, which holds for all the passes together) ends
  the passes: the next could ask nothing. One plan runs through every pass, so each
  batch that wrote is still one commit, landing on the one before (a later pass's
  subject says which pass it was). The extended cache is handed on
  (``PhaseResult.vectors``) so later phases see the canonicals' vectors.

  Each batch is one group, a community or an entity group (``entity <name>`` in its
  commit subject). Counts are summed over the passes (``band`` and ``candidates``
  too: a memory offered twice counts twice), ``communities`` counts community groups
  only, and a deep run adds ``passes``, ``entity_groups``, ``entity_grouped`` and
  ``hubs_skipped``; ``embedded`` (vectors made now) is observed, not counted. A dry run
  makes pass 1's selection and counts its ``would_call``, asking nothing and embedding
  nothing.

What the model is asked and how its answer is read are in ``compress_prompt``; which
memories are offered, and in which batches, in ``compress_selection``. This module is
the rule: what an answer may write, and the passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeAlias

from returns.io import IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import AccessCount
from memhtml.domain.merge import VetoCache
from memhtml.domain.thresholds import COMPRESS_CALLS, DEEP_COMPRESS_PASSES
from memhtml.head import (
    FillResult,
    VectorCache,
    build_indexes,
    fill_vectors,
    view_of,
)
from memhtml.sleep.batch import BatchOutcome, BatchRun, ask_batches
from memhtml.sleep.budget import BudgetedModel
from memhtml.sleep.contract import LOG_START
from memhtml.sleep.decisions import Decision, model_figures
from memhtml.sleep.grounded import (
    Fault,
    Member,
    Written,
    carried_faults,
    source_terms,
    written_faults,
)
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import (
    PhaseCommit,
    PhaseEnv,
    PhaseFault,
    PhaseResult,
    staged,
    staged_delta,
    without_model,
)
from memhtml.sleep.phases.compress_prompt import MIN_ABSORBED, SPEC, Candidate, Canonical
from memhtml.sleep.phases.compress_selection import (
    ENTITY_GROUP,
    Corpus,
    Selection,
    batches_of,
    next_corpus,
    select,
)
from memhtml.sleep.phases.retention_triage import is_scored
from memhtml.sleep.protected import Protection, Refusal, distinct, protect, refuse_canonical
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store.errors import Refused, StoreError, describe, is_refusal
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import archive_path
from memhtml.store.plan import Plan, archive_many_step, link_step, write_step

PHASE: Final = "compress"
KERNEL_COUNTS: Final[tuple[str, ...]] = ("batches", "calls", "failed_batches", "budget_skipped",
                        "unknown_keys")


# --------------------------------------------------------------------------- applying


@dataclass(frozen=True, slots=True)
class Tally:
    canonicals: int = 0
    archived: int = 0
    episodes_kept: int = 0
    too_few: int = 0
    refused: int = 0
    refused_protected: int = 0
    refused_ungrounded: int = 0


@dataclass(frozen=True)
class Guard:
    """What a canonical is checked against before it is written: the night's
    protection and the vectors the near-duplicate cosine is read from."""

    protection: Protection
    vectors: VectorCache | None
    veto: VetoCache



def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] + "/" if "/" in path else ""


def _write(plan: Plan, canonical: Canonical) -> Result[tuple[Plan, str, int, int], StoreError]:
    """Every step of one canonical: (plan, its path, members archived, episodes kept).
    A refused archive refuses the whole canonical."""
    oldest = min(canonical.members, key=lambda c: (c.record.created_at, c.path))
    episodes = tuple(c for c in canonical.members if c.episode)
    absorbed = tuple(c for c in canonical.members if not c.episode)
    entities = tuple(sorted({e for c in canonical.members for e in c.record.entities}))
    data = WriteInput(title=canonical.title, claim=canonical.claim, memory_type="semantic",
                      body=canonical.body, entities=entities, author=SLEEP_AUTHOR)
    summarised = tuple(Link("relates_to", to_document_path(c.path)) for c in episodes)
    match write_step(plan, data, _directory(oldest.path), summarised):
        case Success(written):
            current, path = written.plan, written.outcome.primary or ""
        case Failure(error):
            return Failure(error)
    href = to_document_path(path)
    match archive_many_step(current, [c.path for c in absorbed],
                            {c.path: href for c in absorbed}):
        case Success(done):
            if done.refused:
                return Failure(Refused("; ".join(f"{p}: {why}" for p, why in done.refused)))
            current = done.plan
        case Failure(error):
            return Failure(error)
    steps: list[tuple[str, str, str]] = [
        (path, "supersedes", to_document_path(to)) for _, to in done.archived]
    steps += [(c.path, "part_of", href) for c in episodes]
    for source, rel, target in steps:
        match link_step(current, source, rel, target):
            case Success(linked):
                current = linked.plan
            case Failure(error):
                return Failure(error)
    return Success((current, path, len(done.archived), len(episodes)))


Wrote: TypeAlias = tuple[str, tuple[str, ...]]
"""One canonical written: its path and the members it absorbed, in batch order."""


Applying: TypeAlias = tuple[Plan, Tally, tuple[Wrote, ...], tuple[str, ...],
                            tuple[Refusal, ...], tuple[PendingMark, ...]]
"""One batch applied: the plan, the tally, what each canonical wrote, warnings, the
refusals of canonicals the guard refused, and the records of text refused."""


def ungrounded(canonical: Canonical) -> tuple[Fault, ...]:
    """Why ``canonical``'s text may not replace its members (``sleep.grounded``): a
    title, claim or paragraph that is a key, a number or a fragment, or not drawn from
    the members' text; or an archived member whose claim it does not carry. Empty when
    it may."""
    text = Written(canonical.title, canonical.claim, canonical.body)
    sources = source_terms(part for c in canonical.members
                           for part in (c.record.title, c.record.claim, c.record.body_text))
    faults = written_faults(text, sources)
    if faults:
        return faults
    return carried_faults(text, (Member(to_document_path(c.path), c.record.claim,
                                        archived=not c.episode)
                                 for c in canonical.members))


def apply_answer(plan: Plan, canonicals: Sequence[Canonical], tally: Tally,
                 guard: Guard | None = None, batch: int | None = None
                 ) -> Result[Applying, StoreError]:
    """One batch's canonicals in answer order. A canonical whose text is not drawn
    from its members or does not carry each of them (``ungrounded``) is skipped whole,
    a ``model-refused`` record each fault; so is one the guard refuses (a protected
    member, two near duplicates the veto refuses, two memories linked
    ``contradicts``); a store refusal skips its canonical; any other store error stops
    the phase."""
    current = plan
    taken: set[str] = set()
    wrote: list[Wrote] = []
    warnings: list[str] = []
    refusals: list[Refusal] = []
    marks: list[PendingMark] = []
    t = tally
    for canonical in canonicals:
        paths = [c.path for c in canonical.members]
        if len(paths) < MIN_ABSORBED:
            t = _bump(t, too_few=1)
            continue
        if taken.intersection(paths):
            t = _bump(t, refused=1)
            warnings.append(f"canonical {canonical.title!r} not written: it names a member "
                            "an earlier canonical of its answer absorbed")
            continue
        faults = ungrounded(canonical)
        if faults:
            t = _bump(t, refused_ungrounded=1)
            subject = f"canonical over {', '.join(paths)}"
            marks += [fault.mark(PHASE, subject, batch) for fault in faults]
            warnings.append(f"{subject} not written: {faults[0].detail}")
            continue
        why = () if guard is None else refuse_canonical(
            [c.record for c in canonical.members if not c.episode], guard.protection,
            guard.vectors, guard.veto)
        if why:
            t = _bump(t, refused_protected=1)
            refusals += why
            warnings.append(f"canonical {canonical.title!r} over {', '.join(paths)} not "
                            f"written: {why[0].path} is {why[0].detail}")
            continue
        match _write(current, canonical):
            case Success((after, path, archived, kept)):
                current = after
                taken.update(paths)
                t = _bump(t, canonicals=1, archived=archived, episodes_kept=kept)
                wrote.append((path, tuple(paths)))
            case Failure(error) if is_refusal(error):
                t = _bump(t, refused=1)
                warnings.append(f"canonical {canonical.title!r} over {', '.join(paths)} "
                                f"not written: {describe(error)}")
            case Failure(error):
                return Failure(error)
    return Success((current, t, tuple(wrote), tuple(warnings), tuple(refusals),
                    tuple(marks)))


def _bump(t: Tally, *, canonicals: int = 0, archived: int = 0, episodes_kept: int = 0,
          too_few: int = 0, refused: int = 0, refused_protected: int = 0,
          refused_ungrounded: int = 0) -> Tally:
    return Tally(t.canonicals + canonicals, t.archived + archived,
                 t.episodes_kept + episodes_kept, t.too_few + too_few, t.refused + refused,
                 t.refused_protected + refused_protected,
                 t.refused_ungrounded + refused_ungrounded)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class Applied:
    """What the batches applied so far amount to: the one plan every pass writes
    through, the bytes it staged at the last commit, the tally, the commits, the
    warnings, and the canonicals written (paths, in order)."""

    plan: Plan
    staged: Mapping[str, bytes | None]
    tally: Tally
    commits: tuple[PhaseCommit, ...] = ()
    warnings: tuple[str, ...] = ()
    canonicals: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    """Every member kept out or refused so far, each with why."""
    marks: tuple[PendingMark, ...] = ()
    """A ``model-refused`` record for each fault of each canonical refused so far."""

    @classmethod
    def start(cls, env: PhaseEnv) -> Applied:
        return cls(Plan.start(env.version, env.now), {}, Tally())


def _source(group: str) -> str:
    """A group as a commit subject names it."""
    if group.startswith(ENTITY_GROUP):
        return f"entity {group.removeprefix(ENTITY_GROUP)}"
    return f"community {group}"


def compress_decisions(plan: Plan, outcome: BatchOutcome[Candidate, tuple[Canonical, ...]],
                       wrote: Sequence[Wrote], number: int = 1) -> tuple[Decision, ...]:
    """One batch's canonicals as decisions: each canonical created, each member it
    absorbed merged into it (archived) or, a dated episode, linked part_of it; every
    one naming the answer it came from (the batch, the keys) and its group."""
    keys = {member.path: key for key, member in outcome.keys.entries}
    group = outcome.members[0].community if outcome.members else ""
    out: list[Decision] = []
    for path, members in wrote:
        common = model_figures(outcome.index + 1, None, group=group,
                               **({"pass": number} if number > 1 else {}))
        out.append(Decision.of(PHASE, "created", path, "canonical-written", related=members,
                               figures={**common, "key": " ".join(
                                   keys.get(m, "?") for m in members)}))
        for member in members:
            figures = {**common, "key": keys.get(member), "canonical": path}
            if plan.view.get(member) is None:
                out.append(Decision.of(PHASE, "merged", member, "absorbed-by-canonical",
                                       to=archive_path(member, plan.year), related=(path,),
                                       figures=figures))
            else:
                out.append(Decision.of(PHASE, "rewritten", member, "episode-part-of",
                                       related=(path,), figures=figures))
    return tuple(out)


def commits_of(env: PhaseEnv, run: BatchRun[Candidate, tuple[Canonical, ...]],
               applied: Applied, number: int = 1, guard: Guard | None = None
               ) -> Result[Applied, StoreError]:
    """Each answered batch of pass ``number`` applied in order over ``applied``, one
    commit per batch that wrote anything, each landing on the one before."""
    plan, before, tally = applied.plan, applied.staged, applied.tally
    label = "" if number == 1 else f"pass {number}: "
    commits: list[PhaseCommit] = list(applied.commits)
    warnings: list[str] = [*applied.warnings, *(label + line for line in run.failures())]
    written: list[str] = list(applied.canonicals)
    refusals: list[Refusal] = list(applied.refusals)
    marks: list[PendingMark] = list(applied.marks)
    for outcome in run.answered:
        if not outcome.answer:
            continue
        start = tally
        match apply_answer(plan, outcome.answer, tally, guard, outcome.index + 1):
            case Success((plan, tally, wrote, warned, refused, marked)):
                warnings += warned
                refusals += refused
                marks += marked
            case Failure(error):
                return Failure(error)
        written += [path for path, _ in wrote]
        after = staged(plan)
        changes = staged_delta(env.version, before, after)
        before = after
        if not changes:
            continue
        made = tally.canonicals - start.canonicals
        archived = tally.archived - start.archived
        subject = (f"{_plural(made, 'canonical', 'canonicals')} compressed from "
                   f"{_source(outcome.members[0].community)}, "
                   f"{_plural(archived, 'memory', 'memories')} archived")
        if number > 1:
            subject += f" (pass {number})"
        body = "; ".join(f"{path} absorbs {', '.join(members)}" for path, members in wrote)
        commits.append(PhaseCommit(subject, changes, body,
                                   decisions=compress_decisions(plan, outcome, wrote, number)))
    return Success(Applied(plan, before, tally, tuple(commits), tuple(warnings),
                           tuple(written), tuple(refusals), tuple(marks)))


def _counts(selection: Selection, lone: int, *, deep: bool) -> dict[str, int]:
    counts = {"band": selection.band, "candidates": selection.candidates,
              "protected": len(selection.protected),
              "communities": len(selection.groups) - selection.entity_groups,
              "without_community": selection.without_community,
              "singletons": selection.singletons, "capped": selection.capped, "lone": lone}
    if deep:
        counts |= {"entity_groups": selection.entity_groups,
                   "entity_grouped": selection.entity_grouped,
                   "hubs_skipped": selection.hubs_skipped}
    return counts


def _summed(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {key: a.get(key, 0) + b.get(key, 0) for key in (*a, *(k for k in b if k not in a))}


# --------------------------------------------------------------------------- passes


@dataclass(frozen=True)
class Night:
    """The passes made so far: what they applied, their summed selection and kernel
    counts, how many there were, the vector cache as extended, and vectors embedded."""

    applied: Applied
    counts: Mapping[str, int]
    passes: int
    vectors: VectorCache | None
    embedded: int = 0


Embedded: TypeAlias = tuple[VectorCache | None, int, tuple[str, ...]]
"""The cache after embedding, the vectors embedded, and warnings."""


def _embed(env: PhaseEnv, cache: VectorCache | None, records: Sequence[MemoryRecord]
           ) -> IOResult[Embedded, PhaseFault]:
    """``records``' vectors added to a copy of ``cache`` (the cache is a persistent
    map, so the run's own is untouched): (cache, vectors embedded, warnings). With no
    embedder or no cache the canonicals go without; an embedder that fails costs
    their edges and a warning, never the phase."""
    embedder = env.embedder
    if embedder is None or cache is None or not records:
        return IOSuccess((cache, 0, ()))
    filled: IOResult[FillResult, EmbedFailure] = fill_vectors(
        view_of(build_indexes(records), None), cache, embedder)

    def failed(error: EmbedFailure) -> IOResult[Embedded, PhaseFault]:
        return IOSuccess((cache, 0, (
            f"new canonicals not embedded, so no edges of theirs: {error.reason}",)))

    made: IOResult[Embedded, EmbedFailure] = filled.map(
        lambda done: (done.cache, done.counts.embedded, ()))
    return made.lash(failed)


def _pass(env: PhaseEnv, asker: BudgetedModel, accesses: Mapping[str, AccessCount],
          corpus: Corpus, night: Night, protection: Protection, veto: VetoCache
          ) -> IOResult[Night, PhaseFault]:
    """One pass over ``corpus``, and the next while this one folded (deep runs only)."""
    number = night.passes + 1
    selection = select(corpus, accesses, env.stamp, deep=env.deep, protection=protection)
    batches, lone = batches_of(selection)
    guard = Guard(protection, night.vectors, veto)

    def answered(run: BatchRun[Candidate, tuple[Canonical, ...]]
                 ) -> IOResult[Night, PhaseFault]:
        start = replace(night.applied, refusals=(*night.applied.refusals,
                                                 *selection.protected))
        done: Result[Applied, PhaseFault] = commits_of(
            env, run, start, number, guard).alt(lambda error: PhaseFault(describe(error)))
        return IOResult.from_result(done).bind(lambda applied: onward(run, applied))

    def onward(run: BatchRun[Candidate, tuple[Canonical, ...]], applied: Applied
               ) -> IOResult[Night, PhaseFault]:
        counts = _summed(night.counts, {**_counts(selection, lone, deep=env.deep),
                                        **run.counts()})
        after = Night(applied, counts, number, night.vectors, night.embedded)
        folded = applied.tally.canonicals > night.applied.tally.canonicals
        # A spent budget ends the passes: the next could only count what it never asked.
        if (not env.deep or not folded or number >= DEEP_COMPRESS_PASSES
                or asker.budget.remaining == 0):
            return IOSuccess(after)
        fresh = applied.canonicals[len(night.applied.canonicals):]
        view = applied.plan.view
        records = [r for path in fresh if (r := view.get(path)) is not None and is_scored(r)]
        return _embed(env, night.vectors, records).bind(lambda got: _pass(
            env, asker, accesses, next_corpus(corpus, view, fresh, got[0]),
            Night(replace(applied, warnings=(*applied.warnings, *got[2])), counts, number,
                  got[0], after.embedded + got[1]), protection, veto))

    # The kernel never fails: every way a batch goes wrong is one of its outcomes.
    asked: IOResult[BatchRun[Candidate, tuple[Canonical, ...]], PhaseFault] = (
        IOResult.from_io(ask_batches(asker, SPEC, batches)))
    return asked.bind(answered)


def _result(env: PhaseEnv, night: Night) -> PhaseResult:
    tally = night.applied.tally
    counts: dict[str, int] = dict(night.counts)
    kernel = {key: counts.pop(key) for key in KERNEL_COUNTS if key in counts}
    refusals = distinct(night.applied.refusals)
    counts |= {"canonicals": tally.canonicals, "archived": tally.archived,
               "episodes_kept": tally.episodes_kept, "too_few": tally.too_few,
               "refused": tally.refused, "refused_protected": tally.refused_protected,
               "refused_ungrounded": tally.refused_ungrounded,
               "protected": len({r.path for r in refusals
                                 if r.rule not in ("veto-pair", "contradicts")}),
               **kernel}
    marks = (*(refusal.mark() for refusal in refusals), *night.applied.marks)
    if not env.deep:
        return PhaseResult(counts=counts, commits=night.applied.commits,
                           warnings=night.applied.warnings, marks=marks)
    grown = night.vectors if night.embedded else None
    return PhaseResult(counts={**counts, "passes": night.passes},
                       commits=night.applied.commits, warnings=night.applied.warnings,
                       vectors=grown, observed={"embedded": night.embedded}, marks=marks)


def compress(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    model = env.model
    if model is None:
        return IOSuccess(without_model())
    # Outside --deep the band is not read at all, whatever the run hands over.
    first = Corpus(env.version, env.mined, env.lateral if env.deep else None)

    veto = VetoCache()
    protection = protect(env.base_version, env.version, env.mined, veto)

    def selected(accesses: Mapping[str, AccessCount]) -> IOResult[PhaseResult, PhaseFault]:
        if env.dry_run:
            selection = select(first, accesses, env.stamp, deep=env.deep,
                               protection=protection)
            batches, lone = batches_of(selection)
            return IOSuccess(PhaseResult(counts={**_counts(selection, lone, deep=env.deep),
                                                 "would_call": len(batches)}))
        asker = BudgetedModel(model, env.calls.capped(COMPRESS_CALLS, name="compress's"))
        start = Night(Applied.start(env), {}, 0, env.vectors)
        return _pass(env, asker, accesses, first, start, protection, veto).map(
            lambda night: _result(env, night))

    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read").alt(lambda error: PhaseFault(
            f"the state plane's access log cannot be read: {error.reason}"))
    return read.bind(selected)
