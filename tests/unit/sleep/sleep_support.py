"""A store on the doubles (``InMemoryGit``, ``ManualClock``, ``InMemoryState``) for the
sleep run's unit tests, and the few helpers they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange, Signature
from memhtml.head import HeadVersion
from memhtml.sleep.deps import GateVerdict, SleepDeps
from memhtml.store import Store, StoreDeps, WriteInput, init_store, write

T = TypeVar("T")
E = TypeVar("E")

AUTHOR = Signature("Memory Writer", "writer@example.org")
WRITTEN = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
RUN_AT = datetime(2026, 11, 29, 3, 15, 7, 123456, tzinfo=UTC)
RUN_DAY = "2026-11-29"


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


def passing_gate(base: HeadVersion, tip: HeadVersion) -> GateVerdict:
    return GateVerdict(True, "passed")


def failing_gate(base: HeadVersion, tip: HeadVersion) -> GateVerdict:
    return GateVerdict(False, "head gate: MRR fell")


@dataclass
class World:
    git: InMemoryGit
    clock: ManualClock
    state: InMemoryState
    store: Store
    progress: list[tuple[int, str, str]] = field(default_factory=list)

    def deps(self, **override: Any) -> SleepDeps:
        values: dict[str, Any] = {
            "git": self.git, "clock": self.clock, "author": AUTHOR, "state": self.state,
            "gate": passing_gate,
            "progress": lambda n, phase, what: self.progress.append((n, phase, what)),
        }
        values.update(override)
        return SleepDeps(**values)

    def main(self) -> str:
        return ok(self.git.resolve("main"))

    def write(self, title: str, claim: str, *, path: str, links: tuple[Link, ...] = ()
              ) -> str:
        # A store a night runs over may hold copies (a person's, a sync's): allowed here.
        landed = ok(write(self.store, WriteInput(title=title, claim=claim, path=path,
                                                 links=links), allow_duplicate=True))
        assert landed.primary is not None
        return landed.primary

    def raw(self, changes: list[PathChange], message: str = "hand edit") -> str:
        """A commit on main made outside memhtml's doors (a person's own git)."""
        return ok(self.git.commit("main", self.main(), changes, message, AUTHOR,
                                  self.clock.now()))

    def blob(self, commit: str, path: str) -> bytes | None:
        entries = ok(self.git.entries_at(commit, [path]))
        if not entries:
            return None
        return ok(self.git.read_blobs([entries[0].blob_id]))[entries[0].blob_id]

    def tree(self, commit: str) -> dict[str, str]:
        return {e.path: e.blob_id for e in ok(self.git.list_tree(commit))}


def blank_world() -> World:
    """An initialized store with no memory, its clock at ``WRITTEN``."""
    git = InMemoryGit(bare=True)
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    return World(git, clock, InMemoryState(), store)


def put_memory(w: World, path: str, n: int, **fields: Any) -> None:
    """Memory ``n`` at ``path`` through the write door, ``fields`` as ``WriteInput``'s."""
    ok(write(w.store, WriteInput(title=f"Memory {n}", claim=f"Fact number {n} stated.",
                                 path=path, **fields)))


def world(*, memories: int = 3) -> World:
    """A store of ``memories`` linked notes on main; the clock then set to the run."""
    built = blank_world()
    clock = built.clock
    previous: str | None = None
    for n in range(memories):
        links = (Link("relates_to", "/" + previous),) if previous else ()
        previous = built.write(f"Note {n}", f"Fact number {n} about the deploy window.",
                               path=f"areas/notes/note-{n}.html", links=links)
    clock.advance((RUN_AT - WRITTEN).total_seconds())
    return built
