"""Phase 2, dedup-merge (the deterministic floor): fold what the files or a cosine prove
is one memory written twice, and hand every fold the veto refuses to a person. One commit.

Why it runs before compress and retention-triage: both read the post-merge set, and a
corpus still holding its duplicates would have them compress a pair this phase then
archives half of.

**Members** are the active non-task records in corpus order (``neighbours.corpus_order``):
tasks are never folded (two open tasks with one body are two pieces of work), archived
files are history, and a file the head could not parse is not a record, so it is never
read or moved. A member's offset in that order is what makes the older file the keeper.
Two members created in the same second are ordered by which was committed first: the
phase asks git how long each tied path has been on the branch (``Repository.arrivals``,
the first-parent history of the version it reads) and hands that to the order
(``domain.merge.keeper_key``), so the newer of two same-second files never keeps on
the strength of a smaller name. Only tied paths are looked up; a history that cannot
be read leaves the ties to the path, with a warning.

**Proposals**, from three sources in this order:

- *content-hash twins*: members whose articles hash alike. An article with no text
  hashes like every other empty one, so for those the title joins the key: two empty
  articles are one memory only when they are also named alike;
- *frame-key twins*: members whose claims are the same words up to case, punctuation
  and spacing. This is what folds exact duplicates in a store with no vectors. A
  member with no claim has no frame key worth comparing (every claimless file would
  share it), so it is twinned by hash alone;
- *mined pairs*, when the run has a vector plane: pairs strictly above
  ``NEAR_DUPLICATE_THRESHOLD`` from ``scan_neighbours``. A member with no usable
  vector (an empty article, say) is only ever proposed as a twin.

Twins are grouped over both keys at once (a union of the two relations), and every
member of a group is proposed against the group's oldest member, so a group of N
folds its N-1 copies into one keeper in one night and no copy is left to fold into a
second keeper the night after. Members the veto refuses against the keeper are
proposed again among themselves (against the oldest of them), so two copies of a
correction still become one. A twin pair is offered at similarity 1.0: its key is
proof of identity, not a cosine. A mined pair between two members of one twin group
is not offered again: the group already decided it.

Every proposal goes through ``merge_candidates`` (orientation: the older keeps) and
``merge_outcomes`` (self-merge, the divergence veto, the role guard and the per-night
cap of ``MAX_MERGE_PAIRS``), so no fold skips the one filter every fold must pass.

**A fold** archives the dropped file with ``memhtml-superseded-by`` naming its keeper
(one bulk ``archive_many_step``, which also rewrites every href to the dropped file),
then links the keeper ``supersedes`` to the archive path. Nothing is deleted. An
archive path already taken this year is refused and counted (``refused``), and the
keeper is then not linked: a link to an archive that holds a different memory would
say something false.

**A vetoed pair** becomes a detected task of detector ``dedup-merge`` naming the
predicates that fired (a measurement, not a quote), its canonical finding the sorted
pair of paths and the sorted predicates, so the next night refreshes the same file
rather than opening a twin. A pair one of whose files this night folds away is not
made a task: that file's claim lives on in its keeper, and the task would close itself
the next night. The night's open tasks of the detector whose finding it no longer
produces are closed, but only when it judged its whole candidate set: not when the cap
cut the proposals short, and not on a night without the vector plane in a store that
has one (an embedder is configured), since the cosine pairs then went unread.

**With a model bound** the phase also asks which members in the band a cosine cannot
settle (from ``DEDUP_RECALL_FLOOR`` up to the merge cosine) are one memory:

- *candidates*: pairs at cosine ``>= DEDUP_RECALL_FLOOR`` from the same neighbour scan
  (the pairs strictly above ``NEAR_DUPLICATE_THRESHOLD`` are read off that one scan, so
  the deterministic proposals are those of a night with no model), united with the twin
  groups (frame-key and content-hash matches);
- *components*: connected components over that union, members in corpus order, the
  components ordered by their oldest member. A component of one twin group is already
  decided by its key and is not asked; one larger than ``DEDUP_COMPONENT_CAP`` is a
  flood no single answer can be trusted on, and is not asked (``components_oversize``);
  past ``DEDUP_COMPONENTS_PER_NIGHT`` the rest wait for the next night
  (``components_deferred``);
- *the question*: whole components packed ``DEDUP_MEMBERS_PER_CALL`` members a call
  through the batching kernel (``run_packed``: a component is never split), at most
  ``DEDUP_CALLS`` calls drawn from the run's budget. Each member is shown under its
  opaque key with its component's number, title, claim and article (cut at
  ``MEMBER_TEXT_CHARS``); the path never. The answer is groups of keys that are one
  memory. A group is read only inside a component: members of one group from two
  components are taken as two groups (one of them alone is no group), since the model
  was asked about each component on its own. A key the batch did not offer, or an
  answer that breaks the shape, skips its batch (counted).

A group never folds what ``sleep.protected`` keeps out of a fold: a member that is an
arc, a person's file, a task, a file made or decided on earlier in the run, or one side
of a pair a person is asked about is taken out of its group before the groups are
offered (a group left with one member is none), and each is a ``model-refused`` record
in the run's ledger with the rule and why (``model_refused_protected``). A night's
deterministic proposals are not touched by this: binding a model adds no fold a night
without one would not make.

The model never picks a keeper: a group's keeper is its member with the lowest corpus
offset, and every other member is proposed against it (source ``model``). The groups,
ordered by their oldest member, are offered to ``merge_candidates`` first, then every
proposal of the no-model path, so a night with a model is offered everything a night
without one is, and every fold still passes ``merge_outcomes``: binding a model changes
the candidates, never the filter. Where both name one path, the group claims it first
(the model read the files; the cosine read neither). A vetoed model pair becomes a task
like any other. Stale tasks are swept only when, besides the above, every batch was
answered and no component was deferred.

A dry run asks nothing: it reports what the deterministic proposals would fold (as
without a model) and the calls the components would take (``would_call``).

Counts: ``members``, ``with_vector``, ``hash_twins``, ``frame_twins``, ``mined``
(proposals per source), ``folded``, ``vetoed`` and ``vetoed_<predicate>`` for each of
``VETO_PREDICATES`` (a pair two predicates refused is in both), ``vetoed_folded`` (vetoed
pairs not made tasks because one file folded away), ``role_guarded``, ``self_merges``,
``capped``, ``refused``, ``missing_text``, and the detected tasks' ``tasks_*``. With a
model bound also ``components`` (asked), ``components_oversize``,
``components_deferred``, ``model_groups``, ``model_pairs``, ``model_refused_protected``
and the kernel's ``batches``,
``calls``, ``failed_batches``, ``budget_skipped`` and ``unknown_keys`` (a dry run:
``components``, ``components_oversize``, ``components_deferred`` and ``would_call``).

What is proposed, and which components are asked about, is in ``dedup_candidates``;
what the model is asked and how its answer is read, in ``dedup_prompt``. This module is
the rule: the one filter, the folds, and the vetoed pairs handed to a person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from returns.io import IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import GitError
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.services import LanguageModel
from memhtml.domain.merge import (
    VETO_PREDICATES,
    CorpusMember,
    MergeOutcomes,
    VetoCache,
    VetoedProposal,
    merge_candidates,
    merge_outcomes,
)
from memhtml.domain.thresholds import (
    DEDUP_CALLS,
    DEDUP_MEMBERS_PER_CALL,
    MAX_MERGE_PAIRS,
    NEAR_DUPLICATE_THRESHOLD,
)
from memhtml.sleep.batch import BatchRun, pack_groups, run_packed
from memhtml.sleep.budget import BudgetedModel
from memhtml.sleep.decisions import Decision, FigureValue, model_figures
from memhtml.sleep.findings import Finding, Measurement, TaskCounts
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.neighbours import tied_paths
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult, TaskBudget
from memhtml.sleep.phases.dedup_candidates import (
    ProposalKind,
    Proposed,
    candidates,
    propose,
)
from memhtml.sleep.phases.dedup_prompt import SPEC, Group, Row, model_groups
from memhtml.sleep.protected import Protection, protect
from memhtml.sleep.tasks import close_stale, commit_body, mint_tasks
from memhtml.store.errors import StoreError, describe, is_refusal
from memhtml.store.plan import Plan, archive_many_step, link_step

DETECTOR: Final = "dedup-merge"
"""The detector name the vetoed pairs' tasks carry (a tag, and part of their digest)."""


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html")


