"""The ``VectorCacheStore`` contract, run on ``VectorFiles`` (a temporary folder) and on
``MemoryVectors`` alike.

A test here speaks only the port (and ``compact``, which both adapters have). What
only the files can get wrong (a corrupt or foreign set healed, a refused read, the
parts a save writes, concurrent saves) is tested on the adapter in
``tests/integration/embedders/test_vector_files.py``, ``test_vector_healing.py`` and
``test_vector_concurrency.py``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.memory_vectors import MemoryVectors
from memhtml.adapters.vector_cache import VectorFiles
from memhtml.adapters.vector_layout import Compaction
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.contracts.vectors import (
    Covering,
    LoadedVectors,
    VectorCache,
    VectorCacheFault,
    VectorCacheStore,
    cache_from,
    empty_vector_cache,
    widest_space,
)
from memhtml.head.passages import group_sizes

T = TypeVar("T")
E = TypeVar("E")

KINDS = ["files", "memory"]
SPACE = VectorSpace("test-model", 4)
LAWS = settings(max_examples=25)
"""Every disk save writes and syncs three files: a few examples per law keep the suite fast."""


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


class CompactingStore(VectorCacheStore, Protocol):
    """The port, and ``compact``, which both adapters have."""

    def compact(self, space: VectorSpace) -> IOResult[int, VectorCacheFault]: ...


def make_store(kind: str, folder: Path, compaction: Compaction | None = None
               ) -> CompactingStore:
    if kind == "memory":
        return MemoryVectors()
    return VectorFiles(folder / "vectors", compaction or Compaction())


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> VectorCacheStore:
    return make_store(request.param, tmp_path)


@contextmanager
def fresh(kind: str, compaction: Compaction | None = None) -> Iterator[CompactingStore]:
    """A store of ``kind`` for one hypothesis example (a fixture would be shared)."""
    with tempfile.TemporaryDirectory() as folder:
        yield make_store(kind, Path(folder), compaction)


def bits(cache: VectorCache) -> dict[str, bytes]:
    """Each vector's float32 bytes: equal bits, not merely close floats."""
    return {h: np.asarray(v, dtype=np.float32).tobytes() for h, v in cache.vectors.items()}


def loaded(store: VectorCacheStore, space: VectorSpace) -> VectorCache:
    found = ok(store.load(space))
    assert found.note is None, found.note
    assert found.cache.space == space
    for vector in found.cache.vectors.values():
        assert vector.dtype == np.float32
        assert vector.shape == (space.dimension,)
        assert not vector.flags.writeable
    return found.cache


def vector(space: VectorSpace, seed: int) -> Vector:
    return np.random.default_rng(seed).standard_normal(space.dimension).astype(np.float32)


def cache_of(space: VectorSpace, seeds: Mapping[str, int]) -> VectorCache:
    return cache_from(space, {h: vector(space, seed) for h, seed in seeds.items()})


# A tiny hash alphabet makes two drawn caches share hashes often, which the merge
# laws need.
hashes = st.text(alphabet="0123456789abcdef", min_size=1, max_size=2).map(
    lambda tail: f"sha256:{tail}")


def vectors_of(space: VectorSpace) -> st.SearchStrategy[Vector]:
    # Any finite float32, -0.0 and subnormals included: the round trip keeps bits.
    return st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False),
                    min_size=space.dimension, max_size=space.dimension).map(
        lambda xs: np.array(xs, dtype=np.float32))


def caches(space: VectorSpace, min_size: int = 0) -> st.SearchStrategy[VectorCache]:
    return st.dictionaries(hashes, vectors_of(space), min_size=min_size, max_size=5).map(
        lambda found: cache_from(space, found))


# -- the port ---------------------------------------------------------------------------


def test_both_implementations_are_vector_cache_stores(tmp_path: Path) -> None:
    implementations: tuple[VectorCacheStore, ...] = (VectorFiles(tmp_path), MemoryVectors())
    assert len(implementations) == 2


def test_an_unsaved_space_loads_empty(store: VectorCacheStore) -> None:
    assert ok(store.load(SPACE)) == LoadedVectors(empty_vector_cache(SPACE))
    assert store.saved_spaces() == ()


def test_saving_an_empty_cache_stores_nothing(store: VectorCacheStore) -> None:
    assert ok(store.save(empty_vector_cache(SPACE))) == 0
    assert store.saved_spaces() == ()
    assert len(loaded(store, SPACE)) == 0


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(cache=caches(SPACE, min_size=1))
def test_save_then_load_gives_back_the_saved_vectors_bit_for_bit(kind: str,
                                                                  cache: VectorCache) -> None:
    with fresh(kind) as store:
        assert ok(store.save(cache)) == len(cache)
        assert bits(loaded(store, SPACE)) == bits(cache)
        assert store.saved_spaces() == (SPACE,)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(first=caches(SPACE), second=caches(SPACE))
