"""A ``LazyMap`` is the map it stands for: any sequence of reads and updates gives
what the same sequence gives on the built ``immutables.Map``, whether the values come
one at a time, all at once, or from a builder, and whenever the whole map gets built.
A value read before the whole map is built is the very object the map holds after.
"""

from __future__ import annotations

import copy
import pickle
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

from memhtml.head.lazy_map import ONE_AT_A_TIME, LazyMap, PatchedMap, PendingSets

KEYS = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=4), unique=True,
                max_size=40)
STEP = st.one_of(
    st.tuples(st.just("get"), st.text(alphabet="abcdefgh", max_size=4)),
    st.tuples(st.just("getitem"), st.text(alphabet="abcdefgh", max_size=4)),
    st.tuples(st.just("contains"), st.text(alphabet="abcdefgh", max_size=4)),
    st.tuples(st.just("len"), st.none()),
    st.tuples(st.just("keys"), st.none()),
    st.tuples(st.just("iter"), st.none()),
    st.tuples(st.just("items"), st.none()),
    st.tuples(st.just("values"), st.none()),
    st.tuples(st.just("eq"), st.none()),
    st.tuples(st.just("set"), st.text(alphabet="abcdefgh", max_size=4)),
    st.tuples(st.just("delete"), st.text(alphabet="abcdefgh", max_size=4)),
    st.tuples(st.just("mutate"), st.text(alphabet="abcdefgh", max_size=4)),
)


class Counted:
    """How a lazy map's values were made."""

    def __init__(self, keys: list[str]) -> None:
        self.keys, self.one, self.all = keys, 0, 0

    def value(self, row: int) -> list[str]:
        self.one += 1
        return [self.keys[row].upper()]  # a fresh object each time: identity shows

    def values(self) -> list[list[str]]:
        self.all += 1
        return [[k.upper()] for k in self.keys]


def _lazy(keys: list[str], by_rows: bool) -> tuple[LazyMap[str, list[str]], Counted]:
    counted = Counted(keys)
    if by_rows:
        return LazyMap(keys=keys, value=counted.value, values=counted.values), counted
    return LazyMap(lambda: Map({k: [k.upper()] for k in keys})), counted


def _apply(target: object, op: str, key: str | None) -> object:
    m = target  # a Map or a LazyMap, used the same way
    if op == "get":
        return m.get(key)  # type: ignore[attr-defined]
    if op == "getitem":
        try:
            return m[key]  # type: ignore[index]
        except KeyError:
            return KeyError
    if op == "contains":
        return key in m  # type: ignore[operator]
    if op == "len":
        return len(m)  # type: ignore[arg-type]
    if op == "keys":
        return sorted(m.keys())  # type: ignore[attr-defined]
    if op == "iter":
        return sorted(m)  # type: ignore[call-overload]
    if op == "items":
        return sorted(m.items())  # type: ignore[attr-defined]
    if op == "values":
        return sorted(m.values())  # type: ignore[attr-defined]
    if op == "set":
        return dict(m.set(key, ["new"]).items())  # type: ignore[attr-defined]
    if op == "delete":
        try:
            return dict(m.delete(key).items())  # type: ignore[attr-defined]
        except KeyError:
            return KeyError
    if op == "mutate":
        with m.mutate() as mutation:  # type: ignore[attr-defined]
            mutation[key] = ["mutated"]
            return dict(mutation.finish().items())
    return None


@settings(max_examples=300, deadline=None)
@given(keys=KEYS, steps=st.lists(STEP, max_size=12), by_rows=st.booleans())
def test_every_use_answers_as_the_built_map(keys: list[str],
                                           steps: list[tuple[str, str | None]],
                                           by_rows: bool) -> None:
    lazy, _ = _lazy(keys, by_rows)
    plain = Map({k: [k.upper()] for k in keys})
    for op, key in steps:
        if op == "eq":
            assert lazy == plain and plain == lazy
            assert lazy != Map({"?": ["?"]}) and Map({"?": ["?"]}) != lazy
            continue
        assert _apply(lazy, op, key) == _apply(plain, op, key), (op, key)
    assert lazy == plain


@given(keys=KEYS.filter(bool), data=st.data())
def test_a_value_read_early_is_the_one_the_built_map_holds(keys: list[str],
                                                          data: st.DataObject) -> None:
    lazy, counted = _lazy(keys, by_rows=True)
    read = data.draw(st.lists(st.sampled_from(keys), unique=True))
    early = {k: lazy[k] for k in read}
    assert counted.one == len(read) and counted.all == 0 and not lazy.built
    assert all(lazy[k] is early[k] for k in read)  # made once each
    whole = lazy.whole()
    assert counted.all == 1
    assert all(whole[k] is early[k] for k in read)
    assert all(lazy[k] is whole[k] for k in keys)


