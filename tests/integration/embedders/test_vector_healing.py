"""The vector cache repairs itself: a corrupt set is deleted, a newer or foreign one
moved aside, either loads as empty with a note given once, and search, status and
embed carry on (lexical, coverage 0, a rebuild)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.cli.cli_support import call, call_text
from tests.integration.embedders.test_vector_files import SPACE, loaded, sample_cache, saved
from tests.property.head_support import commit, memory, new_repo, run

from memhtml.adapters import vector_files
from memhtml.adapters.embedders import HashingEmbedder
from memhtml.adapters.vector_cache import VectorFiles
from memhtml.adapters.vector_files import ASIDE_DIR, load_or_heal, space_dir
from memhtml.adapters.vector_layout import MANIFEST, Compaction
from memhtml.adapters.vector_parts import FORMAT_VERSION, VectorFilesError
from memhtml.compose.vectors import coverage_of, vector_arm
from memhtml.contracts.services import VectorSpace
from memhtml.contracts.vectors import LoadedVectors, widest_space
from memhtml.head import load_head


def healed(root: Path, space: VectorSpace = SPACE) -> LoadedVectors:
    result = load_or_heal(root, space)
    assert is_successful(result), result
    return unsafe_perform_io(result.unwrap())


def _generation(root: Path, index: int = -1) -> str:
    """The generation of the set's part at ``index`` (the newest by default)."""
    value = json.loads((space_dir(root, SPACE) / MANIFEST).read_text())["parts"][index][
        "generation"]
    assert isinstance(value, str)
    return value


def _matrix(root: Path) -> Path:
    return space_dir(root, SPACE) / f"vectors-{_generation(root)}.npy"


def _hashes(root: Path) -> Path:
    return space_dir(root, SPACE) / f"hashes-{_generation(root)}.txt"


def _truncate(root: Path) -> None:
    data = _matrix(root).read_bytes()
    _matrix(root).write_bytes(data[: len(data) - 10])


def _nan(root: Path) -> None:
    matrix = np.load(_matrix(root))
    matrix[0, 0] = np.nan
    np.save(_matrix(root), matrix)


def _pickled(root: Path) -> None:
    np.save(_matrix(root), np.array([{"a": 1}, {"b": 2}], dtype=object), allow_pickle=True)


def _archive(root: Path) -> None:
    with _matrix(root).open("wb") as stream:
        np.savez(stream, matrix=np.zeros((2, SPACE.dimension), dtype=np.float32))


def _no_format(root: Path) -> None:
    manifest = space_dir(root, SPACE) / MANIFEST
    data = json.loads(manifest.read_text())
    data["format"] = "one"
    manifest.write_text(json.dumps(data))


CORRUPTIONS: dict[str, Callable[[Path], object]] = {
    "garbage manifest": lambda root: (space_dir(root, SPACE) / MANIFEST).write_text("{no"),
    "truncated matrix": _truncate,
    "short hash list": lambda root: _hashes(root).write_text("h1\n"),
    "missing hash list": lambda root: _hashes(root).unlink(),
    "non-finite value": _nan,
    "pickled matrix": _pickled,
    "an archive for a matrix": _archive,
    "malformed format": _no_format,
}


@pytest.mark.parametrize("damage", list(CORRUPTIONS), ids=list(CORRUPTIONS))
def test_a_corrupt_set_is_deleted_once_and_then_rebuilt(tmp_path: Path, damage: str) -> None:
    saved(tmp_path, sample_cache(SPACE, ["h1", "h2"]))
    CORRUPTIONS[damage](tmp_path)
    first = healed(tmp_path)
    assert len(first.cache) == 0
    assert first.cache.space == SPACE
    assert first.note is not None and "discarded" in first.note
    assert not (space_dir(tmp_path, SPACE) / MANIFEST).exists()
    # Reported once: the next load finds a clean, empty cache and says nothing.
    assert healed(tmp_path) == LoadedVectors(first.cache)
    saved(tmp_path, sample_cache(SPACE, ["h3"]))
    assert sorted(loaded(tmp_path, SPACE).vectors.keys()) == ["h3"]
    assert len(list(space_dir(tmp_path, SPACE).iterdir())) == 3, "nothing of the bad set left"


