"""``DirectoryTranscripts`` on a real directory: what it lists and skips (links, other
names, subdirectories, unsafe stems), what it refuses to read (an id it did not list, a
file swapped for a link or a FIFO, one over the limit), a missing directory; and the
``transcripts_dir`` setting's checks."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.transcripts import DirectoryTranscripts, is_session_id
from memhtml.compose.settings import LOCAL_KEYS, Settings, load_settings
from memhtml.compose.sleep import transcripts_source
from memhtml.contracts.errors import TranscriptFailure
from memhtml.contracts.transcripts import TranscriptEntry, TranscriptSource

AT = datetime(2026, 11, 1, 8, 30, 0, tzinfo=UTC)


def listed(source: DirectoryTranscripts) -> tuple[TranscriptEntry, ...]:
    got = source.sessions()
    assert is_successful(got), got
    return unsafe_perform_io(got.unwrap())


def refused(got: object) -> TranscriptFailure:
    assert not is_successful(got), got  # type: ignore[arg-type]
    failure = unsafe_perform_io(got.failure())  # type: ignore[attr-defined]
    assert isinstance(failure, TranscriptFailure)
    return failure


def read(source: DirectoryTranscripts, session: str, limit: int = 1000) -> bytes:
    got = source.read(session, limit)
    assert is_successful(got), got
    return unsafe_perform_io(got.unwrap())


def put(folder: Path, name: str, data: bytes = b'{"role":"user","content":"hi"}\n') -> Path:
    path = folder / name
    path.write_bytes(data)
    os.utime(path, (AT.timestamp(), AT.timestamp()))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "transcripts"
    made.mkdir()
    return made


def test_it_is_a_transcript_source() -> None:
    source: TranscriptSource = DirectoryTranscripts(Path("/nowhere"))
    assert "nowhere" in repr(source)


def test_it_lists_regular_jsonl_files_directly_in_the_directory(folder: Path,
                                                                tmp_path: Path) -> None:
    put(folder, "b-2.jsonl", b"12345")
    put(folder, "a.1_x.jsonl")
    put(folder, "notes.txt")
    put(folder, "x" * 128 + ".jsonl")
    (folder / "nested").mkdir()
    put(folder / "nested", "deep.jsonl")
    (folder / "dir.jsonl").mkdir()
    outside = put(tmp_path, "outside.jsonl")
    (folder / "linked.jsonl").symlink_to(outside)
    (folder / "linked-dir").symlink_to(folder / "nested", target_is_directory=True)
    for bad in (".hidden.jsonl", "x" * 129 + ".jsonl", "with space.jsonl", "semi;colon.jsonl",
                "ünï.jsonl", ".jsonl"):
        put(folder, bad)
    entries = listed(DirectoryTranscripts(folder))
    assert [e.session for e in entries] == ["a.1_x", "b-2", "x" * 128]
    assert entries[1] == TranscriptEntry("b-2", AT, 5)


def test_the_session_id_rule() -> None:
    assert is_session_id("a") and is_session_id("2026-11-01_run.3")
    assert not is_session_id("") and not is_session_id(".a") and not is_session_id("..")
    assert not is_session_id("a/b") and not is_session_id("a\nb")


def test_it_reads_what_it_listed_within_the_limit(folder: Path) -> None:
    put(folder, "s.jsonl", b"0123456789")
    source = DirectoryTranscripts(folder)
    assert "not a session this source listed" in refused(source.read("s", 100)).reason
    listed(source)
    assert read(source, "s", 10) == b"0123456789"
    assert "larger than 9 bytes" in refused(source.read("s", 9)).reason
    assert "listed" in refused(source.read("../s", 100)).reason
    put(folder, "late.jsonl")
    assert "listed" in refused(source.read("late", 100)).reason


def test_a_file_swapped_for_a_link_or_a_fifo_after_listing_is_refused(folder: Path,
                                                                      tmp_path: Path) -> None:
    put(folder, "swap.jsonl")
    put(folder, "pipe.jsonl")
    source = DirectoryTranscripts(folder)
    listed(source)
    secret = put(tmp_path, "secret.txt", b"do not send")
    (folder / "swap.jsonl").unlink()
    (folder / "swap.jsonl").symlink_to(secret)
    (folder / "pipe.jsonl").unlink()
    os.mkfifo(folder / "pipe.jsonl")
    assert "cannot open" in refused(source.read("swap", 100)).reason
    assert "not a regular file" in refused(source.read("pipe", 100)).reason


def test_a_missing_directory_or_a_file_is_a_failure(tmp_path: Path) -> None:
    missing = refused(DirectoryTranscripts(tmp_path / "gone").sessions())
    assert missing.reason == "no such directory" and missing.path.endswith("gone")
    put(tmp_path, "file")
    assert refused(DirectoryTranscripts(tmp_path / "file").sessions()).reason == \
        "not a directory"


# --------------------------------------------------------------------------- the setting


def test_the_setting_is_local_and_must_be_absolute(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert "transcripts_dir" in LOCAL_KEYS
    store = tmp_path / "store"
    (store / ".memhtml").mkdir(parents=True)
    (store / ".memhtml" / "config.toml").write_text('transcripts_dir = "/etc"\n')
    loaded = load_settings(store, {}).unwrap()
    assert loaded.settings.transcripts_dir is None
    assert any("transcripts_dir" in warning for warning in loaded.warnings)
    from_env = load_settings(store, {"MEMHTML_TRANSCRIPTS_DIR": "/srv/t"}).unwrap()
    assert from_env.settings == Settings(store=store, transcripts_dir="/srv/t")

    assert transcripts_source(None).unwrap() is None
    monkeypatch.setenv("HOME", str(tmp_path))
    home = transcripts_source("~/sessions").unwrap()
    assert isinstance(home, DirectoryTranscripts) and home.root == tmp_path / "sessions"
    relative = transcripts_source("sessions")
    assert not is_successful(relative)
    assert "must be an absolute path" in relative.failure().reason
