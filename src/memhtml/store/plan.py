"""Each door's change, derived as overlay ops against one version.

A ``Plan`` starts from the version at the tip and applies ops one at a time through
``with_overlay``, the same writer the head uses, so a failing op stops the plan with
the overlay's own error and every later step sees the earlier steps' edits (a batch
can link to a memory it wrote a step before). Nothing here touches git: the door
turns the finished plan into path changes and lands them.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.contracts.ops import Archive, Label, LinkOp, Move, OverlayOp, Put, Unlabel, UnlinkOp
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.contracts.vocabulary import is_edge_rel, is_memory_type, is_task_status
from memhtml.format import (
    NewMemoryInput,
    block_tag_in_run,
    fenced_block_of,
    render_template,
    set_meta,
)
from memhtml.head import HeadVersion, IndexedView, is_entity, with_overlay
from memhtml.head.record import is_archived_path, record_from
from memhtml.store.errors import Refused, StoreError
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import INBOX, TASKS, archive_path, normalize_directory, unique_path
from memhtml.store.paths import href_path, memory_path, tree_path


@dataclass(frozen=True)
class Outcome:
    """What one step did, in the words of a commit message."""

    op: str
    primary: str | None
    subject: str
    body: str


Step = Result[Outcome, StoreError]


class Plan:
    """Ops accumulated over a base version; ``view`` is the base with them applied.

    Mutable, but never shared: one plan lives for one derivation attempt.
    """

    def __init__(self, base: HeadVersion, now: str) -> None:
        self.base = base
        self.now = now
        self.view = IndexedView(base.indexes, base.sha)
        self.ops: list[OverlayOp] = []
        self.touched: dict[str, None] = {}
        self.not_memories = {s.path: s.reason for s in base.skipped_files}

    @property
    def year(self) -> str:
        return self.now[:4]

    def apply(self, op: OverlayOp) -> Result[None, StoreError]:
        result = with_overlay(self.view, [op])
        if not is_successful(result):
            return Failure(result.failure())
        self.view = result.unwrap()
        self.ops.append(op)
        self.touched[op.path] = None
        to = getattr(op, "to", None)
        if isinstance(to, str):
            self.touched[to] = None
        return Success(None)

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


def held(plan: Plan, path: str) -> Result[MemoryRecord, StoreError]:
    """The memory at ``path`` in the plan's view, or why there is none."""
    checked = tree_path(path)
    if not is_successful(checked):
        return Failure(checked.failure())
    tree = checked.unwrap()
    record = plan.view.get(tree)
    if record is not None:
        return Success(record)
    if tree in plan.not_memories:
        return Failure(Refused(f"{tree} is not a memory file ({plan.not_memories[tree]}); "
                               "it is left alone"))
    return Failure(Refused(f"no memory at {tree}"))


def _live(plan: Plan, path: str) -> Result[MemoryRecord, StoreError]:
    def active(record: MemoryRecord) -> Result[MemoryRecord, StoreError]:
        if record.archived or record.status == "archived":
            return Failure(Refused(f"{record.path} is archived"))
        return Success(record)

    return held(plan, path).bind(active)


def _stamp(plan: Plan, path: str, before: str) -> Result[None, StoreError]:
    """Stamp ``memhtml-updated`` on ``path`` when an op just changed it."""
    record = plan.view.get(path)
    if record is None or record.html == before:
        return Success(None)
    stamped = set_meta(record.html, "memhtml-updated", plan.now)
    if stamped == record.html:
        return Success(None)
    return plan.apply(Put(path, stamped))


def _body_violations(data: WriteInput) -> tuple[str, ...]:
    found: list[str] = []
    for label, text in (("title", data.title), ("claim", data.claim)):
        hit = block_tag_in_run(text)
        if hit is not None:
            found.append(f"{label}: block tag {hit.tag} at offset {hit.offset}")
    for i, paragraph in enumerate(data.body, start=1):
        if fenced_block_of(paragraph.strip(" \t\n\r\f")) is not None:
            continue
        hit = block_tag_in_run(paragraph)
        if hit is not None:
            found.append(f"body paragraph {i}: block tag {hit.tag} at offset {hit.offset}; "
                         "prose is escaped, so it would show as text (split the paragraph, "
                         "or give the article as article_html)")
    found += [f"entity {e!r} is not type:name" for e in data.entities if not is_entity(e)]
    found += [f"link rel {link.rel!r} is not an edge rel" for link in data.links
              if not is_edge_rel(link.rel)]
    if not is_memory_type(data.memory_type):
        found.append(f"memory type {data.memory_type!r} is not one of the ten types")
    return tuple(found)


