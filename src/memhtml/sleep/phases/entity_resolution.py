"""Phase 3, entity-resolution, the pre-pass with no model: names normalized and merged
in place, the pairs a string cannot settle handed to a person. One commit.

Entities are ``type:name`` values on memories. Per type, every name is counted over
the active memories that are not tasks, and ``domain.entities.resolve_names`` does
the deciding: spellings that normalize alike are one name, pairs at or above the
auto-merge overlap merge (unless the guard sees two siblings, ``postgres-14`` and
``postgres-15``), and the aliases a person file declares merge whatever their
overlap. Then each file's values are rewritten to the surviving name: the survivor
is labelled and the old value unlabelled, so a file already naming the survivor
does not name it twice.

Why a declared alias merges on the first night while the review band waits: a
person file carrying ``memhtml-alias`` is someone's statement that two spellings are
one subject, where a character ratio is only a suspicion. An entity merge cannot be
undone by a later commit (the fused memories no longer say which subject each
meant), so every pair the ratio cannot prove, the 0.75 to 0.85 band and the guarded
pairs above it, becomes a detected task instead, with the measured ratio as its
evidence. With no model every candidate was judged, so a pair that stops appearing
closes its task.

Tasks are never rewritten (every phase excludes them), nor are archived memories,
which record what was true when they left; a file the head could not parse is not
a record, so it is never touched.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.contracts.ops import Put
from memhtml.contracts.record import MemoryRecord
from memhtml.domain.entities import (
    AliasGroup,
    Resolution,
    ReviewCandidate,
    normalize_entity_name,
    resolve_names,
)
from memhtml.domain.thresholds import AUTO_MERGE_THRESHOLD, REVIEW_THRESHOLD
from memhtml.format import add_meta, remove_meta, set_meta
from memhtml.head import HeadVersion, is_active, is_entity
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult, TaskBudget
from memhtml.sleep.tasks import (
    Finding,
    Measurement,
    TaskCounts,
    close_stale,
    commit_body,
    mint_tasks,
)
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.layout import PEOPLE
from memhtml.store.plan import Plan

DETECTOR: Final = "entity-resolution"
PERSON_TYPE: Final = "person"
"""The entity type a person file's ``memhtml-alias`` values speak for."""


def is_curated(record: MemoryRecord) -> bool:
    """Active and not a task: the memories whose names are counted and rewritten."""
    return is_active(record) and record.memory_type != "task"


def split_entity(entity: str) -> tuple[str, str] | None:
    """``type:name`` as ``(type, name)``; None for a value with no colon."""
    kind, colon, name = entity.partition(":")
    return (kind, name) if colon and kind else None


def entity_counts(records: Iterable[MemoryRecord]) -> Mapping[str, Mapping[str, int]]:
    """Type -> raw name -> how many of ``records`` name it (a file naming one value
    twice counts once), types and names in sorted order."""
    counts: dict[str, dict[str, int]] = {}
    for record in records:
        for entity in sorted(set(record.entities)):
            split = split_entity(entity)
            if split is not None:
                per_type = counts.setdefault(split[0], {})
                per_type[split[1]] = per_type.get(split[1], 0) + 1
    return MappingProxyType({kind: MappingProxyType(dict(sorted(counts[kind].items())))
                             for kind in sorted(counts)})


def person_alias_groups(records: Iterable[MemoryRecord]) -> tuple[AliasGroup, ...]:
    """One group per person file under ``resources/people/``: its ``person:`` name
    plus its ``memhtml-alias`` values, as spelled (``resolve_names`` normalizes).

    Only ``memhtml-alias`` asserts identity. A file there naming no person (or only a
    name that normalizes to nothing) says nothing about whom its aliases belong to,
    and a file naming several people (a roster, a team page) lists people, not one
    person's names: neither declares a group. A file with no alias has nothing to
    declare."""
    groups: set[AliasGroup] = set()
    for record in records:
        if not record.path.startswith(PEOPLE) or not record.aliases:
            continue
        names = {normalize_entity_name(split[1]): split[1] for entity in record.entities
                 if (split := split_entity(entity)) is not None and split[0] == PERSON_TYPE}
        names.pop("", None)
        if len(names) == 1:
            groups.add(frozenset((*names.values(), *record.aliases)))
    return tuple(sorted(groups, key=sorted))


