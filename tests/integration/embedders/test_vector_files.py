"""The on-disk vector cache: round trips, reuse by content hash, spaces kept apart,
corrupt file sets reported and never trusted (their repair: test_vector_healing)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.fake_embedders import RecordingEmbedder
from tests.property.head_support import commit, memory, new_repo, run

from memhtml.adapters.vector_files import LOCKS_DIR, SaveCounts, load_cache, save_cache, space_dir
from memhtml.adapters.vector_layout import MANIFEST
from memhtml.adapters.vector_parts import VectorFilesCorrupt, VectorFilesForeign
from memhtml.contracts.services import VectorSpace
from memhtml.format import set_meta
from memhtml.head import VectorCache, cache_from, empty_vector_cache, fill_vectors, load_head


def loaded(root: Path, space: VectorSpace) -> VectorCache:
    result = load_cache(root, space)
    assert is_successful(result), result
    return unsafe_perform_io(result.unwrap())


def saved(root: Path, cache: VectorCache) -> SaveCounts:
    result = save_cache(root, cache)
    assert is_successful(result), result
    return unsafe_perform_io(result.unwrap())


def corrupt(root: Path, space: VectorSpace) -> VectorFilesCorrupt:
    result = load_cache(root, space)
    assert not is_successful(result)
    error = unsafe_perform_io(result.failure())
    assert isinstance(error, VectorFilesCorrupt)
    return error


def sample_cache(space: VectorSpace, keys: Sequence[str], seed: int = 0) -> VectorCache:
    rng = np.random.default_rng(seed)
    return cache_from(space, {k: rng.standard_normal(space.dimension).astype(np.float32)
                              for k in keys})


SPACE = VectorSpace("test-model", 8)


def test_missing_files_load_as_an_empty_cache(tmp_path: Path) -> None:
    cache = loaded(tmp_path / "nothing-here", SPACE)
    assert cache.space == SPACE
    assert len(cache) == 0


def test_round_trip(tmp_path: Path) -> None:
    cache = sample_cache(SPACE, ["h1", "h2", "h3"])
    assert saved(tmp_path, cache) == SaveCounts(stored=3, added=3)
    back = loaded(tmp_path, SPACE)
    assert back.space == SPACE
    assert sorted(back.vectors.keys()) == ["h1", "h2", "h3"]
    for key in ("h1", "h2", "h3"):
        vector = back.get(key)
        assert vector is not None
        assert np.array_equal(vector, cache.vectors[key])
        assert vector.dtype == np.float32
        assert not vector.flags.writeable
    folder = space_dir(tmp_path, SPACE)
    assert folder == tmp_path / "test-model-8"
    names = sorted(p.name for p in folder.iterdir())
    assert MANIFEST in names
    assert len(names) == 3, "one generation: a matrix, a hash list, the manifest"


def test_save_merges_and_skips_when_nothing_is_new(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["a", "b"], seed=1))
    assert saved(tmp_path, sample_cache(SPACE, ["b", "c"], seed=2)) == SaveCounts(3, 1)
    back = loaded(tmp_path, SPACE)
    assert sorted(back.vectors.keys()) == ["a", "b", "c"]
    # The newer cache's vector wins for a hash both hold.
    assert np.array_equal(back.vectors["b"], sample_cache(SPACE, ["b", "c"], seed=2).vectors["b"])
    manifest = (space_dir(tmp_path, SPACE) / MANIFEST).read_bytes()
    assert saved(tmp_path, sample_cache(SPACE, ["a"], seed=3)) == SaveCounts(3, 0)
    assert (space_dir(tmp_path, SPACE) / MANIFEST).read_bytes() == manifest
    assert len(list(space_dir(tmp_path, SPACE).iterdir())) == 3, "old generations removed"


def test_spaces_are_kept_apart(tmp_path: Path) -> None:
    small, large = VectorSpace("hashing-v1", 16), VectorSpace("hashing-v1", 32)
    other = VectorSpace("other/model", 16)
    saved(tmp_path, sample_cache(small, ["x"]))
    saved(tmp_path, sample_cache(large, ["y"]))
    assert sorted(loaded(tmp_path, small).vectors.keys()) == ["x"]
    assert sorted(loaded(tmp_path, large).vectors.keys()) == ["y"]
    assert len(loaded(tmp_path, other)) == 0
    # One folder per space, beside the saves' lock files.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        LOCKS_DIR, "hashing-v1-16", "hashing-v1-32"]
    assert sorted(p.name for p in (tmp_path / LOCKS_DIR).iterdir()) == [
        "hashing-v1-16.lock", "hashing-v1-32.lock"]


def test_a_manifest_for_another_space_is_not_trusted(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["x"]))
    other = VectorSpace("test-model", 9)
    (tmp_path / other.key).mkdir()
    for path in space_dir(tmp_path, SPACE).iterdir():
        (tmp_path / other.key / path.name).write_bytes(path.read_bytes())
    result = load_cache(tmp_path, other)
    assert not is_successful(result)
    error = unsafe_perform_io(result.failure())
    assert isinstance(error, VectorFilesForeign)
    assert "not VectorSpace" in error.reason
    assert error.tag == f"space-{SPACE.key}"


def _manifest(root: Path) -> dict[str, object]:
    data = json.loads((space_dir(root, SPACE) / MANIFEST).read_text())
    assert isinstance(data, dict)
    return data


def _generation(root: Path, index: int = -1) -> str:
    """The generation of the set's part at ``index`` (the newest by default)."""
    parts = _manifest(root)["parts"]
    assert isinstance(parts, list)
    generation = parts[index]["generation"]
    assert isinstance(generation, str)
    return generation


