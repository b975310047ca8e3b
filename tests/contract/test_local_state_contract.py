"""The ``LocalState`` contract, run on ``LocalStateFiles`` (disk) and ``MemoryLocalState``
alike: the directory is made once and again without complaint, a directory that cannot
be made is a reason in words (never an exception), and every entry memhtml never puts
there is named with what it is; and ``doctor`` reports each as a ``local-state``
finding over either."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memhtml.adapters.local_state_files import LocalStateFiles
from memhtml.adapters.memory_local_state import MemoryLocalState
from memhtml.contracts.local_state import LocalState
from tests.contract.git_backends import err, ok
from tests.sockets import socket_at

KINDS = ["disk", "memory"]

ODD = {
    "snapshots/abc.snapshot": "a FIFO",
    "vectors/space-1/ids.json": "a symbolic link",
    "pending/x.json": "a directory named as a file",
    "snapshots/extra/deeper.tmp": "a socket",
    "vectors/stray.txt": "a file where a directory belongs",
}
"""What can stand in local state that memhtml never made, and how it is named."""


@dataclass(frozen=True)
class Place:
    state: LocalState
    plant: Callable[[str, str], None]
    block: Callable[[], None]


def _disk(root: Path) -> Place:
    where = root / ".git" / "memhtml"
    state = LocalStateFiles(where)

    def plant(relative: str, what: str) -> None:
        path = where / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        match what:
            case "a FIFO":
                os.mkfifo(path)
            case "a symbolic link":
                path.symlink_to(root / "elsewhere")
            case "a directory named as a file":
                path.mkdir()
            case "a socket":
                socket_at(path)
            case _:
                path.write_bytes(b"")

    def block() -> None:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(b"a file where the directory goes")

    return Place(state, plant, block)


def _memory() -> Place:
    state = MemoryLocalState(Path(".git/memhtml"))

    def block() -> None:
        state.blocked = "File exists"

    return Place(state, state.plant, block)


@pytest.fixture(params=KINDS)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    return _disk(tmp_path) if request.param == "disk" else _memory()


def test_the_directory_is_made_once_and_again(place: Place) -> None:
    ok(place.state.prepare())
    ok(place.state.prepare())
    assert place.state.odd_entries() == ()


def test_a_directory_that_cannot_be_made_is_a_reason(place: Place) -> None:
    place.block()
    reason = err(place.state.prepare())
    assert str(place.state.root) in reason and "cannot create" in reason


def test_every_entry_memhtml_never_makes_is_named(place: Place) -> None:
    ok(place.state.prepare())
    for relative, what in ODD.items():
        place.plant(relative, what)
    found = {odd.path.relative_to(place.state.root).as_posix(): odd.what
             for odd in place.state.odd_entries()}
    assert found == ODD


def test_a_doctor_over_either_names_each_as_local_state(place: Place) -> None:
    from memhtml.adapters.clock import FixedClock
    from memhtml.adapters.memory_git import InMemoryGit
    from memhtml.store import Store, StoreDeps, doctor, init_store
    from tests.contract.git_backends import AT, AUTHOR

    deps = StoreDeps(git=InMemoryGit(bare=True), clock=FixedClock(AT), author=AUTHOR,
                     local=place.state)
    ok(init_store(deps))
    place.plant("pending/x.json", "a directory named as a file")
    findings = [f for f in ok(doctor(Store(deps))) if f.kind == "local-state"]
    assert len(findings) == 1
    assert findings[0].path.endswith("pending/x.json")
    assert "a directory named as a file" in findings[0].message
