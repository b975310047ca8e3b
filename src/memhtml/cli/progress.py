"""Progress bars on stderr, for work that can take more than a second.

Shown only when stderr is a terminal and the command is not in ``--json`` mode, so
pipes, scripts and tests see nothing. rich is imported only when a bar is shown:
the import alone costs more than a fast command's whole answer.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Bar(Protocol):
    def advance(self, steps: int = 1) -> None: ...

    def describe(self, text: str) -> None: ...

    def total(self, total: int | None) -> None: ...


class _Silent:
    def advance(self, steps: int = 1) -> None:
        pass

    def describe(self, text: str) -> None:
        pass

    def total(self, total: int | None) -> None:
        pass


class _Rich:
    def __init__(self, progress: Any, task: Any) -> None:
        self._progress = progress
        self._task = task

    def advance(self, steps: int = 1) -> None:
        self._progress.advance(self._task, steps)

    def describe(self, text: str) -> None:
        self._progress.update(self._task, description=text)

    def total(self, total: int | None) -> None:
        self._progress.update(self._task, total=total)


def shown(as_json: bool) -> bool:
    """Whether a bar would be drawn: text mode, stderr on a terminal."""
    return not as_json and sys.stderr.isatty()


@contextmanager
def progress(description: str, total: int | None, as_json: bool) -> Iterator[Bar]:
    """A bar of ``total`` steps (a pulsing one when None) for the ``with`` block."""
    if not shown(as_json):
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield _Rich(bar, task)


class LoadBar:
    """A bar as a first load's ``head.LoadProgress``: the files parsed so far of all
    of them, then what the load does with them (indexing, the snapshot's write)."""

    def __init__(self, bar: Bar) -> None:
        self._bar = bar
        self._done = 0
        self._total: int | None = None

    def __call__(self, what: str, done: int, total: int) -> None:
        if total != self._total:
            self._total = total
            self._bar.total(total)
        self._bar.describe(f"{what} {total:,} memories (first load, no snapshot yet)"
                           if what == "parsing" else f"{what} (first load)")
        if done > self._done:
            self._bar.advance(done - self._done)
            self._done = done
