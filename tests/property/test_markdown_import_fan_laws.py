"""Sharing an import's per-note work between processes changes nothing it does.

``import_folder`` with a fan (a fork pool made to fork for every call, whatever the
folder's size) and without one, on the same folder and then on the folder edited
(notes changed, removed and added, raw HTML the write door refuses, so that the
note is converted again with it as text, a file that is not UTF-8, an index; and, once,
a note the door refuses outright), gives the same plan, item for item (what it adds, changes,
archives, leaves out and why, its batch ops byte for byte), and the same commit.
What the fan adds is the files it read back where it rendered them, and each of
those is what the write door's own read of the same file at the same path gives.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.adapters import fork_pool
from memhtml.head.lexical import term_counts
from memhtml.head.record import record_from
from memhtml.store.inputs import BWrite
from memhtml.store.markdown_run import Imported, import_folder
from tests.integration.store.store_support import make_memory_store, ok
from tests.property.test_markdown_notes_roundtrip import folders

HOME = "areas/imported/"


def ForkPool(workers: int, min_share: int) -> fork_pool.ForkPool:  # noqa: N802
    """A pool that forks for every call, told it may: the test runner's worker runs a
    thread of its own (pytest-xdist's channel), which holds nothing an import needs."""
    return fork_pool.ForkPool(workers, min_share, may_fork=lambda: True)
AT = "2026-02-03T04:05:06Z"
EXTRA = {
    "raw.md": "Keys: <kbd>Ctrl</kbd> and <cite>*a*</cite>.\n\n<dl><dt>k</dt><dd>v</dd></dl>\n",
    "retried.md": "A note whose raw HTML a browser reads otherwise.\n\n"
                  "<table><caption>a</caption><td>x</table>\n",
    "fence.md": "Run it.\n\n```\nmake all\n```\n",
    "MEMORY.md": "# Index\n\n- [raw](raw.md): keys\n- [[fence]]\n",
}
BINARY = ("latin.md", "caf\xe9 au lait.\n".encode("latin-1"))


@st.composite
def edits(draw: st.DrawFn, files: dict[str, str]) -> dict[str, str]:
    """The folder later: each note kept, changed or removed, and maybe new ones."""
    later: dict[str, str] = {}
    for path, text in files.items():
        fate = draw(st.sampled_from(("keep", "keep", "change", "remove")))
        if fate == "keep":
            later[path] = text
        elif fate == "change":
            later[path] = text + "\nAnd one more fact, later.\n"
    later.update(draw(folders()))
    return later


def _view(imported: Imported) -> tuple[object, ...]:
    plan = dataclasses.replace(imported.plan, read=())
    return plan, imported.landed.commit if imported.landed else None


def _run(folder: dict[str, str], fan: fork_pool.ForkPool | None,
         store_and_git: tuple[object, object] | None = None) -> Imported:
    store = store_and_git[0] if store_and_git else make_memory_store()[0]
    files = sorted([(p, t.encode()) for p, t in folder.items()] + [BINARY])
    return ok(import_folder(store, files, HOME, ("imported",), at=AT, fan=fan))  # type: ignore[arg-type]


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_a_fanned_import_is_the_import(data: st.DataObject) -> None:
    first = {**data.draw(folders()), **EXTRA}
    second = {**data.draw(edits(first)), "retried.md": EXTRA["retried.md"]}
    fan = ForkPool(2, 1)
    alone, fanned = make_memory_store(), make_memory_store()
    for folder in (first, second):
        without = _run(folder, None, alone)
        with_fan = _run(folder, fan, fanned)
        assert _view(with_fan) == _view(without)
        assert without.plan.read == ()
        writes = {op.data.path: op.data.file_html for op in with_fan.plan.ops
                  if isinstance(op, BWrite)}
        for record, counts in with_fan.plan.read:
            assert writes[record.path] == record.html
            assert record == ok_record(record.html, record.path)
            assert counts == term_counts(record)
    assert [r.html for r in ok(alone[0].head()).records()] == \
        [r.html for r in ok(fanned[0].head()).records()]


def ok_record(html: str, path: str) -> object:
    return record_from(html, path).unwrap()


def test_a_note_the_door_refuses_is_left_out_alike() -> None:
    """Within the source cap, over a memory file's once its ``<`` are escaped: the
    door refuses the file, and the import leaves the note out and lands the rest."""
    folder = {**EXTRA, "wide.md": "A wide note. " + "<" * 400_000 + "\n"}
    without = _run(folder, None)
    with_fan = _run(folder, ForkPool(2, 1))
    assert [r.source for r in without.plan.refused] == ["latin.md", "wide.md"]
    assert _view(with_fan) == _view(without)
