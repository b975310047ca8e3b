"""The coverage claim on disk (``covers.json`` beside a set's manifest): a repair or a
fold lapses it, anything at its name that is not a claim is ignored (never followed,
never a failure), and a claim that cannot be recorded never fails the save it rides on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.embedders.test_vector_files import SPACE, sample_cache, saved

from memhtml.adapters.vector_files import load_or_heal, mark_covered, save_cache, space_dir
from memhtml.adapters.vector_layout import MANIFEST
from memhtml.adapters.vector_marks import MARK, read_mark
from memhtml.contracts.vectors import Covering, LoadedVectors, SetStamp

COMMIT = "c" * 40


def load(root: Path) -> LoadedVectors:
    found = load_or_heal(root, SPACE)
    assert is_successful(found), found
    return unsafe_perform_io(found.unwrap())


def claimed(root: Path) -> LoadedVectors:
    """A set of two rows, loaded, with a claim about that load recorded."""
    saved(root, sample_cache(SPACE, ["sha256:a", "sha256:b"]))
    first = load(root)
    assert first.stamp is not None
    marked = mark_covered(root, SPACE, Covering(COMMIT, first.stamp))
    assert unsafe_perform_io(marked.unwrap()) is True
    again = load(root)
    assert again.covers == COMMIT
    return again


def test_a_repaired_set_lapses_its_claim(tmp_path: Path) -> None:
    claimed(tmp_path)
    (space_dir(tmp_path, SPACE) / MANIFEST).write_text("{not json")
    healed = load(tmp_path)
    assert healed.note is not None and healed.covers is None
    saved(tmp_path, sample_cache(SPACE, ["sha256:a", "sha256:b"]))
    assert load(tmp_path).covers is None  # the same rows, but a new set


def test_an_older_copy_of_the_same_set_does_not_answer_a_claim(tmp_path: Path) -> None:
    """A backup of the set restored over it: the same base, fewer rows than the claim
    was made about."""
    saved(tmp_path, sample_cache(SPACE, ["sha256:a"]))
    folder = space_dir(tmp_path, SPACE)
    backup = {path.name: path.read_bytes() for path in folder.iterdir()}
    saved(tmp_path, sample_cache(SPACE, ["sha256:b"], seed=1))
    stamp = load(tmp_path).stamp
    assert stamp is not None
    unsafe_perform_io(mark_covered(tmp_path, SPACE, Covering(COMMIT, stamp)).unwrap())
    for name, data in backup.items():
        (folder / name).write_bytes(data)
    assert load(tmp_path).covers is None


@pytest.mark.parametrize("planted", [
    b"", b"[]", b"{}", b'{"commit": "HEAD", "base": "x", "rows": 1}',
    b'{"commit": "' + b"c" * 40 + b'", "base": "", "rows": 1}',
    b'{"commit": "' + b"c" * 40 + b'", "base": "x", "rows": true}',
    b'{"commit": "' + b"c" * 40 + b'", "base": "x", "rows": -1}',
    b"\xff\xfe", b" " * 100_000,
])
def test_anything_but_a_claim_at_its_name_is_ignored(tmp_path: Path, planted: bytes) -> None:
    saved(tmp_path, sample_cache(SPACE, ["sha256:a"]))
    (space_dir(tmp_path, SPACE) / MARK).write_bytes(planted)
    found = load(tmp_path)
    assert found.covers is None and found.note is None and len(found.cache) == 1


def test_a_fifo_or_a_link_at_its_name_is_never_followed(tmp_path: Path) -> None:
    saved(tmp_path, sample_cache(SPACE, ["sha256:a"]))
    folder = space_dir(tmp_path, SPACE)
    os.mkfifo(folder / MARK)  # a read would block forever
    assert load(tmp_path).covers is None
    (folder / MARK).unlink()
    elsewhere = tmp_path / "elsewhere.json"
    stamp = load(tmp_path).stamp
    assert stamp is not None
    elsewhere.write_text(json.dumps({"commit": COMMIT, "base": stamp.base,
                                     "rows": stamp.rows}))
    (folder / MARK).symlink_to(elsewhere)
    assert load(tmp_path).covers is None
    # Recording a claim replaces the link; the file it pointed at is untouched.
    unsafe_perform_io(mark_covered(tmp_path, SPACE, Covering("d" * 40, stamp)).unwrap())
    assert not (folder / MARK).is_symlink()
    assert json.loads(elsewhere.read_text())["commit"] == COMMIT
    assert load(tmp_path).covers == "d" * 40


def test_a_claim_that_cannot_be_recorded_never_fails_its_save(tmp_path: Path) -> None:
    first = claimed(tmp_path)
    assert first.stamp is not None
    folder = space_dir(tmp_path, SPACE)
    (folder / MARK).unlink()
    (folder / MARK).mkdir()  # a directory where the claim goes: it cannot be replaced
    done = save_cache(tmp_path, sample_cache(SPACE, ["sha256:c"], seed=2),
                      covering=Covering(COMMIT, first.stamp))
    assert is_successful(done), done
    found = load(tmp_path)
    assert found.covers is None and set(found.cache.vectors) == {
        "sha256:a", "sha256:b", "sha256:c"}
    refused = mark_covered(tmp_path, SPACE, Covering(COMMIT, SetStamp("x", 0)))
    assert unsafe_perform_io(refused.unwrap()) is False  # not about this set: not tried


def test_the_claim_names_the_set_as_saved(tmp_path: Path) -> None:
    first = claimed(tmp_path)
    assert first.stamp is not None
    done = save_cache(tmp_path, sample_cache(SPACE, ["sha256:c"], seed=2),
                      covering=Covering("e" * 40, first.stamp))
    assert is_successful(done), done
    mark = read_mark(space_dir(tmp_path, SPACE))
    after = load(tmp_path)
    assert mark is not None and after.stamp is not None
    assert mark.stamp == after.stamp and mark.stamp.rows == 3
    assert after.covers == "e" * 40