def test_a_second_save_merges(kind: str, first: VectorCache, second: VectorCache) -> None:
    # The model: the old hashes are kept; a save that adds a hash brings its vectors in
    # (replacing a hash both hold), and one that adds none changes nothing.
    expected = bits(first)
    if any(h not in expected for h in second.vectors):
        expected |= bits(second)
    with fresh(kind) as store:
        assert ok(store.save(first)) == len(first)
        assert ok(store.save(second)) == len(expected)
        assert bits(loaded(store, SPACE)) == expected


def test_a_save_that_adds_a_hash_replaces_the_vectors_both_hold(store: VectorCacheStore
                                                                 ) -> None:
    old = cache_of(SPACE, {"sha256:a": 1, "sha256:b": 2})
    new = cache_of(SPACE, {"sha256:b": 3, "sha256:c": 4})
    assert ok(store.save(old)) == 2
    assert ok(store.save(new)) == 3
    back = loaded(store, SPACE)
    assert bits(back) == bits(old) | bits(new)
    assert bits(back)["sha256:b"] == bits(new)["sha256:b"]


def test_a_save_that_adds_no_hash_changes_nothing(store: VectorCacheStore) -> None:
    old = cache_of(SPACE, {"sha256:a": 1, "sha256:b": 2})
    assert ok(store.save(old)) == 2
    assert ok(store.save(cache_of(SPACE, {"sha256:a": 9}))) == 2
    assert bits(loaded(store, SPACE)) == bits(old)


def test_spaces_never_mix(store: VectorCacheStore) -> None:
    narrow, wide = VectorSpace("m", 4), VectorSpace("m", 8)
    other = VectorSpace("other/model", 4)
    saves = {narrow: cache_of(narrow, {"sha256:a": 1}),
             wide: cache_of(wide, {"sha256:a": 2, "sha256:b": 3}),
             other: cache_of(other, {"sha256:c": 4})}
    for cache in saves.values():
        ok(store.save(cache))
    for space, cache in saves.items():
        assert bits(loaded(store, space)) == bits(cache)
    assert len(loaded(store, VectorSpace("m", 16))) == 0
    assert len(loaded(store, VectorSpace("other/model", 8))) == 0


def test_a_space_never_reads_a_set_whose_key_it_shares(store: VectorCacheStore) -> None:
    # "org/model" and "org_model" have one key (the disk's folder name): the later save
    # displaces the earlier set, and the other space loads empty, saying so.
    first, second = VectorSpace("org/model", 4), VectorSpace("org_model", 4)
    assert first.key == second.key
    ok(store.save(cache_of(first, {"sha256:a": 1})))
    replacing = cache_of(second, {"sha256:b": 2})
    assert ok(store.save(replacing)) == 1
    assert store.saved_spaces() == (second,)
    assert bits(loaded(store, second)) == bits(replacing)
    crossed = ok(store.load(first))
    assert crossed.cache == empty_vector_cache(first)
    assert crossed.note is not None
    assert store.saved_spaces() == ()
    assert ok(store.load(first)) == LoadedVectors(empty_vector_cache(first))


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(saves=st.lists(st.tuples(st.sampled_from(["m", "other/model"]),
                                st.integers(min_value=1, max_value=6), st.booleans()),
                      max_size=5))
def test_saved_spaces_lists_every_space_saved_into_in_key_order(
        kind: str, saves: list[tuple[str, int, bool]]) -> None:
    expected: set[VectorSpace] = set()
    with fresh(kind) as store:
        for model_id, dimension, empty in saves:
            space = VectorSpace(model_id, dimension)
            ok(store.save(empty_vector_cache(space) if empty
                          else cache_of(space, {"sha256:a": dimension})))
            if not empty:
                expected.add(space)
        assert store.saved_spaces() == tuple(sorted(expected, key=lambda s: s.key))


def test_the_widest_saved_space_answers_for_a_model(store: VectorCacheStore) -> None:
    for model_id, dimension in (("m", 4), ("m", 16), ("m", 8), ("n", 32)):
        space = VectorSpace(model_id, dimension)
        ok(store.save(cache_of(space, {"sha256:a": dimension})))
    spaces = store.saved_spaces()
    assert widest_space(spaces, "m") == VectorSpace("m", 16)
    assert widest_space(spaces, "n") == VectorSpace("n", 32)
    assert widest_space(spaces, "x") is None


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.integers(min_value=1, max_value=64)).map(
    lambda pair: VectorSpace(*pair))), st.sampled_from(["a", "b", "c"]))
