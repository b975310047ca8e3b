"""Each door's change, derived as overlay ops against one version.

A ``Plan`` is a value: the version at the tip, the view with the ops so far applied
through ``with_overlay`` (the same writer the head uses), and the paths touched.
Applying an op returns a new plan, so a failing op stops the derivation with the
overlay's own error and every later step sees the earlier steps' edits (a batch can
link to a memory it wrote a step before). Nothing here touches git: the door turns
the finished plan into path changes and lands them.

The rules a write's fields must keep are ``store.write_checks``; the restore door's
steps are ``store.plan_restore``. The rest stays one module: the plan value, the
naming of new paths, the archive and href rewriting, and the steps built on them
all take a ``Plan`` and are used by each other (a correction writes and archives, a
done task archives), so parting them would make two modules import each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import reduce
from types import MappingProxyType
from typing import ClassVar, Final, NamedTuple

from immutables import Map
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import NotFound
from memhtml.contracts.ops import (
    Archive,
    Label,
    LinkOp,
    Move,
    OverlayOp,
    Put,
    Unlabel,
    UnlinkOp,
)
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.contracts.vocabulary import is_edge_rel, is_task_status
from memhtml.format import (
    NewMemoryInput,
    add_link,
    escape_text,
    remove_link,
    render_template,
    set_meta,
)
from memhtml.format.anchors import retarget_anchors
from memhtml.head import HeadVersion, IndexedView, with_overlay
from memhtml.head.record import is_archived_path, record_from
from memhtml.store.archived import archived_copy, archived_path_refusal, archived_refusal
from memhtml.store.correction import carried_forward
from memhtml.store.deps import Detector
from memhtml.store.errors import Refused, StoreError, describe, is_refusal, widen
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import (
    INBOX,
    SEEDED_DIRS,
    TASKS,
    free_archive_path,
    normalize_directory,
    unique_path,
)
from memhtml.store.paths import (
    Names,
    Spellings,
    href_path,
    memory_path,
    new_memory_path,
    portable_path,
    spelled,
    tree_path,
    unshared,
)
from memhtml.store.plan_names import NO_OWN_NAMES, PlanNames
from memhtml.store.write_checks import SURROGATE, body_violations, not_a_rel_reason, oversize_reason
from memhtml.store.write_rules import links_reach


@dataclass(frozen=True)
class Outcome:
    """What one step did, in the words of a commit message."""

    op: str
    primary: str | None
    subject: str
    body: str


@dataclass(frozen=True)
class Plan:
    """Ops applied over a base version; ``view`` is the base with them applied."""

    base: HeadVersion
    now: str
    view: IndexedView
    touched: Map[str, bool]
    """Paths the ops touched (a persistent set: adding one costs a log, not a copy)."""
    not_memories: Mapping[str, str]
    """Tree paths that are not memory files (and why), so no step writes over one."""
    detect: Detector | None = None
    own_names: PlanNames = NO_OWN_NAMES
    """The spellings of the paths the ops added and removed, kept as each op applies
    (``plan_names``), so judging a new name does not fold the whole batch again."""

    @classmethod
    def start(cls, base: HeadVersion, now: str, detect: Detector | None = None) -> Plan:
        """An empty plan over ``base``, stamping with ``now``."""
        skipped = MappingProxyType({s.path: s.reason for s in base.skipped_files})
        return cls(base, now, IndexedView(base.indexes, base.sha), Map(), skipped, detect)

    @property
    def year(self) -> str:
        return self.now[:4]

    def apply(self, op: OverlayOp) -> Result[Plan, StoreError]:
        """This plan with ``op`` applied, or the overlay's refusal."""
        to = getattr(op, "to", None)
        paths = (op.path, to) if isinstance(to, str) else (op.path,)
        touched = self.touched
        for path in paths:
            touched = touched.set(path, True)

        def advanced(view: IndexedView) -> Plan:
            # An op changes the view at its own paths only, so only they are re-read.
            return replace(self, view=view, touched=touched,
                           own_names=self.own_names.after(self.base, view, paths))

        return with_overlay(self.view, [op]).map(advanced).alt(widen)

    def apply_all(self, ops: Iterable[OverlayOp]) -> Result[Plan, StoreError]:
        """Each op in turn; the first refusal stops the rest."""
        def then(applied: Result[Plan, StoreError], op: OverlayOp) -> Result[Plan, StoreError]:
            return applied.bind(lambda plan: plan.apply(op))

        start: Result[Plan, StoreError] = Success(self)
        return reduce(then, ops, start)

    def changes(self) -> tuple[tuple[PathChange, ...], dict[str, bytes | None]]:
        """The path changes the ops amount to, sorted, and each path's bytes before."""
        out: list[PathChange] = []
        before: dict[str, bytes | None] = {}
        for path in sorted(self.touched):
            old = self.base.get(path)
            new = self.view.get(path)
            if new is None and old is None:
                continue
            if new is None:
                out.append(PathChange(path, None))
            elif old is None or old.html != new.html:
                out.append(PathChange(path, new.html.encode("utf-8")))
            else:
                continue
            before[path] = None if old is None else old.html.encode("utf-8")
        return tuple(out), before

    def new_paths(self) -> tuple[str, ...]:
        """Paths the plan writes where the base holds no memory."""
        return tuple(p for p in sorted(self.touched)
                     if self.base.get(p) is None and self.view.get(p) is not None)


