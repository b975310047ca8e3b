"""A map that builds itself when first used: how a version restored from a snapshot
stays cheap for a command that reads a handful of records.

A cold ``memhtml search`` over 100,000 memories needs the lexical index and the few
records its hits name; building every record and every path-set map up front cost
it about a third of its time (see docs/design.md, "Records built when read"). A
``LazyMap`` stands where an ``immutables.Map`` stands in ``Indexes`` and behaves as
one: any use it does not answer itself builds the whole map once (under a lock, so
two threads build it once) and hands the call to it.

With ``keys`` and ``value`` (one value per position) it answers ``get``, ``[]``,
``in``, ``len``, iteration and ``keys()`` from the keys alone, building only the
values asked for, each once; the whole map, built when something else is asked,
reuses them, so a value read before and after is the same object. Iteration,
``keys``, ``values`` and ``items`` all follow the keys' order, before and after.

Given ``fields`` too (some of the values' attributes, each a column in key order),
``column`` hands one over without building a value: a tally over every record
(``memhtml status`` at 100,000 memories) reads five columns instead of building
100,000 records.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Generic, TypeVar, cast

from immutables import Map

K = TypeVar("K")
V = TypeVar("V")
M = TypeVar("M")

_MISSING: Any = object()


class _Deferred(Generic[K, V]):
    """What a map made later does with any use it does not answer itself: builds the
    whole map (``whole``) and hands the use to it."""

    __slots__ = ("_lock", "_made")
    _made: Map[K, V] | None
    _lock: threading.Lock

    def whole(self) -> Map[K, V]:
        """The map, built now (once, under the lock) if it was not yet."""
        made = self._made
        if made is not None:
            return made
        with self._lock:
            made = self._made
            if made is None:
                made = self._make()
                self._made = made
            return made

    def _make(self) -> Map[K, V]:
        raise NotImplementedError

    @property
    def built(self) -> bool:
        """Whether the whole map has been built (for tests and benchmarks)."""
        return self._made is not None

    def __eq__(self, other: object) -> bool:
        mine = self.whole()
        return mine == (other.whole() if isinstance(other, _Deferred) else other)

    def __hash__(self) -> int:
        return hash(self.whole())

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (or copied) as the plain map it stands for: the callables that
        # build it hold mappings of a local file.
        return (Map, (dict(self.whole().items()),))

    def __getattr__(self, name: str) -> Any:
        # mutate, update, ...: the built map's own.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.whole(), name)


class LazyMap(_Deferred[K, V]):
    """An ``immutables.Map`` made on first use by ``build``; or, given ``keys`` (no two
    equal), ``value`` (``value(i)`` for ``keys[i]``) and ``values`` (every value, in
    key order, made at once, which costs a third of making each alone), one value at
    a time until enough are asked for that making the rest at once is cheaper."""

    __slots__ = ("_all", "_build", "_fields", "_keys", "_row", "_value", "_values")

    def __init__(self, build: Callable[[], Map[K, V]] | None = None, *,
                 keys: Sequence[K] | None = None, value: Callable[[int], V] | None = None,
                 values: Callable[[], list[V]] | None = None,
                 fields: Mapping[str, Sequence[object]] | None = None,
                 index_now: bool = True) -> None:
        by_keys = keys is not None and value is not None and values is not None
        if (build is None) != by_keys:
            raise TypeError("LazyMap takes build, or keys, value and values")
        if fields is not None and (keys is None
                                   or any(len(c) != len(keys) for c in fields.values())):
            raise ValueError("fields need keys, and one value per key in each column")
        self._fields = fields
        self._build = build
        self._keys = keys
        self._value = value
        self._all = values
        self._row: dict[K, int] | None = None
        if keys is not None and index_now:
            self._rows()
        self._values: dict[int, V] = {}
        self._made: Map[K, V] | None = None
        self._lock = threading.Lock()

    def _rows(self) -> dict[K, int]:
        """Each key's position, made on first use when the map was made with
        ``index_now=False`` (a map no command may ask a key of, such as the content-hash
        holders a search never reads: 20 ms at 100,000 keys)."""
        rows = self._row
        if rows is None:
            keys = cast(Sequence[K], self._keys)
            rows = dict(zip(keys, range(len(keys)), strict=True))
            if len(rows) != len(keys):
                raise ValueError("two keys are equal")
            self._row = rows
        return rows

    # -- the whole map ------------------------------------------------------------------

    def _make(self) -> Map[K, V]:
        if self._build is not None:
            return self._build()
        keys = cast(Sequence[K], self._keys)
        made = cast(Callable[[], list[V]], self._all)()
        # The values already handed out stay the ones the map holds.
        for row, value in list(self._values.items()):
            made[row] = value
        return Map(zip(keys, made, strict=True))

    def _at(self, row: int) -> V:
        found = self._values.get(row, _MISSING)
        if found is not _MISSING:
            return cast(V, found)
        if len(self._values) >= max(ONE_AT_A_TIME, len(self) // 64):
            return self.whole()[cast(Sequence[K], self._keys)[row]]
        assert self._value is not None  # keys mode: the constructor checked
        # setdefault keeps one value per row when two threads race to make it.
        return self._values.setdefault(row, self._value(row))

    def column(self, name: str) -> Sequence[object] | None:
        """Attribute ``name`` of every value, in key order, without building one; None
        when the map was not given that column (then read the values themselves)."""
        return None if self._fields is None else self._fields.get(name)

    # -- what the keys alone answer -----------------------------------------------------

    def get(self, key: K, default: Any = None) -> Any:
        made = self._made
        if made is not None:
            return made.get(key, default)
        if self._keys is not None:
            row = self._rows().get(key)
            return default if row is None else self._at(row)
        return self.whole().get(key, default)

    def __getitem__(self, key: K) -> V:
        made = self._made
        if made is not None:
            return made[key]
        if self._keys is not None:
            return self._at(self._rows()[key])
        return self.whole()[key]

    def __contains__(self, key: object) -> bool:
        if self._keys is not None:
            return key in self._rows()
        return key in self.whole()

    def __len__(self) -> int:
        if self._keys is not None:
            return len(self._keys)
        return len(self.whole())

    def __iter__(self) -> Iterator[K]:
        if self._keys is not None:
            return iter(self._rows())
        return iter(self.whole())

    def keys(self) -> Collection[K]:
        if self._keys is not None:
            return self._rows().keys()
        return self.whole().keys()

    def values(self) -> Iterable[V]:
        """In the order ``keys`` gives (the built map's own order is its hashes')."""
        if self._keys is not None:
            made = self.whole()
            return tuple(made[key] for key in self._keys)
        return self.whole().values()

    def items(self) -> Iterable[tuple[K, V]]:
        """In the order ``keys`` gives, as ``values``."""
        if self._keys is not None:
            made = self.whole()
            return tuple((key, made[key]) for key in self._keys)
        return self.whole().items()

    # -- updates: a map of the keys alone stays unbuilt ----------------------------------

    def set(self, key: K, value: V) -> Map[K, V] | PatchedMap[K, V]:
        """The map with ``key`` set; over the keys alone, a ``PatchedMap`` that builds
        nothing (an advance of a restored version changes a few records of 100,000)."""
        if self._made is not None or self._keys is None:
            return self.whole().set(key, value)
        return PatchedMap(self, Map({key: value}), Map(), len(self) + (key not in self))

    def delete(self, key: K) -> Map[K, V] | PatchedMap[K, V]:
        """The map without ``key`` (``KeyError`` when it has none), as ``set``."""
        if self._made is not None or self._keys is None:
            return self.whole().delete(key)
        if key not in self:
            raise KeyError(key)
        return PatchedMap(self, Map(), Map({key: True}), len(self) - 1)

    def field_rows(self, names: Sequence[str]) -> Iterator[tuple[object, ...]] | None:
        """Fields ``names`` of every value, from the columns alone, in key order; None
        when a column was not given."""
        columns = [self.column(name) for name in names]
        if any(column is None for column in columns):
            return None
        return zip(*cast(list[Sequence[object]], columns), strict=True)

    def __repr__(self) -> str:
        state = "built" if self._made is not None else "not built"
        return f"LazyMap({len(self)} items, {state})"


class PatchedMap(_Deferred[K, V]):
    """A ``LazyMap`` over keys with some keys set and some deleted, still unbuilt.

    ``put`` holds the values set (over the base's or new), ``gone`` the base's keys
    deleted and not set again; ``get``, ``[]``, ``in``, ``len`` and the keys are
    answered from these and the base's keys, a base value built only when read (as
    the base itself does). ``set`` and ``delete`` give another patch over the same
    base while the base is unbuilt, and a plain map once it is built, so a chain of
    patches never outlives the first whole build.
    """

    __slots__ = ("_base", "_gone", "_put", "_size")

    def __init__(self, base: LazyMap[K, V], put: Map[K, V], gone: Map[K, bool],
                 size: int) -> None:
        self._base, self._put, self._gone, self._size = base, put, gone, size
        self._made: Map[K, V] | None = None
        self._lock = threading.Lock()

    def _make(self) -> Map[K, V]:
        mutation = self._base.whole().mutate()
        for key in self._gone:
            del mutation[key]
        for key, value in self._put.items():
            mutation[key] = value
        return mutation.finish()

    def get(self, key: K, default: Any = None) -> Any:
        found = self._put.get(key, _MISSING)
        if found is not _MISSING:
            return found
        if key in self._gone:
            return default
        return self._base.get(key, default)

    def __getitem__(self, key: K) -> V:
        found = self.get(key, _MISSING)
        if found is _MISSING:
            raise KeyError(key)
        return cast(V, found)

    def __contains__(self, key: object) -> bool:
        return key in self._put or (key not in self._gone and key in self._base)

    def __len__(self) -> int:
        return self._size

    def keys(self) -> Collection[K]:
        """The base's keys still held, in its order, then the new ones."""
        put, gone, base = self._put, self._gone, self._base
        kept = [key for key in base if key not in gone]
        return kept + [key for key in put if key not in base]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def values(self) -> Iterable[V]:
        made = self.whole()
        return tuple(made[key] for key in self.keys())

    def items(self) -> Iterable[tuple[K, V]]:
        made = self.whole()
        return tuple((key, made[key]) for key in self.keys())

    def set(self, key: K, value: V) -> Map[K, V] | PatchedMap[K, V]:
        if self._base.built:
            return self.whole().set(key, value)
        gone = self._gone.delete(key) if key in self._gone else self._gone
        return PatchedMap(self._base, self._put.set(key, value), gone,
                          self._size + (key not in self))

    def delete(self, key: K) -> Map[K, V] | PatchedMap[K, V]:
        if self._base.built:
            return self.whole().delete(key)
        if key not in self:
            raise KeyError(key)
        put = self._put.delete(key) if key in self._put else self._put
        gone = self._gone.set(key, True) if key in self._base else self._gone
        return PatchedMap(self._base, put, gone, self._size - 1)

    def field_rows(self, names: Sequence[str]) -> Iterator[tuple[object, ...]] | None:
        """The base's column rows of the keys not patched, then the fields of the
        values set (read as their attributes); None as ``LazyMap.field_rows``."""
        rows = self._base.field_rows(names)
        if rows is None:
            return None
        put, gone = self._put, self._gone
        kept = (row for key, row in zip(self._base.keys(), rows, strict=True)
                if key not in gone and key not in put)
        fresh = (tuple(getattr(value, name) for name in names) for value in put.values())
        return chain(kept, fresh)

    def __repr__(self) -> str:
        state = "built" if self._made is not None else "not built"
        return f"PatchedMap({len(self)} items, {len(self._put)} set, {state})"