def render_write(plan: Plan, data: WriteInput, extra_links: tuple[Link, ...] = ()
                 ) -> Result[str, StoreError]:
    """The file a write commits: the given file, or the template's rendering."""
    if data.file_html is not None:
        return Success(data.file_html)
    violations = _body_violations(data)
    if violations:
        return Failure(Refused("the memory was not written", violations))
    links = tuple(Link(link.rel, to_document_path(link.href)) for link in data.links)
    return Success(render_template(NewMemoryInput(
        title=data.title, claim=data.claim, memory_type=data.memory_type, at=plan.now,
        body=data.body, article_html=data.article_html, entities=data.entities,
        tags=data.tags, aliases=data.aliases, links=links + extra_links, author=data.author,
        confidence=data.confidence, importance=data.importance, session_id=data.session_id,
        valid_from=data.valid_from, valid_until=data.valid_until,
        task_status=data.task_status, due_at=data.due_at,
    )))


def _new_path(plan: Plan, data: WriteInput, html: str, directory: str | None
              ) -> Result[str, StoreError]:
    if data.path is not None:
        chosen = memory_path(data.path)
        if not is_successful(chosen):
            return chosen
        path = chosen.unwrap()
        if plan.view.get(path) is not None:
            return Failure(Refused(f"{path} already holds a memory; correct it, or pick "
                                   "another path"))
        if is_archived_path(path):
            return Failure(Refused(f"{path} is under archive/; a new memory starts live"))
        return Success(path)
    title = data.title
    if data.file_html is not None:
        parsed = record_from(html, "(new file)")
        if not is_successful(parsed):
            return Failure(parsed.failure())
        title = parsed.unwrap().title
    folder = directory if directory is not None else data.directory
    if folder is None:
        folder = TASKS if data.memory_type == "task" else INBOX
    bare = folder.strip().rstrip("/")
    if bare:
        checked = tree_path(bare)
        if not is_successful(checked):
            return Failure(checked.failure())
    folder = normalize_directory(bare)
    if is_archived_path(folder):
        return Failure(Refused(f"{folder} is under archive/; a new memory starts live"))
    return Success(unique_path(plan.view, folder, title, plan.not_memories.keys()))


def write_step(plan: Plan, data: WriteInput, directory: str | None = None,
               extra_links: tuple[Link, ...] = (), op: str = "write") -> Step:
    """A new memory at a fresh path (or the explicit one, when free)."""
    def place(html: str) -> Step:
        def put(path: str) -> Step:
            applied = plan.apply(Put(path, html))
            if not is_successful(applied):
                return Failure(applied.failure())
            record = plan.view.get(path)
            return Success(Outcome(op, path, path, record.title if record else ""))

        return _new_path(plan, data, html, directory).bind(put)

    return render_write(plan, data, extra_links).bind(place)


def _rewrite_hrefs(plan: Plan, old: str, new: str) -> Result[None, StoreError]:
    """Point every link and ``superseded-by`` at ``old`` (document form) to ``new``."""
    for source in plan.view.inbound(old):
        record = plan.view.get(source)
        if record is None:
            continue
        for link in record.links:
            if link.href != old:
                continue
            for op in (UnlinkOp(source, link.rel, old), LinkOp(source, link.rel, new)):
                applied = plan.apply(op)
                if not is_successful(applied):
                    return applied
    for record in list(plan.view.records()):
        if record.superseded_by == old:
            applied = plan.apply(Put(record.path,
                                     set_meta(record.html, "memhtml-superseded-by", new)))
            if not is_successful(applied):
                return applied
    return Success(None)


def archive_step(plan: Plan, path: str, superseded_by: str | None = None) -> Step:
    """Move ``path`` under ``archive/<YYYY>/`` with status and stamp set, and rewrite
    every href to it, so no edge dangles and each still names the memory it meant."""

    def archive(record: MemoryRecord) -> Step:
        to = archive_path(record.path, plan.year)
        if plan.view.get(to) is not None or to in plan.not_memories:
            return Failure(Refused(f"{to} is already taken by an earlier archive of "
                                   f"{record.path} this year"))
        rewritten = _rewrite_hrefs(plan, to_document_path(record.path), to_document_path(to))
        if not is_successful(rewritten):
            return Failure(rewritten.failure())
        current = plan.view.get(record.path)
        assert current is not None
        html = set_meta(current.html, "memhtml-status", "archived")
        html = set_meta(html, "memhtml-archived", plan.now)
        html = set_meta(html, "memhtml-updated", plan.now)
        if superseded_by is not None:
            html = set_meta(html, "memhtml-superseded-by", superseded_by)
        return plan.apply(Archive(record.path, to, html)).map(
            lambda _: Outcome("archive", record.path, record.path, f"archived to {to}"))

    return _live(plan, path).bind(archive)


