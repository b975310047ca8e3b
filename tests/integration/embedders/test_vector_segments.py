"""The vector cache in parts: a save writes what it adds as a segment, segments merge and
fold by ``Compaction``, a kept handle reads only what changed, and the saves' lock and
clean-up keep every manifest's parts on disk."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.embedders.test_vector_files import (
    SPACE,
    bits,
    loaded,
    sample_cache,
    saved,
)

from memhtml.adapters import vector_files, vector_parts
from memhtml.adapters.vector_cache import VectorFiles
from memhtml.adapters.vector_files import SaveCounts, save_cache, space_dir
from memhtml.adapters.vector_layout import MANIFEST, Compaction
from memhtml.adapters.vector_parts import VectorFilesFailure
from memhtml.contracts.vectors import LoadedVectors, VectorCache
from memhtml.head.passages import group_sizes, is_passage_key

SEGMENTS_ONLY = Compaction(1e9, 0.0, 1_000)
"""Every save adds a segment: nothing merges, nothing folds."""


def parts(root: Path) -> list[tuple[str, int]]:
    manifest = json.loads((space_dir(root, SPACE) / MANIFEST).read_text())
    return [(part["generation"], part["count"]) for part in manifest["parts"]]


def files(root: Path) -> set[str]:
    return {path.name for path in space_dir(root, SPACE).iterdir()}


def listed_files(root: Path) -> set[str]:
    return {MANIFEST} | {f"{kind}-{generation}.{suffix}" for generation, _ in parts(root)
                         for kind, suffix in (("vectors", "npy"), ("hashes", "txt"))}


def keys(prefix: str, count: int) -> list[str]:
    return [f"sha256:{prefix}{i}" for i in range(count)]


def load(handle: VectorFiles) -> VectorCache:
    found: LoadedVectors = unsafe_perform_io(handle.load(SPACE).unwrap())
    assert found.note is None
    return found.cache


def save(handle: VectorFiles, cache: VectorCache) -> int:
    result = handle.save(cache)
    assert is_successful(result), result
    stored: int = unsafe_perform_io(result.unwrap())
    return stored


def test_a_save_writes_only_the_rows_it_adds(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, keys("base", 50)))
    [(base, _)] = parts(tmp_path)
    base_files = {name: (space_dir(tmp_path, SPACE) / name).stat() for name in files(tmp_path)
                  if base in name}
    assert saved(tmp_path, sample_cache(SPACE, ["sha256:new"], seed=1)) == SaveCounts(51, 1)
    [first, (segment, count)] = parts(tmp_path)
    assert first == (base, 50)
    assert count == 1
    assert (space_dir(tmp_path, SPACE) / f"hashes-{segment}.txt").read_text() == "sha256:new\n"
    matrix = np.load(space_dir(tmp_path, SPACE) / f"vectors-{segment}.npy")
    assert matrix.shape == (1, SPACE.dimension)
    for name, before in base_files.items():
        after = (space_dir(tmp_path, SPACE) / name).stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert files(tmp_path) == listed_files(tmp_path)


def test_a_cache_loaded_filled_and_saved_whole_writes_only_its_new_rows(tmp_path: Path
                                                                        ) -> None:
    # What ``memhtml embed`` and the sleep run do: load, add a few, save the whole.
    handle = VectorFiles(tmp_path, SEGMENTS_ONLY)
    save(handle, sample_cache(SPACE, keys("base", 40)))
    grown = sample_cache(SPACE, ["sha256:x", "sha256:y"], seed=3)
    for kept in (handle, VectorFiles(tmp_path, SEGMENTS_ONLY)):
        whole = VectorCache(SPACE, load(kept).vectors.update(grown.vectors))
        assert save(kept, whole) == len(whole)
        assert parts(tmp_path)[-1][1] == 2, "the same bits are not written again"
        grown = sample_cache(SPACE, ["sha256:z", "sha256:w"], seed=4)


def test_a_later_segment_wins_for_a_key_both_hold(tmp_path: Path) -> None:
    handle = VectorFiles(tmp_path, SEGMENTS_ONLY)
    save(handle, sample_cache(SPACE, ["a", "b"], seed=1))
    newer = sample_cache(SPACE, ["b", "c"], seed=2)
    save(handle, newer)
    assert [count for _, count in parts(tmp_path)] == [2, 2]
    back = loaded(tmp_path, SPACE)
    assert bits(back)["b"] == bits(newer)["b"]
    assert set(back.vectors) == {"a", "b", "c"}


def test_segments_merge_geometrically_and_fold_into_the_base(tmp_path: Path) -> None:
    handle = VectorFiles(tmp_path, Compaction(fold_ratio=0.5, merge_ratio=1.0,
                                              max_segments=24))
    save(handle, sample_cache(SPACE, keys("base", 16)))
    shapes = []
    for step in range(9):
        save(handle, sample_cache(SPACE, [f"sha256:s{step}"], seed=step))
        shapes.append([count for _, count in parts(tmp_path)])
        assert files(tmp_path) == listed_files(tmp_path), "replaced parts are removed"
    # A segment absorbs the newer ones no larger than it (a binary counter), until
    # the segments would hold more than half the base: then one base holds it all.
    assert shapes == [[16, 1], [16, 2], [16, 2, 1], [16, 4], [16, 4, 1], [16, 4, 2],
                      [16, 4, 2, 1], [16, 8], [25]]
    assert set(load(handle).vectors) == {*keys("base", 16), *(f"sha256:s{i}" for i in range(9))}


def test_too_many_segments_fold(tmp_path: Path) -> None:
    handle = VectorFiles(tmp_path, Compaction(fold_ratio=1e9, merge_ratio=0.0,
                                              max_segments=3))
    save(handle, sample_cache(SPACE, keys("base", 4)))
    counts = []
    for step in range(4):
        save(handle, sample_cache(SPACE, [f"sha256:s{step}"], seed=step))
        counts.append(len(parts(tmp_path)))
    assert counts == [2, 3, 4, 1]


def test_compact_folds_into_one_base_and_loads_the_same(tmp_path: Path) -> None:
    handle = VectorFiles(tmp_path, SEGMENTS_ONLY)
    save(handle, sample_cache(SPACE, ["a", "b"], seed=1))
    save(handle, sample_cache(SPACE, ["b", "c"], seed=2))
    save(handle, sample_cache(SPACE, ["d"], seed=3))
    before = bits(load(VectorFiles(tmp_path)))
    assert unsafe_perform_io(handle.compact(SPACE).unwrap()) == 4
    assert [count for _, count in parts(tmp_path)] == [4]
    assert files(tmp_path) == listed_files(tmp_path)
    assert bits(load(VectorFiles(tmp_path))) == before
    assert bits(load(handle)) == before


# -- a kept handle ---------------------------------------------------------------------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The generations whose files were read, in order."""
    seen: list[str] = []
    real = vector_files._read_part

    def counting(folder: Path, space: object, generation: str, count: int) -> object:
        seen.append(generation)
        return real(folder, space, generation, count)  # type: ignore[arg-type]

    monkeypatch.setattr(vector_files, "_read_part", counting)
    return seen


