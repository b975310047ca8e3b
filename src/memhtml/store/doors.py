"""The write doors: each request becomes one commit on the store's branch.

Every door runs the same derivation: read the version at the tip, build the
change as overlay ops (validated by the same writers the head parses with),
turn the resulting view into path changes, and land them as one commit whose
expected parent is that tip. A lost compare-and-swap re-runs the derivation on
the new tip. A door that is refused commits nothing, and the branch is exactly
where it was.

A door also refuses a change to a path the person has edited in the checkout and
not committed (``edits.uncommitted_in``): memhtml never overwrites that edit, so
landing anyway would leave the person's next ``git commit -a`` to undo the door.

Archiving (and ``correct``, ``move``, task ``done``) rewrites every inbound href
in the same commit, so an edge to an archived memory keeps pointing at it under
``archive/`` and nothing dangles; the rewrite is the integrity phase's repair
applied at write time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from typing import assert_never

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import NotFound
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.contracts.vocabulary import TaskStatus, is_task_status
from memhtml.head import HeadVersion, is_archived_path, is_candidate_path
from memhtml.store.errors import Refused, StoreError, describe, widen
from memhtml.store.inputs import (
    BArchive,
    BatchOp,
    BCorrect,
    BLabel,
    BLink,
    BMove,
    BRevise,
    BTaskStatus,
    BUnlabel,
    BUnlink,
    BWrite,
    WriteInput,
)
from memhtml.store.landing import Draft, Landed, land
from memhtml.store.paths import memory_path, tree_path
from memhtml.store.plan import (
    Outcome,
    Plan,
    Step,
    archive_step,
    correct_step,
    label_step,
    link_step,
    move_step,
    revise_step,
    task_status_step,
    unlabel_step,
    unlink_step,
    write_step,
)
from memhtml.store.plan_restore import archived_source, restore_step, unarchive_step
from memhtml.store.recovery import finish_checkout
from memhtml.store.restored import last_version
from memhtml.store.session import Store
from memhtml.store.site_model import is_generated_path
from memhtml.store.stamps import now_stamp
from memhtml.store.tasks import TaskRow, task_list
from memhtml.store.write_rules import edges_are_paths, given_hrefs, links_reach, write_allowed

__all__ = [
    "Landed",
    "TaskRow",
    "archive",
    "batch",
    "correct",
    "label",
    "link",
    "move",
    "page_path",
    "restore",
    "task_add",
    "task_list",
    "task_status",
    "unlabel",
    "unlink",
    "write",
]

Planned = tuple[Plan, tuple[Outcome, ...]]
Steps = Callable[[Plan], Result[Planned, StoreError]]


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _guard_tree(store: Store, base: HeadVersion, plan: Plan) -> IOResult[None, StoreError]:
    """Refuse to write over, or through, a tree entry that is not a memory.

    The view only knows memories; a symlink, an unparsable file or a plain file
    named like a parent directory sits in the tree unseen, and a write there would
    replace it (or be turned away by git with a less helpful error).
    """
    fresh = plan.new_paths()
    if not fresh or base.sha is None:
        return IOSuccess(None)
    asked = sorted({q for p in fresh for q in (p, *_prefixes(p))})

    def judge(entries: tuple[TreeEntry, ...]) -> IOResult[None, StoreError]:
        if not entries:
            return IOSuccess(None)
        problems = tuple(
            f"{e.path} is {'a symbolic link' if e.is_symlink else 'a file that is not a memory'}"
            + (" on the way to a written path" if e.path not in fresh else "")
            for e in entries
        )
        return IOFailure(Refused("refused to write over a tree entry that is not a memory",
                                 problems))

    return store.deps.git.entries_at(base.sha, asked).alt(widen).bind(judge)


def _kept_warm(store: Store, done: Landed, derived: list[tuple[HeadVersion, Plan]]
               ) -> Landed:
    if done.paths and derived:
        base, plan = derived[-1]
        store.adopt_landed(base, plan.view.indexes, done.commit, len(done.paths))
    return done


def _drafted(base: HeadVersion, planned: Planned, batch_subject: str | None,
             pages: _Pages = ((), {}), trailers: Trailers = (),
             derived: list[tuple[HeadVersion, Plan]] | None = None,
             label: str = "batch") -> Draft:
    plan, outcomes = planned
    if derived is not None:
        derived.append((base, plan))
    changes, before = plan.changes()
    if pages[0]:
        changes = tuple(sorted((*changes, *pages[0]), key=lambda change: change.path))
        before = {**before, **pages[1]}
    single = outcomes[0] if batch_subject is None else None
    return Draft(
        parent=base.sha,
        changes=changes,
        ops=tuple(o.op for o in outcomes),
        subject=single.subject if single else (batch_subject or ""),
        body=single.body if single else "; ".join(o.body for o in outcomes if o.body),
        before=before,
        primary=single.primary if single else None,
        label=None if single else label,
        trailers=trailers,
    )


_Pages = tuple[tuple[PathChange, ...], dict[str, bytes | None]]
Trailers = tuple[tuple[str, str], ...]
"""Extra commit trailers, (key, value) in order."""


def page_path(path: str) -> Result[str, StoreError]:
    """A path a page that is not a memory may be written at: inside the store, not a
    memory path (the head would read it), not a generated file (publish owns those)
    and not under ``.memhtml/`` (state and settings have their own doors)."""
    def judge(tree: str) -> Result[str, StoreError]:
        if is_candidate_path(tree) or is_generated_path(tree) or tree.startswith(".memhtml/") \
                or tree in (".gitattributes", ".gitignore", ".gitmodules"):
            return Failure(Refused(f"{tree} is not a path a page may be written at: a "
                                   "memory, a generated page, a git file or a setting"))
        return Success(tree)

    return tree_path(path).bind(judge)


def _page_changes(store: Store, base: HeadVersion, plan: Plan,
                  pages: Mapping[str, bytes]) -> IOResult[_Pages, StoreError]:
    """The changes that bring each page to its bytes, with each one's bytes before.

    A page lands like a memory write: refused over a symbolic link or through a file
    standing where a directory is needed, and never on a path the plan writes."""
    if not pages:
        return IOSuccess(((), {}))
    checked = [page_path(path) for path in sorted(pages)]
    bad = [f.failure() for f in checked if isinstance(f, Failure)]
    if bad:
        return IOFailure(Refused("refused to write these pages", tuple(
            describe(error) for error in bad)))
    paths = [c.unwrap() for c in checked]
    clash = sorted(set(paths) & set(plan.touched))
    if clash:
        return IOFailure(Refused(f"a page and a memory write share a path: {clash[0]}"))
    if base.sha is None:
        return IOSuccess((tuple(PathChange(p, pages[p]) for p in paths),
                          dict.fromkeys(paths)))
    asked = sorted({q for p in paths for q in (p, *_prefixes(p))})

    def judge(entries: tuple[TreeEntry, ...]) -> IOResult[_Pages, StoreError]:
        problems = tuple(
            f"{e.path} is {'a symbolic link' if e.is_symlink else 'a file'}"
            + (" on the way to a page" if e.path not in pages else "")
            for e in entries if e.is_symlink or e.path not in pages)
        if problems:
            return IOFailure(Refused("refused to write a page over or through this "
                                     "tree entry", problems))
        ids = {e.path: e.blob_id for e in entries}
        return store.deps.git.read_blobs(list(ids.values())).alt(widen).map(
            lambda blobs: _changed_pages(paths, pages, {
                path: blobs.get(blob) for path, blob in ids.items()}))

    return store.deps.git.entries_at(base.sha, asked).alt(widen).bind(judge)


def _changed_pages(paths: Sequence[str], pages: Mapping[str, bytes],
                   current: Mapping[str, bytes | None]) -> _Pages:
    changed = [p for p in paths if current.get(p) != pages[p]]
    return (tuple(PathChange(p, pages[p]) for p in changed),
            {p: current.get(p) for p in changed})


def _draft(store: Store, steps: Steps, batch_subject: str | None,
           pages: Mapping[str, bytes] | None = None, trailers: Trailers = (),
           derived: list[tuple[HeadVersion, Plan]] | None = None, label: str = "batch"
           ) -> IOResult[Draft, StoreError]:
    def derive(base: HeadVersion) -> IOResult[Draft, StoreError]:
        plan = Plan.start(base, now_stamp(store.deps.clock.now()), store.deps.detect)
        return IOResult.from_result(steps(plan)).bind(
            lambda planned: _guard_tree(store, base, planned[0]).bind(
                lambda _: _page_changes(store, base, planned[0], pages or {})).map(
                lambda paged: _drafted(base, planned, batch_subject, paged, trailers,
                                       derived, label)))

    return store.head().bind(derive)


def _run(store: Store, steps: Steps, batch_subject: str | None = None,
         pages: Mapping[str, bytes] | None = None, trailers: Trailers = (),
         label: str = "batch") -> IOResult[Landed, StoreError]:
    derived: list[tuple[HeadVersion, Plan]] = []
    landed = land(store.deps, lambda: _draft(store, steps, batch_subject, pages, trailers,
                                             derived, label), guard_edits=True)
    # The plan that landed already holds the new tip's records, parsed: kept warm, the
    # next read (and, after a large write, the next command's cold start) need not
    # parse them again.
    landed = landed.map(lambda done: _kept_warm(store, done, derived))
    # A person's git commit that read the index before this write may already have
    # landed on top of it and undone it; checking now (cheap: this write's mark and a
    # tree lookup) restores it before the caller is told the write is in. What the
    # check cannot do is left for the next command, never reported as a failure.
    return landed.bind(lambda done: finish_checkout(store.deps).map(lambda _: done).lash(
        lambda _: IOSuccess(done)))


def _one(step: Callable[[Plan], Step]) -> Steps:
    return lambda plan: step(plan).map(lambda done: (done.plan, (done.outcome,)))


def _allowed(rule: Callable[[Plan], Result[None, StoreError]], steps: Steps,
             data: WriteInput) -> Steps:
    """``steps``, then ``rule`` (``store.write_rules``) judged on the plan they started
    from: what is wrong with the request itself (an edge's target that is no store
    path, as ``link`` says it; a field; the new path) is said first, and only a
    request that could land is held to what the store already holds."""
    asked = edges_are_paths(given_hrefs(data))
    return lambda plan: asked.bind(lambda _: steps(plan)).bind(
        lambda planned: rule(plan).map(lambda _: planned))


def write(store: Store, data: WriteInput, *, allow_duplicate: bool = False
          ) -> IOResult[Landed, StoreError]:
    """A new memory, rendered by the template (or given whole) at a fresh path.

    Refused, with nothing written, when a live memory already holds its claim
    (``DuplicateClaim`` names it; ``allow_duplicate`` stores the copy anyway) and
    when an edge it asks for reaches no memory (``DanglingLinks`` names each):

    >>> from datetime import UTC, datetime
    >>> from memhtml.adapters.clock import FixedClock
    >>> from memhtml.adapters.memory_git import InMemoryGit
    >>> from memhtml.compose import MemhtmlError, error_code, value_of
    >>> from memhtml.contracts.record import Link
    >>> from memhtml.contracts.services import Signature
    >>> from memhtml.store import Store, StoreDeps, WriteInput, write
    >>> store = Store(StoreDeps(InMemoryGit(), FixedClock(datetime(2026, 1, 6, tzinfo=UTC)),
    ...                         Signature("Ada", "ada@example.org")))
    >>> fact = WriteInput(title="Standup", claim="Standup is at 9:30.")
    >>> value_of(write(store, fact)).primary
    'areas/inbox/standup.html'
    >>> try:
    ...     value_of(write(store, WriteInput(title="Again", claim="standup is  at 9:30.")))
    ... except MemhtmlError as failure:
    ...     print(error_code(failure.error), failure.error.existing)
    ERR_DUPLICATE_CLAIM areas/inbox/standup.html
    >>> value_of(write(store, fact, allow_duplicate=True)).primary
    'areas/inbox/standup-2.html'
    >>> try:
    ...     value_of(write(store, WriteInput(title="Retro", claim="Retro is on Friday.",
    ...         links=(Link("relates_to", "areas/inbox/a.html"),
    ...                Link("relates_to", "areas/inbox/standup.html"),
    ...                Link("supports", "/areas/inbox/b.html")))))
    ... except MemhtmlError as failure:
    ...     print(error_code(failure.error), failure.error.targets)
    ERR_DANGLING_LINKS ('/areas/inbox/a.html', '/areas/inbox/b.html')
    """
    return _run(store, _allowed(lambda plan: write_allowed(plan.view, data, allow_duplicate),
                                _one(lambda plan: write_step(plan, data)), data))


def correct(store: Store, path: str, data: WriteInput) -> IOResult[Landed, StoreError]:
    """A new memory superseding ``path``: the new file links ``supersedes`` to the old
    one's archive path, the old one is stamped ``superseded-by`` and archived.

    Over the in-memory git double, one commit each; the old path then says where
    its memory went:

    >>> from datetime import UTC, datetime
    >>> from memhtml.adapters.clock import FixedClock
    >>> from memhtml.adapters.memory_git import InMemoryGit
    >>> from memhtml.compose import MemhtmlError, value_of
    >>> from memhtml.contracts.services import Signature
    >>> from memhtml.store import Store, StoreDeps, WriteInput, correct, read, write
    >>> store = Store(StoreDeps(InMemoryGit(), FixedClock(datetime(2026, 1, 6, tzinfo=UTC)),
    ...                         Signature("Ada", "ada@example.org")))
    >>> old = value_of(write(store, WriteInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.")))
    >>> new = value_of(correct(store, old.primary, WriteInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays and Thursdays.")))
    >>> new.primary
    'areas/inbox/deploy-window-2.html'
    >>> new.paths
    ('archive/2026/areas/inbox/deploy-window.html', 'areas/inbox/deploy-window-2.html',
     'areas/inbox/deploy-window.html')
    >>> print(value_of(read(store, new.primary, tier="gist")))
    Deploys happen on Tuesdays and Thursdays.
    >>> try:
    ...     value_of(read(store, old.primary))
    ... except MemhtmlError as failure:
    ...     print(failure)
    areas/inbox/deploy-window.html was archived at archive/2026/areas/inbox/deploy-window.html
    on 2026-01-06; areas/inbox/deploy-window-2.html superseded it; read it there
    """
    # Only the edges the correction is given are held to reach a memory: the ones it
    # carries forward from the corrected memory stay as the person left them.
    return _run(store, _allowed(lambda plan: links_reach(plan.view, given_hrefs(data)),
                                _one(lambda plan: correct_step(plan, path, data)), data))


def archive(store: Store, path: str) -> IOResult[Landed, StoreError]:
    """Move a memory under ``archive/<YYYY>/``, status and stamp set, hrefs rewritten."""
    return _run(store, _one(lambda plan: archive_step(plan, path)))


def link(store: Store, path: str, rel: str, href: str) -> IOResult[Landed, StoreError]:
    """Add a ``rel`` edge from ``path`` to the memory at ``href`` (either path form).

    An edge already there changes nothing (no commit, ``paths`` empty), and an edge
    to no memory is refused:

    >>> from datetime import UTC, datetime
    >>> from memhtml.adapters.clock import FixedClock
    >>> from memhtml.adapters.memory_git import InMemoryGit
    >>> from memhtml.compose import MemhtmlError, value_of
    >>> from memhtml.contracts.services import Signature
    >>> from memhtml.store import Store, StoreDeps, WriteInput, link, related, write
    >>> store = Store(StoreDeps(InMemoryGit(), FixedClock(datetime(2026, 1, 6, tzinfo=UTC)),
    ...                         Signature("Ada", "ada@example.org")))
    >>> deploys = value_of(write(store, WriteInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays."))).primary
    >>> freeze = value_of(write(store, WriteInput(
    ...     title="Change freeze", claim="Nothing ships in the December freeze."))).primary
    >>> print(value_of(link(store, deploys, "relates_to", freeze)).message, end="")
    memhtml link: areas/inbox/deploy-window.html
    <BLANKLINE>
    relates_to /areas/inbox/change-freeze.html
    <BLANKLINE>
    Memhtml-Op: link
    Memhtml-Path: areas/inbox/deploy-window.html
    >>> value_of(link(store, deploys, "relates_to", freeze)).paths
    ()
    >>> value_of(related(store, freeze)).inbound
    (InboundLink(path='areas/inbox/deploy-window.html', rel='relates_to'),)
    >>> try:
    ...     value_of(link(store, deploys, "relates_to", "areas/inbox/nowhere.html"))
    ... except MemhtmlError as failure:
    ...     print(failure)
    no memory at /areas/inbox/nowhere.html to link to; nothing was written: link only to an
    existing memory (write it first, or find its path by searching)
    """
    return _run(store, _one(lambda plan: link_step(plan, path, rel, href)))


def unlink(store: Store, path: str, rel: str, href: str) -> IOResult[Landed, StoreError]:
    return _run(store, _one(lambda plan: unlink_step(plan, path, rel, href)))


def label(store: Store, path: str, entity: str) -> IOResult[Landed, StoreError]:
    """Add a ``type:name`` entity to a memory."""
    return _run(store, _one(lambda plan: label_step(plan, path, entity)))


def unlabel(store: Store, path: str, entity: str) -> IOResult[Landed, StoreError]:
    return _run(store, _one(lambda plan: unlabel_step(plan, path, entity)))


def move(store: Store, path: str, to: str) -> IOResult[Landed, StoreError]:
    """Rename a live memory (``to`` ending in ``/`` keeps the file name) and rewrite
    every inbound href in the same commit."""
    return _run(store, _one(lambda plan: move_step(plan, path, to)))


def restore(store: Store, path: str, at: str | None = None) -> IOResult[Landed, StoreError]:
    """Bring a memory back live as one new commit.

    An archived one (``path`` its archive path, or the original path, whose latest
    archive is then taken) goes back to its original path, status active, every link
    to the archive path pointed back (``unarchive_step``). One deleted from the branch
    (a person's ``git rm``, or another clone's deletion a sync brought in) is put back
    as the last version the branch held, or the one at the commit ``at`` names. A path
    that holds a live memory is refused: there is nothing to restore."""
    def deleted(tree: str) -> IOResult[Landed, StoreError]:
        return last_version(store, tree, at).bind(lambda version: _run(store, _one(
            lambda plan: restore_step(plan, tree, version[1], version[0]))))

    def route(tree: str, base: HeadVersion) -> IOResult[Landed, StoreError]:
        live = base.get(tree) is not None and not is_archived_path(tree)
        if at is None and (live or archived_source(base, tree) is not None):
            return _run(store, _one(lambda plan: unarchive_step(plan, tree)))
        return deleted(tree)

    return IOResult.from_result(memory_path(path)).bind(
        lambda tree: store.head().bind(lambda base: route(tree, base)))


def task_add(
    store: Store,
    title: str,
    claim: str,
    due_at: str | None = None,
    entities: tuple[str, ...] = (),
    *,
    body: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    links: tuple[Link, ...] = (),
    directory: str | None = None,
    importance: int | None = None,
    author: str | None = None,
    task_status: str | None = None,
) -> IOResult[Landed, StoreError]:
    """A new task (``todo`` unless told), by default under ``areas/tasks/``."""
    status: TaskStatus | None = None
    if task_status is not None:
        if not is_task_status(task_status):
            return IOFailure(Refused(f"{task_status!r} is not a task status "
                                     "(todo, doing, blocked, done)"))
        status = task_status
    data = WriteInput(
        title=title, claim=claim, memory_type="task", body=body, entities=entities, tags=tags,
        links=links, directory=directory, importance=importance, author=author,
        due_at=due_at, task_status=status,
    )
    return _run(store, _allowed(lambda plan: links_reach(plan.view, given_hrefs(data)),
                                _one(lambda plan: write_step(plan, data, op="task-add")),
                                data))


def task_status(store: Store, path: str, status: str) -> IOResult[Landed, StoreError]:
    """Move a task through todo, doing, blocked; ``done`` also archives it."""
    return _run(store, _one(lambda plan: task_status_step(plan, path, status)))


def _batch_step(plan: Plan, op: BatchOp) -> Step:
    match op:
        case BWrite(data=data):
            return write_step(plan, data)
        case BCorrect(path=path, data=data):
            return correct_step(plan, path, data)
        case BArchive(path=path):
            return archive_step(plan, path)
        case BLink(path=path, rel=rel, href=href):
            return link_step(plan, path, rel, href)
        case BUnlink(path=path, rel=rel, href=href):
            return unlink_step(plan, path, rel, href)
        case BLabel(path=path, entity=entity):
            return label_step(plan, path, entity)
        case BUnlabel(path=path, entity=entity):
            return unlabel_step(plan, path, entity)
        case BMove(path=path, to=to):
            return move_step(plan, path, to)
        case BTaskStatus(path=path, status=status):
            return task_status_step(plan, path, status)
        case BRevise(path=path, file_html=html):
            return revise_step(plan, path, html)
        case _ as never:
            assert_never(never)


def batch(store: Store, ops: Sequence[BatchOp], pages: Mapping[str, bytes] | None = None,
          trailers: Trailers = (), *, subject: str | None = None, label: str = "batch"
          ) -> IOResult[Landed, StoreError]:
    """Several doors' requests applied in order as one overlay and landed as one
    commit: all of them or, when any is refused, none.

    ``subject`` and ``label`` name the commit for a caller that is one request of its
    own (the memory tool's ``memhtml memory-tool: rename /memories/a /memories/b``);
    by default ``memhtml batch: N ops``.

    ``pages`` are files beside the memories that are not memories (an imported
    index page), tree path -> bytes, landed in the same commit; one whose bytes are
    already there is left out of it. ``trailers`` follow the op and path trailers in
    the message (an import names itself, so a later import can tell its own archives
    from a person's)."""
    if not ops and not pages:
        return IOFailure(Refused("an empty batch has nothing to commit"))

    def then(so_far: Result[Planned, StoreError], numbered: tuple[int, BatchOp]
             ) -> Result[Planned, StoreError]:
        index, op = numbered

        def one_more(planned: Planned) -> Result[Planned, StoreError]:
            plan, outcomes = planned
            return (_batch_step(plan, op)
                    .map(lambda done: (done.plan, (*outcomes, done.outcome)))
                    .alt(lambda error: _in_batch(error, index)))

        return so_far.bind(one_more)

    def steps(plan: Plan) -> Result[Planned, StoreError]:
        start: Result[Planned, StoreError] = Success((plan, ()))
        return reduce(then, enumerate(ops, start=1), start)

    counted = f"{len(ops)} ops" + (
        f", {len(pages)} page{'' if len(pages) == 1 else 's'}" if pages else "")
    return _run(store, steps, subject or counted, pages, trailers, label)


def _in_batch(error: StoreError, index: int) -> StoreError:
    """Say which op of a batch failed, for the store's own refusals (a missing path
    keeps its code)."""
    if isinstance(error, Refused):
        return Refused(f"batch op {index}: {error.reason}", error.violations)
    if isinstance(error, NotFound):
        return NotFound(f"{error.what} (batch op {index})")
    return error