def test_widest_space_is_the_largest_width_of_the_model(spaces: list[VectorSpace],
                                                       model_id: str) -> None:
    widths = [s.dimension for s in spaces if s.model_id == model_id]
    found = widest_space(spaces, model_id)
    assert found == (VectorSpace(model_id, max(widths)) if widths else None)
    assert widest_space(list(reversed(spaces)), model_id) == found


def test_a_hash_that_cannot_be_stored_is_refused_and_nothing_saved(store: VectorCacheStore
                                                                   ) -> None:
    fault = err(store.save(cache_of(SPACE, {"sha256:a": 1, "bad\nhash": 2})))
    assert isinstance(fault, VectorCacheFault)
    assert fault.reason.startswith("vector cache ")
    assert "malformed hash" in fault.reason
    assert store.saved_spaces() == ()
    assert len(loaded(store, SPACE)) == 0


@pytest.mark.parametrize("bad", [np.array([1.0, np.nan, 0.0, 0.0], dtype=np.float32),
                                 np.array([1.0, 2.0, 3.0], dtype=np.float32),
                                 np.array([np.inf, 0.0, 0.0, 0.0])])
def test_a_vector_that_is_not_a_finite_row_of_the_space_is_refused(
        store: VectorCacheStore, bad: Vector) -> None:
    # Saved, it would make every cosine against the set meaningless, or the set load
    # as corrupt and be discarded whole.
    ok(store.save(cache_of(SPACE, {"sha256:a": 1})))
    fault = err(store.save(VectorCache(SPACE, Map({"sha256:b": bad, "sha256:c": vector(
        SPACE, 2)}))))
    assert fault.reason.startswith("vector cache ")
    assert "refusing" in fault.reason
    assert set(loaded(store, SPACE).vectors) == {"sha256:a"}


GROUP = "P1-" + "c" * 40


def test_passage_rows_round_trip_beside_memory_vectors(store: VectorCacheStore) -> None:
    cache = cache_of(SPACE, {"sha256:a": 1, f"{GROUP}.0": 2, f"{GROUP}.1": 3})
    assert ok(store.save(cache)) == 3
    assert bits(loaded(store, SPACE)) == bits(cache)


def test_a_partial_passage_group_is_refused_and_nothing_saved(store: VectorCacheStore
                                                             ) -> None:
    """A group is saved whole: a gap in its rows would make the set unreadable."""
    ok(store.save(cache_of(SPACE, {"sha256:a": 1})))
    fault = err(store.save(cache_of(SPACE, {f"{GROUP}.0": 2, f"{GROUP}.2": 3})))
    assert isinstance(fault, VectorCacheFault)
    assert "partial passage group" in fault.reason
    assert set(loaded(store, SPACE).vectors) == {"sha256:a"}


def test_a_saved_vector_is_the_store_s_own_copy(store: VectorCacheStore) -> None:
    mine = vector(SPACE, 1)
    before = mine.tobytes()
    ok(store.save(VectorCache(SPACE, Map({"sha256:a": mine}))))
    mine[0] += 1.0
    assert loaded(store, SPACE).vectors["sha256:a"].tobytes() == before


# -- the two agree ----------------------------------------------------------------------

_SPACES = [VectorSpace("m", 2), VectorSpace("m", 3), VectorSpace("org/model", 2),
           VectorSpace("org_model", 2)]
_OPS = st.one_of(
    st.sampled_from(_SPACES).flatmap(lambda space: caches(space).map(lambda c: ("save", c))),
    st.sampled_from(_SPACES).map(lambda space: ("load", space)),
)


def _apply(store: VectorCacheStore, op: tuple[str, object]) -> object:
    match op:
        case ("save", VectorCache() as cache):
            saved = store.save(cache)
            return ok(saved) if is_successful(saved) else "refused"
        case ("load", VectorSpace() as space):
            found = ok(store.load(space))
            return found.cache.space, bits(found.cache), found.note is not None
    raise AssertionError(op)


@LAWS
@given(st.lists(_OPS, max_size=8))
def test_the_double_answers_every_call_as_the_adapter_does(ops: list[tuple[str, object]]
                                                          ) -> None:
    with tempfile.TemporaryDirectory() as folder:
        adapter, double = VectorFiles(Path(folder)), MemoryVectors()
        for op in ops:
            assert _apply(adapter, op) == _apply(double, op), op
            assert adapter.saved_spaces() == double.saved_spaces(), op


