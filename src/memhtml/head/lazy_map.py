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
from typing import Any, Generic, TypeVar, cast

from immutables import Map

K = TypeVar("K")
V = TypeVar("V")

_MISSING: Any = object()


class LazyMap(Generic[K, V]):
    """An ``immutables.Map`` made on first use by ``build``; or, given ``keys`` (no two
    equal), ``value`` (``value(i)`` for ``keys[i]``) and ``values`` (every value, in
    key order, made at once, which costs a third of making each alone), one value at
    a time until enough are asked for that making the rest at once is cheaper."""

    __slots__ = ("_all", "_build", "_fields", "_keys", "_lock", "_made", "_row", "_value",
                 "_values")

    def __init__(self, build: Callable[[], Map[K, V]] | None = None, *,
                 keys: Sequence[K] | None = None, value: Callable[[int], V] | None = None,
                 values: Callable[[], list[V]] | None = None,
                 fields: Mapping[str, Sequence[object]] | None = None) -> None:
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
        self._row: dict[K, int] | None = (
            None if keys is None else dict(zip(keys, range(len(keys)), strict=True)))
        if self._row is not None and keys is not None and len(self._row) != len(keys):
            raise ValueError("two keys are equal")
        self._values: dict[int, V] = {}
        self._made: Map[K, V] | None = None
        self._lock = threading.Lock()

    # -- the whole map ------------------------------------------------------------------

    def whole(self) -> Map[K, V]:
        """The map, built now if it was not yet."""
        made = self._made
        if made is not None:
            return made
        with self._lock:
            if self._made is None:
                self._made = self._make()
            return self._made

    def _make(self) -> Map[K, V]:
        if self._build is not None:
            return self._build()
        keys = cast(Sequence[K], self._keys)
        made = cast(Callable[[], list[V]], self._all)()
        # The values already handed out stay the ones the map holds.
        for row, value in list(self._values.items()):
            made[row] = value
        return Map(zip(keys, made, strict=True))

    @property
    def built(self) -> bool:
        """Whether the whole map has been built (for tests and benchmarks)."""
        return self._made is not None

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
        if self._row is not None:
            row = self._row.get(key)
            return default if row is None else self._at(row)
        return self.whole().get(key, default)

    def __getitem__(self, key: K) -> V:
        made = self._made
        if made is not None:
            return made[key]
        if self._row is not None:
            return self._at(self._row[key])
        return self.whole()[key]

    def __contains__(self, key: object) -> bool:
        if self._row is not None:
            return key in self._row
        return key in self.whole()

    def __len__(self) -> int:
        if self._row is not None:
            return len(self._row)
        return len(self.whole())

    def __iter__(self) -> Iterator[K]:
        if self._row is not None:
            return iter(self._row)
        return iter(self.whole())

    def keys(self) -> Collection[K]:
        if self._row is not None:
            return self._row.keys()
        return self.whole().keys()

    def values(self) -> Iterable[V]:
        """In the order ``keys`` gives (the built map's own order is its hashes')."""
        if self._row is not None:
            made = self.whole()
            return tuple(made[key] for key in self._row)
        return self.whole().values()

    def items(self) -> Iterable[tuple[K, V]]:
        """In the order ``keys`` gives, as ``values``."""
        if self._row is not None:
            made = self.whole()
            return tuple((key, made[key]) for key in self._row)
        return self.whole().items()

    # -- everything else is the map's ----------------------------------------------------

    def __eq__(self, other: object) -> bool:
        mine = self.whole()
        return mine == (other.whole() if isinstance(other, LazyMap) else other)

    def __hash__(self) -> int:
        return hash(self.whole())

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (or copied) as the plain map it stands for: the callables that
        # build it hold mappings of a local file.
        return (Map, (dict(self.whole().items()),))

    def __repr__(self) -> str:
        state = "built" if self._made is not None else "not built"
        return f"LazyMap({len(self)} items, {state})"

    def __getattr__(self, name: str) -> Any:
        # set, delete, mutate, items, values, update...: the built map's own.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.whole(), name)


ONE_AT_A_TIME = 256
"""Values made one at a time before a ``LazyMap`` makes all the rest at once (or a
sixty-fourth of its keys, if more): one costs about three times its share of all, so
a command that reads every record pays a few percent more, and one that reads a
page of hits builds no more than the page."""


def as_map(lazy: LazyMap[K, V]) -> Map[K, V]:
    """``lazy`` typed as the map it stands for: it answers every ``Map`` call."""
    return cast(Map[K, V], lazy)