def _segmented(root: Path) -> None:
    """A set of a base (h1, h2) and two segments (h3, then h4)."""
    handle = VectorFiles(root, Compaction(1e9, 0.0, 1_000))
    for keys in (["h1", "h2"], ["h3"], ["h4"]):
        assert is_successful(handle.save(sample_cache(SPACE, keys)))


def _segment(root: Path, kind: str) -> Path:
    suffix = "npy" if kind == "vectors" else "txt"
    return space_dir(root, SPACE) / f"{kind}-{_generation(root, 1)}.{suffix}"


def _edit_manifest(root: Path, edit: Callable[[dict[str, object]], object]) -> None:
    manifest = space_dir(root, SPACE) / MANIFEST
    data = json.loads(manifest.read_text())
    edit(data)
    manifest.write_text(json.dumps(data))


def _gap_across_parts(root: Path) -> None:
    _segment(root, "hashes").write_text(f"P1-{'f' * 40}.1\n")
    _edit_manifest(root, lambda data: data.update(passages=1))


def _nan_in_segment(root: Path) -> None:
    matrix = np.load(_segment(root, "vectors"))
    matrix[0, 1] = np.inf
    np.save(_segment(root, "vectors"), matrix)


def _parts(root: Path) -> list[dict[str, object]]:
    found = json.loads((space_dir(root, SPACE) / MANIFEST).read_text())["parts"]
    assert isinstance(found, list)
    return found


SEGMENT_CORRUPTIONS: dict[str, Callable[[Path], object]] = {
    "missing segment matrix": lambda root: _segment(root, "vectors").unlink(),
    "missing segment hash list": lambda root: _segment(root, "hashes").unlink(),
    "short segment hash list": lambda root: _segment(root, "hashes").write_text(""),
    "truncated segment": lambda root: _segment(root, "vectors").write_bytes(
        _segment(root, "vectors").read_bytes()[:-5]),
    "non-finite value in a segment": _nan_in_segment,
    "a gap across the parts": _gap_across_parts,
    "a union miscounted": lambda root: _edit_manifest(root, lambda data: data.update(count=3)),
    "a part listed twice": lambda root: _edit_manifest(
        root, lambda data: data.update(parts=[*_parts(root), _parts(root)[1]])),
    "no parts": lambda root: _edit_manifest(root, lambda data: data.update(parts=[])),
}


@pytest.mark.parametrize("damage", list(SEGMENT_CORRUPTIONS), ids=list(SEGMENT_CORRUPTIONS))
def test_a_set_with_a_corrupt_segment_is_deleted_whole(tmp_path: Path, damage: str) -> None:
    _segmented(tmp_path)
    SEGMENT_CORRUPTIONS[damage](tmp_path)
    first = healed(tmp_path)
    assert len(first.cache) == 0
    assert first.note is not None and "discarded" in first.note
    assert not (space_dir(tmp_path, SPACE) / MANIFEST).exists()
    assert healed(tmp_path) == LoadedVectors(first.cache)
    saved(tmp_path, sample_cache(SPACE, ["h5"]))
    assert sorted(loaded(tmp_path, SPACE).vectors.keys()) == ["h5"]
    assert len(list(space_dir(tmp_path, SPACE).iterdir())) == 3, "nothing of the bad set left"


@pytest.mark.parametrize("name", ["../outside", "sub/000000000001-deadbeef",
                                  "../000000000001-deadbeef", "/tmp/000000000001-deadbeef",
                                  "000000000001-deadbeef/..", "000000000001-DEADBEEF"])
