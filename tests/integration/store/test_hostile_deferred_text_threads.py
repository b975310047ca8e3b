"""A restored record read by two threads at once must give both the text.

``MemoryRecord.__getattr__`` runs only when the field is missing from the instance;
it then looks up the deferred key, and the first reader stores the text and pops the
key. A second reader that found the field missing, but looks up the deferred key
after the first reader popped it, finds neither and raises ``AttributeError`` for a
field every record has. The interleaving is forced here with a trace function in
the second thread (it pauses on the line that looks the deferred key up), so the
test does not depend on the scheduler; nothing in the record or the snapshot is
replaced.
"""

from __future__ import annotations

import inspect
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from memhtml.adapters.git import PygitService
from memhtml.adapters.snapshot_files import Snapshot, read_snapshot, save_snapshot
from memhtml.contracts import PathChange, Signature
from memhtml.contracts.record import MemoryRecord
from memhtml.head import HeadVersion, load_head
from tests.integration.store.store_support import ok
from tests.property.head_support import memory

AT = datetime(2026, 3, 1, tzinfo=UTC)
WHO = Signature("Tester", "tester@example.invalid")


def _restored_record(tmp_path: Path) -> tuple[MemoryRecord, str]:
    git: PygitService = ok(PygitService.init(tmp_path / "repo", bare=True))
    text = memory("Alpha", "Alpha deploys on Tuesday.", "The alpha service deploys.")
    sha: str = ok(git.commit("refs/heads/main", None,
                             [PathChange("areas/alpha.html", text.encode())], "one", WHO, AT))
    version: HeadVersion = ok(load_head(git, sha))
    path: Path = ok(save_snapshot(tmp_path / "state", version))
    snapshot: Snapshot = ok(read_snapshot(path))
    record = snapshot.version().indexes.records["areas/alpha.html"]
    return record, version.indexes.records["areas/alpha.html"].html


def _lookup_line() -> tuple[Any, int]:
    """The code of ``MemoryRecord.__getattr__`` and the line that reads the deferred key."""
    getattr_fn = MemoryRecord.__dict__["__getattr__"]
    lines, first = inspect.getsourcelines(getattr_fn)
    for offset, line in enumerate(lines):
        if "state.get(deferred_key(name))" in line:
            return getattr_fn.__code__, first + offset
    raise AssertionError("the deferred lookup line moved")


def test_two_threads_reading_one_deferred_text_both_get_it(tmp_path: Path) -> None:
    record, expected = _restored_record(tmp_path)
    code, line = _lookup_line()
    inside, first_done = threading.Event(), threading.Event()
    seen: list[object] = []

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code is not code:
            return None
        def local(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line" and frame.f_lineno == line and not inside.is_set():
                inside.set()
                first_done.wait(10)
            return local
        return local

    def second_reader() -> None:
        sys.settrace(tracer)
        try:
            seen.append(record.html)
        except AttributeError as error:
            seen.append(error)
        finally:
            sys.settrace(None)

    thread = threading.Thread(target=second_reader)
    thread.start()
    assert inside.wait(10), "the second reader never reached the deferred lookup"
    assert record.html == expected  # the first reader: stores the text, pops the key
    first_done.set()
    thread.join(10)
    assert seen == [expected]
