"""The coverage claim on disk (``covers.json`` beside a set's manifest): a repair or a
fold lapses it, anything at its name that is not a claim is ignored (never followed,
never a failure), and a claim that cannot be recorded never fails the save it rides on.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.embedders.test_vector_files import SPACE, sample_cache, saved

from memhtml.adapters.vector_files import (
    compact,
    load_or_heal,
    mark_covered,
    save_cache,
    space_dir,
)
from memhtml.adapters.vector_layout import MANIFEST, Compaction
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


def test_an_older_copy_of_the_same_set_never_answers_a_claim(tmp_path: Path) -> None:
    """A backup of the set restored over it (without the claim file): it lacks a part
    the claim names, and no later save brings the claim back by adding other rows."""
    segments = Compaction(1e9, 0.0, 1_000)  # the base kept: each save a segment
    save_cache(tmp_path, sample_cache(SPACE, ["sha256:a"]), compaction=segments)
    folder = space_dir(tmp_path, SPACE)
    backup = {path.name: path.read_bytes() for path in folder.iterdir()}
    save_cache(tmp_path, sample_cache(SPACE, ["sha256:b"], seed=1), compaction=segments)
    stamp = load(tmp_path).stamp
    assert stamp is not None
    unsafe_perform_io(mark_covered(tmp_path, SPACE, Covering(COMMIT, stamp)).unwrap())
    for name, data in backup.items():
        (folder / name).write_bytes(data)
    assert load(tmp_path).covers is None
    # The set grows back past what the claim was made about, with other rows.
    save_cache(tmp_path, sample_cache(SPACE, ["sha256:c", "sha256:d"], seed=2),
               compaction=segments)
    grown = load(tmp_path)
    assert len(grown.cache) == 3 and "sha256:b" not in grown.cache.vectors
    assert grown.covers is None


@pytest.mark.parametrize("planted", [
    b"", b"[]", b"{}", b'{"commit": "HEAD", "parts": ["x"]}',
    b'{"commit": "' + b"c" * 40 + b'", "parts": []}',  # about no part: would fit any set
    b'{"commit": "' + b"c" * 40 + b'", "parts": [""]}',
    b'{"commit": "' + b"c" * 40 + b'", "parts": "x"}',
    b'{"commit": "' + b"c" * 40 + b'", "parts": [1]}',
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
    elsewhere.write_text(json.dumps({"commit": COMMIT, "parts": list(stamp.parts)}))
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
    refused = mark_covered(tmp_path, SPACE, Covering(COMMIT, SetStamp(("x",))))
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
    assert mark.stamp == after.stamp and len(after.cache) == 3
    assert after.covers == "e" * 40


_OPS = st.lists(st.one_of(
    st.sampled_from(["load", "mark", "backup", "restore", "compact"]),
    st.tuples(st.sampled_from(["save", "save-claim"]),
              st.lists(st.sampled_from([f"sha256:{c}" for c in "abcdefgh"]), min_size=1,
                       max_size=3, unique=True))), max_size=14)


_POLICIES = st.sampled_from([Compaction(), Compaction(1e9, 0.0, 1_000),
                             Compaction(1e9, 1.0, 1_000), Compaction(0.5, 2.0, 2)])


@settings(max_examples=60, deadline=None)
@given(ops=_OPS, policy=_POLICIES)
def test_no_restore_or_save_makes_a_claim_name_a_row_the_set_lacks(
        ops: list[str | tuple[str, list[str]]], policy: Compaction) -> None:
    """On disk a person can also put an older copy of the set back (without the claim
    file, as a backup taken before it would be): a claim that a load answers holds
    every row it was made about, whatever came between."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        folder = space_dir(root, SPACE)
        claimed: dict[str, frozenset[str]] = {}
        backup: dict[str, bytes] = {}
        held = load(root)
        for n, op in enumerate(ops):
            commit = f"{n % 10}" * 40
            if op == "load":
                held = load(root)
            elif op == "mark" and held.stamp is not None:
                claimed[commit] = frozenset(held.cache.vectors)
                mark_covered(root, SPACE, Covering(commit, held.stamp))
            elif op == "backup" and folder.is_dir():
                backup = {p.name: p.read_bytes() for p in folder.iterdir()
                          if p.is_file() and p.name != MARK}
            elif op == "restore" and backup:
                for p in list(folder.iterdir()):
                    if p.name != MARK:
                        p.unlink()
                for name, data in backup.items():
                    (folder / name).write_bytes(data)
            elif op == "compact":
                compact(root, SPACE)
            elif isinstance(op, tuple):
                kind, keys = op
                cache = sample_cache(SPACE, keys, seed=n)
                covering = Covering(commit, held.stamp) \
                    if kind == "save-claim" and held.stamp is not None else None
                if covering is not None:
                    claimed[commit] = frozenset(held.cache.vectors) | set(keys)
                save_cache(root, cache, covering=covering, compaction=policy)
            now = load(root)
            if now.covers is not None:
                assert claimed[now.covers] <= set(now.cache.vectors), (n, op)


def test_threads_recording_claims_at_once_leave_one_whole_claim(tmp_path: Path) -> None:
    """A server's threads may record claims together: each writes its own temporary,
    so the file left is one thread's whole claim, never a half-written one."""
    from concurrent.futures import ThreadPoolExecutor

    saved(tmp_path, sample_cache(SPACE, ["sha256:a"]))
    stamp = load(tmp_path).stamp
    assert stamp is not None
    commits = [f"{n:x}" * 40 for n in range(10)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(20):
            answers = list(pool.map(lambda commit: unsafe_perform_io(mark_covered(
                tmp_path, SPACE, Covering(commit, stamp)).unwrap()), commits))
            assert all(answers)
            assert load(tmp_path).covers in commits
    assert not list(space_dir(tmp_path, SPACE).glob(f".{MARK}.*"))
