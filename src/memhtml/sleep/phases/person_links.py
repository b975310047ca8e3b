"""Phase 4, person-links: every memory naming a person links to that person's file.
One commit.

A memory carrying ``person:<name>`` gains ``about_person`` to the file under
``resources/people/`` that names the same person, so a reader (or the graph) can go
from what was said to who it was about. The person's file is the oldest such file
by ``(created_at, path)``: when two files claim one person, the first one written
is the one earlier links and readers already know. A person named nowhere under
``resources/people/`` gets a file minted from the write door's own template,
authored ``agent:sleep`` so a person tells it from one they wrote.

Names are matched as ``domain.entities`` normalizes them (case and whitespace), the
same reading entity-resolution, which runs just before, rewrites every value to;
so one person spelled two ways the night before is still one file. Running after
entity-resolution is what keeps a person's aliases from minting files of their own.

The phase is idempotent: a link already present (in any href spelling) is not
added again, and a minted file is found by its entity the next night. A person's
own file never links to itself. Tasks are neither linked nor counted, and archived
memories are left as they left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from returns.io import IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.ops import Put
from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.domain.entities import normalize_entity_name
from memhtml.format import add_link, set_meta
from memhtml.head import HeadVersion
from memhtml.sleep.decisions import Decision
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases.entity_resolution import PERSON_TYPE, is_curated, split_entity
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import PEOPLE
from memhtml.store.plan import Plan, write_step

REL: Final[EdgeRel] = "about_person"


def person_names(record: MemoryRecord) -> tuple[str, ...]:
    """The normalized person names ``record`` carries, sorted, each once."""
    names = {normalize_entity_name(split[1]) for entity in record.entities
             if (split := split_entity(entity)) is not None and split[0] == PERSON_TYPE}
    return tuple(sorted(name for name in names if name))


@dataclass(frozen=True, slots=True)
class People:
    """Who is named, by whom, and where each person's file already is."""

    named_by: Mapping[str, tuple[str, ...]]
    """Normalized name -> the curated memories naming it, in path order."""
    spellings: Mapping[str, Mapping[str, int]]
    """Normalized name -> each raw spelling and how many memories use it."""
    homes: Mapping[str, str]
    """Normalized name -> its person file (the oldest by ``(created_at, path)``)."""


def find_people(records: Iterable[MemoryRecord]) -> People:
    """The people the curated ``records`` name, and their files under ``PEOPLE``."""
    curated = sorted((r for r in records if is_curated(r)), key=lambda r: r.path)
    named: dict[str, list[str]] = {}
    spellings: dict[str, dict[str, int]] = {}
    homes: dict[str, MemoryRecord] = {}
    for record in curated:
        for entity in sorted(set(record.entities)):
            split = split_entity(entity)
            if split is None or split[0] != PERSON_TYPE:
                continue
            name = normalize_entity_name(split[1])
            if not name:
                continue
            per = spellings.setdefault(name, {})
            per[split[1]] = per.get(split[1], 0) + 1
        for name in person_names(record):
            named.setdefault(name, []).append(record.path)
            held = homes.get(name)
            if record.path.startswith(PEOPLE) and (
                    held is None or (record.created_at, record.path)
                    < (held.created_at, held.path)):
                homes[name] = record
    return People(
        MappingProxyType({n: tuple(named[n]) for n in sorted(named)}),
        MappingProxyType({n: MappingProxyType(spellings[n]) for n in sorted(spellings)}),
        MappingProxyType({n: homes[n].path for n in sorted(homes)}))


