"""A snapshot leaves each file's text and article text in the file, mapped, and a
restored record reads them on first use.

What must hold: a restored record gives back exactly the texts saved, whenever they
are read (even after the snapshot file is gone); bytes damaged after the load are
caught by the text's own checksum and read again (a file's text from git by blob id,
an article text by parsing the file's text), or refused with a message naming the
file; a snapshot too short for its texts is refused at load, never mapped past its
end; and a restored record pickles and copies as a plain one.
"""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from returns.pipeline import is_successful

from memhtml.adapters.git import PygitService
from memhtml.adapters.snapshot_files import (
    Snapshot,
    SnapshotFiles,
    read_snapshot,
    save_snapshot,
    snapshot_files,
)
from memhtml.contracts import PathChange, Signature
from memhtml.contracts.errors import TextUnreadable
from memhtml.contracts.record import DEFERRED_FIELDS, MemoryRecord, deferred_key
from memhtml.head import HeadVersion, load_head
from memhtml.head.deferred_text import DeferredTextError
from memhtml.store import Store, WriteInput, describe, read, write
from tests.integration import warm_cli
from tests.integration.store.store_support import err, git_cli, make_store, ok, state_dir_of
from tests.property.head_support import memory

AT = datetime(2026, 3, 1, tzinfo=UTC)
WHO = Signature("Tester", "tester@example.invalid")
TITLES = ("alpha", "beta", "gamma")


def _memory(title: str) -> str:
    return memory(title.title(), f"{title.title()} deploys on Tuesday.",
                  f"The {title} service deploys after the morning checks.")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[PygitService, HeadVersion]:
    git: PygitService = ok(PygitService.init(tmp_path / "repo", bare=True))
    changes = [PathChange(f"areas/{t}.html", _memory(t).encode()) for t in TITLES]
    sha: str = ok(git.commit("refs/heads/main", None, changes, "three", WHO, AT))
    version: HeadVersion = ok(load_head(git, sha))
    return git, version


def _saved(tmp_path: Path, version: HeadVersion) -> Path:
    path: Path = ok(save_snapshot(tmp_path / "state", version))
    return path


def _restored(path: Path, git: PygitService | None = None) -> HeadVersion:
    def recover(blob_sha: str) -> bytes | None:
        assert git is not None
        return ok(git.read_blobs([blob_sha])).get(blob_sha)

    snapshot: Snapshot = ok(read_snapshot(path, recover if git is not None else None))
    return snapshot.version()


