"""Phase 4, person-links: every memory naming a person links to that person's file.
One commit.

A memory carrying ``person:<name>`` gains ``about_person`` to the file under
``resources/people/`` that names the same person, so a reader (or the graph) can go
from what was said to who it was about. The person's file is one a person wrote when
there is one (the oldest by ``(created_at, path)``: the first one written is the one
earlier links and readers already know), else the minted one titled with the fullest
name (``domain.entities.name_fullness``, then the oldest). A person named nowhere
under ``resources/people/`` gets a file minted from the write door's own template,
authored ``agent:sleep`` so a person tells it from one they wrote.

**Two minted files for one person** are reconciled. A short name and its full form
are two names until entity-resolution merges them (a model-only merge waits for a
second, independent reading), so a night before the merge mints a file for each;
once the merge relabels the second, both claim one person. Each minted file that is
not the person's file is folded into it, in one commit with the links: its spellings
(its title, its ``memhtml-alias`` values, and the person name it carried before
tonight's relabel) join the person's file as ``memhtml-alias`` values, unless one
already names them; every link to it is pointed at the person's file; it is archived
superseded by the person's file, which links ``supersedes`` to the archive path. A
person's full name is never replaced by a short alias: the title of the file that
stays is left as it is, and the fullest-titled minted file is the one that stays. A
file a person wrote is never folded (``memhtml-author`` other than ``agent:sleep``):
two profiles a person keeps for one name are theirs to merge; nor is anything but a
``semantic`` file (an arc or a task another phase filed here is not a profile).

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
from memhtml.domain.entities import name_fullness, normalize_entity_name
from memhtml.format import add_link, add_meta, remove_link, set_meta
from memhtml.head import HeadVersion, IndexedView
from memhtml.sleep.decisions import Decision
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases.entity_names import PERSON_TYPE, is_curated, split_entity
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import PEOPLE
from memhtml.store.plan import Plan, archive_many_step, link_step, write_step

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
    """Normalized name -> its person file (``home_order``'s first)."""
    minted: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    """Normalized name -> the other minted files claiming that person alone, to fold
    into its home, in path order."""


def is_minted(record: MemoryRecord) -> bool:
    """Whether a file is one this phase minted: a ``semantic`` memory by ``agent:sleep``.
    An arc or a detected task another phase filed here is not a person's file to fold."""
    return record.author == SLEEP_AUTHOR and record.memory_type == "semantic"


def home_order(record: MemoryRecord) -> tuple[bool, int, int, str, str]:
    """The order a person's files are chosen in: one a person wrote first (oldest
    first), then minted ones titled with the fullest name (oldest first)."""
    minted = record.author == SLEEP_AUTHOR
    words, letters = name_fullness(normalize_entity_name(record.title)) if minted else (0, 0)
    return minted, -words, -letters, record.created_at, record.path


def find_people(records: Iterable[MemoryRecord]) -> People:
    """The people the curated ``records`` name, and their files under ``PEOPLE``."""
    curated = sorted((r for r in records if is_curated(r)), key=lambda r: r.path)
    named: dict[str, list[str]] = {}
    spellings: dict[str, dict[str, int]] = {}
    homes: dict[str, MemoryRecord] = {}
    alone: dict[str, list[MemoryRecord]] = {}
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
        names = person_names(record)
        for name in names:
            named.setdefault(name, []).append(record.path)
            held = homes.get(name)
            if record.path.startswith(PEOPLE) and (
                    held is None or home_order(record) < home_order(held)):
                homes[name] = record
        if record.path.startswith(PEOPLE) and len(names) == 1:
            alone.setdefault(names[0], []).append(record)
    folded = {name: tuple(r.path for r in files if is_minted(r) and r.path != homes[name].path)
              for name, files in alone.items() if name in homes}
    return People(
        MappingProxyType({n: tuple(named[n]) for n in sorted(named)}),
        MappingProxyType({n: MappingProxyType(spellings[n]) for n in sorted(spellings)}),
        MappingProxyType({n: homes[n].path for n in sorted(homes)}),
        MappingProxyType({n: paths for n, paths in sorted(folded.items()) if paths}))


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
    folded: list[tuple[str, str]] = field(default_factory=list)
    """(minted file folded, the person's file it was folded into)."""
    aliases_added: int = 0
    links_moved: int = 0
    warnings: list[str] = field(default_factory=list)


def spellings_of(record: MemoryRecord, before: MemoryRecord | None) -> tuple[str, ...]:
    """The names a minted person file goes by: its title (a minted file is titled with
    a spelling), its aliases, and the person names it carried before tonight (a relabel
    by entity-resolution is what made it a duplicate), each once, in that order."""
    found = [record.title, *record.aliases]
    if before is not None:
        found += [split[1] for entity in before.entities
                  if (split := split_entity(entity)) is not None and split[0] == PERSON_TYPE]
    seen: set[str] = set()
    out: list[str] = []
    for spelling in found:
        key = normalize_entity_name(spelling)
        if key and key not in seen:
            seen.add(key)
            out.append(" ".join(spelling.split()))
    return tuple(out)


def _repointed(plan: Plan, old: str, new: str) -> Result[tuple[Plan, int], StoreError]:
    """Every link to ``old`` (document form) pointed at ``new`` instead: one put per
    file, the link dropped where the file already links ``new`` with that rel."""
    view: IndexedView = plan.view
    current = plan
    moved = 0
    for source in view.inbound(old):
        record = current.view.get(source)
        if record is None or record.path == to_tree_path(new):
            continue
        html = record.html
        for link in record.links:
            if link.href == old:
                html = add_link(remove_link(html, link.rel, old), link.rel, new)
                moved += 1
        if html == record.html:
            continue
        match current.apply(Put(source, set_meta(html, "memhtml-updated", current.now))):
            case Success(after):
                current = after
            case Failure(error):
                return Failure(error)
    return Success((current, moved))


def _fold(plan: Plan, home: str, minted: str, before: MemoryRecord | None
          ) -> Result[tuple[Plan, int, int], StoreError]:
    """One minted file folded into the person's file (module docstring): (plan,
    aliases added, links moved). All or nothing."""
    kept, gone = plan.view.get(home), plan.view.get(minted)
    if kept is None or gone is None:
        return Failure(Refused(f"{minted} or {home} is not a live memory"))
    held = {normalize_entity_name(n) for n in kept.aliases} | set(person_names(kept))
    new = [s for s in spellings_of(gone, before) if normalize_entity_name(s) not in held]
    html = kept.html
    for alias in new:
        html = add_meta(html, "memhtml-alias", alias)
    current = plan
    if html != kept.html:
        match current.apply(Put(home, set_meta(html, "memhtml-updated", current.now))):
            case Success(after):
                current = after
            case Failure(error):
                return Failure(error)
    href = to_document_path(home)
    match _repointed(current, to_document_path(minted), href):
        case Success((current, moved)):
            pass
        case Failure(error):
            return Failure(error)
    match archive_many_step(current, [minted], {minted: href}):
        case Success(done):
            if done.refused:
                return Failure(Refused("; ".join(why for _, why in done.refused)))
            current = done.plan
        case Failure(error):
            return Failure(error)
    for _, to in done.archived:
        match link_step(current, home, "supersedes", to_document_path(to)):
            case Success(stepped):
                current = stepped.plan
            case Failure(error):
                return Failure(error)
    return Success((current, len(new), moved))


def reconcile(state: _Links, people: People, before: HeadVersion | None) -> None:
    """Each person's other minted files folded into their file, people in name order;
    a fold the store refuses is left whole and warned about."""
    for name, paths in people.minted.items():
        home = people.homes[name]
        for minted in paths:
            earlier = None if before is None else before.get(minted)
            match _fold(state.plan, home, minted, earlier):
                case Success((after, aliases, moved)):
                    state.plan = after
                    state.folded.append((minted, home))
                    state.aliases_added += aliases
                    state.links_moved += moved
                case Failure(error):
                    state.warnings.append(f"{minted} not folded into {home}: "
                                          f"{describe(error)}")


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


def link_people(plan: Plan, people: People, before: HeadVersion | None = None) -> _Links:
    """Each person's other minted files folded into their file (``before``: the
    version the run started from, for the names a file carried before tonight), each
    person's file found or minted (people in name order), then each memory naming
    them linked to it (memories in path order, one edit each)."""
    state = _Links(plan)
    reconcile(state, people, before)
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


def link_night(version: HeadVersion, now: str, before: HeadVersion | None = None
               ) -> tuple[People, _Links]:
    """The whole phase over ``version``, as a plan."""
    people = find_people(version.records())
    return people, link_people(Plan.start(version, now), people, before)


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
    people, state = link_night(env.version, env.now, env.base_version)
    counts = {"persons": len(people.named_by), "files_minted": len(state.minted),
              "links_added": state.links_added, "files_folded": len(state.folded),
              "aliases_added": state.aliases_added, "links_moved": state.links_moved}
    changes, _ = state.plan.changes()
    warnings = tuple(state.warnings)
    if not changes:
        return IOSuccess(PhaseResult(counts=counts, warnings=warnings))
    subject = (f"{state.links_added} {REL} link(s) added, {len(state.minted)} person "
               "file(s) minted")
    if state.folded:
        subject += f", {len(state.folded)} folded into the person's file"
    body = f"{len(people.named_by)} person(s) named" + (
        f"; minted {', '.join(state.minted)}" if state.minted else "") + "".join(
        f"; folded {minted} into {home}" for minted, home in state.folded)
    return IOSuccess(PhaseResult(counts=counts, warnings=warnings,
                                 commits=(PhaseCommit(subject, changes, body,
                                                      decisions=person_decisions(state)),)))