@dataclass(frozen=True, slots=True)
class TypeResolution:
    """One entity type's pre-pass."""

    entity_type: str
    resolution: Resolution

    def survivor(self, raw: str) -> str | None:
        """The name a raw spelling is rewritten to (itself when it stays); None for a
        name that normalizes to nothing, which is left as written."""
        name = normalize_entity_name(raw)
        if not name:
            return None
        return self.resolution.alias_to_canonical.get(name, name)


def resolve_entities(records: Sequence[MemoryRecord]) -> tuple[TypeResolution, ...]:
    """``resolve_names`` per entity type, in type order; person files' aliases join
    the person type only."""
    groups = person_alias_groups(records)
    return tuple(
        TypeResolution(kind, resolve_names(raw, groups if kind == PERSON_TYPE else ()))
        for kind, raw in entity_counts(records).items()
    )


def rewrites(records: Iterable[MemoryRecord], resolved: Sequence[TypeResolution]
             ) -> Mapping[str, tuple[tuple[str, str], ...]]:
    """Path -> each ``(old, new)`` entity value to rewrite, for the files with any, in
    path order."""
    by_type = {r.entity_type: r for r in resolved}
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for record in sorted(records, key=lambda r: r.path):
        edits: list[tuple[str, str]] = []
        for entity in sorted(set(record.entities)):
            split = split_entity(entity)
            if split is None or split[0] not in by_type:
                continue
            survivor = by_type[split[0]].survivor(split[1])
            respelled = f"{split[0]}:{survivor}"
            # A value the format would refuse once respelled (an odd type spelling)
            # is left as written; the file's other values are still rewritten.
            if survivor is not None and survivor != split[1] and is_entity(respelled):
                edits.append((entity, respelled))
        if edits:
            out[record.path] = tuple(edits)
    return MappingProxyType(out)


_WHY: Final = {
    "band": (f"their characters overlap by {{ratio:.3f}}, inside the review band "
             f"({REVIEW_THRESHOLD} to {AUTO_MERGE_THRESHOLD}), too close to ignore and too "
             "far to merge on characters alone"),
    "digits": ("their characters overlap by {ratio:.3f}, but their numbers differ (a "
               "version, a region, a shard), so they may name two things"),
    "one-character": ("their characters overlap by {ratio:.3f}, but they differ only in "
                      "a one-letter word (service-a, service-b), so they may name two things"),
}


def review_finding(entity_type: str, candidate: ReviewCandidate) -> Finding:
    """The detected task of one review candidate. The canonical finding is the type
    and the two names in order, as JSON, so no two pairs of names run together alike."""
    left, right = sorted((candidate.left, candidate.right))
    why = _WHY[candidate.reason].format(ratio=candidate.similarity)
    return Finding(
        detector=DETECTOR,
        finding=json.dumps([entity_type, left, right], ensure_ascii=False),
        title=f"Are the {entity_type} names {left} and {right} one subject?",
        statement=(f"The {entity_type} names \u201c{left}\u201d and \u201c{right}\u201d were "
                   f"not merged: {why}. Relabel one to the other if they are one, or "
                   "close this task if they are two."),
        evidence=Measurement("ratio", candidate.similarity),
    )


def review_findings(resolved: Sequence[TypeResolution]) -> tuple[Finding, ...]:
    return tuple(review_finding(r.entity_type, c) for r in resolved
                 for c in r.resolution.review_candidates)


@dataclass
class _Rewrite:
    """The fold over the files to rewrite: the plan so far and what it did."""

    plan: Plan
    files: int = 0
    warnings: list[str] = field(default_factory=list)


ENTITY_META: Final = "memhtml-entity"


def relabelled(html: str, edits: tuple[tuple[str, str], ...]) -> str:
    """``html`` with each ``(old, new)`` value swapped: the survivor labelled first, then
    the old value cut, so a file naming both keeps one and the new line lands among
    the other entity lines. The same editors the label and unlabel ops run."""
    for old, new in edits:
        html = remove_meta(add_meta(html, ENTITY_META, new), ENTITY_META, old)
    return html


