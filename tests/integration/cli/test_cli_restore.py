"""``memhtml restore``: an archived memory back live at its original path, one commit.

Archive and restore are inverses: the file comes back where it was, status active, its
archive stamps gone, every link that archiving pointed at ``archive/`` pointing back;
search finds it again and ``log`` of the path shows both commits. A live path, or a
second restore, is refused with nothing committed. ``move`` and ``correct`` of an
archived path are refused with a line naming ``memhtml restore``. A path archived in
two years comes back as its latest archive; one archived twice in one year takes the
year's next folder (``archive/<YYYY>-2/``), so archive, restore, write, archive never
fails on a taken name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.adapters.snapshot_files import SnapshotFiles
from memhtml.compose.services import blob_reader
from memhtml.contracts.services import Signature
from memhtml.store import Store, StoreDeps, archive
from tests.integration.cli.cli_support import call, call_text, git_log

T = TypeVar("T")
E = TypeVar("E")
KETTLE = "areas/inbox/kettle.html"
LADDER = "areas/inbox/ladder.html"


def _ok(capsys: pytest.CaptureFixture[str], store: Path, *tokens: str) -> Any:
    code, answer = call(capsys, *tokens, "--store", str(store), "--json")
    assert code == 0, (tokens, answer)
    assert isinstance(answer, dict)
    return answer


def _refused(capsys: pytest.CaptureFixture[str], store: Path, *tokens: str) -> str:
    before = git_log(store)
    code, answer = call(capsys, *tokens, "--store", str(store), "--json")
    assert code == 1 and answer["ok"] is False, (tokens, answer)
    assert answer["code"] == "ERR_REFUSED", answer
    assert git_log(store) == before, "nothing was committed"
    error = answer["error"]
    assert isinstance(error, str)
    return error


def _kettle_and_ladder(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    _ok(capsys, store, "write", "--title", "Kettle", "--claim",
        "The kettle is descaled on Mondays.", "--path", KETTLE)
    _ok(capsys, store, "write", "--title", "Ladder", "--claim", "The ladder is in the shed.",
        "--link", f"relates_to=/{KETTLE}", "--path", LADDER)


def _archived_at(answer: Any) -> str:
    moves = answer["archived"]
    assert isinstance(moves, list) and len(moves) == 1, answer
    to = moves[0]["archived_at"]
    assert isinstance(to, str)
    return to


@pytest.mark.parametrize("named", ["original", "archive"])
def test_archive_then_restore_brings_it_back_with_its_links(
        store: Path, capsys: pytest.CaptureFixture[str], named: str) -> None:
    _kettle_and_ladder(capsys, store)
    before = (store / KETTLE).read_text(encoding="utf-8")
    to = _archived_at(_ok(capsys, store, "archive", KETTLE))
    assert f'href="/{to}"' in (store / LADDER).read_text(encoding="utf-8")
    assert _ok(capsys, store, "search", "kettle descaled")["hits"] == []

    back = _ok(capsys, store, "restore", KETTLE if named == "original" else to)
    assert back["path"] == KETTLE and back["restored_from"] == to, back
    assert back["subject"] == f"memhtml restore: {KETTLE}"
    assert set(back["paths"]) == {KETTLE, to, LADDER}
    assert not (store / to).exists()
    text = (store / KETTLE).read_text(encoding="utf-8")
    assert 'content="active"' in text and "memhtml-archived" not in text
    assert text.replace(_meta(text, "memhtml-updated"), "") == before.replace(
        _meta(before, "memhtml-updated"), "")
    assert f'href="/{KETTLE}"' in (store / LADDER).read_text(encoding="utf-8")
    related = _ok(capsys, store, "related", KETTLE)
    assert related["inbound"] == [{"path": LADDER, "rel": "relates_to"}]
    hits = _ok(capsys, store, "search", "kettle descaled")["hits"]
    assert [hit["path"] for hit in hits] == [KETTLE]
    subjects = [c["subject"] for c in _ok(capsys, store, "log", KETTLE)["commits"]]
    assert subjects[:3] == [f"memhtml restore: {KETTLE}", f"memhtml archive: {KETTLE}",
                            f"memhtml write: {KETTLE}"]
    ops = [c["ops"] for c in _ok(capsys, store, "log", KETTLE)["commits"]]
    assert ops[:2] == [["restore"], ["archive"]]
    code, out, _ = call_text(capsys, "doctor", "--store", str(store))
    assert code == 0, out


def _meta(html: str, name: str) -> str:
    start = html.index(f'<meta name="{name}"')
    return html[start:html.index(">", start) + 1]


def test_restore_refuses_a_live_path_and_a_second_restore(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _kettle_and_ladder(capsys, store)
    assert "holds a memory, live" in _refused(capsys, store, "restore", KETTLE)
    to = _archived_at(_ok(capsys, store, "archive", KETTLE))
    _ok(capsys, store, "restore", KETTLE)
    assert "holds a memory, live" in _refused(capsys, store, "restore", KETTLE)
    error = _refused(capsys, store, "restore", to)
    assert f"{to} was brought back live at {KETTLE}" in error, error


def test_a_second_restore_by_the_archive_path_is_refused(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _kettle_and_ladder(capsys, store)
    to = _archived_at(_ok(capsys, store, "archive", KETTLE))
    _ok(capsys, store, "restore", to)
    for again in (to, KETTLE):
        error = _refused(capsys, store, "restore", again)
        assert "there is nothing to restore" in error, error


def test_move_and_correct_of_an_archived_memory_name_restore(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _kettle_and_ladder(capsys, store)
    to = _archived_at(_ok(capsys, store, "archive", KETTLE))
    for tokens in (("move", KETTLE, "areas/kitchen/"), ("move", to, "areas/kitchen/"),
                   ("correct", KETTLE, "--title", "Kettle", "--claim", "Fridays."),
                   ("correct", to, "--title", "Kettle", "--claim", "Fridays."),
                   ("archive", KETTLE), ("archive", to)):
        error = _refused(capsys, store, *tokens)
        assert f"memhtml restore {KETTLE if KETTLE in tokens else to}" in error, (tokens, error)
    _ok(capsys, store, "restore", KETTLE)
    _ok(capsys, store, "move", KETTLE, "areas/kitchen/")


def _done(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def _store_in(store: Path, year: int) -> Store:
    """The store with a clock in ``year``: an archive made that year."""
    git = _done(PygitService.open(store / ".git"))
    return Store(StoreDeps(git=git, clock=FixedClock(datetime(year, 3, 1, tzinfo=UTC)),
                           author=Signature("Someone", "someone@example.org"),
                           snapshots=SnapshotFiles(store / ".memhtml", blob_reader(git)),
                           worktree=store,
                           journals=JournalFiles(store / ".git")))


def test_a_path_archived_in_two_years_comes_back_as_its_latest_archive(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ok(capsys, store, "write", "--title", "Kettle", "--claim", "Descaled on Mondays.",
        "--path", KETTLE)
    _done(archive(_store_in(store, 2024), KETTLE))
    _ok(capsys, store, "write", "--title", "Kettle", "--claim", "Descaled on Fridays.",
        "--path", KETTLE)
    latest = _archived_at(_ok(capsys, store, "archive", KETTLE))
    assert latest != f"archive/2024/{KETTLE}"

    back = _ok(capsys, store, "restore", KETTLE)
    assert back["restored_from"] == latest
    gist = _ok(capsys, store, "read", KETTLE, "--tier", "gist")
    assert gist["text"] == "Descaled on Fridays."
    error = _refused(capsys, store, "restore", f"archive/2024/{KETTLE}")
    assert f"{KETTLE} holds another memory now" in error and "memhtml move" in error, error
    _ok(capsys, store, "move", KETTLE, "areas/kitchen/")
    older = _ok(capsys, store, "restore", f"archive/2024/{KETTLE}")
    assert older["path"] == KETTLE
    assert _ok(capsys, store, "read", KETTLE, "--tier", "gist")["text"] == "Descaled on Mondays."


def test_archive_restore_archive_in_one_year_and_a_second_archive_of_one_path(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _kettle_and_ladder(capsys, store)
    first = _archived_at(_ok(capsys, store, "archive", KETTLE))
    _ok(capsys, store, "restore", KETTLE)
    assert _archived_at(_ok(capsys, store, "archive", KETTLE)) == first
    _ok(capsys, store, "write", "--title", "Kettle", "--claim", "A new kettle, descaled daily.",
        "--path", KETTLE)
    year = first.split("/")[1]
    second = _archived_at(_ok(capsys, store, "archive", KETTLE))
    assert second == f"archive/{year}-2/{KETTLE}", second
    assert (store / first).is_file() and (store / second).is_file()
    code, answer = call(capsys, "read", KETTLE, "--store", str(store), "--json")
    assert code == 1 and second in answer["error"], answer
    assert _ok(capsys, store, "restore", KETTLE)["restored_from"] == second
    assert _ok(capsys, store, "read", KETTLE, "--tier", "gist")["text"] == (
        "A new kettle, descaled daily.")
    code, out, _ = call_text(capsys, "doctor", "--store", str(store))
    assert code == 0, out
