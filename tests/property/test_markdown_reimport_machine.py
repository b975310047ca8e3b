"""No sequence of store-side decisions and note edits gets a decision undone by a
re-import.

A folder of three notes, each linking the next, is imported, and then, in any
order, the person edits, relinks or deletes notes in the folder, and labels, links,
unlinks, corrects or archives memories in the store, importing again now and then;
last of all every note is changed and imported, so each decision meets a changed
note. After every import:

- a note whose memory the person archived or corrected has no live memory (its
  correction, if any, is the live fact), though its note keeps changing;
- every label the person put on a note's memory is on its live memory, whichever
  version the import is at;
- every link the person added between two notes' live memories is there, from the
  live version to the live version, and every link the person removed is absent;
- every link a note makes to another note is there, unless the person removed it
  (a removal lasts while the note goes on naming the target: a note that drops the
  link and later names it again has made a new one);
- every other note in the folder has exactly one live memory (the import brings
  the folder in; only the person's decisions hold a note back).

The machine runs on ``InMemoryGit`` (which passes the contract suite the pygit2
adapter passes) with the import's own planning, history reading and landing
(``markdown_run``), the same calls the command makes; a smaller run uses a real
repository. A deleted note is not restored here; the restore is covered through the
command line (``test_markdown_reimport_decisions``).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import MemoryRecord
from memhtml.head.indexes import is_active
from memhtml.store import Store, WriteInput, archive, correct, label, link, unlink
from memhtml.store.markdown_decisions import source_of
from memhtml.store.markdown_run import land_markdown, plan_markdown
from tests.integration.store.store_support import make_memory_store, make_store, ok

HOME = "areas/imported/"
NOTES = ("a.md", "b.md", "c.md")
PAIRS = tuple((a, b) for a in NOTES for b in NOTES if a != b)
ENTITIES = ("person:priya", "team:ops")
RELS = ("supports", "relates_to")


def _text(note: str, version: int, links: frozenset[str]) -> str:
    refs = " ".join(f"[[{other[:-3]}]]" for other in sorted(links))
    return f"Fact {note[:-3]} at version {version}. {refs}\n"


class ReimportMachine(RuleBasedStateMachine):
    """The folder and the person's decisions as a model; the store as it is."""

    def __init__(self) -> None:
        super().__init__()
        self.store = self.make()
        self.version = dict.fromkeys(NOTES, 0)
        self.note_links: dict[str, frozenset[str]] = {
            note: frozenset({NOTES[(n + 1) % len(NOTES)]}) for n, note in enumerate(NOTES)}
        self.present = set(NOTES)
        self.decided: set[str] = set()
        self.labels: dict[str, set[str]] = {note: set() for note in NOTES}
        self.added: set[tuple[str, str, str]] = set()
        self.removed: set[tuple[str, str, str]] = set()
        self.corrections = 0
        self.reimport()

    def make(self) -> Store:
        return make_memory_store()[0]

    def alive(self) -> bool:
        """Some note is in the folder and not held back by a decision."""
        return bool(self.present - self.decided)

    def two_alive(self) -> bool:
        return len(self.present - self.decided) > 1

    # -- the store as it is ----------------------------------------------------------

    def live(self) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for record in ok(self.store.head()).records():
            source, _ = source_of(record)
            if source is not None and is_active(record):
                assert source not in found, f"two live memories of {source}"
                found[source] = record
        return found

    def files(self) -> list[tuple[str, bytes]]:
        return [(note, _text(note, self.version[note], self.note_links[note]).encode())
                for note in sorted(self.present)]

    # -- the folder ------------------------------------------------------------------

    @rule(note=st.sampled_from(NOTES), other=st.sampled_from(NOTES), now=st.booleans())
    def edit(self, note: str, other: str, now: bool) -> None:
        """Change the note's text, adding or dropping its link to ``other``; import
        at once or leave it for a later import."""
        self.version[note] += 1
        if other != note:
            self.note_links[note] = self.note_links[note] ^ {other}
        if now:
            self.reimport()

    @rule()
    def edit_all(self) -> None:
        """Change every note in the folder and import: each decision the person made
        meets a changed note (what the machine also does last of all)."""
        for note in self.present:
            self.version[note] += 1
        self.reimport()

    def teardown(self) -> None:
        self.edit_all()

    @precondition(two_alive)
    @rule(note=st.sampled_from(NOTES), chance=st.integers(0, 2))
    def delete(self, note: str, chance: int) -> None:
        if note in self.present and not chance:
            self.present.discard(note)
            self.labels[note].clear()
            self._forget(note)
            self.reimport()

    @rule()
    def reimport(self) -> None:
        plan = ok(plan_markdown(self.store, self.files(), HOME, ()))
        assert not plan.refused, plan.refused
        if plan.ops or plan.pages:
            ok(land_markdown(self.store, plan, HOME))
        self.removed = {(note, rel, other) for note, rel, other in self.removed
                        if rel != "relates_to" or other in self.note_links[note]}
        self.check()

    # -- the person's decisions ------------------------------------------------------

    @precondition(alive)
    @rule(note=st.sampled_from(NOTES), entity=st.sampled_from(ENTITIES))
    def label_it(self, note: str, entity: str) -> None:
        memory = self.live().get(note)
        if memory is not None:
            ok(label(self.store, memory.path, entity))
            self.labels[note].add(entity)

    @precondition(two_alive)
    @rule(pair=st.sampled_from(PAIRS), rel=st.sampled_from(RELS))
    def link_it(self, pair: tuple[str, str], rel: str) -> None:
        note, other = pair
        live = self.live()
        if note in live and other in live:
            ok(link(self.store, live[note].path, rel, to_document_path(live[other].path)))
            self.added.add((note, rel, other))
            self.removed.discard((note, rel, other))

    @precondition(two_alive)
    @rule(pair=st.sampled_from(PAIRS), rel=st.sampled_from(RELS))
    def unlink_it(self, pair: tuple[str, str], rel: str) -> None:
        note, other = pair
        live = self.live()
        if note in live and other in live:
            href = to_document_path(live[other].path)
            if any((x.rel, x.href) == (rel, href) for x in live[note].links):
                ok(unlink(self.store, live[note].path, rel, href))
                self.removed.add((note, rel, other))
                self.added.discard((note, rel, other))

    @precondition(alive)
    @rule(note=st.sampled_from(NOTES), corrected=st.booleans(), chance=st.integers(0, 2))
    def decide(self, note: str, corrected: bool, chance: int) -> None:
        """Archive or correct the note's memory (one time in three: a decided note
        takes no further part, so deciding often would leave little to check)."""
        memory = self.live().get(note)
        if memory is None or chance:
            return
        if corrected:
            self.corrections += 1
            ok(correct(self.store, memory.path, WriteInput(
                title=f"Correction {self.corrections}",
                claim=f"Correction number {self.corrections} of a fact.")))
        else:
            ok(archive(self.store, memory.path))
        self.decided.add(note)
        self.labels[note].clear()
        self._forget(note)

    def _forget(self, note: str) -> None:
        """Edges from or to a memory that is no longer live are not checked."""
        self.added = {e for e in self.added if note not in (e[0], e[2])}
        self.removed = {e for e in self.removed if note not in (e[0], e[2])}

    # -- the laws ----------------------------------------------------------------------

    def check(self) -> None:
        live = self.live()
        for note in self.decided:
            assert note not in live, f"{note}: archived or corrected in the store, back live"
        for note in self.present - self.decided:
            assert note in live, f"{note}: in the folder, not decided, yet no live memory"
        for note, entities in self.labels.items():
            if entities:
                assert entities <= set(live[note].entities), (note, entities)
        for note, rel, other in self.added:
            href = to_document_path(live[other].path)
            assert (rel, href) in {(x.rel, x.href) for x in live[note].links}, \
                f"the person's link {note} -{rel}-> {other} was dropped"
        for note, rel, other in self.removed:
            href = to_document_path(live[other].path)
            assert (rel, href) not in {(x.rel, x.href) for x in live[note].links}, \
                f"the person's unlink {note} -{rel}-> {other} was undone"
        for note in live.keys() & self.present:
            for other in self.note_links[note] & live.keys():
                if (note, "relates_to", other) not in self.removed:
                    href = to_document_path(live[other].path)
                    assert ("relates_to", href) in {(x.rel, x.href) for x in live[note].links}, \
                        f"the note's link {note} -> {other} is missing"


ReimportMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=12, deadline=None)
TestReimportInMemory = ReimportMachine.TestCase


class ReimportOnDisk(ReimportMachine):
    """The same machine, smaller, on a real repository (bare, through libgit2)."""

    def make(self) -> Store:
        self.root = Path(tempfile.mkdtemp(prefix="memhtml-reimport-"))
        return make_store(self.root / "store", bare=True)[0]

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


ReimportOnDisk.TestCase.settings = settings(max_examples=5, stateful_step_count=10,
                                            deadline=None)
TestReimportOnDisk = ReimportOnDisk.TestCase