def _how(kind: ProposalKind, similarity: float | None) -> str:
    if kind == "hash":
        return "the same article, by content hash"
    if kind == "frame":
        return "the same claim in the same words, by frame key"
    if kind == "model":
        return "grouped as one memory by the language model"
    return f"cosine {similarity:.4f}" if similarity is not None else "cosine"


def veto_finding(vetoed: VetoedProposal, kind: ProposalKind) -> Finding:
    """The detected task of one refused fold: the predicates that fired, measured."""
    proposal = vetoed.proposal
    first, second = sorted((proposal.keep_path, proposal.drop_path))
    predicates = tuple(sorted(vetoed.predicates))
    named = ", ".join(predicates)
    figures: tuple[tuple[str, FigureValue], ...] = (
        ("cosine", proposal.similarity), ("source", kind))
    return Finding(
        figures=figures, related=(first, second),
        detector=DETECTOR,
        finding=f"{first} | {second} | {'+'.join(predicates)}",
        title=f"Review a refused merge: {_name(first)} and {_name(second)}",
        statement=(f"{to_document_path(proposal.keep_path)} and "
                   f"{to_document_path(proposal.drop_path)} were proposed as one memory "
                   f"({_how(kind, proposal.similarity)}), and the merge veto refused the fold "
                   f"({named}): decide whether one corrects the other or both stand."),
        evidence=Measurement("predicate", named),
    )


