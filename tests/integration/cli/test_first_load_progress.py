"""The first command in a fresh clone: a progress bar on a terminal, nothing in a pipe.

A store with memories is cloned with ``git clone`` (no snapshot, no state), and
``memhtml status`` runs as a person runs it, a process of its own: with stderr on a
pseudo-terminal the bar names the first load; with stderr a pipe, stderr stays empty.
Either way the answer is the same and the snapshot is written for the next command.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from memhtml.adapters.git import PygitService
from memhtml.cli.progress import LoadBar
from memhtml.compose import value_of
from memhtml.contracts.services import PathChange, Signature
from memhtml.format import NewMemoryInput, render_template
from tests.integration.cli.cli_support import memhtml_process

AT = datetime(2026, 1, 6, 9, 0, tzinfo=UTC)


@pytest.fixture
def clone(store: Path, tmp_path: Path) -> Path:
    git = value_of(PygitService.open(store))
    tip = str(pygit2.Repository(str(store)).revparse_single("refs/heads/main").id)
    changes = [PathChange(f"areas/inbox/m{i:02d}.html", render_template(NewMemoryInput(
        title=f"Memory {i}", claim=f"Fact {i} holds.", memory_type="semantic",
        at="2026-01-06T09:00:00Z", body=("More words.",))).encode()) for i in range(40)]
    value_of(git.commit("refs/heads/main", tip, changes, "forty", Signature("A", "a@b.c"), AT))
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(store), str(target)], check=True)
    return target


def _snapshots(clone: Path) -> list[Path]:
    folder = clone / ".git" / "memhtml" / "snapshots"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_terminal_sees_the_first_load_and_a_pipe_sees_nothing(clone: Path,
                                                                tmp_path: Path) -> None:
    assert not _snapshots(clone)
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(clone), str(other)], check=True)

    piped = memhtml_process(clone, "status")
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""
    assert "memories  40" in piped.stdout
    assert _snapshots(clone)

    leader, follower = pty.openpty()
    try:
        shown = subprocess.run([sys.executable, "-m", "memhtml", "status", "--store",
                                str(other)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=follower, text=True, check=False, timeout=120)
        os.close(follower)
        drawn = b""
        while select.select([leader], [], [], 0.5)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    assert shown.returncode == 0
    assert shown.stdout == piped.stdout.replace(str(clone), str(other))
    assert "first load" in drawn.decode("utf-8", "replace")
    assert _snapshots(other)


class _Recorded:
    """A bar that writes down what it was told (the ``Bar`` protocol)."""

    def __init__(self) -> None:
        self.told: list[tuple[str, object]] = []

    def advance(self, steps: int = 1) -> None:
        self.told.append(("advance", steps))

    def describe(self, text: str) -> None:
        self.told.append(("describe", text))

    def total(self, total: int | None) -> None:
        self.told.append(("total", total))


def test_a_load_bar_counts_the_files_once_each() -> None:
    bar = _Recorded()
    report = LoadBar(bar)
    for done in (4096, 8192, 9000):
        report("parsing", done, 9000)
    report("indexing", 9000, 9000)
    report("saving the snapshot", 9000, 9000)
    assert [t for t in bar.told if t[0] == "total"] == [("total", 9000)]
    assert sum(int(str(n)) for kind, n in bar.told if kind == "advance") == 9000
    assert ("describe", "parsing 9,000 memories (first load, no snapshot yet)") in bar.told
    assert bar.told[-1] == ("describe", "saving the snapshot (first load)")
