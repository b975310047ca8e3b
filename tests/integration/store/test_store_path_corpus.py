"""New names through every write door, on a real repository: each non-portable class
is refused with its reason named and the branch tip unchanged; a name that twins an
existing file or directory by case or Unicode normalization is refused; NFD input is
stored NFC; and files that already exist under such names stay readable and editable.
"""

from __future__ import annotations

import itertools
import unicodedata
from pathlib import Path

import pytest
from returns.io import IOResult

from memhtml.adapters.git import PygitService
from memhtml.contracts.errors import PathRefused
from memhtml.contracts.services import PathChange
from memhtml.format import NewMemoryInput, render_template
from memhtml.store import (
    BMove,
    BWrite,
    Landed,
    Refused,
    Store,
    StoreError,
    WriteInput,
    archive,
    batch,
    correct,
    describe,
    label,
    move,
    read,
    task_add,
    write,
)
from memhtml.store.markdown_import import convert_tree
from tests.integration.store.store_support import (
    AUTHOR,
    CLOCK,
    NOW,
    err,
    git_cli,
    make_store,
    ok,
    tip,
)

LONG_NAME = "\u00e9" * 126 + ".html"  # 252 + 5 = 257 bytes
LONG_DIR = "\u4e2d" * 86  # 258 bytes
DEEP = "/".join(["d" * 200] * 20) + "/" + "x" * 100 + ".html"  # 4,125 bytes

# (class, a new memory path, words its refusal must name)
FILE_CORPUS: list[tuple[str, str, tuple[str, ...]]] = [
    ("long name", f"areas/{LONG_NAME}", ("257 bytes", "255-byte")),
    ("long path", DEEP, ("4125 bytes", "4096-byte")),
    ("state directory", ".memhtml/x.html", (".memhtml/", "state directory")),
    ("state directory, other case", ".MemHTML/x.html", (".memhtml/", "case-insensitive")),
    ("device name", "areas/con.html", ("Windows device name CON",)),
    ("device name, mixed case", "areas/Lpt3.notes.html", ("LPT3",)),
    ("superscript device name", "areas/COM\u00b9.html", ("COM\u00b9",)),
    ("forbidden character", "areas/a:b.html", (":", "Windows")),
    ("forbidden characters", "areas/what?.html", ("?",)),
]
# (class, a new directory, words its refusal must name)
DIR_CORPUS: list[tuple[str, str, tuple[str, ...]]] = [
    ("long directory name", f"areas/{LONG_DIR}", ("258 bytes", "255-byte")),
    ("state directory", ".memhtml/", ("state directory",)),
    ("state directory, upper case", ".MEMHTML/notes", ("state directory",)),
    ("device directory", "areas/nul.d", ("NUL",)),
    ("device directory, aux", "AUX/", ("AUX",)),
    ("trailing dot", "areas/notes.", ("dot",)),
    ("trailing space", "areas/notes /inner", ("space",)),
    ("forbidden character", "areas/<x>", ("<", ">")),
]


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


_SERIAL = itertools.count(1)


def note(title: str, claim: str | None = None, **kw: object) -> WriteInput:
    """A memory for a path test: each one's claim is its own (a claim a live memory
    already holds is refused before any path is judged worth writing)."""
    said = claim if claim is not None else f"A claim worth keeping, number {next(_SERIAL)}."
    return WriteInput(title=title, claim=said, **kw)  # type: ignore[arg-type]


def refused_with(store: Store, attempt: IOResult[Landed, StoreError], *words: str) -> str:
    """The refusal's line, checked to name ``words``; the tip must not have moved."""
    before = tip(store)
    text = describe(err(attempt))
    for word in words:
        assert word in text, text
    assert tip(store) == before
    return text


def tree_paths(root: Path) -> set[str]:
    out = git_cli(root, "-c", "core.quotepath=off", "ls-tree", "-r", "--name-only", "HEAD")
    return set(out.splitlines())


def by_hand(store: Store, git: PygitService, files: dict[str, str]) -> None:
    """Commit ``files`` (path -> title) straight to the branch, as another tool could,
    with no door judging their names."""
    changes = [PathChange(path, render_template(NewMemoryInput(
        title=title, claim=f"{title} is a memory.", memory_type="semantic", at=NOW,
    )).encode()) for path, title in files.items()]
    ok(git.commit(store.deps.ref, tip(store), changes, "by hand", AUTHOR, CLOCK.now()))


