"""``open_regular`` opens a regular file and nothing else; writers never write through.

Every kind of entry that can stand at a local-state path is put there for real (a
FIFO, a socket, a directory, a link to ``/dev/zero``, to a file elsewhere, dangling) and
refused without being opened. The one thing a test cannot stage on demand, a regular
file swapped for a FIFO between the look by name and the open, is staged by letting
the look by name see the regular file that was there: the descriptor decides.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.sockets import socket_at

from memhtml.contracts.local_files import (
    NotRegularFileError,
    blocking_entry,
    create_exclusive,
    not_regular,
    open_regular,
    read_regular,
    write_replacing,
)

GUARD_SECONDS = 30.0
"""A read still running after this long is blocked on the FIFO (a hang detector)."""


def _unheld(call: Callable[[], object], fifo: Path | None = None) -> object:
    """``call``'s outcome (its value or the exception it raised), run on a thread so a
    blocked open fails the test instead of holding it: a writer opened on ``fifo``
    releases the thread."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # the outcome under test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(GUARD_SECONDS)
    if worker.is_alive():
        if fifo is not None:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the open blocked")
    return outcome[0]


ODD: dict[str, Callable[[Path, Path], None]] = {
    "a FIFO": lambda path, _: os.mkfifo(path),
    "a socket": lambda path, _: socket_at(path),
    "a directory": lambda path, _: path.mkdir(),
    "a link to /dev/zero": lambda path, _: path.symlink_to("/dev/zero"),
    "a link to a file elsewhere": lambda path, elsewhere: path.symlink_to(elsewhere),
    "a dangling link": lambda path, tmp: path.symlink_to(tmp / "nowhere"),
}
KIND_WORDS = {"a FIFO": "a FIFO", "a socket": "a socket", "a directory": "a directory",
              "a link to /dev/zero": "a symbolic link",
              "a link to a file elsewhere": "a symbolic link",
              "a dangling link": "a symbolic link"}


@pytest.mark.parametrize("odd", sorted(ODD))
def test_only_a_regular_file_is_read(tmp_path: Path, odd: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"someone else's\n")
    path = tmp_path / "state.json"
    ODD[odd](path, elsewhere)
    refused = _unheld(lambda: read_regular(path), path if odd == "a FIFO" else None)
    # An OSError, so every reader that already treats an unreadable file as absent
    # treats this one so too.
    assert issubclass(NotRegularFileError, OSError)
    assert isinstance(refused, NotRegularFileError), refused
    assert refused.kind == KIND_WORDS[odd]
    assert str(path) in str(refused)
    assert not_regular(path) == KIND_WORDS[odd]


def test_a_regular_file_reads_whole_or_to_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"0123456789")
    assert read_regular(path) == b"0123456789"
    assert read_regular(path, 4) == b"0123"
    assert not_regular(path) is None
    with open_regular(path) as stream:
        # Reads block as a file's do: the descriptor is no longer non-blocking.
        assert os.get_blocking(stream.fileno())
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent")
    assert not_regular(tmp_path / "absent") is None


def test_the_descriptor_decides_when_a_fifo_takes_the_files_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    regular = tmp_path / "was-a-file"
    regular.write_bytes(b"x")
    looked = os.lstat(regular)
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    # The look by name saw a regular file; by the open a FIFO stands there.
    real_lstat = os.lstat

    def lstat(name: str | os.PathLike[str]) -> os.stat_result:
        return looked if Path(name) == fifo else real_lstat(name)

    monkeypatch.setattr(os, "lstat", lstat)
    refused = _unheld(lambda: read_regular(fifo), fifo)
    assert isinstance(refused, NotRegularFileError) and refused.kind == "a FIFO"


def test_a_writer_replaces_what_stands_at_the_name_and_never_writes_through(
        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    for odd in sorted(ODD):
        if odd == "a directory":
            continue
        elsewhere.write_bytes(b"someone else's\n")
        path = tmp_path / f"{odd.replace(' ', '-').replace('/', '')}.json"
        ODD[odd](path, elsewhere)
        def replace(at: Path = path) -> None:
            write_replacing(at, b"ours", at.with_suffix(".tmp"))

        done = _unheld(replace)
        assert done is None, (odd, done)
        assert stat.S_ISREG(os.lstat(path).st_mode) and path.read_bytes() == b"ours"
        assert elsewhere.read_bytes() == b"someone else's\n"
        assert not path.with_suffix(".tmp").exists()
    # A directory at the name is not replaced: the writer fails, and cleans up.
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        write_replacing(folder, b"ours", tmp_path / "folder.tmp")
    assert folder.is_dir() and not (tmp_path / "folder.tmp").exists()


def test_a_temporary_is_created_never_opened(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"someone else's\n")
    planted = tmp_path / "x.tmp"
    planted.symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        create_exclusive(planted)
    os.mkfifo(tmp_path / "y.tmp")
    refused = _unheld(lambda: create_exclusive(tmp_path / "y.tmp"), tmp_path / "y.tmp")
    assert isinstance(refused, FileExistsError)
    assert elsewhere.read_bytes() == b"someone else's\n"


def test_blocking_entry_names_what_stands_where_a_directory_belongs(tmp_path: Path) -> None:
    top = tmp_path / "memhtml"
    (top / "vectors").mkdir(parents=True)
    assert blocking_entry(top / "vectors" / "space", top) is None
    os.mkfifo(top / "pending")
    assert blocking_entry(top / "pending", top) == f"{top / 'pending'} is a FIFO, where " \
                                                    "memhtml keeps a directory"
    (top / "snapshots").write_bytes(b"")
    assert "is a regular file" in (blocking_entry(top / "snapshots" / "x", top) or "")
    assert blocking_entry(tmp_path / "outside", top) is None