# -- a set saved in parts ------------------------------------------------------------------
# On disk a save adds a segment, merges the newest ones or folds the set into one base
# (``Compaction``); none of it may show through the port. The policies below reach
# every path: each save folded, segments only, merges only, and few segments allowed.

POLICIES = st.sampled_from([Compaction(), Compaction(0.0, 1.0, 24),
                            Compaction(1e9, 0.0, 1_000), Compaction(1e9, 1.0, 1_000),
                            Compaction(0.5, 2.0, 2)])
_GROUPS = ["P1-" + "a" * 40, "P1-" + "b" * 40]
# Content hashes and the rows of two passage groups: saves that leave a group partial
# are drawn too, and must be refused.
part_keys = st.one_of(hashes, st.builds(lambda group, i: f"{group}.{i}",
                                        st.sampled_from(_GROUPS),
                                        st.integers(min_value=0, max_value=3)))
part_caches = st.dictionaries(part_keys, vectors_of(SPACE), max_size=6).map(
    lambda found: cache_from(SPACE, found))


def saved_as_modelled(model: dict[str, bytes], cache: VectorCache
                      ) -> tuple[dict[str, bytes], int | str]:
    """The merge semantics of ``VectorCacheStore.save`` over bits: the set after
    ``cache`` is saved into ``model``, and what the save answers."""
    incoming = bits(cache)
    if all(h in model for h in incoming):
        return model, len(model)
    merged = model | incoming
    if isinstance(group_sizes(list(merged)), str):
        return model, "refused"
    return merged, len(merged)


def answer(io: IOResult[int, VectorCacheFault]) -> int | str:
    return ok(io) if is_successful(io) else "refused"


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(saves=st.lists(part_caches, max_size=8), policy=POLICIES)
def test_any_sequence_of_saves_loads_as_their_union_the_later_winning(
        kind: str, saves: list[VectorCache], policy: Compaction) -> None:
    model: dict[str, bytes] = {}
    with fresh(kind, policy) as store:
        for cache in saves:
            model, expected = saved_as_modelled(model, cache)
            assert answer(store.save(cache)) == expected
            assert bits(loaded(store, SPACE)) == model


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(ops=st.lists(st.one_of(part_caches, st.just("compact")), max_size=10),
       policy=POLICIES)
def test_compaction_never_changes_what_loads(kind: str, ops: list[VectorCache | str],
                                             policy: Compaction) -> None:
    model: dict[str, bytes] = {}
    with fresh(kind, policy) as store:
        for op in ops:
            if isinstance(op, str):
                assert ok(store.compact(SPACE)) == len(model)
            else:
                model, expected = saved_as_modelled(model, op)
                assert answer(store.save(op)) == expected
            assert bits(loaded(store, SPACE)) == model


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(ops=st.lists(st.tuples(st.sampled_from(["mine", "other", "compact", "load"]),
                              part_caches), max_size=10),
       policy=POLICIES)