@pytest.fixture
def store_git(tmp_path: Path) -> tuple[Store, PygitService]:
    store, git = make_store(tmp_path, worktree=False, state=False)
    ok(write(store, note("Seed", path="areas/inbox/seed.html")))
    return store, git


# -- each class, through each door -----------------------------------------------------


@pytest.mark.parametrize(("kind", "path", "words"), FILE_CORPUS, ids=[c[0] for c in FILE_CORPUS])
def test_a_non_portable_path_is_refused_by_every_door(
        store_git: tuple[Store, PygitService], kind: str, path: str, words: tuple[str, ...]
) -> None:
    store, _ = store_git
    seed = "areas/inbox/seed.html"
    for attempt in (
        write(store, note("X", path=path)),
        move(store, seed, path),
        batch(store, [BWrite(note("Fine", path="areas/inbox/fine.html")),
                      BWrite(note("X", path=path))]),
        batch(store, [BMove(seed, path)]),
    ):
        text = refused_with(store, attempt, *words)
        assert "refused" in text, (kind, text)
    assert isinstance(err(write(store, note("X", path=path))), PathRefused)


@pytest.mark.parametrize(("kind", "directory", "words"), DIR_CORPUS,
                         ids=[c[0] for c in DIR_CORPUS])
def test_a_non_portable_directory_is_refused_by_every_door(
        store_git: tuple[Store, PygitService], kind: str, directory: str,
        words: tuple[str, ...]) -> None:
    store, _ = store_git
    seed = "areas/inbox/seed.html"
    for attempt in (
        write(store, note("X", directory=directory)),
        correct(store, seed, note("X", directory=directory)),
        task_add(store, "Do it", "It must be done.", directory=directory),
        move(store, seed, directory.rstrip("/") + "/"),
        batch(store, [BWrite(note("X", directory=directory))]),
    ):
        refused_with(store, attempt, *words)
    assert "areas/inbox/seed.html" in list(ok(store.head()).paths())


def test_a_reserved_title_gets_a_suffix_rather_than_a_device_name(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False, state=False)
    for title, expected in (("CON", "con-memory"), ("Com1", "com1-memory"),
                            ("Nul", "nul-memory"), ("Console", "console")):
        landed = ok(write(store, note(title)))
        assert landed.primary == f"areas/inbox/{expected}.html"