def _relabel(plan: Plan, path: str, edits: tuple[tuple[str, str], ...]
             ) -> Result[Plan, StoreError]:
    # One put per file, stamped once, rather than a label and an unlabel step per
    # value: each step re-parses the whole file (twice, with its stamp), and a first
    # night over a store of untidy spellings rewrites thousands of files. Over 5,000
    # files of two values each the phase took 14.4 s with the steps, 7.0 s like this.
    record = plan.view.get(path)
    if record is None:
        return Failure(Refused(f"no memory at {path}"))
    bad = [new for _, new in edits if not is_entity(new)]
    if bad:
        return Failure(Refused(f"{bad[0]!r} is not a type:name entity"))
    html = relabelled(record.html, edits)
    if html == record.html:
        return Success(plan)
    html = set_meta(html, "memhtml-updated", plan.now)

    def landed(after: Plan) -> Result[Plan, StoreError]:
        now = after.view.get(path)
        held = () if now is None else now.entities
        if any(old in held or new not in held for old, new in edits):
            return Failure(Refused("the entity lines did not read back as rewritten"))
        return Success(after)

    return plan.apply(Put(path, html)).bind(landed)


def rewrite_entities(plan: Plan, edits: Mapping[str, tuple[tuple[str, str], ...]]) -> _Rewrite:
    """Each file's edits in one go, in path order; a file whose edit the store refuses
    (or that does not read back rewritten) is left whole and warned about, and the
    rest go on."""
    state = _Rewrite(plan)
    for path, changes in edits.items():
        match _relabel(state.plan, path, changes):
            case Success(after):
                state.plan = after
                state.files += 1
            case Failure(error):
                state.warnings.append(f"{path}: entities not rewritten: {describe(error)}")
    return state


@dataclass(frozen=True, slots=True)
class EntityNight:
    """What the phase decided and the plan that carries it."""

    plan: Plan
    resolved: tuple[TypeResolution, ...]
    files_rewritten: int
    tasks: TaskCounts
    warnings: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        names = [r.resolution.names for r in self.resolved]
        return {
            "types": len(self.resolved),
            "names": sum(len(n.counts) for n in names),
            "normalized": sum(len(n.canonical_of) for n in names),
            "merged": sum(len(r.resolution.alias_to_canonical) for r in self.resolved),
            "files_rewritten": self.files_rewritten,
            "review_candidates": sum(len(r.resolution.review_candidates)
                                     for r in self.resolved),
            **self.tasks.as_counts(),
        }


def resolve_night(version: HeadVersion, now: str, budget: TaskBudget
                  ) -> Result[EntityNight, StoreError]:
    """The whole pre-pass over ``version``: rewrites, then review tasks minted and the
    stale ones closed, all in one plan."""
    records = sorted((r for r in version.records() if is_curated(r)), key=lambda r: r.path)
    resolved = resolve_entities(records)
    state = rewrite_entities(Plan.start(version, now), rewrites(records, resolved))
    findings = review_findings(resolved)
    produced = frozenset(f.finding for f in findings)

    def closed(minted: tuple[Plan, TaskCounts]) -> Result[EntityNight, StoreError]:
        plan, opened = minted
        return close_stale(plan, DETECTOR, produced, judged_all=True).map(
            lambda swept: EntityNight(swept[0], resolved, state.files, opened + swept[1],
                                      (*state.warnings, *(opened + swept[1]).warnings)))

    return mint_tasks(state.plan, findings, budget).bind(closed)


def _result(night: EntityNight) -> PhaseResult:
    counts = night.counts()
    changes, _ = night.plan.changes()
    if not changes:
        return PhaseResult(counts=counts, warnings=night.warnings)
    subject = (f"{counts['merged']} entity name(s) merged, {counts['normalized']} "
               f"respelled, {night.files_rewritten} file(s) rewritten")
    body = "; ".join(part for part in (
        f"{counts['review_candidates']} pair(s) left for review",
        commit_body(night.tasks)) if part)
    return PhaseResult(counts=counts, warnings=night.warnings,
                       commits=(PhaseCommit(subject, changes, body),))


def entity_resolution(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    done: Result[PhaseResult, PhaseFault] = (
        resolve_night(env.version, env.now, env.budget).map(_result)
        .alt(lambda error: PhaseFault(describe(error))))
    return IOResult.from_result(done)