class PendingSets(_Deferred[K, "Map[M, bool]"], Generic[K, M]):
    """A path-set map (key -> set of members, as ``Map[member, True]``) with members
    added and taken out, its base still unbuilt.

    The head's path-set maps are built from every record at once; an advance adds
    and removes a few members. Each change is noted (the last one for a key and a
    member wins) and applied when the map is built, which any read does. Applied,
    they give what adding and discarding one at a time gives: a member present or
    not as its last change says, and a key whose set is left empty gone.
    """

    __slots__ = ("_base", "_changes")

    def __init__(self, base: LazyMap[K, Map[M, bool]],
                 changes: Map[K, Map[M, bool]]) -> None:
        self._base, self._changes = base, changes
        self._made: Map[K, Map[M, bool]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def over(cls, index: object) -> PendingSets[K, M] | None:
        """``index`` as pending sets when it is a map not yet built (a fresh lazy one,
        or pending sets themselves), else None: then change it as a plain map."""
        if isinstance(index, PendingSets):
            return None if index.built or index._base.built else index
        if isinstance(index, LazyMap) and not index.built:
            return cls(cast(LazyMap[K, Map[M, bool]], index), Map())
        return None

    def changed(self, key: K, member: M, present: bool) -> PendingSets[K, M]:
        """With ``member`` of ``key``'s set present (or not)."""
        members = self._changes.get(key, Map())
        return PendingSets(self._base, self._changes.set(key, members.set(member, present)))

    def _make(self) -> Map[K, Map[M, bool]]:
        mutation = self._base.whole().mutate()
        for key, members in self._changes.items():
            held: Map[M, bool] = mutation.get(key, Map())
            for member, present in members.items():
                if present and member not in held:
                    held = held.set(member, True)
                elif not present and member in held:
                    held = held.delete(member)
            if len(held):
                mutation[key] = held
            elif key in mutation:
                del mutation[key]
        return mutation.finish()

    def __repr__(self) -> str:
        state = "built" if self._made is not None else "not built"
        return f"PendingSets({len(self._changes)} keys changed, {state})"


ONE_AT_A_TIME = 256
"""Values made one at a time before a ``LazyMap`` makes all the rest at once (or a
sixty-fourth of its keys, if more): one costs about three times its share of all, so
a command that reads every record pays a few percent more, and one that reads a
page of hits builds no more than the page."""


def as_map(lazy: _Deferred[K, V]) -> Map[K, V]:
    """``lazy`` typed as the map it stands for: it answers every ``Map`` call."""
    return cast(Map[K, V], lazy)