class Stepped(NamedTuple):
    """A step's result: the plan after it, and what it did."""

    plan: Plan
    outcome: Outcome


Step = Result[Stepped, StoreError]


def stepped_as(op: str, primary: str | None, subject: str, body: str
          ) -> Callable[[Plan], Stepped]:
    return lambda plan: Stepped(plan, Outcome(op, primary, subject, body))


def held(plan: Plan, path: str) -> Result[MemoryRecord, StoreError]:
    """The memory at ``path`` in the plan's view, or why there is none."""

    def look(tree: str) -> Result[MemoryRecord, StoreError]:
        record = plan.view.get(tree)
        if record is not None:
            return Success(record)
        if tree in plan.not_memories:
            # The read door's answer for the same path, word for word and code for code.
            return Failure(NotFound(f"memory {tree} (the file is not a memory: "
                                    f"{plan.not_memories[tree]}; it is left alone)"))
        moved = archived_copy(plan.view.records(), tree)
        if moved is not None:
            # A refusal (not ``Archived``, whose advice is to read it there): a door
            # that changes live memories says how to bring it back.
            return Failure(Refused(archived_refusal(tree, moved)))
        return Failure(NotFound(f"memory {tree}"))

    return tree_path(path).bind(look)


def _live(plan: Plan, path: str) -> Result[MemoryRecord, StoreError]:
    def active(record: MemoryRecord) -> Result[MemoryRecord, StoreError]:
        if record.archived or record.status == "archived":
            return Failure(Refused(archived_path_refusal(record.path)))
        return Success(record)

    return held(plan, path).bind(active)


def _stamp(plan: Plan, path: str, before: str) -> Result[Plan, StoreError]:
    """Stamp ``memhtml-updated`` on ``path`` when an op just changed it."""
    record = plan.view.get(path)
    if record is None or record.html == before:
        return Success(plan)
    stamped = set_meta(record.html, "memhtml-updated", plan.now)
    if stamped == record.html:
        return Success(plan)
    return plan.apply(Put(path, stamped))


def render_write(plan: Plan, data: WriteInput, extra_links: tuple[Link, ...] = ()
                 ) -> Result[str, StoreError]:
    """The file a write commits: the given file, or the template's rendering."""
    if data.file_html is not None:
        if (hit := SURROGATE.search(data.file_html)) is not None:
            return Failure(Refused("the memory was not written", (
                f"the file: a lone surrogate at offset {hit.start()} is not text a UTF-8 "
                "file can hold",)))
        oversize = oversize_reason(len(data.file_html.encode("utf-8")), "the file")
        if oversize is not None:
            return Failure(Refused("the memory was not written", (oversize,)))
        # A correction's supersedes edge rides here; a whole file must carry it too.
        return Success(reduce(lambda html, link: add_link(html, link.rel, link.href),
                              extra_links, data.file_html))
    violations = body_violations(data)
    if violations:
        return Failure(Refused("the memory was not written", violations))
    links = tuple(Link(link.rel, to_document_path(link.href)) for link in data.links)
    return Success(render_template(NewMemoryInput(
        title=data.title, claim=data.claim, memory_type=data.memory_type or "semantic",
        at=plan.now,
        body=data.body, article_html=_article_html(data), entities=data.entities,
        tags=data.tags, aliases=data.aliases, links=links + extra_links, author=data.author,
        confidence=data.confidence, importance=data.importance, session_id=data.session_id,
        valid_from=data.valid_from, valid_until=data.valid_until,
        task_status=data.task_status, due_at=data.due_at, detect=plan.detect,
    )))


