"""Entity resolution with no model (``entity_resolution``'s first half): the aliases a
store's curated memories spell one entity with, resolved per type by the rules of
``memhtml.domain.entities``; the rewrites that give each memory the resolved name;
the review findings for what the rules leave open; and the night those make.

The phase itself, and what a language model adds to it, are in ``entity_resolution``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

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
from memhtml.domain.thresholds import (
    AUTO_MERGE_THRESHOLD,
    REVIEW_THRESHOLD,
)
from memhtml.format import add_meta, remove_meta, set_meta
from memhtml.head import HeadVersion, is_active, is_entity
from memhtml.sleep.decisions import Decision
from memhtml.sleep.findings import Finding, Measurement, TaskCounts
from memhtml.sleep.phase import (
    PhaseCommit,
    PhaseResult,
    TaskBudget,
)
from memhtml.sleep.tasks import close_stale, commit_body, mint_tasks
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
        TypeResolution(kind, resolve_names(raw, groups if kind == PERSON_TYPE else (),
                                           fullest=kind == PERSON_TYPE))
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
    """The detected task of one review candidate standing alone. The canonical finding
    is the type and the two names in order, as JSON, so no two pairs of names run
    together alike."""
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


def _quoted(names: Sequence[str]) -> str:
    marks = [f"\u201c{name}\u201d" for name in names]
    return marks[0] if len(marks) == 1 else f"{', '.join(marks[:-1])} and {marks[-1]}"


def cluster_finding(entity_type: str, survivors: Sequence[str],
                    spellings: Mapping[str, Sequence[str]],
                    candidates: Sequence[ReviewCandidate]) -> Finding:
    """The one task of an unresolved cluster: names the night left apart that review
    pairs join, each stated once as the name it survives as. A cluster of one pair
    of spellings nothing merged is ``review_finding``'s task, word for word; else the
    finding is the type and every surviving name, sorted, and the statement names
    the spellings merged into each and every pair's measured ratio."""
    if len(candidates) == 1 and not any(spellings.get(n) for n in survivors):
        return review_finding(entity_type, candidates[0])
    names = sorted(survivors)
    closest = max(candidates, key=lambda c: (c.similarity, c.pair))
    shown = "; ".join(
        f"{_quoted(sorted(c.pair))}: " + _WHY[c.reason].format(ratio=c.similarity)
        for c in sorted(candidates, key=lambda c: c.pair))
    also = "".join(f" \u201c{name}\u201d is also written {_quoted(spellings[name])}."
                   for name in names if spellings.get(name))
    return Finding(
        detector=DETECTOR,
        finding=json.dumps([entity_type, *names], ensure_ascii=False),
        title=f"Are the {entity_type} names {' and '.join(names)} one subject?",
        statement=(f"The {entity_type} names {_quoted(names)} were not merged.{also} "
                   f"Pairs measured: {shown}. Relabel them to one name where they are "
                   "one, or close this task if they are not."),
        evidence=Measurement("ratio", closest.similarity),
    )


def _clusters(resolved: TypeResolution) -> tuple[tuple[tuple[str, ...],
                                                       tuple[ReviewCandidate, ...]], ...]:
    """The type's review candidates grouped by the cluster they join: each side read as
    the name it survives as, and survivors joined through any review pair. A pair
    whose sides merged into one name tonight asks nothing and is dropped. Clusters
    in order of their first name."""
    survivor = resolved.resolution.alias_to_canonical
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    edges: list[tuple[str, str, ReviewCandidate]] = []
    for candidate in resolved.resolution.review_candidates:
        a, b = (survivor.get(candidate.left, candidate.left),
                survivor.get(candidate.right, candidate.right))
        if a == b:
            continue
        edges.append((a, b, candidate))
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, tuple[set[str], list[ReviewCandidate]]] = {}
    for a, b, candidate in edges:
        names, joined = groups.setdefault(root(a), (set(), []))
        names.update((a, b))
        joined.append(candidate)
    return tuple((tuple(sorted(names)), tuple(joined))
                 for _, (names, joined) in sorted(groups.items()))