def _file(root: Path, kind: str, index: int = -1) -> Path:
    suffix = "npy" if kind == "vectors" else "txt"
    return space_dir(root, SPACE) / f"{kind}-{_generation(root, index)}.{suffix}"


def as_old_format(root: Path, number: int, space: VectorSpace = SPACE) -> None:
    """Rewrite a set of one part as formats 1 and 2 laid it out: one generation named
    by the manifest, which counts the rows (and, in format 2, the passages)."""
    manifest = space_dir(root, space) / MANIFEST
    data = json.loads(manifest.read_text())
    [part] = data["parts"]
    old = {"format": number, "model_id": data["model_id"], "dimension": data["dimension"],
           "count": data["count"], "generation": part["generation"]}
    if number == 2:
        old["passages"] = data["passages"]
    manifest.write_text(json.dumps(old, sort_keys=True))


def test_corrupt_file_sets_are_reported(tmp_path: Path) -> None:
    def fresh(name: str) -> Path:
        root = tmp_path / name
        saved(root, sample_cache(SPACE, ["h1", "h2"]))
        return root

    root = fresh("manifest-garbage")
    (space_dir(root, SPACE) / MANIFEST).write_text("{not json")
    assert "not JSON" in corrupt(root, SPACE).reason

    root = fresh("truncated-matrix")
    data = _file(root, "vectors").read_bytes()
    _file(root, "vectors").write_bytes(data[: len(data) - 10])
    assert "matrix" in corrupt(root, SPACE).reason

    root = fresh("short-hash-list")
    _file(root, "hashes").write_text("h1\n")
    assert "hash list has 1 lines" in corrupt(root, SPACE).reason

    root = fresh("repeated-hash")
    _file(root, "hashes").write_text("h1\nh1\n")
    assert "repeated" in corrupt(root, SPACE).reason

    root = fresh("nan")
    matrix = np.load(_file(root, "vectors"))
    matrix[1, 3] = np.nan
    np.save(_file(root, "vectors"), matrix)
    assert "non-finite" in corrupt(root, SPACE).reason

    root = fresh("wrong-dtype")
    np.save(_file(root, "vectors"), np.load(_file(root, "vectors")).astype(np.float64))
    assert "float64" in corrupt(root, SPACE).reason

    root = fresh("missing-file")
    _file(root, "hashes").unlink()
    assert "missing" in corrupt(root, SPACE).reason

    root = fresh("pickle")
    np.save(_file(root, "vectors"), np.array([{"a": 1}, {"b": 2}], dtype=object),
            allow_pickle=True)
    assert "does not load" in corrupt(root, SPACE).reason


def test_saving_over_a_corrupt_set_replaces_it(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["old"]))
    (space_dir(tmp_path, SPACE) / MANIFEST).write_text("[]")
    assert saved(tmp_path, sample_cache(SPACE, ["new"])) == SaveCounts(1, 1)
    assert sorted(loaded(tmp_path, SPACE).vectors.keys()) == ["new"]