_MARK_TAG: Final = re.compile(r"<mark[\s/>]", re.IGNORECASE)


def _article_html(data: WriteInput) -> str | None:
    """The article markup a write gives, with the claim leading it when it needs one.

    A fragment that marks its claim (a ``<mark>`` of its own) is the whole article, and
    the ``claim`` field adds nothing to it. A fragment that marks none follows the
    claim, which is escaped into a ``<mark>`` opening the article's first paragraph.
    Either way the format's checks judge the result, so a fragment whose only ``<mark>``
    hides in a comment is refused as having none."""
    fragment = data.article_html
    if fragment is None or not data.claim.strip(" \t\n\r\f") or _MARK_TAG.search(fragment):
        return fragment
    claim = escape_text(data.claim.strip(" \t\n\r\f"))
    return f"<p><mark>{claim}</mark></p>\n{data.article_html}"


class _LastBase:
    """The spellings of the last plan's base, so a batch of a thousand writes folds the
    tree's names once rather than once a step. Keyed by the identity of the base's
    record map and of the plan's not-memory map; one entry, replaced whole, so a
    concurrent reader sees an old entry or a new one, never half of one."""

    entry: ClassVar[tuple[object, object, Spellings] | None] = None


def _base_spellings(plan: Plan) -> Spellings:
    records, skipped = plan.base.indexes.records, plan.not_memories
    entry = _LastBase.entry
    if entry is not None and entry[0] is records and entry[1] is skipped:
        return entry[2]
    # The seeded directories hold only a .gitkeep, which the view does not list, and
    # they are where most writes go: named here, --dir Areas/Inbox meets areas/inbox.
    spellings = Spellings.of([*plan.base.paths(), *skipped], SEEDED_DIRS)
    _LastBase.entry = (records, skipped, spellings)
    return spellings


def names_for(plan: Plan, leaving: str | None = None) -> Names:
    """The names a new path must not twin: the base's, with the plan's own writes in
    and its removals (and ``leaving``, a move's source) out."""
    own = plan.own_names
    gone = own.removed.spellings()
    if leaving is not None:
        # A layer of its own: counts add, so this is the one layer of removed paths
        # with ``leaving`` among them.
        return Names((_base_spellings(plan), own.added.spellings()),
                     (gone, Spellings.of([leaving])))
    return Names((_base_spellings(plan), own.added.spellings()), (gone,))


def _explicit_path(plan: Plan, asked: str, names: Names) -> Result[str, StoreError]:
    def free(path: str) -> Result[str, StoreError]:
        if plan.view.get(path) is not None:
            return Failure(Refused(f"{path} already holds a memory; correct it, or pick "
                                   "another path"))
        if is_archived_path(path):
            return Failure(Refused(f"{path} is under archive/; a new memory starts live"))
        return Success(path)

    return (new_memory_path(spelled(asked, names), names).bind(free)
            .bind(lambda path: unshared(path, names)))


def _title_of(data: WriteInput, html: str) -> Result[str, StoreError]:
    if data.file_html is None:
        return Success(data.title)
    return record_from(html, "(new file)").map(lambda record: record.title).alt(widen)


