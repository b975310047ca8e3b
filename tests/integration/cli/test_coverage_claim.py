"""The vector set's coverage claim through the real CLI: a write or a search that finds
the set whole records the commit, the next command at a commit a few paths away reads
only those paths, and whatever a person does with git in between (a commit of their
own, an edit, a reset, the vectors deleted), the store ends as covered as a walk over
every record says: ``status`` (which always walks) and search agree.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from memhtml.adapters.vector_marks import MARK
from tests.integration.cli.cli_support import call, call_text

pytestmark = pytest.mark.usefixtures("default_embedder")


def _git(store: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store, check=True, capture_output=True,
                          text=True).stdout.strip()


def _claim(store: Path) -> str | None:
    marks = list((store / ".git" / "memhtml" / "vectors").glob(f"*/{MARK}"))
    if not marks:
        return None
    [mark] = marks
    commit = json.loads(mark.read_text())["commit"]
    assert isinstance(commit, str)
    return commit


def _covered(capsys: pytest.CaptureFixture[str], store: Path) -> tuple[int, int]:
    code, status = call(capsys, "status", "--store", str(store), "--json")
    assert code == 0, status
    return status["vectors"]["have"], status["vectors"]["total"]


def _search(capsys: pytest.CaptureFixture[str], store: Path, query: str) -> dict[str, object]:
    code, found = call(capsys, "search", query, "--store", str(store), "--json")
    assert code == 0, found
    assert isinstance(found, dict)
    return found


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str) -> str:
    code, _, err = call_text(capsys, "write", "--title", title, "--claim", claim,
                             "--store", str(store))
    assert code == 0, err
    return err


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--embedder", "hashing", "--json")
    assert code == 0, answer
    _write(capsys, root, "Deploy window", "Deploys happen on Tuesdays.")
    _write(capsys, root, "Coffee", "The coffee machine is on floor two.")
    return root


def test_each_write_carries_the_claim_to_its_own_commit(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _claim(store) == _git(store, "rev-parse", "HEAD")
    for n in range(3):
        assert _write(capsys, store, f"Note {n}", f"Note number {n} is kept.") == ""
        assert _claim(store) == _git(store, "rev-parse", "HEAD")
    assert _covered(capsys, store) == (5, 5)


def test_a_person_s_commits_are_embedded_by_the_next_search(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _git(store, "rev-parse", "HEAD")
    # A person edits one memory's claim and copies another under a new name, with git.
    [coffee] = list((store / "areas" / "inbox").glob("coffee*.html"))
    text = coffee.read_text(encoding="utf-8")
    coffee.write_text(text.replace("floor two", "floor three"), encoding="utf-8")
    (coffee.parent / "kettle.html").write_text(
        text.replace("Coffee", "Kettle").replace("coffee machine", "kettle"), encoding="utf-8")
    _git(store, "add", "-A")
    _git(store, "-c", "user.name=P", "-c", "user.email=p@example.org", "commit", "-qm", "mine")
    assert _claim(store) == before
    found = _search(capsys, store, "where is the kettle")
    assert found["mode"] == "hybrid" and found["note"] is None
    assert _claim(store) == _git(store, "rev-parse", "HEAD")
    assert _covered(capsys, store) == (3, 3)


def test_a_reset_and_a_lost_claim_commit_still_end_whole(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _git(store, "rev-parse", "HEAD~1")
    _write(capsys, store, "Kettle", "The kettle is descaled on Mondays.")
    # Back to an older commit: the claim's commit is no ancestor of the tip any more.
    _git(store, "reset", "-q", "--hard", first)
    found = _search(capsys, store, "deploys")
    assert found["mode"] == "hybrid"
    assert _claim(store) == first
    assert _covered(capsys, store) == (1, 1)
    # A claim naming a commit the repository does not hold: the walk answers instead.
    [mark] = list((store / ".git" / "memhtml" / "vectors").glob(f"*/{MARK}"))
    data = json.loads(mark.read_text())
    mark.write_text(json.dumps({**data, "commit": "f" * 40}))
    _write(capsys, store, "Standup", "Standup is at ten.")
    assert _claim(store) == _git(store, "rev-parse", "HEAD")
    assert _covered(capsys, store) == (2, 2)


def test_vectors_deleted_take_the_claim_with_them(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(store / ".git" / "memhtml" / "vectors")
    err = _write(capsys, store, "Kettle", "The kettle is descaled on Mondays.")
    # The write walked: the two older memories were embedded with it (a small gap).
    assert err == ""
    assert _covered(capsys, store) == (3, 3)
    assert _claim(store) == _git(store, "rev-parse", "HEAD")


def test_a_store_with_every_memory_archived_searches_lexically_with_or_without_a_claim(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _search(capsys, store, "coffee")["mode"] == "hybrid"
    for memory in sorted((store / "areas" / "inbox").glob("*.html")):
        code, _, err = call_text(capsys, "archive", str(memory.relative_to(store)),
                                 "--store", str(store))
        assert code == 0, err
    assert _claim(store) is not None  # made before the archives, carried by none of them
    with_claim = _search(capsys, store, "coffee")
    for mark in (store / ".git" / "memhtml" / "vectors").glob(f"*/{MARK}"):
        mark.unlink()
    walked = _search(capsys, store, "coffee")
    assert with_claim["mode"] == walked["mode"] == "lexical"
    assert _covered(capsys, store) == (0, 0)


def test_a_large_gap_says_the_same_with_or_without_a_claim(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's commit of more memories than a search embeds by itself: search stays
    lexical, and its advice counts every memory whether a claim stood or not."""
    from memhtml.compose.vectors import TOP_UP_PASSAGES

    notes = store.parent / "notes"
    notes.mkdir()
    for n in range(TOP_UP_PASSAGES + 1):
        (notes / f"note-{n}.md").write_text(f"# Note {n}\n\nImported note number {n}.\n",
                                            encoding="utf-8")
    monkeypatch.setenv("MEMHTML_EMBEDDER", "none")
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    monkeypatch.delenv("MEMHTML_EMBEDDER")
    assert _claim(store) is not None
    with_claim = _search(capsys, store, "imported note")
    for mark in (store / ".git" / "memhtml" / "vectors").glob(f"*/{MARK}"):
        mark.unlink()
    walked = _search(capsys, store, "imported note")
    assert with_claim["mode"] == walked["mode"] == "lexical"
    assert with_claim["note"] == walked["note"]
    assert f"of {TOP_UP_PASSAGES + 3} memories" in str(walked["note"])