@given(keys=KEYS, build_first=st.booleans())
def test_keys_values_and_items_line_up(keys: list[str], build_first: bool) -> None:
    lazy, _ = _lazy(keys, by_rows=True)
    if build_first:
        lazy.whole()
    pairs = list(zip(lazy, lazy.values(), strict=True))
    assert pairs == list(lazy.items()) == list(zip(lazy.keys(), lazy.values(), strict=True))
    assert all(value == [key.upper()] for key, value in pairs)


def test_reading_many_one_at_a_time_makes_the_rest_at_once() -> None:
    keys = [f"k{i}" for i in range(ONE_AT_A_TIME * 3)]
    lazy, counted = _lazy(keys, by_rows=True)
    for key in keys:
        assert lazy[key] == [key.upper()]
    assert counted.one == ONE_AT_A_TIME and counted.all == 1 and lazy.built


def test_reads_that_need_no_value_make_none() -> None:
    keys = ["a", "b", "c"]
    lazy, counted = _lazy(keys, by_rows=True)
    assert len(lazy) == 3 and "b" in lazy and "z" not in lazy
    assert sorted(lazy) == keys and sorted(lazy.keys()) == keys
    assert lazy.get("z") is None and lazy.get("z", 5) == 5
    assert (counted.one, counted.all, lazy.built) == (0, 0, False)


@pytest.mark.parametrize("by_rows", [False, True])
def test_it_pickles_and_copies_as_a_plain_map(by_rows: bool) -> None:
    lazy, _ = _lazy(["a", "b"], by_rows)
    for other in (pickle.loads(pickle.dumps(lazy)), copy.copy(lazy), copy.deepcopy(lazy)):
        assert type(other) is Map and other == Map({"a": ["A"], "b": ["B"]})


def test_threads_racing_to_build_it_build_it_once() -> None:
    builds: list[int] = []
    gate = threading.Barrier(8)

    def build() -> Map[str, int]:
        builds.append(1)
        return Map({"a": 1})

    lazy: LazyMap[str, int] = LazyMap(build)
    seen: list[object] = []

    def race() -> None:
        gate.wait()
        seen.append(lazy.whole())

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and all(s is seen[0] for s in seen)


def test_it_refuses_equal_keys_and_half_a_recipe() -> None:
    with pytest.raises(ValueError, match="two keys"):
        LazyMap(keys=["a", "a"], value=lambda i: i, values=lambda: [0, 1])
    with pytest.raises(TypeError):
        LazyMap(keys=["a"], value=lambda i: i)
    with pytest.raises(TypeError):
        LazyMap()


@given(KEYS)
def test_a_column_is_handed_over_without_building_a_value(keys: list[str]) -> None:
    counted = Counted(keys)
    upper = [k.upper() for k in keys]
    lazy = LazyMap(keys=keys, value=counted.value, values=counted.values,
                   fields={"upper": upper})
    assert lazy.column("upper") == upper and lazy.column("lower") is None
    assert (counted.one, counted.all, lazy.built) == (0, 0, False)
    assert [v[0] for v in lazy.values()] == lazy.column("upper")


def test_columns_need_keys_and_one_value_per_key() -> None:
    counted = Counted(["a", "b"])
    with pytest.raises(ValueError, match="one value per key"):
        LazyMap(keys=["a", "b"], value=counted.value, values=counted.values,
                fields={"short": ["A"]})
    with pytest.raises(ValueError, match="fields need keys"):
        LazyMap(Map, fields={"any": []})
    assert LazyMap(Map).column("any") is None


CHAIN_STEP = st.one_of(
    st.tuples(st.sampled_from(["set", "delete", "get", "getitem", "contains", "len",
                               "keys"]), st.text(alphabet="abcdefgh", max_size=4)),
)


def _read(target: object, op: str, key: str) -> object:
    m: Any = target
    if op == "get":
        return m.get(key, "missing")
    if op == "getitem":
        try:
            return m[key]
        except KeyError:
            return KeyError
    if op == "contains":
        return key in m
    if op == "len":
        return len(m)
    return sorted(m.keys())