@dataclass(frozen=True, slots=True)
class _Applied:
    plan: Plan
    folded: int
    refused: tuple[tuple[str, str], ...]
    tasks: TaskCounts
    vetoed_folded: int
    warnings: tuple[str, ...]
    moved: tuple[tuple[str, str], ...] = ()
    """(dropped path, its archive path) of every fold."""


RULE_OF: Final[Mapping[ProposalKind, str]] = {
    "hash": "content-hash-twin", "frame": "frame-key-twin",
    "cosine": "near-duplicate-cosine", "model": "model-group"}
"""The decision rule each source of a fold is recorded under."""


def fold_decisions(proposed: Proposed, outcomes: MergeOutcomes, applied: _Applied,
                   placed: Mapping[str, tuple[int, str]] | None = None
                   ) -> tuple[Decision, ...]:
    """Each fold as two decisions: the copy folded (archived, superseded by its
    keeper) and the keeper rewritten to link supersedes to it; the rule is where the
    pair came from, the figures its cosine (1.0 for a twin: its key proves identity)
    and, for a model's group, the batch and key each member was offered under."""
    by_drop = {d.drop_path: d for d in outcomes.committed}
    out: list[Decision] = []
    for drop, to in applied.moved:
        fold = by_drop.get(drop)
        if fold is None:
            continue
        kind = proposed.kinds.get(frozenset((fold.keep_path, drop)), "cosine")
        figures: dict[str, FigureValue] = {"cosine": fold.similarity, "source": kind}
        if kind == "model" and placed is not None:
            batch, key = placed.get(drop, (None, None))
            figures |= model_figures(batch, key, keeper_key=placed.get(
                fold.keep_path, (None, None))[1])
        out.append(Decision.of("dedup-merge", "folded", drop, RULE_OF[kind], to=to,
                               related=(fold.keep_path,), figures=figures))
        out.append(Decision.of("dedup-merge", "rewritten", fold.keep_path,
                               "keeper-supersedes", related=(drop,), figures=figures))
    return tuple(out)