def test_a_kept_handle_reads_only_what_changed(tmp_path: Path, reads: list[str]) -> None:
    kept, other = VectorFiles(tmp_path, SEGMENTS_ONLY), VectorFiles(tmp_path, SEGMENTS_ONLY)
    save(other, sample_cache(SPACE, keys("base", 30)))
    [(base, _)] = parts(tmp_path)
    first = load(kept)
    assert reads == [base]
    # The manifest has not changed: nothing is read, the same value answers.
    assert load(kept) is first
    assert reads == [base]
    # Another handle added two segments: just those are read.
    save(other, sample_cache(SPACE, ["sha256:x"], seed=1))
    save(other, sample_cache(SPACE, ["sha256:y", "sha256:base0"], seed=2))
    grown = load(kept)
    assert reads == [base, *(generation for generation, _ in parts(tmp_path)[1:])]
    assert bits(grown) == bits(load(VectorFiles(tmp_path)))
    # Its own save needs no read, and neither does the load after it.
    reads.clear()
    save(kept, sample_cache(SPACE, ["sha256:z"], seed=3))
    assert bits(load(kept)) == bits(load(VectorFiles(tmp_path)))
    assert reads == [base, *(generation for generation, _ in parts(tmp_path)[1:])], \
        "only the fresh handle read"
    # A new base (another handle folded the set) is read whole.
    unsafe_perform_io(other.compact(SPACE).unwrap())
    reads.clear()
    [(folded, _)] = parts(tmp_path)
    assert bits(load(kept)) == bits(grown) | bits(sample_cache(SPACE, ["sha256:z"], seed=3))
    assert reads == [folded]


def test_a_kept_handle_reads_a_merged_segment_without_the_base(tmp_path: Path,
                                                              reads: list[str]) -> None:
    merging = Compaction(fold_ratio=1e9, merge_ratio=1.0, max_segments=1_000)
    kept, other = VectorFiles(tmp_path, merging), VectorFiles(tmp_path, merging)
    save(other, sample_cache(SPACE, keys("base", 30)))
    save(other, sample_cache(SPACE, ["sha256:x"], seed=1))
    load(kept)
    reads.clear()
    save(other, sample_cache(SPACE, ["sha256:y"], seed=2))  # absorbs the segment of x
    [_, (merged, count)] = parts(tmp_path)
    assert count == 2
    found = bits(load(kept))
    assert reads == [merged], "the base is not read again"
    assert found == bits(load(VectorFiles(tmp_path)))


def test_a_kept_handle_sees_a_set_deleted_or_replaced(tmp_path: Path) -> None:
    kept = VectorFiles(tmp_path)
    saved(tmp_path, sample_cache(SPACE, ["a"], seed=1))
    assert set(load(kept).vectors) == {"a"}
    (space_dir(tmp_path, SPACE) / MANIFEST).unlink()
    assert len(load(kept)) == 0
    saved(tmp_path, sample_cache(SPACE, ["b"], seed=2))
    assert set(load(kept).vectors) == {"b"}