def test_reuse_across_a_move_and_a_head_only_edit(tmp_path: Path) -> None:
    git = new_repo(tmp_path / "repo")
    store = tmp_path / "vectors"
    first = memory("Deploys", "Deploys happen on Tuesdays.", "Never on a Friday afternoon.")
    second = memory("Caches", "The cache is warmed before traffic.", "A cold cache doubles p99.")
    c1 = commit(git, None, {"notes/deploys.html": first, "notes/caches.html": second})
    embedder = RecordingEmbedder()
    filled = run(fill_vectors(run(load_head(git, c1)), empty_vector_cache(embedder.space),
                              embedder))
    assert filled.counts.embedded == 2
    saved(store, filled.cache)

    # Move one file and edit only the other's head: both content hashes stay.
    edited = set_meta(second, "memhtml-updated", "2026-12-01T00:00:00Z")
    assert edited != second
    c2 = commit(git, c1, {"notes/deploys.html": None, "elsewhere/deploys.html": first,
                          "notes/caches.html": edited})
    version = run(load_head(git, c2))
    assert sorted(version.paths()) == ["elsewhere/deploys.html", "notes/caches.html"]
    again = RecordingEmbedder()
    refill = run(fill_vectors(version, loaded(store, again.space), again))
    assert again.calls == []
    assert refill.counts.reused == 2
    assert refill.counts.embedded == 0
    assert refill.remaining == 0

    # A body edit is a new content hash: exactly that one text is embedded.
    c3 = commit(git, c2, {"notes/caches.html": memory("Caches", "The cache is warmed first.")})
    third = RecordingEmbedder()
    last = run(fill_vectors(run(load_head(git, c3)), loaded(store, third.space), third))
    assert third.calls == [["The cache is warmed first."]]
    assert saved(store, last.cache) == SaveCounts(stored=3, added=1)


def test_refuses_a_hash_that_is_not_a_file_line(tmp_path: Path) -> None:
    result = save_cache(tmp_path, sample_cache(SPACE, ["bad\nhash"]))
    assert not is_successful(result)


@pytest.mark.parametrize("dimension", [1, 384])
def test_widths(tmp_path: Path, dimension: int) -> None:
    space = VectorSpace("w", dimension)
    saved(tmp_path, sample_cache(space, ["k"]))
    assert loaded(tmp_path, space).vectors["k"].shape == (dimension,)


GROUP = "P1-" + "d" * 40


def test_every_save_writes_format_3_counting_rows_and_passages(tmp_path: Path) -> None:
    saved(tmp_path / "plain", sample_cache(SPACE, ["h1"]))
    plain = _manifest(tmp_path / "plain")
    assert (plain["format"], plain["count"], plain["passages"]) == (3, 1, 0)
    saved(tmp_path, sample_cache(SPACE, ["h1", f"{GROUP}.0", f"{GROUP}.1"]))
    manifest = _manifest(tmp_path)
    assert (manifest["format"], manifest["passages"], manifest["count"]) == (3, 2, 3)
    assert manifest["parts"] == [{"generation": _generation(tmp_path), "count": 3}]
    assert set(loaded(tmp_path, SPACE).vectors) == {"h1", f"{GROUP}.0", f"{GROUP}.1"}


@pytest.mark.parametrize("number", [1, 2])
def test_sets_of_formats_1_and_2_still_load_and_the_first_save_adds_a_segment(
        tmp_path: Path, number: int) -> None:
    keys = ["h1", "h2"] if number == 1 else ["h1", f"{GROUP}.0", f"{GROUP}.1"]
    old = sample_cache(SPACE, keys)
    saved(tmp_path, old)
    as_old_format(tmp_path, number)
    base = _generation_of_old(tmp_path)
    assert bits(loaded(tmp_path, SPACE)) == bits(old)
    assert saved(tmp_path, sample_cache(SPACE, ["h9"], seed=5)) == SaveCounts(len(keys) + 1, 1)
    manifest = _manifest(tmp_path)
    assert manifest["format"] == 3
    assert manifest["parts"] == [{"generation": base, "count": len(keys)},
                                 {"generation": _generation(tmp_path), "count": 1}]
    assert set(loaded(tmp_path, SPACE).vectors) == {*keys, "h9"}


def _generation_of_old(root: Path) -> str:
    generation = _manifest(root)["generation"]
    assert isinstance(generation, str)
    return generation


def bits(cache: VectorCache) -> dict[str, bytes]:
    return {key: np.asarray(vector).tobytes() for key, vector in cache.vectors.items()}


def test_passage_rows_that_do_not_add_up_are_corrupt(tmp_path: Path) -> None:
    def fresh(name: str) -> Path:
        root = tmp_path / name
        saved(root, sample_cache(SPACE, ["h1", f"{GROUP}.0", f"{GROUP}.1"]))
        return root

    def rewrite(root: Path, **changes: object) -> None:
        data = {**_manifest(root), **changes}
        (space_dir(root, SPACE) / MANIFEST).write_text(json.dumps(data))

    root = fresh("miscounted")
    rewrite(root, passages=1)
    assert "counts 1 passages" in corrupt(root, SPACE).reason

    root = fresh("format-1-with-passages")
    as_old_format(root, 1)
    assert "format 1 set holds passage rows" in corrupt(root, SPACE).reason

    root = fresh("gap")
    _file(root, "hashes").write_text(f"{GROUP}.0\n{GROUP}.2\nh1\n")
    assert "passage group" in corrupt(root, SPACE).reason