def test_near_misses_are_written(store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    for path in ("areas/con2.html", "areas/aux-notes.html", "areas/null.html",
                 "areas/nul-d/x.html", "areas/.memhtml/x.html"):
        assert ok(write(store, note("X", path=path))).primary == path


# -- case and normalization twins -------------------------------------------------------


def test_a_case_or_normalization_twin_of_an_existing_memory_is_refused(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    ok(write(store, note("Caf\u00e9", path="areas/inbox/Caf\u00e9.html")))
    refused_with(store, write(store, note("X", path="areas/inbox/caf\u00e9.html")),
                 "differs only by case or Unicode normalization", "Caf\u00e9.html")
    refused_with(store, write(store, note("X", path="areas/inbox/CAF\u00c9.html")),
                 "differs only by case")
    refused_with(store, move(store, "areas/inbox/seed.html", "areas/inbox/CAF\u00e9.html"),
                 "differs only by case")
    # NFD of the existing name is the existing name: taken, not a twin.
    text = refused_with(store, write(store, note("X", path=nfd("areas/inbox/Caf\u00e9.html"))),
                        "already holds a memory")
    assert "areas/inbox/Caf\u00e9.html" in text


def test_a_twin_of_an_existing_directory_is_refused(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    ok(write(store, note("Runbook", path="areas/deploy/runbook.html")))
    for directory in ("Areas/Deploy", "areas/DEPLOY/", "AREAS/deploy/nested"):
        refused_with(store, write(store, note("X", directory=directory)),
                     "differs only by case", "directory")
        refused_with(store, write(store, note("X", path=f"{directory.rstrip('/')}/x.html")),
                     "differs only by case")
    refused_with(store, task_add(store, "T", "Do it.", directory="Areas/Tasks"),
                 "directory 'Areas'")
    refused_with(store, move(store, "areas/deploy/runbook.html", "Areas/deploy/runbook.html"),
                 "directory 'Areas'")
    refused_with(store, correct(store, "areas/deploy/runbook.html",
                                note("Runbook v2", directory="areas/Deploy")),
                 "directory 'areas/Deploy'")


def test_the_seeded_inbox_counts_as_existing_before_it_holds_a_memory(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False, state=False)
    refused_with(store, write(store, note("X", directory="Areas/Inbox")),
                 "directory 'Areas'", "'areas'")
    refused_with(store, write(store, note("X", directory="areas/Inbox")),
                 "directory 'areas/Inbox'", "'areas/inbox'")
    assert ok(write(store, note("X"))).primary == "areas/inbox/x.html"


def test_two_new_twins_in_one_batch_are_refused_whole(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    refused_with(store, batch(store, [BWrite(note("A", path="areas/x/Note.html")),
                                      BWrite(note("B", path="areas/x/note.html"))]),
                 "'areas/x/Note.html'")
    refused_with(store, batch(store, [BWrite(note("A", path="areas/New/a.html")),
                                      BWrite(note("B", directory="areas/new"))]),
                 "directory 'areas/new'")


def test_a_case_only_rename_is_a_move_not_a_twin(store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    ok(write(store, note("Mixed", path="Notes/Mixed.html")))
    assert ok(move(store, "Notes/Mixed.html", "Notes/mixed.html")).primary
    assert ok(move(store, "Notes/mixed.html", "notes/mixed.html")).primary
    assert "notes/mixed.html" in list(ok(store.head()).paths())


def test_a_made_name_steps_past_a_twin(store_git: tuple[Store, PygitService]) -> None:
    store, git = store_git
    by_hand(store, git, {"areas/inbox/Deploy.html": "Deploy"})
    assert ok(write(store, note("Deploy"))).primary == "areas/inbox/deploy-2.html"


# -- NFC is the stored form --------------------------------------------------------------


def test_nfd_input_is_stored_nfc(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    name = "areas/inbox/caf\u00e9.html"
    landed = ok(write(store, note("Cafe", path=nfd(name))))
    assert landed.primary == name
    assert name in tree_paths(tmp_path)
    assert nfd(name) not in tree_paths(tmp_path)
    folder = ok(write(store, note("Menu", directory=nfd("areas/caf\u00e9s/"))))
    assert folder.primary == "areas/caf\u00e9s/menu.html"
    moved = ok(move(store, name, nfd("areas/caf\u00e9s/cr\u00e8me.html")))
    assert "areas/caf\u00e9s/cr\u00e8me.html" in moved.paths
    # An NFD directory given for a memory already in the NFC one lands beside it.
    again = ok(write(store, note("Tea", directory=nfd("areas/caf\u00e9s"))))
    assert again.primary == "areas/caf\u00e9s/tea.html"


def test_an_existing_nfd_directory_keeps_its_spelling(
        store_git: tuple[Store, PygitService]) -> None:
    store, git = store_git
    decomposed = nfd("areas/caf\u00e9s")
    by_hand(store, git, {f"{decomposed}/menu.html": "Menu"})
    # Named as it is spelled, it is the existing directory ...
    beside = ok(write(store, note("Tea", directory=decomposed)))
    assert beside.primary == f"{decomposed}/tea.html"
    # ... a correction lands beside the memory it corrects ...
    fixed = ok(correct(store, f"{decomposed}/menu.html", note("Menu v2")))
    assert fixed.primary == f"{decomposed}/menu-v2.html"
    # ... and the composed spelling would be a second directory with the same name.
    refused_with(store, write(store, note("Cake", directory="areas/caf\u00e9s")),
                 "differs only by case or Unicode normalization", "directory")


# -- existing names keep working ---------------------------------------------------------


def test_existing_files_with_non_portable_names_stay_readable_and_editable(
        store_git: tuple[Store, PygitService]) -> None:
    store, git = store_git
    by_hand(store, git, {"areas/con.html": "Console", "areas/a:b.html": "Colon",
                         ".MEMHTML/x.html": "Upper state"})
    for path in ("areas/con.html", "areas/a:b.html", ".MEMHTML/x.html"):
        assert "is a memory" in ok(read(store, path, "gist"))
        ok(label(store, path, "topic:legacy"))
    ok(archive(store, "areas/con.html"))
    assert "archive/2026/areas/con.html" in list(ok(store.head()).paths())
    # Moving one to a portable name is the way out.
    assert ok(move(store, "areas/a:b.html", "areas/a-b.html")).primary


# -- markdown import ---------------------------------------------------------------------


def test_an_import_reports_the_names_the_door_would_refuse(
        store_git: tuple[Store, PygitService]) -> None:
    store, git = store_git
    by_hand(store, git, {"areas/imported/Plan.html": "Plan"})
    files = [
        ("con.md", b"The console note.\n"),
        ("aux/inner.md", b"Under a device directory.\n"),
        ("plan.md", b"A case twin of an existing memory.\n"),
        ("ok.md", b"This one is fine.\n"),
        (nfd("caf\u00e9.md"), b"Slugged to ASCII.\n"),
    ]
    taken = list(ok(store.head()).paths())
    converted = convert_tree(files, "areas/imported/", ("imported",), taken)
    reasons = {s.source: s.reason for s in converted.skipped}
    assert set(reasons) == {"con.md", "aux/inner.md"}
    assert "CON" in reasons["con.md"]
    assert "AUX" in reasons["aux/inner.md"]
    paths = sorted(m.data.path or "" for m in converted.memories)
    assert paths == ["areas/imported/cafe.html", "areas/imported/ok.html",
                     "areas/imported/plan-2.html"], \
        "a case twin of an existing memory takes the next free name (the note's own " \
        "name is kept in its memhtml-source, and restored on export)"
    landed = ok(batch(store, [BWrite(m.data) for m in converted.memories]))
    assert sorted(landed.paths) == paths


def test_an_import_into_a_twin_or_refused_directory_converts_nothing(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    files = [("ok.md", b"This one is fine.\n")]
    taken = list(ok(store.head()).paths())
    for directory, word in ((".memhtml/", "state directory"), ("Areas/Imported", "'Areas'"),
                            ("areas/prn/", "PRN")):
        converted = convert_tree(files, directory, (), taken)
        assert not converted.memories
        assert word in converted.skipped[0].reason, converted.skipped[0].reason


def test_an_import_into_an_nfd_directory_is_spelled_nfc(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    converted = convert_tree([("menu.md", b"The menu.\n")], nfd("areas/caf\u00e9s/"), (),
                             list(ok(store.head()).paths()))
    assert [m.data.path for m in converted.memories] == ["areas/caf\u00e9s/menu.html"]
    landed = ok(batch(store, [BWrite(m.data) for m in converted.memories]))
    assert landed.paths == ("areas/caf\u00e9s/menu.html",)


def test_refusals_are_path_refusals_or_door_refusals(
        store_git: tuple[Store, PygitService]) -> None:
    store, _ = store_git
    error = err(write(store, note("X", directory="Areas/Inbox")))
    assert isinstance(error, PathRefused)
    assert isinstance(err(write(store, note("X", path="areas/inbox/seed.html"))), Refused)


def test_a_directory_that_exists_is_not_a_new_name(
        store_git: tuple[Store, PygitService]) -> None:
    store, git = store_git
    old = "projects/aux/brief.html"
    by_hand(store, git, {old: "Brief"})
    # Beside an existing memory, in the directory it is in, by every door.
    fixed = ok(correct(store, old, note("Brief v2")))
    assert fixed.primary == "projects/aux/brief-v2.html"
    scope = ok(write(store, note("Scope", directory="projects/aux/")))
    assert scope.primary == "projects/aux/scope.html"
    assert ok(write(store, note("X", path="projects/aux/notes.html"))).primary
    # What is new in the path is still judged.
    refused_with(store, write(store, note("X", path="projects/aux/a?.html")), "?")
    refused_with(store, write(store, note("X", directory="projects/aux/con")), "CON")
    refused_with(store, write(store, note("X", path="projects/aux/Scope.html")),
                 "differs only by case")
    # A new spelling of it is a new name, judged whole.
    refused_with(store, write(store, note("X", directory="Projects/aux")), "AUX")