@settings(max_examples=300, deadline=None)
@given(keys=KEYS, steps=st.lists(CHAIN_STEP, max_size=16), build_at=st.integers(0, 16))
def test_updates_chain_as_on_the_built_map_and_build_nothing(
        keys: list[str], steps: list[tuple[str, str]], build_at: int) -> None:
    """``set`` and ``delete`` on a map of keys give a patch over it, and a patch of a
    patch: every answer is the plain map's, and none of these uses builds a value,
    until the base is built (then an update gives a plain map)."""
    lazy, counted = _lazy(keys, by_rows=True)
    base = lazy
    target: Any = lazy
    plain: Any = Map({k: [k.upper()] for k in keys})
    for i, (op, key) in enumerate(steps):
        if i == build_at:
            base.whole()
        if op in ("set", "delete"):
            try:
                plain = plain.set(key, [op]) if op == "set" else plain.delete(key)
            except KeyError:
                with pytest.raises(KeyError):
                    target.delete(key)
                continue
            target = target.set(key, [op]) if op == "set" else target.delete(key)
        else:
            assert _read(target, op, key) == _read(plain, op, key), (op, key)
    if build_at >= len(steps):
        assert counted.all == 0  # nothing but reads of single values built anything
    assert target == plain and plain == target
    assert dict(target.items()) == dict(plain.items())
    assert list(target.keys()) == [k for k, _ in target.items()]


def test_a_patch_reads_only_the_values_asked_for() -> None:
    keys = [f"k{i}" for i in range(10)]
    lazy, counted = _lazy(keys, by_rows=True)
    patched: Any = lazy.set("new", ["N"]).delete("k3").set("k4", ["F"])
    assert isinstance(patched, PatchedMap) and len(patched) == 10
    assert "k3" not in patched and patched["k4"] == ["F"] and patched["new"] == ["N"]
    assert patched["k5"] == ["K5"]
    assert (counted.one, counted.all, patched.built, lazy.built) == (1, 0, False, False)
    assert patched.keys() == [k for k in keys if k != "k3"] + ["new"]
    made = [Row(k.upper()) for k in keys]
    columns = LazyMap(keys=keys, value=made.__getitem__, values=lambda: list(made),
                      fields={"first": [k.upper() for k in keys]})
    rows = columns.set("k1", Row("X")).delete("k2")
    assert isinstance(rows, PatchedMap)
    assert rows.field_rows(["second"]) is None  # not a column: read the values
    assert sorted(rows.field_rows(["first"]) or []) == sorted(
        [(k.upper(),) for k in keys if k not in ("k1", "k2")] + [("X",)])
    assert not columns.built


@dataclass(frozen=True)
class Row:
    first: str


PATHS_OF = st.text(alphabet="pqr", min_size=1, max_size=2)
SET_STEP = st.tuples(st.sampled_from(["xy", "y", "z"]), PATHS_OF, st.booleans())


def _fold(index: Map[str, Map[str, bool]], key: str, member: str,
          present: bool) -> Map[str, Map[str, bool]]:
    members = index.get(key, Map())
    if present:
        return index if member in members else index.set(key, members.set(member, True))
    if member not in members:
        return index
    smaller = members.delete(member)
    return index.set(key, smaller) if len(smaller) else index.delete(key)


@settings(max_examples=300, deadline=None)
@given(start=st.dictionaries(st.sampled_from(["xy", "y", "z", "w"]),
                             st.lists(PATHS_OF, min_size=1, unique=True), max_size=4),
       steps=st.lists(SET_STEP, max_size=12))
def test_pending_sets_apply_as_one_change_at_a_time(
        start: dict[str, list[str]], steps: list[tuple[str, str, bool]]) -> None:
    plain = Map({k: Map(dict.fromkeys(members, True)) for k, members in start.items()})
    builds: list[int] = []

    def build() -> Map[str, Map[str, bool]]:
        builds.append(1)
        return plain

    lazy: LazyMap[str, Map[str, bool]] = LazyMap(build)
    pending: Any = lazy
    expected = plain
    for key, member, present in steps:
        over: PendingSets[str, str] | None = PendingSets.over(pending)
        assert over is not None
        pending = over.changed(key, member, present)
        expected = _fold(expected, key, member, present)
    assert builds == []
    assert pending == expected and dict(pending.items()) == dict(expected.items())
    assert PendingSets.over(pending) is None or not steps  # built now: a plain map's turn


@given(keys=KEYS, steps=st.lists(STEP, max_size=8))
def test_keys_indexed_on_first_use_answer_the_same(
        keys: list[str], steps: list[tuple[str, str | None]]) -> None:
    counted = Counted(keys)
    later = LazyMap(keys=keys, value=counted.value, values=counted.values, index_now=False)
    plain = Map({k: [k.upper()] for k in keys})
    assert len(later) == len(keys) and later._row is None
    for op, key in steps:
        if op != "eq":
            assert _apply(later, op, key) == _apply(plain, op, key), (op, key)