def _folder(plan: Plan, data: WriteInput, directory: str | None, names: Names
            ) -> Result[str, StoreError]:
    folder = directory if directory is not None else data.directory
    if folder is None:
        folder = TASKS if data.memory_type == "task" else INBOX
    bare = folder.strip().rstrip("/")

    def live(checked: str) -> Result[str, StoreError]:
        normal = normalize_directory(checked)
        if is_archived_path(normal):
            return Failure(Refused(f"{normal} is under archive/; a new memory starts live"))
        return Success(normal)

    if not bare:
        return live(bare)
    # Spelled as a directory (the trailing slash), so an existing one keeps its name;
    # whether its new part is portable is judged on the whole path the write makes.
    return tree_path(spelled(f"{bare}/", names).rstrip("/")).bind(live)


def _new_path(plan: Plan, data: WriteInput, html: str, directory: str | None
              ) -> Result[str, StoreError]:
    names = names_for(plan)
    if data.path is not None:
        return _explicit_path(plan, data.path, names)
    made: Result[str, StoreError] = Result.do(
        unique_path(plan.view, folder, title, plan.not_memories.keys())
        for title in _title_of(data, html)
        for folder in _folder(plan, data, directory, names)
    )
    return (made.bind(lambda path: new_memory_path(path, names))
            .bind(lambda path: unshared(path, names)))


def write_step(plan: Plan, data: WriteInput, directory: str | None = None,
               extra_links: tuple[Link, ...] = (), op: str = "write") -> Step:
    """A new memory at a fresh path (or the explicit one, when free)."""

    def put(html: str, path: str) -> Step:
        def stepped(after: Plan) -> Stepped:
            record = after.view.get(path)
            return Stepped(after, Outcome(op, path, path, record.title if record else ""))

        return plan.apply(Put(path, html)).map(stepped)

    return render_write(plan, data, extra_links).bind(
        lambda html: _new_path(plan, data, html, directory).bind(lambda path: put(html, path)))


Superseding = Callable[[Plan, str], Iterable[MemoryRecord]]
"""Where a rewrite finds the records whose ``memhtml-superseded-by`` names an href."""


def _superseding_scan(plan: Plan, href: str) -> list[MemoryRecord]:
    """Every record of the view superseded by ``href``, in path order: a full scan,
    which one archive can afford and a thousand cannot (``archive_many_step``)."""
    return [record for record in plan.view.records() if record.superseded_by == href]


def repoint_hrefs(plan: Plan, old: str, new: str,
                   superseding: Superseding = _superseding_scan) -> Result[Plan, StoreError]:
    """Point every link and ``superseded-by`` at ``old`` (document form) to ``new``,
    and the article anchors to ``old`` of the memories linking it (an imported
    ``[[wikilink]]`` is an anchor beside its edge), so an inline link follows too."""
    ops: list[OverlayOp] = []
    for source in plan.view.inbound(old):
        record = plan.view.get(source)
        if record is None:
            continue
        # Each link unlinked and relinked in the text, then one put: the bytes the
        # unlink and link ops would leave, for one parse of the file instead of two each.
        html = record.html
        for link in record.links:
            if link.href == old:
                html = add_link(remove_link(html, link.rel, old), link.rel, new)
        html = retarget_anchors(html, old, new)
        if html != record.html:
            ops.append(Put(source, html))

    def supersessions(linked: Plan) -> Result[Plan, StoreError]:
        # Read after the link edits: a record both linking to and superseded by ``old``
        # must keep the rewritten links when its meta is set.
        return linked.apply_all(
            Put(record.path, set_meta(record.html, "memhtml-superseded-by", new))
            for record in list(superseding(linked, old))
        )

    return plan.apply_all(ops).bind(supersessions)


def archive_target(plan: Plan, path: str) -> Result[str, StoreError]:
    """Where ``path`` goes when the plan archives it: ``archive/<YYYY>/<path>``, or
    the year's next ordinal folder while an earlier archive of the same path holds
    the name (``layout.free_archive_path``). A name held by a file that is not a
    memory is refused, as every door refuses to write where it cannot read: what
    stands there is a person's, and archiving past it would hide it."""
    to = free_archive_path(path, plan.year, lambda to: plan.view.get(to) is not None)
    if to in plan.not_memories:
        return Failure(Refused(f"{to} is a file that is not a memory "
                               f"({plan.not_memories[to]}); {path} was not archived there"))
    return Success(to)