def _memories(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def person_input(name: str, spellings: Mapping[str, int], memories: int) -> WriteInput:
    """A new person file for ``name``: titled with the spelling most memories use
    (ties to the smaller), labelled with the normalized name every memory will read
    after entity-resolution."""
    title = min(spellings, key=lambda s: (-spellings[s], s)) if spellings else name
    return WriteInput(
        title=title,
        claim=f"{title} is a person named in {_memories(memories)}.",
        memory_type="semantic",
        entities=(f"{PERSON_TYPE}:{name}",),
        author=SLEEP_AUTHOR,
        directory=PEOPLE,
    )


def linked_to(record: MemoryRecord, home: str) -> bool:
    """Whether ``record`` already links ``about_person`` to ``home``, in either path form."""
    return any(link.rel == REL and to_tree_path(link.href) == home for link in record.links)


@dataclass
class _Links:
    """The fold over the people: the plan so far and what it did."""

    plan: Plan
    minted: list[str] = field(default_factory=list)
    links_added: int = 0
    warnings: list[str] = field(default_factory=list)


def _home(state: _Links, people: People, name: str) -> str | None:
    found = people.homes.get(name)
    if found is not None:
        return found
    data = person_input(name, people.spellings.get(name, {}), len(people.named_by[name]))
    path: str | None = None
    match write_step(state.plan, data):
        case Success(stepped):
            state.plan = stepped.plan
            path = stepped.outcome.primary
        case Failure(error):
            state.warnings.append(f"person:{name}: no person file minted: {describe(error)}")
    if path is not None:
        state.minted.append(path)
    return path


def _linked(plan: Plan, path: str, hrefs: tuple[str, ...]) -> Result[Plan, StoreError]:
    # One put per file, stamped once: each link step would re-parse the whole file
    # twice (the link, then the stamp), and a first night links thousands of them.
    record = plan.view.get(path)
    if record is None:
        return Failure(Refused(f"no memory at {path}"))
    html = record.html
    for href in hrefs:
        html = add_link(html, REL, href)
    if html == record.html:
        return Success(plan)
    return plan.apply(Put(path, set_meta(html, "memhtml-updated", plan.now)))


def link_people(plan: Plan, people: People) -> _Links:
    """Each person's file found or minted (people in name order), then each memory
    naming them linked to it (memories in path order, one edit each)."""
    state = _Links(plan)
    homes = {name: home for name in people.named_by
             if (home := _home(state, people, name)) is not None}
    wanted: dict[str, list[str]] = {}
    for name, paths in people.named_by.items():
        home = homes.get(name)
        for path in paths:
            record = state.plan.view.get(path)
            if home is None or path == home or record is None or linked_to(record, home):
                continue
            wanted.setdefault(path, []).append(to_document_path(home))
    for path in sorted(wanted):
        hrefs = tuple(sorted(set(wanted[path])))
        match _linked(state.plan, path, hrefs):
            case Success(after):
                state.plan = after
                state.links_added += len(hrefs)
            case Failure(error):
                state.warnings.append(f"{path}: {REL} {', '.join(hrefs)} not added: "
                                      f"{describe(error)}")
    return state


def link_night(version: HeadVersion, now: str) -> tuple[People, _Links]:
    """The whole phase over ``version``, as a plan."""
    people = find_people(version.records())
    return people, link_people(Plan.start(version, now), people)


def person_decisions(state: _Links) -> tuple[Decision, ...]:
    """Each person file minted (with how many memories it now gathers) and each memory
    linked about_person to one, read off the plan."""
    linked: list[Decision] = []
    for path in sorted(state.plan.touched.keys()):
        before, after = state.plan.base.get(path), state.plan.view.get(path)
        if before is None or after is None:
            continue
        new = sorted({to_tree_path(link.href) for link in after.links if link.rel == REL}
                     - {to_tree_path(link.href) for link in before.links if link.rel == REL})
        if new:
            linked.append(Decision.of("person-links", "rewritten", path, "about-person",
                                      related=new, figures={"links": len(new)}))
    minted = [Decision.of("person-links", "created", path, "person-file", figures={
        "memories": sum(1 for d in linked if path in d.related)}) for path in state.minted]
    return (*minted, *linked)


def person_links(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    people, state = link_night(env.version, env.now)
    counts = {"persons": len(people.named_by), "files_minted": len(state.minted),
              "links_added": state.links_added}
    changes, _ = state.plan.changes()
    warnings = tuple(state.warnings)
    if not changes:
        return IOSuccess(PhaseResult(counts=counts, warnings=warnings))
    subject = (f"{state.links_added} {REL} link(s) added, {len(state.minted)} person "
               "file(s) minted")
    body = f"{len(people.named_by)} person(s) named" + (
        f"; minted {', '.join(state.minted)}" if state.minted else "")
    return IOSuccess(PhaseResult(counts=counts, warnings=warnings,
                                 commits=(PhaseCommit(subject, changes, body,
                                                      decisions=person_decisions(state)),)))