def _damage_text(path: Path, text: str, *, last: bool = False) -> None:
    """Flip one byte inside ``text`` where the snapshot stores it (its first copy, or
    with ``last`` its last)."""
    data = bytearray(path.read_bytes())
    at = data.rfind(text.encode()) if last else data.find(text.encode())
    assert at >= 0
    data[at + len(text) // 2] ^= 0x20
    path.write_bytes(bytes(data))


def test_a_restored_record_reads_its_text_on_first_use(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    restored = _restored(_saved(tmp_path, version))
    for original in version.records():
        record = restored.indexes.records[original.path]
        for name in DEFERRED_FIELDS:
            assert deferred_key(name) in record.__dict__ and name not in record.__dict__
            assert getattr(record, name) == getattr(original, name)
            assert deferred_key(name) not in record.__dict__
            assert record.__dict__[name] == getattr(original, name)
        assert record == original


def test_the_text_outlives_the_snapshot_file(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    path = _saved(tmp_path, version)
    restored = _restored(path)
    path.unlink()
    assert [(r.html, r.body_text) for r in restored.records()] == [
        (r.html, r.body_text) for r in version.records()]


def test_damaged_text_is_read_again_from_git(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    git, version = repo
    path = _saved(tmp_path, version)
    target = version.indexes.records["areas/beta.html"]
    _damage_text(path, target.html)
    restored = _restored(path, git)
    assert restored.indexes.records["areas/beta.html"].html == target.html


def test_a_damaged_article_text_is_parsed_again_from_the_file(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    path = _saved(tmp_path, version)
    target = version.indexes.records["areas/gamma.html"]
    # The article text is stored after the file texts: damage its last copy.
    _damage_text(path, target.body_text, last=True)
    restored = _restored(path)
    assert restored.indexes.records["areas/gamma.html"].body_text == target.body_text


def test_damaged_text_without_git_is_refused_naming_the_file(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    path = _saved(tmp_path, version)
    _damage_text(path, version.indexes.records["areas/beta.html"].html)
    restored = _restored(path)
    assert restored.indexes.records["areas/alpha.html"].html  # the others still read
    with pytest.raises(DeferredTextError, match=r"areas/beta\.html"):
        _ = restored.indexes.records["areas/beta.html"].html


def test_a_snapshot_cut_short_is_refused_at_load(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    path = _saved(tmp_path, version)
    data = path.read_bytes()
    # Cut inside the texts: their bytes would be mapped past the end of the file.
    at = data.find(version.indexes.records["areas/gamma.html"].html.encode())
    path.write_bytes(data[:at + 10])
    assert not is_successful(read_snapshot(path))


def test_a_restored_record_pickles_and_copies_as_a_plain_one(
        tmp_path: Path, repo: tuple[PygitService, HeadVersion]) -> None:
    _, version = repo
    restored = _restored(_saved(tmp_path, version))
    for original in version.records():
        record = restored.indexes.records[original.path]
        assert all(deferred_key(name) in record.__dict__ for name in DEFERRED_FIELDS)
        thawed = pickle.loads(pickle.dumps(record))
        assert isinstance(thawed, MemoryRecord) and thawed == original
        assert not any(deferred_key(name) in thawed.__dict__ for name in DEFERRED_FIELDS)
        assert copy.copy(record) == original


def memhtml_process(store: Path, *tokens: str) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml <tokens> --store STORE``, its own process with nothing of
    memhtml run before it (forked from a warm interpreter: ``warm_cli``)."""
    return warm_cli.memhtml(*tokens, "--store", str(store), timeout=120)


def _store_with_a_snapshot(tmp_path: Path) -> tuple[Path, str, Path]:
    """A store made by the command line with one memory, and the one snapshot a cold
    command with none left at the tip: the store, the memory's path, the snapshot."""
    store = tmp_path / "store"
    assert memhtml_process(store, "init").returncode == 0
    wrote = memhtml_process(store, "write", "--title", "Deploy window",
                            "--claim", "Deploys to checkout-api happen on Tuesdays.", "--json")
    assert wrote.returncode == 0, wrote.stderr
    folder = store / ".git" / "memhtml" / "snapshots"
    for old in folder.glob("*.snapshot"):
        old.unlink()
    assert memhtml_process(store, "status").returncode == 0
    [snapshot] = list(folder.glob("*.snapshot"))
    return store, json.loads(wrote.stdout)["path"], snapshot


def test_a_command_reads_a_damaged_text_again_from_git(tmp_path: Path) -> None:
    # The whole path a person takes: a store, a cold command that leaves a snapshot,
    # the snapshot's copy of a file damaged on disk, then a cold read of that file.
    store, path, snapshot = _store_with_a_snapshot(tmp_path)
    snapshots = [snapshot]
    text = (store / path).read_text(encoding="utf-8")
    _damage_text(snapshots[0], text)
    damaged = snapshots[0].read_bytes()
    read = memhtml_process(store, "read", path, "--tier", "all", "--json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["text"] == text
    # The snapshot was used (a refused one would have been removed and rebuilt): the
    # damage was caught at the text's own read, and git gave the text again.
    assert snapshots[0].read_bytes() == damaged


def test_a_text_git_cannot_give_back_is_the_doors_typed_failure(tmp_path: Path) -> None:
    # No repository to read it from again: the door answers ``TextUnreadable``, the
    # handle forgets the version, and the next call starts cold.
    store, _ = make_store(tmp_path / "store")
    path = ok(write(store, WriteInput(title="Alpha", claim="Alpha deploys on Tuesday."))).primary
    assert path is not None
    state = state_dir_of(store)
    for old in snapshot_files(state):
        old.unlink()
    deps = replace(store.deps, snapshots=SnapshotFiles(state, None))
    text = ok(Store(deps).head()).indexes.records[path].html  # a full load leaves one
    blind = Store(deps)
    ok(blind.head())  # restored from that snapshot: its texts are read when asked
    [saved] = snapshot_files(state)
    _damage_text(saved, text)
    failed = blind.run(lambda s: read(s, path, tier="all"))
    assert err(failed) == TextUnreadable(path, "html")
    assert "git could not give it back" in describe(err(failed))


def test_a_command_answers_a_text_git_cannot_give_back_and_drops_the_snapshot(
        tmp_path: Path) -> None:
    store, path, snapshot = _store_with_a_snapshot(tmp_path)
    text = (store / path).read_text(encoding="utf-8")
    _damage_text(snapshot, text)
    blob = git_cli(store, "rev-parse", f"HEAD:{path}").strip()
    (store / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # git cannot give it back
    read_it = memhtml_process(store, "read", path, "--tier", "all", "--json")
    assert read_it.returncode == 1, read_it.stderr
    answer = json.loads(read_it.stdout)
    assert answer["code"] == "ERR_TEXT_UNREADABLE", answer
    assert path in answer["error"]
    assert "Traceback" not in read_it.stderr
    assert not snapshot.exists()  # the next command reads the store from git again