def _archive(plan: Plan, path: str, superseded_by: str | None,
             superseding: Superseding) -> Step:
    def archive(record: MemoryRecord) -> Step:
        return archive_target(plan, record.path).bind(lambda to: archive_to(record, to))

    def archive_to(record: MemoryRecord, to: str) -> Step:
        def moved(rewritten: Plan) -> Result[Plan, StoreError]:
            current = rewritten.view.get(record.path)
            if current is None:
                return Failure(Refused(f"{record.path} vanished while rewriting its links"))
            html = set_meta(current.html, "memhtml-status", "archived")
            html = set_meta(html, "memhtml-archived", plan.now)
            html = set_meta(html, "memhtml-updated", plan.now)
            if superseded_by is not None:
                html = set_meta(html, "memhtml-superseded-by", superseded_by)
            return rewritten.apply(Archive(record.path, to, html))

        return (repoint_hrefs(plan, to_document_path(record.path), to_document_path(to),
                               superseding)
                .bind(moved)
                .map(stepped_as("archive", record.path, record.path, f"archived to {to}")))

    return _live(plan, path).bind(archive)


def archive_step(plan: Plan, path: str, superseded_by: str | None = None) -> Step:
    """Move ``path`` under ``archive/<YYYY>/`` with status and stamp set, and rewrite
    every href to it, so no edge dangles and each still names the memory it meant."""
    return _archive(plan, path, superseded_by, _superseding_scan)


class ArchivedMany(NamedTuple):
    """What ``archive_many_step`` did: the plan after it, one outcome for the lot, each
    archived path with where it went, and each refused path with why."""

    plan: Plan
    outcome: Outcome
    archived: tuple[tuple[str, str], ...]
    refused: tuple[tuple[str, str], ...]


@dataclass
class _Supersessions:
    """``memhtml-superseded-by`` value -> the paths stating it, kept exact as a bulk
    archive edits the view, so each archive asks a dict instead of scanning."""

    holders: dict[str, set[str]]
    stated: dict[str, str]

    @classmethod
    def of(cls, view: IndexedView) -> _Supersessions:
        index = cls({}, {})
        index.refresh(view, view.indexes.records.keys())
        return index

    def find(self, plan: Plan, href: str) -> list[MemoryRecord]:
        found = (plan.view.get(path) for path in sorted(self.holders.get(href, ())))
        return [record for record in found
                if record is not None and record.superseded_by == href]

    def refresh(self, view: IndexedView, paths: Iterable[str]) -> None:
        """Re-read what each of ``paths`` states now (a path that is gone, nothing)."""
        for path in paths:
            before = self.stated.pop(path, None)
            if before is not None:
                self.holders[before].discard(path)
            record = view.get(path)
            if record is not None and record.superseded_by is not None:
                self.stated[path] = record.superseded_by
                self.holders.setdefault(record.superseded_by, set()).add(path)


def _counted(error: StoreError) -> bool:
    """A refusal about the one path (none there, not live, not a memory, a bad path),
    which a bulk archive counts and moves past; anything else is the view breaking,
    and stops."""
    return is_refusal(error)


def archive_many_step(plan: Plan, paths: Iterable[str],
                      superseded_by: Mapping[str, str] | None = None
                      ) -> Result[ArchivedMany, StoreError]:
    """``archive_step`` over ``paths`` in order, each seeing the ones before, with the
    supersession index built once instead of scanned per archive.

    The result is the plan ``archive_step`` applied one path at a time would make,
    skipping the paths it refuses. A refused path (no live memory there, or a name that
    is not a memory's) is listed with the reason and the rest go on; only
    an error that is not about the one path (the overlay refusing an edit) fails the
    step. ``superseded_by`` maps a path to the href stamped as its keeper.
    """
    index = _Supersessions.of(plan.view)
    current = plan
    archived: list[tuple[str, str]] = []
    refused: list[tuple[str, str]] = []
    for path in paths:
        keeper = None if superseded_by is None else superseded_by.get(path)
        match _archive(current, path, keeper, index.find):
            case Success(stepped):
                moved = stepped.outcome.primary or path
                # The step just archived it there, so the name is found again.
                to = archive_target(current, moved).value_or("")
                holders = index.holders.get(to_document_path(moved), set())
                index.refresh(stepped.plan.view, [*holders, moved, to])
                current = stepped.plan
                archived.append((moved, to))
            case Failure(error) if _counted(error):
                refused.append((path, describe(error)))
            case Failure(error):
                return Failure(error)
    body = f"archived {len(archived)} to archive/{current.year}/"
    if refused:
        body += f"; refused {len(refused)}"
    return Success(ArchivedMany(
        current, Outcome("archive", None, f"{len(archived)} memories archived", body),
        tuple(archived), tuple(refused)))