def _fold(plan: Plan, outcomes: MergeOutcomes
          ) -> Result[tuple[Plan, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...],
                            tuple[str, ...]], StoreError]:
    """Archive each dropped file superseded by its keeper, then link each keeper whose
    copy was archived to the archive path. (plan, archived paths, refused, warnings)."""
    keepers = {d.drop_path: d.keep_path for d in outcomes.committed}
    if not keepers:
        return Success((plan, (), (), ()))
    match archive_many_step(plan, [d.drop_path for d in outcomes.committed],
                            {drop: to_document_path(keep) for drop, keep in keepers.items()}):
        case Success(done):
            current = done.plan
        case Failure(error):
            return Failure(error)
    warnings = [f"{path} not folded into {keepers[path]}: {why}" for path, why in done.refused]
    for moved, to in done.archived:
        match link_step(current, keepers[moved], "supersedes", to_document_path(to)):
            case Success(stepped):
                current = stepped.plan
            case Failure(error) if is_refusal(error):
                warnings.append(f"{keepers[moved]} folded {moved} but its supersedes link "
                                f"to {to} was not written: {describe(error)}")
            case Failure(error):
                return Failure(error)
    return Success((current, tuple(done.archived), done.refused, tuple(warnings)))


def apply_outcomes(plan: Plan, proposed: Proposed, outcomes: MergeOutcomes,
                   budget: TaskBudget, judged_all: bool, *, dismissed: frozenset[str]
                   ) -> Result[_Applied, StoreError]:
    """The folds, then the vetoed pairs as tasks (``dismissed``: the digests a person
    closed, see ``mint_tasks``), then the sweep of stale ones."""
    match _fold(plan, outcomes):
        case Success((folded_plan, archived, refused, warnings)):
            pass
        case Failure(error):
            return Failure(error)
    gone = frozenset(path for path, _ in archived)
    findings: list[Finding] = []
    vetoed_folded = 0
    for vetoed in outcomes.vetoed:
        p = vetoed.proposal
        if p.keep_path in gone or p.drop_path in gone:
            vetoed_folded += 1
            continue
        kind = proposed.kinds.get(frozenset((p.keep_path, p.drop_path)), "cosine")
        findings.append(veto_finding(vetoed, kind))
    produced = frozenset(f.finding for f in findings)
    minted = mint_tasks(folded_plan, findings, budget, dismissed=dismissed)
    swept = minted.bind(lambda got: close_stale(got[0], DETECTOR, produced, judged_all).map(
        lambda closed: (closed[0], got[1] + closed[1])))
    return swept.map(lambda done: _Applied(
        done[0], len(archived), refused, done[1], vetoed_folded,
        (*warnings, *done[1].warnings), archived))