@pytest.mark.parametrize("layout", ["parts", "format 2"])
def test_a_manifest_naming_anything_but_a_generation_here_is_refused(
        tmp_path: Path, name: str, layout: str) -> None:
    _segmented(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    planted = {outside / f"{kind}-{name.rsplit('/', 1)[-1]}.{suffix}"
               for kind, suffix in (("vectors", "npy"), ("hashes", "txt"))}
    for path in planted:
        path.write_bytes(b"not to be touched")
    if layout == "parts":
        _edit_manifest(tmp_path, lambda data: data["parts"][1].update(  # type: ignore[index]
            generation=name))
    else:
        _edit_manifest(tmp_path, lambda data: data.update(
            format=2, generation=name, count=2, passages=0, parts=None))
    first = healed(tmp_path)
    assert first.note is not None
    assert "names no valid generation" in first.note and "discarded" in first.note
    assert all(path.read_bytes() == b"not to be touched" for path in planted)


def test_a_newer_set_in_parts_is_moved_aside_whole(tmp_path: Path) -> None:
    _segmented(tmp_path)
    _edit_manifest(tmp_path, lambda data: data.update(format=FORMAT_VERSION + 1))
    before = _contents(space_dir(tmp_path, SPACE))
    assert len(before) == 7, "a manifest and three parts"
    first = healed(tmp_path)
    assert first.note is not None and f"format {FORMAT_VERSION + 1}" in first.note
    assert _contents(tmp_path / ASIDE_DIR / f"{SPACE.key}.format-{FORMAT_VERSION + 1}") \
        == before


def _future(root: Path, number: int) -> None:
    manifest = space_dir(root, SPACE) / MANIFEST
    data = json.loads(manifest.read_text())
    data["format"] = number
    data["layout"] = "whatever a newer memhtml writes"
    manifest.write_text(json.dumps(data))


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_newer_format_is_moved_aside_whole_not_deleted(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["h1", "h2"]))
    _future(tmp_path, 4)
    before = _contents(space_dir(tmp_path, SPACE))
    first = healed(tmp_path)
    assert len(first.cache) == 0
    assert first.note is not None
    assert "newer memhtml (format 4" in first.note
    aside = tmp_path / ASIDE_DIR / f"{SPACE.key}.format-4"
    assert f"moved aside to {aside}" in first.note
    assert _contents(aside) == before
    assert not space_dir(tmp_path, SPACE).exists()
    assert healed(tmp_path).note is None
    # This memhtml refills its own set; the newer one's stays where it was put.
    saved(tmp_path, sample_cache(SPACE, ["h3"]))
    assert sorted(loaded(tmp_path, SPACE).vectors.keys()) == ["h3"]
    assert _contents(aside) == before
    # A later newer set replaces the one set aside before it under the same tag.
    _future(tmp_path, 4)
    again = _contents(space_dir(tmp_path, SPACE))
    assert healed(tmp_path).note is not None
    assert _contents(aside) == again
    # The aside folder is not a space: it never answers for a model.
    assert widest_space(VectorFiles(tmp_path).saved_spaces(), SPACE.model_id) is None


def test_a_save_over_a_newer_set_moves_it_aside_first(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["h1"]))
    _future(tmp_path, 7)
    before = _contents(space_dir(tmp_path, SPACE))
    saved(tmp_path, sample_cache(SPACE, ["h2"]))
    assert _contents(tmp_path / ASIDE_DIR / f"{SPACE.key}.format-7") == before
    assert sorted(loaded(tmp_path, SPACE).vectors.keys()) == ["h2"]


def test_a_set_of_another_space_is_moved_aside(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["x"]))
    other = VectorSpace("test-model", 9)
    os.rename(space_dir(tmp_path, SPACE), space_dir(tmp_path, other))
    first = healed(tmp_path, other)
    assert first.note is not None and "not VectorSpace" in first.note
    aside = tmp_path / ASIDE_DIR / f"{other.key}.space-{SPACE.key}"
    assert (aside / MANIFEST).exists()
    assert healed(tmp_path, other).note is None


def test_a_set_replaced_while_it_is_judged_is_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A concurrent save swaps a good manifest in between this reader's judgement and
    # its repair: the repair must see the change and judge the new set instead.
    saved(tmp_path, sample_cache(SPACE, ["h1"]))
    _truncate(tmp_path)
    real = vector_files._read_set
    calls: list[int] = []

    def racing(folder: Path, space: VectorSpace, prior: object) -> object:
        found = real(folder, space, prior)  # type: ignore[arg-type]
        if not calls:
            calls.append(1)
            saved(tmp_path, sample_cache(SPACE, ["h2"]))
        return found

    monkeypatch.setattr(vector_files, "_read_set", racing)
    result = healed(tmp_path)
    assert result.note is None
    assert sorted(result.cache.vectors.keys()) == ["h2"]


