"""The store against a dict: random door calls, then tree, head and model must agree.

The model knows only what each door promises (which paths hold which claims,
statuses, entities and edges, and where archives, restores and moves send inbound
hrefs; a second archive of one path in the year takes the year's next folder),
so a door that loses a write, leaves an href dangling or commits a refused
change shows up as a disagreement after the step that did it.

The machine runs on ``InMemoryGit``, which passes the same contract suite as the
pygit2 adapter (``tests/contract``): bare, and at full size keeping a checkout up to
date on the twins beside a person's uncommitted edit (``CheckoutStoreMachine``); and
again, smaller, on a real repository, so the doors are also seen landing through
libgit2.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.memory_snapshots import MemorySnapshots
from memhtml.contracts.record import Link
from memhtml.contracts.services import GitService
from memhtml.head import is_candidate_path
from memhtml.store import (
    Landed,
    Store,
    WriteInput,
    archive,
    archive_path,
    correct,
    label,
    link,
    move,
    restore,
    task_add,
    task_status,
    unlabel,
    unlink,
    write,
)
from memhtml.store.checkout import git_blob_id
from memhtml.store.duplicates import normalised_claim
from memhtml.store.errors import DuplicateClaim, UncommittedEdits
from memhtml.store.layout import archive_rank, original_of_archived
from tests.integration.store.store_support import (
    make_memory_checkout_store,
    make_memory_store,
    make_store,
    ok,
)

YEAR = "2026"
TITLES = ["Deploy", "Cache", "Queue retry", "Déjà vu", "Deploy!"]
WORDS = ["deploy", "canary", "cache", "queue", "retry", "schema", "audit", "region"]
ENTITIES = ["service:api", "team:infra", "topic:cache"]
RELS = ["supports", "relates_to", "caused_by"]
DIRECTORIES = [None, "areas/ops", "resources/people"]
MOVE_TARGETS = [f"{d}/{n}.html" for d in ("areas/inbox", "areas/ops", "resources/topic")
                for n in ("m1", "m2")]

claims = st.lists(st.sampled_from(WORDS), min_size=2, max_size=5).map(
    lambda ws: " ".join(ws).capitalize() + ".")


@dataclass(frozen=True)
class Model:
    title: str
    claim: str
    memory_type: str
    status: str = "active"
    entities: frozenset[str] = frozenset()
    links: frozenset[tuple[str, str]] = frozenset()
    task_status: str | None = None
    superseded_by: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False)


def _doc(path: str) -> str:
    return "/" + path


class StoreMachine(RuleBasedStateMachine):
    """The store on ``InMemoryGit``: bare, no worktree, no state directory."""

    def __init__(self) -> None:
        super().__init__()
        self.store, self.git = self.make_store()
        self.model: dict[str, Model] = {}

    def make_store(self) -> tuple[Store, GitService]:
        return make_memory_store()

    # -- helpers -----------------------------------------------------------------------

    def tip(self) -> str | None:
        return ok(self.store.tip())

    def active(self) -> list[str]:
        return sorted(p for p, m in self.model.items() if m.status == "active")

    def sources(self) -> list[str]:
        """The memories a door may rewrite by name (link from, label)."""
        return sorted(self.model)

    def refused(self, result: object, before: str | None) -> None:
        assert not is_successful(result), result  # type: ignore[arg-type]
        assert self.tip() == before

    def landed(self, result: object) -> Landed:
        assert is_successful(result), result  # type: ignore[arg-type]
        return unsafe_perform_io(result.unwrap())  # type: ignore[attr-defined, no-any-return]

    def rewrite(self, old: str, new: str) -> None:
        """What every archive and move promises: hrefs to ``old`` now point at ``new``."""
        old_href, new_href = _doc(old), _doc(new)
        for path, m in list(self.model.items()):
            links = frozenset((rel, new_href if href == old_href else href)
                              for rel, href in m.links)
            superseded = new_href if m.superseded_by == old_href else m.superseded_by
            self.model[path] = replace(m, links=links, superseded_by=superseded)

    def archive_to(self, path: str) -> str:
        """Where an archive of ``path`` goes: this year's folder, or its next ordinal
        while an earlier archive of the same path holds the name."""
        ordinal = 1
        while archive_path(path, YEAR, ordinal) in self.model:
            ordinal += 1
        return archive_path(path, YEAR, ordinal)

    def archive_model(self, path: str, superseded_by: str | None = None) -> str:
        to = self.archive_to(path)
        self.rewrite(path, to)
        m = self.model.pop(path)
        self.model[to] = replace(m, status="archived",
                                 superseded_by=superseded_by or m.superseded_by)
        return to

    def add_new(self, landed: Landed, m: Model, directory: str) -> str:
        path = landed.primary
        assert path is not None
        assert path not in self.model
        assert path.startswith(directory)
        assert landed.paths == (path,)
        self.model[path] = m
        return path

    # -- rules -------------------------------------------------------------------------

    @rule(title=st.sampled_from(TITLES), claim=claims,
          memory_type=st.sampled_from(["semantic", "episodic"]),
          entities=st.sets(st.sampled_from(ENTITIES), max_size=2),
          directory=st.sampled_from(DIRECTORIES), bad=st.booleans(), data=st.data())
    def write_memory(self, title: str, claim: str, memory_type: str, entities: set[str],
                     directory: str | None, bad: bool, data: st.DataObject) -> None:
        links: tuple[Link, ...] = ()
        with_link: bool = bool(self.model) and data.draw(st.booleans())
        if with_link:
            target = data.draw(st.sampled_from(sorted(self.model)))
            links = (Link("relates_to", _doc(target)),)
        body = ("a NUL \x00 typed into prose",) if bad else ()
        # One live copy of a claim: a write repeating one is refused, naming the first
        # live memory (by path) that holds it, unless the copy is asked for.
        holder = next((p for p, m in sorted(self.model.items()) if m.status == "active"
                       and normalised_claim(m.claim) == normalised_claim(claim)), None)
        copy = holder is not None and data.draw(st.booleans())
        before = self.tip()
        result = write(self.store, WriteInput(
            title=title, claim=claim, memory_type=memory_type,  # type: ignore[arg-type]
            entities=tuple(sorted(entities)), links=links, directory=directory, body=body),
            allow_duplicate=copy)
        if bad:
            self.refused(result, before)
            return
        if holder is not None and not copy:
            self.refused(result, before)
            assert unsafe_perform_io(result.failure()) == DuplicateClaim(
                self.model[holder].claim, holder)
            return
        self.add_new(self.landed(result), Model(
            title, claim, memory_type, entities=frozenset(entities),
            links=frozenset((link.rel, link.href) for link in links)),
            (directory or "areas/inbox") + "/")

    @precondition(lambda self: bool(self.active()))
    @rule(data=st.data(), claim=claims)
    def correct_memory(self, data: st.DataObject, claim: str) -> None:
        path = data.draw(st.sampled_from(self.active()))
        old = self.model[path]
        result = correct(self.store, path, WriteInput(title=old.title, claim=claim))
        to = self.archive_to(path)
        landed = self.landed(result)
        new = landed.primary
        assert new is not None
        assert new not in self.model
        assert new.rsplit("/", 1)[0] == path.rsplit("/", 1)[0]
        # What the correction was not given comes forward (``store.correction``).
        kept = frozenset((rel, href) for rel, href in old.links if rel != "supersedes")
        self.model[new] = replace(old, claim=claim, superseded_by=None,
                                  links=kept | {("supersedes", _doc(to))})
        self.archive_model(path, superseded_by=_doc(new))
        # Links from other memories to the corrected one follow to the correction.
        for other, m in list(self.model.items()):
            if other in (new, to) or m.status != "active":
                continue
            links = frozenset((rel, _doc(new) if href == _doc(to) and rel != "supersedes"
                               else href) for rel, href in m.links)
            self.model[other] = replace(m, links=links)

    @precondition(lambda self: bool(self.active()))
    @rule(data=st.data())
    def archive_memory(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(self.active()))
        self.landed(archive(self.store, path))
        self.archive_model(path)

    @precondition(lambda self: any(m.status == "archived" for m in self.model.values()))
    @rule(data=st.data(), by_original=st.booleans())
    def restore_memory(self, data: st.DataObject, by_original: bool) -> None:
        """The archive's inverse: back at the original path (named, or the archive path
        given), status active, no supersession, hrefs pointed back and ``supersedes``
        edges to it dropped; refused while the original path holds a memory."""
        copy = data.draw(st.sampled_from(sorted(
            p for p, m in self.model.items() if m.status == "archived")))
        original = original_of_archived(copy)
        assert original is not None
        if by_original:
            copy = max((p for p, m in self.model.items()
                        if m.status == "archived" and original_of_archived(p) == original),
                       key=lambda p: (archive_rank(p) or (0, 0), p))
        before = self.tip()
        result = restore(self.store, original if by_original else copy)
        if original in self.model:
            self.refused(result, before)
            return
        self.landed(result)
        href = _doc(copy)
        for path, m in list(self.model.items()):
            if path != copy:
                self.model[path] = replace(m, links=m.links - {("supersedes", href)})
        self.rewrite(copy, original)
        self.model[original] = replace(self.model.pop(copy), status="active",
                                       superseded_by=None)

    @precondition(lambda self: bool(self.sources()))
    @rule(data=st.data(), rel=st.sampled_from(RELS))
    def link_memories(self, data: st.DataObject, rel: str) -> None:
        source = data.draw(st.sampled_from(self.sources()))
        target = data.draw(st.sampled_from(sorted(self.model)))
        landed = self.landed(link(self.store, source, rel, target))
        m = self.model[source]
        edge = (rel, _doc(target))
        assert landed.paths == (() if edge in m.links else (source,))
        self.model[source] = replace(m, links=m.links | {edge})

    @precondition(lambda self: any(m.links for m in self.model.values()))
    @rule(data=st.data())
    def unlink_memories(self, data: st.DataObject) -> None:
        source = data.draw(st.sampled_from(sorted(p for p, m in self.model.items() if m.links)))
        m = self.model[source]
        rel, href = data.draw(st.sampled_from(sorted(m.links)))
        self.landed(unlink(self.store, source, rel, href))
        self.model[source] = replace(m, links=m.links - {(rel, href)})

    @precondition(lambda self: bool(self.sources()))
    @rule(data=st.data(), entity=st.sampled_from(ENTITIES), remove=st.booleans())
    def label_memory(self, data: st.DataObject, entity: str, remove: bool) -> None:
        path = data.draw(st.sampled_from(self.sources()))
        m = self.model[path]
        before = self.tip()
        if remove:
            result = unlabel(self.store, path, entity)
            if entity not in m.entities:
                self.refused(result, before)
                return
            self.landed(result)
            self.model[path] = replace(m, entities=m.entities - {entity})
            return
        landed = self.landed(label(self.store, path, entity))
        assert landed.paths == (() if entity in m.entities else (path,))
        self.model[path] = replace(m, entities=m.entities | {entity})

    @precondition(lambda self: bool(self.active()))
    @rule(data=st.data(), to=st.sampled_from(MOVE_TARGETS))
    def move_memory(self, data: st.DataObject, to: str) -> None:
        path = data.draw(st.sampled_from(self.active()))
        before = self.tip()
        result = move(self.store, path, to)
        if to == path:
            assert self.landed(result).paths == ()
            return
        if to in self.model:
            self.refused(result, before)
            return
        self.landed(result)
        self.rewrite(path, to)
        self.model[to] = self.model.pop(path)

    @rule(title=st.sampled_from(TITLES), claim=claims)
    def add_task(self, title: str, claim: str) -> None:
        landed = self.landed(task_add(self.store, title, claim, due_at="2026-06-01"))
        self.add_new(landed, Model(title, claim, "task", task_status="todo"), "areas/tasks/")

    @precondition(lambda self: any(m.memory_type == "task" and m.status == "active"
                                   for m in self.model.values()))
    @rule(data=st.data(), status=st.sampled_from(["todo", "doing", "blocked", "done"]))
    def set_task_status(self, data: st.DataObject, status: str) -> None:
        path = data.draw(st.sampled_from(sorted(
            p for p, m in self.model.items() if m.memory_type == "task" and m.status == "active")))
        result = task_status(self.store, path, status)
        self.landed(result)
        self.model[path] = replace(self.model[path], task_status=status)
        if status == "done":
            self.archive_model(path)

    # -- the agreement -----------------------------------------------------------------

    @invariant()
    def tree_head_and_model_agree(self) -> None:
        version = ok(self.store.head())
        assert version.sha == self.tip()
        if version.sha is None:
            assert not self.model
            return
        entries = [e for e in ok(self.git.list_tree(version.sha)) if is_candidate_path(e.path)]
        assert sorted(e.path for e in entries) == sorted(self.model)
        assert version.skipped_files == ()
        blobs = ok(self.git.read_blobs([e.blob_id for e in entries]))
        for entry in entries:
            record = version.get(entry.path)
            assert record is not None
            assert record.blob_sha == entry.blob_id
            assert record.html.encode() == blobs[entry.blob_id]
            m = self.model[entry.path]
            assert (record.title, record.claim, record.memory_type, record.status) == (
                " ".join(m.title.split()), m.claim, m.memory_type, m.status)
            assert record.archived == (m.status == "archived")
            assert frozenset(record.entities) == m.entities
            assert frozenset((link.rel, link.href) for link in record.links) == m.links
            assert record.task_status == m.task_status
            assert record.superseded_by == m.superseded_by
        assert version.size == len(self.model)


class RealGitStoreMachine(StoreMachine):
    """The same machine on a bare repository through ``PygitService``."""

    def make_store(self) -> tuple[Store, GitService]:
        self.root = Path(tempfile.mkdtemp(prefix="memhtml-machine-"))
        return make_store(self.root / "repo.git", bare=True)

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class CheckoutStoreMachine(StoreMachine):
    """The same machine keeping a checkout up to date, every part of it on the twins
    (the in-memory git's working tree and index, the marks of writes in memory), with a
    person beside it who edits a memory and leaves the edit uncommitted, then puts it
    back: a door on that memory is refused with the edit named and never overwrites
    it, and every other file and index entry follows the branch, each write's mark
    landed and synced."""

    person_text = b"<p>The person's own words, not committed yet.</p>\n"

    def make_store(self) -> tuple[Store, GitService]:
        store, git, self.journals = make_memory_checkout_store()
        self.twin = git
        self.held: set[str] = set()
        return store, git

    def active(self) -> list[str]:
        return [p for p in super().active() if p not in self.held]

    def sources(self) -> list[str]:
        return [p for p in super().sources() if p not in self.held]

    def editable(self) -> list[str]:
        """What the person edits: an active memory no door rewrites while it is held
        (no links out, not superseded, not a task)."""
        return [p for p in self.active() if not self.model[p].links
                and self.model[p].superseded_by is None and self.model[p].memory_type != "task"]

    @precondition(lambda self: bool(self.editable()))
    @rule(data=st.data())
    def person_edits_a_memory(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(self.editable()))
        self.twin.person_writes(path, self.person_text)
        self.held.add(path)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), door=st.sampled_from(["archive", "label", "move", "correct"]))
    def a_door_on_the_edited_memory_is_refused(self, data: st.DataObject, door: str) -> None:
        path = data.draw(st.sampled_from(sorted(self.held)))
        before = self.tip()
        # A label it already has changes nothing, so nothing is refused: a new one.
        missing = [e for e in ENTITIES if e not in self.model[path].entities]
        if door == "label" and not missing:
            door = "archive"
        result = {
            "archive": lambda: archive(self.store, path),
            "label": lambda: label(self.store, path, missing[0]),
            "move": lambda: move(self.store, path, "areas/ops/held.html"),
            "correct": lambda: correct(self.store, path, WriteInput(
                title=self.model[path].title, claim="Corrected over an edit.")),
        }[door]()
        self.refused(result, before)
        failure = unsafe_perform_io(result.failure())
        assert isinstance(failure, UncommittedEdits) and path in failure.paths, failure

    @rule(damaged=st.booleans())
    def a_new_process_starts_cold(self, damaged: bool) -> None:
        """Another command on the same clone: a new handle, which starts from the
        newest snapshot the twins keep (damaged, when ``damaged``: then it is dropped
        and the tip read from git again). The invariants check what it answers."""
        snapshots = self.store.deps.snapshots
        assert isinstance(snapshots, MemorySnapshots)
        if damaged and snapshots.saved():
            snapshots.damage(snapshots.saved()[0])
        self.store = Store(self.store.deps)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def person_puts_it_back(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(sorted(self.held)))
        tip = self.tip()
        assert tip is not None
        entry = ok(self.git.entries_at(tip, [path]))[0]
        self.twin.person_writes(path, ok(self.git.read_blobs([entry.blob_id]))[entry.blob_id])
        self.held.discard(path)

    @invariant()
    def the_checkout_follows_the_branch_around_the_persons_edit(self) -> None:
        tip = self.tip()
        if tip is None:
            return
        tree = {e.path: e.blob_id for e in ok(self.git.list_tree(tip))}
        assert dict(ok(self.git.index_entries())) == tree
        assert ok(self.git.worktree_changes()) == tuple(sorted(self.held))
        edited = ok(self.git.worktree_blobs(sorted(self.held)))
        assert set(edited.values()) <= {git_blob_id(self.person_text)}
        assert all(j.commit is not None and j.synced for j in self.journals.read_all())


# The checkout machine runs every rule of the bare one and more, on the same twin, so
# it takes the many examples (500, 20 steps each); the bare one keeps fewer, longer
# sequences; real git a few.
StoreMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=30)
TestStoreMachine = StoreMachine.TestCase
RealGitStoreMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=30)
TestRealGitStoreMachine = RealGitStoreMachine.TestCase
CheckoutStoreMachine.TestCase.settings = settings(max_examples=500, stateful_step_count=20)
TestCheckoutStoreMachine = CheckoutStoreMachine.TestCase