def correct_step(plan: Plan, path: str, data: WriteInput) -> Step:
    """A new memory superseding ``path``, which is archived in the same plan."""

    def correct(record: MemoryRecord) -> Step:
        to = archive_path(record.path, plan.year)
        folder = data.directory
        if folder is None and data.path is None:
            folder = record.path.rsplit("/", 1)[0] + "/" if "/" in record.path else ""
        supersedes = (Link("supersedes", to_document_path(to)),)
        written = write_step(plan, data, folder, supersedes)
        if not is_successful(written):
            return written
        new_path = written.unwrap().primary
        assert new_path is not None
        archived = archive_step(plan, record.path, to_document_path(new_path))
        return archived.map(lambda _: Outcome(
            "correct", new_path, record.path, f"supersedes {record.path} with {new_path}"))

    return _live(plan, path).bind(correct)


def _edge(plan: Plan, path: str, rel: str, href: str, adding: bool) -> Step:
    if not is_edge_rel(rel):
        return Failure(Refused(f"{rel!r} is not an edge rel"))
    checked = href_path(href)
    if not is_successful(checked):
        return Failure(checked.failure())
    target = checked.unwrap()
    document = to_document_path(target)

    def edit(record: MemoryRecord) -> Step:
        if adding and plan.view.get(target) is None:
            return Failure(Refused(f"no memory at {document} to link to"))
        op: OverlayOp = (LinkOp(record.path, rel, document) if adding
                         else UnlinkOp(record.path, rel, document))
        return plan.apply(op).bind(lambda _: _stamp(plan, record.path, record.html)).map(
            lambda _: Outcome("link" if adding else "unlink", record.path, record.path,
                              f"{rel} {document}"))

    return held(plan, path).bind(edit)


def link_step(plan: Plan, path: str, rel: str, href: str) -> Step:
    """Add an edge; the target must be a memory the view holds."""
    return _edge(plan, path, rel, href, True)


def unlink_step(plan: Plan, path: str, rel: str, href: str) -> Step:
    return _edge(plan, path, rel, href, False)


def _entity(plan: Plan, path: str, entity: str, adding: bool) -> Step:
    def edit(record: MemoryRecord) -> Step:
        op: OverlayOp = Label(record.path, entity) if adding else Unlabel(record.path, entity)
        return plan.apply(op).bind(lambda _: _stamp(plan, record.path, record.html)).map(
            lambda _: Outcome("label" if adding else "unlabel", record.path, record.path,
                              entity))

    return held(plan, path).bind(edit)


def label_step(plan: Plan, path: str, entity: str) -> Step:
    return _entity(plan, path, entity, True)


def unlabel_step(plan: Plan, path: str, entity: str) -> Step:
    return _entity(plan, path, entity, False)


def move_step(plan: Plan, path: str, to: str) -> Step:
    """Rename a live memory, rewriting every href to it in the same plan."""

    def move(record: MemoryRecord) -> Step:
        raw = to.strip()
        if raw.endswith("/"):
            raw = raw + record.path.rsplit("/", 1)[-1]
        chosen = memory_path(raw)
        if not is_successful(chosen):
            return Failure(chosen.failure())
        target = chosen.unwrap()
        if target == record.path:
            return Success(Outcome("move", record.path, record.path, "already there"))
        if is_archived_path(target):
            return Failure(Refused(f"{target} is under archive/; archive the memory instead"))
        if plan.view.get(target) is not None or target in plan.not_memories:
            return Failure(Refused(f"{target} is already taken"))
        rewritten = _rewrite_hrefs(plan, to_document_path(record.path),
                                   to_document_path(target))
        if not is_successful(rewritten):
            return Failure(rewritten.failure())
        return plan.apply(Move(record.path, target)).map(
            lambda _: Outcome("move", record.path, record.path, f"moved to {target}"))

    return _live(plan, path).bind(move)


def task_status_step(plan: Plan, path: str, status: str) -> Step:
    """Set a task's status; ``done`` archives it in the same plan."""
    if not is_task_status(status):
        return Failure(Refused(f"{status!r} is not a task status (todo, doing, blocked, done)"))

    def set_status(record: MemoryRecord) -> Step:
        if record.memory_type != "task":
            return Failure(Refused(f"{record.path} is a {record.memory_type} memory, not a task"))
        if record.task_status != status:
            html = set_meta(record.html, "memhtml-task-status", status)
            applied = plan.apply(Put(record.path, set_meta(html, "memhtml-updated", plan.now)))
            if not is_successful(applied):
                return Failure(applied.failure())
        if status == "done":
            return archive_step(plan, record.path).map(
                lambda _: Outcome("task-status", record.path, record.path, "done, archived"))
        return Success(Outcome("task-status", record.path, record.path, status))

    return _live(plan, path).bind(set_status)