def test_a_file_system_refusal_is_still_a_failure(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["h1"]))
    manifest = space_dir(tmp_path, SPACE) / MANIFEST
    manifest.unlink()
    manifest.mkdir()  # reading it raises IsADirectoryError, an OSError
    result = load_or_heal(tmp_path, SPACE)
    assert not is_successful(result)
    error: VectorFilesError = unsafe_perform_io(result.failure())
    assert type(error).__name__ == "VectorFilesFailure"


def test_the_compose_doors_give_the_note_once(tmp_path: Path) -> None:
    git = new_repo(tmp_path / "repo")
    sha = commit(git, None, {"notes/a.html": memory("Deploys", "Deploys on Tuesday.")})
    version = run(load_head(git, sha))
    embedder = HashingEmbedder(8)
    vectors = VectorFiles(tmp_path / "vectors")
    root = vectors.root
    saved(root, sample_cache(embedder.space, ["h1"]))
    (space_dir(root, embedder.space) / MANIFEST).write_text("{no")
    arm = unsafe_perform_io(vector_arm(vectors, embedder, embedder.space, version,
                                       "deploys").unwrap())
    # The repaired cache lacked one memory, which the search embedded before ranking
    # (``top_up``), and says once what the load discarded.
    assert arm.hybrid is not None
    assert arm.note is not None and "discarded" in arm.note
    covered = unsafe_perform_io(coverage_of(vectors, embedder, "hashing", embedder.space,
                                            version).unwrap())
    assert covered is not None
    assert (covered.have, covered.total, covered.note) == (1, 1, None)
    (space_dir(root, embedder.space) / MANIFEST).write_text("{no")
    covered = unsafe_perform_io(coverage_of(vectors, embedder, "hashing", embedder.space,
                                            version).unwrap())
    assert covered is not None and covered.note is not None and "discarded" in covered.note
    assert len(unsafe_perform_io(vectors.load(embedder.space).unwrap()).cache) == 0


def test_search_status_and_embed_carry_on_over_a_corrupt_cache(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("MEMHTML_") and n != "MEMHTML_EMBEDDER"]:
        monkeypatch.delenv(name)
    store = tmp_path / "store"
    s = ("--store", str(store), "--json")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    for title, claim in (("Deploy window", "Deploys happen on Tuesdays."),
                         ("Coffee", "The coffee machine is on floor two.")):
        code, answer = call(capsys, "write", "--title", title, "--claim", claim, *s)
        assert code == 0, answer
    monkeypatch.setenv("MEMHTML_EMBEDDER", "hashing")
    assert call(capsys, "embed", *s)[1]["remaining"] == 0
    assert call(capsys, "search", "deploy tuesdays", *s)[1]["mode"] == "hybrid"
    vectors = store / ".git" / "memhtml" / "vectors"
    [folder] = [p for p in vectors.iterdir() if not p.name.startswith(".")]
    [matrix] = folder.glob("vectors-*.npy")
    matrix.write_bytes(matrix.read_bytes()[:-7])

    code, out, err = call_text(capsys, "search", "deploy tuesdays", "--store", str(store))
    assert code == 0, err
    assert "Deploy window" in out or "deploy-window" in out
    assert "discarded" in err and "searched lexically" not in out
    # The search that found the cache corrupt embedded the two memories' passages
    # again (a gap this small is filled on the spot), so the next one is hybrid and
    # has nothing to say; the memories' own vectors wait for memhtml embed.
    code, answer = call(capsys, "search", "deploy tuesdays", *s)
    assert code == 0, answer
    assert answer["mode"] == "hybrid" and answer["note"] is None
    assert answer["hits"]
    code, answer = call(capsys, "status", *s)
    assert code == 0, answer
    assert (answer["vectors"]["have"], answer["vectors"]["memory_vectors"]) == (2, 0)
    code, answer = call(capsys, "embed", *s)
    assert code == 0, answer
    assert answer["counts"]["embedded"] == 2
    assert call(capsys, "search", "deploy tuesdays", *s)[1]["mode"] == "hybrid"