def test_a_kept_handle_loads_what_a_fresh_one_does(
        kind: str, ops: list[tuple[str, VectorCache]], policy: Compaction) -> None:
    """A handle kept by a long-lived process answers from what it read or wrote last
    when it can; whatever another handle did to the set meanwhile, it loads what a
    fresh handle loads."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        mine = make_store(kind, folder, policy)
        other = make_store(kind, folder, policy) if kind == "files" else mine

        def cold() -> CompactingStore:
            return make_store(kind, folder, policy) if kind == "files" else mine

        for who, cache in ops:
            if who == "compact":
                ok(other.compact(SPACE))
            elif who != "load":
                (mine if who == "mine" else other).save(cache)
            assert bits(loaded(mine, SPACE)) == bits(loaded(cold(), SPACE))


# -- coverage claims ------------------------------------------------------------------------
# A claim (``mark_covered``, or a save's ``covering``) lets a command skip walking every
# record. It must never outlive the rows it was made about: a set displaced (here, by a
# space whose key collides; on disk also by a repair) lapses it.

COLLIDING = VectorSpace("org_model", 2)
CLAIMED = VectorSpace("org/model", 2)
assert COLLIDING.key == CLAIMED.key
COMMITS = [c * 40 for c in "0123456789abcdef"]


def keys_of(store: VectorCacheStore, space: VectorSpace) -> LoadedVectors:
    return ok(store.load(space))


@pytest.mark.parametrize("kind", KINDS)
def test_a_claim_is_answered_by_later_loads(kind: str, tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    ok(store.save(cache_of(CLAIMED, {"sha256:a": 1})))
    first = keys_of(store, CLAIMED)
    assert first.covers is None and first.stamp is not None
    assert ok(store.mark_covered(CLAIMED, Covering(COMMITS[1], first.stamp))) is True
    assert keys_of(store, CLAIMED).covers == COMMITS[1]
    # A save with a claim made from that load records it for the set as saved.
    ok(store.save(cache_of(CLAIMED, {"sha256:b": 2}), Covering(COMMITS[2], first.stamp)))
    after = keys_of(store, CLAIMED)
    assert after.covers == COMMITS[2] and set(after.cache.vectors) == {"sha256:a", "sha256:b"}
    # A plain save keeps the claim: rows were only added.
    ok(store.save(cache_of(CLAIMED, {"sha256:c": 3})))
    assert keys_of(store, CLAIMED).covers == COMMITS[2]
    # The claim is not part of the value.
    assert keys_of(store, CLAIMED) == LoadedVectors(keys_of(store, CLAIMED).cache,
                                                    covers=COMMITS[2])


@pytest.mark.parametrize("kind", KINDS)
def test_a_claim_lapses_with_the_set_it_was_made_about(kind: str, tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    ok(store.save(cache_of(CLAIMED, {"sha256:a": 1})))
    stamp = keys_of(store, CLAIMED).stamp
    assert stamp is not None
    ok(store.mark_covered(CLAIMED, Covering(COMMITS[1], stamp)))
    ok(store.save(cache_of(COLLIDING, {"sha256:z": 9})))  # displaces the claimed set
    assert keys_of(store, CLAIMED).covers is None
    ok(store.save(cache_of(CLAIMED, {"sha256:a": 1})))  # a new set, the same rows
    assert keys_of(store, CLAIMED).covers is None
    # A claim made from the displaced set's load is refused, and so is a save's.
    assert ok(store.mark_covered(CLAIMED, Covering(COMMITS[2], stamp))) is False
    ok(store.save(cache_of(CLAIMED, {"sha256:b": 2}), Covering(COMMITS[3], stamp)))
    assert keys_of(store, CLAIMED).covers is None


@pytest.mark.parametrize("kind", KINDS)
def test_a_claim_made_where_no_set_was_rides_on_the_first_save(kind: str,
                                                               tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    nothing = keys_of(store, CLAIMED)
    assert nothing.stamp is not None and len(nothing.cache) == 0
    # Nothing to keep a claim for yet ...
    assert ok(store.mark_covered(CLAIMED, Covering(COMMITS[1], nothing.stamp))) is False
    # ... but the save that makes the set keeps it: it held no rows, so any set holds them.
    ok(store.save(cache_of(CLAIMED, {"sha256:a": 1}), Covering(COMMITS[2], nothing.stamp)))
    assert keys_of(store, CLAIMED).covers == COMMITS[2]


_CLAIM_OPS = st.one_of(
    st.just(("load", None)), st.just(("mark", None)), st.just(("compact", None)),
    st.just(("displace", None)),
    st.tuples(st.sampled_from(["save", "save-claim"]), caches(CLAIMED, min_size=1)),
)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(ops=st.lists(_CLAIM_OPS, max_size=12), policy=POLICIES)
def test_a_standing_claim_never_names_a_row_the_set_lacks(
        kind: str, ops: list[tuple[str, VectorCache | None]], policy: Compaction) -> None:
    """Whatever happens between a load and the claim made from it (saves by others,
    folds, the set displaced and made again), a load that answers a claim holds every
    row the claim was made about."""
    claimed: dict[str, frozenset[str]] = {}
    with fresh(kind, policy) as store:
        held = keys_of(store, CLAIMED)
        for n, (op, cache) in enumerate(ops):
            commit = COMMITS[n % len(COMMITS)]
            if op == "load":
                held = keys_of(store, CLAIMED)
            elif op == "mark" and held.stamp is not None:
                claimed[commit] = frozenset(held.cache.vectors)
                ok(store.mark_covered(CLAIMED, Covering(commit, held.stamp)))
            elif op == "compact":
                ok(store.compact(CLAIMED))
            elif op == "displace":
                ok(store.save(cache_of(COLLIDING, {"sha256:z": n})))
            elif cache is not None:
                covering = Covering(commit, held.stamp) \
                    if op == "save-claim" and held.stamp is not None else None
                if covering is not None:
                    claimed[commit] = frozenset(held.cache.vectors) | set(cache.vectors)
                store.save(cache, covering)
            now = keys_of(store, CLAIMED)
            if now.covers is not None:
                assert claimed[now.covers] <= set(now.cache.vectors), (op, now.covers)