def _counts(proposed: Proposed, outcomes: MergeOutcomes, applied: _Applied
            ) -> dict[str, int]:
    fired = {name: sum(1 for v in outcomes.vetoed if name in v.predicates)
             for name in VETO_PREDICATES}
    return {
        "members": len(proposed.members), "with_vector": proposed.with_vector,
        "hash_twins": proposed.count("hash"), "frame_twins": proposed.count("frame"),
        "mined": proposed.count("cosine"), "folded": applied.folded,
        "vetoed": len(outcomes.vetoed),
        **{f"vetoed_{name}": n for name, n in fired.items()},
        "vetoed_folded": applied.vetoed_folded,
        "role_guarded": len(outcomes.role_guarded), "self_merges": outcomes.self_merges,
        "capped": outcomes.capped, "refused": len(applied.refused),
        "missing_text": len(outcomes.missing_text),
        **applied.tasks.as_counts(),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _result(proposed: Proposed, outcomes: MergeOutcomes, applied: _Applied,
            asked: _Asked | None = None) -> PhaseResult:
    decisions = (*fold_decisions(proposed, outcomes, applied,
                                 None if asked is None else asked.placed),
                 *applied.tasks.decisions)
    counts: dict[str, int] = _counts(proposed, outcomes, applied)
    warnings = applied.warnings
    marks: tuple[PendingMark, ...] = ()
    if asked is not None:
        counts |= asked.counts
        warnings = (*asked.failures, *warnings)
        marks = asked.marks
    changes, _ = applied.plan.changes()
    if not changes:
        return PhaseResult(counts=counts, warnings=warnings, marks=marks)
    subject = (f"{_plural(applied.folded, 'duplicate')} folded, "
               f"{_plural(len(outcomes.vetoed), 'fold')} vetoed")
    parts = [f"proposed {len(proposed.pairs)}: {counts['hash_twins']} content-hash twin(s), "
             f"{counts['frame_twins']} frame-key twin(s), {counts['mined']} mined above "
             f"{NEAR_DUPLICATE_THRESHOLD}"]
    if asked is not None and "model_pairs" in asked.counts:
        parts.append(f"the model grouped {asked.counts['model_pairs']} pair(s) in "
                     f"{asked.counts['model_groups']} group(s) over "
                     f"{asked.counts['components']} component(s)")
    tasks = commit_body(applied.tasks)
    if tasks:
        parts.append(tasks)
    return PhaseResult(counts=counts, warnings=warnings, marks=marks,
                       commits=(PhaseCommit(subject, changes, "; ".join(parts),
                                            decisions=decisions),))


def judged_everything(env: PhaseEnv, outcomes: MergeOutcomes) -> bool:
    """Whether tonight read the detector's whole candidate set: the cap cut nothing,
    and the cosine pairs were read, or the store has no vector plane to read them in."""
    return outcomes.capped == 0 and (env.vectors is not None or env.embedder_name == "none")


def _decide(env: PhaseEnv, proposed: Proposed, cache: VetoCache,
            groups: Sequence[Sequence[CorpusMember]] = (), judged: bool = True,
            asked: _Asked | None = None) -> Result[PhaseResult, PhaseFault]:
    """The groups, then the deterministic proposals, through the one filter; the folds
    and tasks applied. ``judged``: whether whatever asked the model judged it all."""
    outcomes = merge_outcomes(merge_candidates(groups, proposed.pairs), MAX_MERGE_PAIRS,
                              cache)
    applied = apply_outcomes(Plan.start(env.version, env.now), proposed, outcomes,
                             env.budget, judged and judged_everything(env, outcomes),
                             dismissed=env.dismissed)
    return applied.map(lambda got: _result(proposed, outcomes, got, asked)).alt(
        lambda error: PhaseFault(describe(error)))


@dataclass(frozen=True, slots=True)
class KeeperHistory:
    """How long each path whose creation stamp ties another's has been on the branch,
    and why it is empty when the history could not be read."""

    arrivals: Mapping[str, int]
    warnings: tuple[str, ...] = ()


def keeper_history(env: PhaseEnv) -> IOResult[KeeperHistory, PhaseFault]:
    """``Repository.arrivals`` for the members whose stamps tie, at the version the
    phase reads. A failed read is no failed phase: the ties then go to the path, as
    they did before the history was read, and a warning says so."""
    tied = tied_paths(env.version)
    if not tied:
        return IOSuccess(KeeperHistory({}))
    read: IOResult[Mapping[str, int], GitError] = env.git.arrivals(
        env.version.sha or env.base, tied)
    return read.map(KeeperHistory).lash(lambda error: IOSuccess(KeeperHistory({}, (
        f"{len(tied)} members share a creation second with another and the branch's "
        f"history could not be read ({describe(error)}): their ties went to the "
        "smaller path",))))


def _noted(found: KeeperHistory, done: PhaseResult) -> PhaseResult:
    if not found.warnings:
        return done
    return replace(done, warnings=(*found.warnings, *done.warnings))


def dedup_merge(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """The phase body (see the module docstring): the deterministic floor, and with a
    model bound the model's groups offered before it."""

    def decided(found: KeeperHistory) -> IOResult[PhaseResult, PhaseFault]:
        if env.model is not None:
            return _with_model(env, env.model, found.arrivals).map(
                lambda done: _noted(found, done))
        cache = VetoCache()
        proposed = propose(env.version, env.vectors, cache, found.arrivals)
        return IOResult.from_result(_decide(env, proposed, cache)).map(
            lambda done: _noted(found, done))

    return keeper_history(env).bind(decided)


# --------------------------------------------------------------------------- with a model


@dataclass(frozen=True, slots=True)
class _Asked:
    """What asking the model added to the night: its counts and failed batches."""

    counts: dict[str, int]
    failures: tuple[str, ...] = ()
    placed: Mapping[str, tuple[int, str]] | None = None
    """Where each member the model was asked about was offered (path -> batch, key)."""
    marks: tuple[PendingMark, ...] = ()
    """A ``model-refused`` record for each member a group named that is protected."""


def unprotected(groups: Sequence[Sequence[CorpusMember]], protection: Protection
                ) -> tuple[tuple[tuple[CorpusMember, ...], ...], tuple[PendingMark, ...]]:
    """The model's groups without the members ``sleep.protected`` keeps out of every
    fold a model proposes (an arc, a person's file, a task, a file made or decided on
    earlier tonight, one side of a pair a person is asked about), a group left with one
    member dropped; and a ``model-refused`` record for each member taken out. The
    veto's pairs are not read here: every pair still passes ``merge_outcomes``, which
    refuses exactly the vetoed ones."""
    kept: list[tuple[CorpusMember, ...]] = []
    marks: list[PendingMark] = []
    for group in groups:
        members: list[CorpusMember] = []
        for member in group:
            refusal = protection.refusal(member.path)
            if refusal is None or refusal.rule == "veto":
                members.append(member)
                continue
            marks.append(PendingMark.of(
                "model-refused", phase=DETECTOR, rule=refusal.rule,
                subject="model group of " + ", ".join(m.path for m in group),
                detail=f"{member.path} not folded: {refusal.detail}", part=member.path))
        if len(members) >= 2:
            kept.append(tuple(members))
    return tuple(kept), tuple(marks)


def _model_kinds(proposed: Proposed, groups: Sequence[Sequence[CorpusMember]]) -> Proposed:
    """``proposed`` with every pair a group implies known as a model pair, unless the
    deterministic path proposed it too (its own kind then describes it)."""
    kinds: dict[frozenset[str], ProposalKind] = {
        frozenset((group[0].path, m.path)): "model" for group in groups for m in group[1:]}
    return replace(proposed, kinds={**kinds, **proposed.kinds})


def _with_model(env: PhaseEnv, model: LanguageModel,
                arrivals: Mapping[str, int] | None = None
                ) -> IOResult[PhaseResult, PhaseFault]:
    cache = VetoCache()
    found = candidates(env.version, env.vectors, cache, arrivals)
    counts = found.components.counts()
    if env.dry_run:
        would = len(pack_groups(found.rows, DEDUP_MEMBERS_PER_CALL))
        return IOResult.from_result(_decide(env, found.proposed, cache,
                                            asked=_Asked({**counts, "would_call": would})))
    asker = BudgetedModel(model, env.calls.capped(DEDUP_CALLS, name=f"{DETECTOR}'s"))

    def conclude(run: BatchRun[Row, tuple[Group, ...]]) -> Result[PhaseResult, PhaseFault]:
        groups, refused = unprotected(model_groups(run), protect(
            env.base_version, env.version, None, cache))
        asked = _Asked({**counts, "model_groups": len(groups),
                        "model_pairs": sum(len(g) - 1 for g in groups),
                        "model_refused_protected": len(refused), **run.counts()},
                       run.failures(), run.placed(lambda row: row.member.path), refused)
        judged = run.complete and found.components.deferred == 0
        return _decide(env, _model_kinds(found.proposed, groups), cache, groups, judged,
                       asked)

    return IOResult.from_io(run_packed(asker, SPEC, found.rows)).bind_result(conclude)