def correct_step(plan: Plan, path: str, data: WriteInput) -> Step:
    """A new memory superseding ``path``, which is archived in the same plan: the new
    one carries forward what ``data`` leaves unset (``carried_forward``), and every
    link from another memory to the old one points at the new one."""

    def correct(record: MemoryRecord) -> Step:
        return archive_target(plan, record.path).bind(lambda to: correct_to(record, to))

    def correct_to(record: MemoryRecord, to: str) -> Step:
        folder = data.directory
        if folder is None and data.path is None:
            folder = record.path.rsplit("/", 1)[0] + "/" if "/" in record.path else ""
        supersedes = (Link("supersedes", to_document_path(to)),)

        def archive_old(written: Stepped) -> Step:
            new_path = written.outcome.primary or ""
            return archive_step(written.plan, record.path, to_document_path(new_path)).bind(
                lambda archived: _repoint(archived.plan, to, new_path)).map(
                lambda repointed: Stepped(repointed, Outcome(
                    "correct", new_path, record.path,
                    f"supersedes {record.path} with {new_path}")))

        return write_step(plan, carried_forward(record, data), folder, supersedes).bind(
            archive_old)

    return _live(plan, path).bind(correct)


def _repoint(plan: Plan, archived: str, new: str) -> Result[Plan, StoreError]:
    """Every link from another live memory to the archived one (``archive_step``
    pointed them at its archive path) now names ``new``, the memory that corrects it;
    the new memory's own ``supersedes`` edge, and what archived memories say (the
    corrected one's own links among them), keep naming the archive."""
    old_href, new_href = to_document_path(archived), to_document_path(new)
    ops: list[OverlayOp] = []
    for source in plan.view.inbound(old_href):
        record = plan.view.get(source)
        if record is None or source == new or is_archived_path(source):
            continue
        html = record.html
        for link in record.links:
            if link.href == old_href and link.rel != "supersedes":
                html = add_link(remove_link(html, link.rel, old_href), link.rel, new_href)
        if html != record.html:
            html = retarget_anchors(html, old_href, new_href)
        if html != record.html:
            ops.append(Put(source, html))
    return plan.apply_all(ops)


def _edge(plan: Plan, path: str, rel: str, href: str, adding: bool) -> Step:
    if not is_edge_rel(rel):
        return Failure(Refused(not_a_rel_reason(rel)))

    def edit(target: str, record: MemoryRecord) -> Step:
        document = to_document_path(target)
        if adding:
            reached = links_reach(plan.view, (document,))
            if isinstance(reached, Failure):
                return Failure(reached.failure())
        op: OverlayOp = (LinkOp(record.path, rel, document) if adding
                         else UnlinkOp(record.path, rel, document))
        return (plan.apply(op)
                .bind(lambda after: _stamp(after, record.path, record.html))
                .map(stepped_as("link" if adding else "unlink", record.path, record.path,
                           f"{rel} {document}")))

    return href_path(href).bind(
        lambda target: held(plan, path).bind(lambda record: edit(target, record)))


def link_step(plan: Plan, path: str, rel: str, href: str) -> Step:
    """Add an edge; the target must be a memory the view holds."""
    return _edge(plan, path, rel, href, True)


def unlink_step(plan: Plan, path: str, rel: str, href: str) -> Step:
    return _edge(plan, path, rel, href, False)