# -- passage groups across parts ---------------------------------------------------------

GROUP = "P1-" + "e" * 40


def test_a_passage_group_may_be_whole_only_across_parts(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, [f"{GROUP}.0", f"{GROUP}.1"]))
    assert saved(tmp_path, sample_cache(SPACE, [f"{GROUP}.2"], seed=1)) == SaveCounts(3, 1)
    assert len(parts(tmp_path)) == 2
    assert set(loaded(tmp_path, SPACE).vectors) == {f"{GROUP}.{i}" for i in range(3)}
    refused = save_cache(tmp_path, sample_cache(SPACE, [f"{GROUP}.4"], seed=2))
    assert not is_successful(refused)
    assert "partial passage group" in unsafe_perform_io(refused.failure()).reason
    assert len(parts(tmp_path)) == 2


_HEX = "0123456789abcdef"
passage_like = st.one_of(
    st.builds(lambda group, index: f"P1-{group}.{index}",
              st.sampled_from(["a" * 40, "b" * 40, "0123456789" * 4]),
              st.sampled_from(["0", "1", "2", "3", "01", "00", "10", "123456789012345678"])),
    st.builds(lambda group, index: f"P1-{group}.{index}",
              st.text(alphabet=_HEX + "AF.", min_size=39, max_size=41),
              st.text(alphabet="0123", min_size=0, max_size=3)),
    st.sampled_from(["sha256:a", "P1-", "P1-x.0", f"P1-{'a' * 40}", f"P1-{'a' * 40}.",
                     f"P1-{'a' * 40}.0.0", f"P2-{'a' * 40}.0", f"P1-{'a' * 40}.-1",
                     f"P1-{'a' * 40}.+1", f"P1-{'a' * 40}.1_0"]),
)


@given(st.lists(passage_like, unique=True, max_size=12))
def test_the_group_check_at_once_agrees_with_group_sizes(names: list[str]) -> None:
    whole, passages = vector_parts.whole_groups(names)
    assert whole == (not isinstance(group_sizes(names), str))
    assert passages == sum(1 for name in names if is_passage_key(name))


# -- the lock and the clean-up ---------------------------------------------------------


def test_a_save_waits_for_the_lock_and_one_held_too_long_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved(tmp_path, sample_cache(SPACE, ["a"]))
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with vector_files._writer_lock(tmp_path, SPACE):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait(10)
    monkeypatch.setattr(vector_files, "LOCK_WAIT", 0.05)
    failed = save_cache(tmp_path, sample_cache(SPACE, ["b"], seed=1))
    assert not is_successful(failed)
    error = unsafe_perform_io(failed.failure())
    assert isinstance(error, VectorFilesFailure)
    assert "another save has held" in error.reason
    # Loads never wait for the lock.
    assert set(loaded(tmp_path, SPACE).vectors) == {"a"}
    monkeypatch.setattr(vector_files, "LOCK_WAIT", 10.0)
    waiting = threading.Thread(target=lambda: saved(tmp_path, sample_cache(SPACE, ["b"])))
    waiting.start()
    release.set()
    holder.join()
    waiting.join()
    assert set(loaded(tmp_path, SPACE).vectors) == {"a", "b"}


def test_clean_up_leaves_what_a_manifest_may_still_name(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["a"]))
    folder = space_dir(tmp_path, SPACE)
    [(base, _)] = parts(tmp_path)
    serial = int(base.split("-")[0])
    older = f"{serial - 1:012d}-00000000"
    newer = f"{serial + 5:012d}-11111111"
    for generation in (older, newer):
        (folder / f"vectors-{generation}.npy").write_bytes(b"")
        (folder / f"hashes-{generation}.txt").write_bytes(b"")
    (folder / f".vectors-{older}.npy.abc.tmp").write_bytes(b"")
    (folder / "notes.txt").write_bytes(b"")
    vector_files._remove_unlisted(folder, {base})
    # Gone: an older part no manifest lists, and a temporary file of one. Left: the
    # listed part, a part newer than any listed (a save under way may be about to
    # list it), and anything not named as a part.
    assert files(tmp_path) == {MANIFEST, f"vectors-{base}.npy", f"hashes-{base}.txt",
                               f"vectors-{newer}.npy", f"hashes-{newer}.txt", "notes.txt"}


def test_the_lock_file_is_never_opened_through_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"")
    lock = vector_files.lock_path(tmp_path / "vectors", SPACE)
    lock.parent.mkdir(parents=True)
    os.symlink(elsewhere, lock)
    result = save_cache(tmp_path / "vectors", sample_cache(SPACE, ["a"]))
    assert not is_successful(result)
    assert isinstance(unsafe_perform_io(result.failure()), VectorFilesFailure)
