"""A sleep run started from the page: ``memhtml sleep run`` as a process of its own.

A run takes seconds to minutes and commits on its own branch while the store goes on
being written (the run is built for writers beside it). Run in the app's process it
would hold the gate's one store thread, so every page and door would wait for the
night; run on another thread it would share the repository handle the doors use. So
the app starts the command a person would type, on the same store, and keeps its
progress lines (``[ 3/17] phase: ...`` on stderr) and its closing summary (stdout)
for the page to poll. One run at a time from the page: a second start while one is going is
refused, and the page offers a start only when no run is open (every run merged or
aborted).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

PROGRESS_LINES: Final = 200
"""Lines of a run's progress kept for the page: a night's 17 phases and their notes."""


@dataclass
class Started:
    """One run the app started: its process, what it has printed, how it ended."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    summary: str = ""
    code: int | None = None

    def view(self) -> dict[str, Any]:
        return {"running": self.code is None, "lines": list(self.lines[-PROGRESS_LINES:]),
                "code": self.code, "summary": self.summary}


class RunStarter:
    """Starts ``memhtml sleep run`` for one store and follows it."""

    def __init__(self, store: Path, env: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.env = dict(os.environ if env is None else env)
        self._lock = threading.Lock()
        self._run: Started | None = None

    def start(self, deep: bool = False) -> tuple[bool, str]:
        """Start a run; ``(False, why)`` when one this app started is still going."""
        with self._lock:
            if self._run is not None and self._run.code is None:
                return False, "a sleep run started here is still going"
            argv = [sys.executable, "-m", "memhtml", "sleep", "run", "--store", str(self.store)]
            if deep:
                argv.append("--deep")
            process = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, encoding="utf-8", errors="replace")
            started = Started(process)
            self._run = started
        threading.Thread(target=self._follow, args=(started,), name="memhtml-sleep-run",
                         daemon=True).start()
        return True, "started"

    def _follow(self, started: Started) -> None:
        process = started.process
        assert process.stderr is not None and process.stdout is not None
        stdout = process.stdout
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.append(stdout.read()), daemon=True)
        reader.start()
        for line in process.stderr:
            started.lines.append(line.rstrip("\n"))
        reader.join()
        started.summary = "".join(out)
        started.code = process.wait()

    def progress(self) -> dict[str, Any]:
        with self._lock:
            if self._run is None:
                return {"running": False, "lines": [], "code": None, "summary": ""}
            return self._run.view()

__all__ = ["RunStarter", "Started"]