def _entity(plan: Plan, path: str, entity: str, adding: bool) -> Step:
    def edit(record: MemoryRecord) -> Step:
        op: OverlayOp = Label(record.path, entity) if adding else Unlabel(record.path, entity)
        return (plan.apply(op)
                .bind(lambda after: _stamp(after, record.path, record.html))
                .map(stepped_as("label" if adding else "unlabel", record.path, record.path,
                           entity)))

    return held(plan, path).bind(edit)


def label_step(plan: Plan, path: str, entity: str) -> Step:
    return _entity(plan, path, entity, True)


def unlabel_step(plan: Plan, path: str, entity: str) -> Step:
    return _entity(plan, path, entity, False)


def move_step(plan: Plan, path: str, to: str) -> Step:
    """Rename a live memory, rewriting every href to it in the same plan."""

    def move(record: MemoryRecord, target: str) -> Step:
        if target == record.path:
            return Success(Stepped(plan, Outcome("move", record.path, record.path,
                                                 "already there")))
        if is_archived_path(target):
            return Failure(Refused(f"{target} is under archive/; archive the memory instead"))
        if plan.view.get(target) is not None or target in plan.not_memories:
            return Failure(Refused(f"{target} is already taken"))
        return (repoint_hrefs(plan, to_document_path(record.path), to_document_path(target))
                .bind(lambda rewritten: rewritten.apply(Move(record.path, target)))
                .map(stepped_as("move", record.path, record.path, f"moved to {target}")))

    def destination(record: MemoryRecord) -> Step:
        raw = to.strip()
        if raw.endswith("/"):
            raw = raw + record.path.rsplit("/", 1)[-1]
        names = names_for(plan, leaving=record.path)

        def new_name(target: str) -> Result[str, StoreError]:
            if target == record.path:
                return Success(target)
            return portable_path(target, names).bind(lambda fresh: unshared(fresh, names))

        return (memory_path(spelled(raw, names)).bind(new_name)
                .bind(lambda target: move(record, target)))

    return _live(plan, path).bind(destination)


def revise_step(plan: Plan, path: str, file_html: str) -> Step:
    """The live memory at ``path`` rewritten in place as ``file_html``: the same path
    (nothing archived, no link to repoint), its ``created`` kept and ``updated``
    stamped now. The file is checked as any write's is; git keeps the version before.
    A correction (``correct_step``) is the door for a fact that changed; this is the
    one for a file edited where it lies (the memory tool's ``str_replace``)."""

    def revise(record: MemoryRecord) -> Step:
        def put(html: str) -> Step:
            kept = set_meta(html, "memhtml-created", record.created_at)
            stamped = set_meta(kept, "memhtml-updated", plan.now)
            return plan.apply(Put(record.path, stamped)).map(stepped_as(
                "revise", record.path, record.path, "rewritten in place"))

        return render_write(plan, WriteInput(file_html=file_html)).bind(put)

    return _live(plan, path).bind(revise)


def task_status_step(plan: Plan, path: str, status: str, body: str | None = None) -> Step:
    """Set a task's status; ``done`` archives it in the same plan.

    ``body`` is the commit-body line the outcome carries instead of the status (a
    task closed by a sweep says why: its finding is no longer detected)."""
    if not is_task_status(status):
        return Failure(Refused(f"{status!r} is not a task status (todo, doing, blocked, done)"))

    def finish(after: Plan, record: MemoryRecord) -> Step:
        if status == "done":
            return archive_step(after, record.path).map(lambda archived: Stepped(
                archived.plan, Outcome("task-status", record.path, record.path,
                                       body if body is not None else "done, archived")))
        return Success(Stepped(after, Outcome("task-status", record.path, record.path,
                                              body if body is not None else status)))

    def set_status(record: MemoryRecord) -> Step:
        if record.memory_type != "task":
            return Failure(Refused(f"{record.path} is a {record.memory_type} memory, not a task"))
        updated: Result[Plan, StoreError] = Success(plan)
        if record.task_status != status:
            html = set_meta(record.html, "memhtml-task-status", status)
            updated = plan.apply(Put(record.path, set_meta(html, "memhtml-updated", plan.now)))
        return updated.bind(lambda after: finish(after, record))

    return _live(plan, path).bind(set_status)
