"""Pruning the markdown index cache: a cache whose folder is gone, or that no run has
used for a month, is removed when another is written; nothing else ever is."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from memhtml.adapters.mdcache import CACHE_FILE, prune_index_caches, read_label
from memhtml.compose import markdown_reader, value_of
from memhtml.compose.mdcache import (
    ENV_CACHE_DIR,
    INDEX_DIR,
    PRUNE_UNUSED_DAYS,
    index_cache_dir,
    index_markdown,
)

DAY_NS = 86_400 * 10**9
OLD_NS = 1_600_000_000 * 10**9
"""Long past, so the indexer trusts a matching stat of the notes themselves."""


def _folder(parent: Path, name: str) -> Path:
    root = parent / name
    root.mkdir()
    note = root / "note.md"
    note.write_text(f"the {name} folder holds one note about tides\n", encoding="utf-8")
    os.utime(note, ns=(OLD_NS, OLD_NS))
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _env(cache: Path) -> dict[str, str]:
    return {ENV_CACHE_DIR: str(cache)}


def _index(root: Path, cache: Path) -> None:
    reader = value_of(markdown_reader(root))
    value_of(index_markdown(reader, root, environ=_env(cache)))


def _cache_file(root: Path, cache: Path) -> Path:
    return index_cache_dir(root, _env(cache)) / CACHE_FILE


def _age(path: Path, days: float) -> None:
    then = time.time_ns() - int(days * DAY_NS)
    os.utime(path, ns=(then, then), follow_symlinks=False)


def test_the_cache_of_a_deleted_folder_is_removed_on_the_next_write(
        tmp_path: Path, cache: Path) -> None:
    kept, gone = _folder(tmp_path, "kept"), _folder(tmp_path, "gone")
    _index(gone, cache)
    stale = _cache_file(gone, cache)
    assert stale.is_file()
    shutil.rmtree(gone)
    _index(kept, cache)
    assert not stale.exists() and not stale.parent.exists()
    assert _cache_file(kept, cache).is_file()


def test_a_cache_unused_for_the_limit_goes_and_a_recent_one_stays(
        tmp_path: Path, cache: Path) -> None:
    idle, recent, writer = (_folder(tmp_path, n) for n in ("idle", "recent", "writer"))
    _index(idle, cache)
    _index(recent, cache)
    _age(_cache_file(idle, cache), PRUNE_UNUSED_DAYS + 1)
    _age(_cache_file(recent, cache), PRUNE_UNUSED_DAYS - 1)
    _index(writer, cache)
    assert not _cache_file(idle, cache).exists()
    assert _cache_file(recent, cache).is_file()
    assert idle.is_dir(), "pruning touches the cache only, never the folder"


def test_reading_a_cache_records_its_use(tmp_path: Path, cache: Path) -> None:
    """A folder queried now and then, with no edit in between, never has its cache
    written again; the read itself keeps it from looking unused."""
    used, writer = _folder(tmp_path, "used"), _folder(tmp_path, "writer")
    _index(used, cache)
    path = _cache_file(used, cache)
    _age(path, PRUNE_UNUSED_DAYS + 5)
    # Another process's read: the in-process memo is keyed by the file's stamp,
    # which the aging moved, so the cache is loaded from disk.
    _index(used, cache)
    assert time.time_ns() - path.stat().st_mtime_ns < DAY_NS
    _index(writer, cache)
    assert path.is_file()


def _genuine(tmp_path: Path, cache: Path, name: str) -> bytes:
    """The bytes of a real cache file whose folder has since been deleted."""
    root = _folder(tmp_path, name)
    _index(root, cache)
    path = _cache_file(root, cache)
    raw = path.read_bytes()
    shutil.rmtree(path.parent)
    shutil.rmtree(root)
    return raw


def _plant(directory: Path, raw: bytes, name: str = CACHE_FILE, days: float = 400) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(raw)
    _age(path, days)
    return path


def test_only_our_own_files_are_ever_removed(tmp_path: Path, cache: Path) -> None:
    raw = _genuine(tmp_path, cache, "former")
    top = cache / INDEX_DIR
    elsewhere = tmp_path / "elsewhere"
    linked_target = _plant(elsewhere / "through-dir", raw)
    file_target = _plant(elsewhere / "through-file", raw)

    foreign = _plant(top / ("a" * 32), b"my own notes, kept here by hand\n")
    (top / ("b" * 32)).symlink_to(linked_target.parent, target_is_directory=True)
    (top / ("c" * 32)).mkdir()
    (top / ("c" * 32) / CACHE_FILE).symlink_to(file_target)
    misnamed = _plant(top / "not-a-digest", raw)
    (top / ("d" * 32)).mkdir()
    os.mkfifo(top / ("d" * 32) / CACHE_FILE)
    beside = _plant(top / ("e" * 32), raw)
    (top / ("e" * 32) / "readme.txt").write_text("left by the user\n")
    removed = _plant(top / ("f" * 32), raw)
    stray = top / "index.npys"
    stray.write_bytes(raw)
    _age(stray, 400)

    assert prune_index_caches(top, "", time.time_ns(), 30 * DAY_NS, DAY_NS) == (
        "e" * 32, "f" * 32)
    assert not beside.exists() and (top / ("e" * 32) / "readme.txt").is_file()
    assert not removed.exists() and not removed.parent.exists()
    for survivor in (foreign, linked_target, file_target, misnamed, stray,
                     top / ("c" * 32) / CACHE_FILE, top / ("b" * 32)):
        assert os.path.lexists(survivor), survivor
    assert (top / ("d" * 32) / CACHE_FILE).is_fifo()


def test_the_directory_being_written_is_kept(tmp_path: Path, cache: Path) -> None:
    raw = _genuine(tmp_path, cache, "former")
    top = cache / INDEX_DIR
    kept = _plant(top / ("1" * 32), raw)
    assert prune_index_caches(top, "1" * 32, time.time_ns(), 30 * DAY_NS, DAY_NS) == ()
    assert kept.is_file()


def test_a_cache_directory_that_is_a_link_is_not_pruned(tmp_path: Path, cache: Path) -> None:
    raw = _genuine(tmp_path, cache, "former")
    real = tmp_path / "real-index"
    planted = _plant(real / ("2" * 32), raw)
    linked = tmp_path / "linked-index"
    linked.symlink_to(real, target_is_directory=True)
    assert prune_index_caches(linked, "", time.time_ns(), 30 * DAY_NS, DAY_NS) == ()
    assert planted.is_file()


def test_an_unfinished_write_is_removed_after_a_day(tmp_path: Path, cache: Path) -> None:
    raw = _genuine(tmp_path, cache, "former")
    top = cache / INDEX_DIR
    directory = top / ("3" * 32)
    old = _plant(directory, raw[:200], f".{CACHE_FILE}.41.0123abcd.tmp", days=2)
    fresh = _plant(directory, raw[:200], f".{CACHE_FILE}.42.4567cdef.tmp", days=0)
    odd = _plant(directory, raw[:200], f".{CACHE_FILE}.x.tmp", days=2)
    assert prune_index_caches(top, "", time.time_ns(), 30 * DAY_NS, DAY_NS) == ("3" * 32,)
    assert not old.exists() and fresh.is_file() and odd.is_file()


def test_the_label_names_the_folder(tmp_path: Path, cache: Path) -> None:
    root = _folder(tmp_path, "labelled")
    _index(root, cache)
    label = read_label(_cache_file(root, cache).read_bytes()[:65536])
    assert label is not None and label.root == str(root.resolve())
    assert read_label(b"\x93NUMPY but nothing after") is None
    assert read_label(b"plain text") is None
    assert read_label(b"") is None