def review_findings(resolved: Sequence[TypeResolution]) -> tuple[Finding, ...]:
    """One task per unresolved cluster of each type: spellings merged into one name
    tonight and names joined by several review pairs ask one question, not one per
    pair."""
    found: list[Finding] = []
    for r in resolved:
        merged_into: dict[str, list[str]] = {}
        for name, into in r.resolution.alias_to_canonical.items():
            merged_into.setdefault(into, []).append(name)
        for names, candidates in _clusters(r):
            spoken = {c for cand in candidates for c in cand.pair}
            spellings = {n: sorted(s for s in merged_into.get(n, ()) if s in spoken)
                         for n in names}
            found.append(cluster_finding(r.entity_type, names, spellings, candidates))
    return tuple(found)


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


def curated_records(version: HeadVersion) -> tuple[MemoryRecord, ...]:
    """The records the phase reads, in path order."""
    return tuple(sorted((r for r in version.records() if is_curated(r)), key=lambda r: r.path))


def resolve_night(version: HeadVersion, now: str, budget: TaskBudget,
                  resolved: Sequence[TypeResolution] | None = None,
                  extra_findings: Sequence[Finding] = (), judged_all: bool = True, *,
                  dismissed: frozenset[str]) -> Result[EntityNight, StoreError]:
    """The whole pre-pass over ``version``: rewrites, then review tasks minted and the
    stale ones closed, all in one plan.

    ``resolved`` replaces the pre-pass's own resolution (the model half passes one that
    also unions its promoted clusters); ``extra_findings`` are tasks besides the review
    candidates (a finding a candidate already raises is not raised twice); stale tasks
    are closed only when ``judged_all``; ``dismissed`` are the digests a person closed
    (see ``mint_tasks``)."""
    records = curated_records(version)
    if resolved is None:
        resolved = resolve_entities(records)
    state = rewrite_entities(Plan.start(version, now), rewrites(records, resolved))
    findings = review_findings(resolved)
    raised = {f.finding for f in findings}
    findings = (*findings, *(f for f in extra_findings if f.finding not in raised))
    produced = frozenset(f.finding for f in findings)

    def closed(minted: tuple[Plan, TaskCounts]) -> Result[EntityNight, StoreError]:
        plan, opened = minted
        return close_stale(plan, DETECTOR, produced, judged_all=judged_all).map(
            lambda swept: EntityNight(swept[0], tuple(resolved), state.files,
                                      opened + swept[1],
                                      (*state.warnings, *(opened + swept[1]).warnings)))

    return mint_tasks(state.plan, findings, budget, dismissed=dismissed).bind(closed)


def entity_decisions(plan: Plan) -> tuple[Decision, ...]:
    """Each memory whose entity values the night rewrote, as a decision naming the
    values it lost and the survivors it gained. Read off the plan, so a rewrite the
    store refused is no decision."""
    out: list[Decision] = []
    for path in sorted(plan.touched.keys()):
        before, after = plan.base.get(path), plan.view.get(path)
        if before is None or after is None or before.entities == after.entities:
            continue
        lost = sorted(set(before.entities) - set(after.entities))
        gained = sorted(set(after.entities) - set(before.entities))
        out.append(Decision.of("entity-resolution", "rewritten", path, "entity-names-merged",
                               figures={"from": ", ".join(lost), "to": ", ".join(gained)}))
    return tuple(out)


def night_result(night: EntityNight, model_tasks: int = 0) -> PhaseResult:
    """The phase's answer; ``model_tasks`` are the model half's review tasks, counted
    with the pre-pass's candidates."""
    counts = night.counts()
    counts["review_candidates"] += model_tasks
    changes, _ = night.plan.changes()
    if not changes:
        return PhaseResult(counts=counts, warnings=night.warnings)
    subject = (f"{counts['merged']} entity name(s) merged, {counts['normalized']} "
               f"respelled, {night.files_rewritten} file(s) rewritten")
    body = "; ".join(part for part in (
        f"{counts['review_candidates']} pair(s) left for review",
        commit_body(night.tasks)) if part)
    return PhaseResult(counts=counts, warnings=night.warnings,
                       commits=(PhaseCommit(subject, changes, body),),
                       decisions=(*entity_decisions(night.plan), *night.tasks.decisions))
