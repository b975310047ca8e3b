"""The spellings a plan's own ops add to the tree and take from it, kept op by op.

A new path is judged against the base's names plus the paths the plan has written
where the base had none, minus the base paths the plan has removed (``Names``).
Folding those two sets afresh at every step costs the whole batch so far, so a
batch of thousands of writes went quadratic. An op changes what the view holds at
its own path and, for a move or an archive, its destination, and nowhere else, so
only those paths can enter or leave either set: ``PlanNames.after`` re-reads just
them and updates two persistent layers, a logarithmic cost per op. The layers count
exactly what ``Spellings.of`` over the same sets counts, so the ``Names`` a step
judges by are the ones a fresh fold would give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from immutables import Map

from memhtml.contracts.paths import path_key
from memhtml.contracts.record import MemoryRecord
from memhtml.store.paths import Spellings

Table = Map[str, Map[str, int]]
"""``path_key`` -> spelling -> how many paths of the layer that spelling accounts for."""


class _Holds(Protocol):
    def get(self, path: str) -> MemoryRecord | None: ...


def _directories(path: str) -> Iterator[str]:
    """``a/b/c.html`` -> ``a``, ``a/b``: each directory a file's path passes through."""
    start = 0
    while (cut := path.find("/", start)) != -1:
        yield path[:cut]
        start = cut + 1


def _shifted(table: Table, spelling: str, by: int) -> Table:
    """``table`` with ``spelling``'s count moved by ``by``; an entry that reaches zero
    goes, as ``Spellings.of`` holds no spelling no path accounts for."""
    key = path_key(spelling)
    counts = table.get(key, Map())
    count = counts.get(spelling, 0) + by
    counts = counts.set(spelling, count) if count else counts.delete(spelling)
    return table.set(key, counts) if counts else table.delete(key)


class _Counted(Mapping[str, Counter[str]]):
    """A ``Table`` read as ``Spellings`` reads its tables: each key's spellings as a
    fresh ``Counter`` (a handful of entries), so nothing reading it can change it."""

    __slots__ = ("_table",)

    def __init__(self, table: Table) -> None:
        self._table = table

    def __getitem__(self, key: str) -> Counter[str]:
        return Counter(dict(self._table[key].items()))

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


@dataclass(frozen=True, slots=True)
class NameLayer:
    """A set of tree paths with the spellings of their file and directory names."""

    paths: Map[str, bool]
    files: Table
    dirs: Table

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def _shift(self, path: str, by: int) -> NameLayer:
        dirs = self.dirs
        for directory in _directories(path):
            dirs = _shifted(dirs, directory, by)
        paths = self.paths.set(path, True) if by > 0 else self.paths.delete(path)
        return NameLayer(paths, _shifted(self.files, path, by), dirs)

    def with_path(self, path: str) -> NameLayer:
        return self if path in self.paths else self._shift(path, 1)

    def without_path(self, path: str) -> NameLayer:
        return self._shift(path, -1) if path in self.paths else self

    def spellings(self) -> Spellings:
        """The layer as the ``Spellings`` a ``Names`` layer is made of."""
        return Spellings(_Counted(self.files), _Counted(self.dirs))


EMPTY_LAYER: Final = NameLayer(Map(), Map(), Map())


@dataclass(frozen=True, slots=True)
class PlanNames:
    """The paths a plan has added (in the view, not the base) and removed (in the
    base, not the view), each as a ``NameLayer``."""

    added: NameLayer = EMPTY_LAYER
    removed: NameLayer = EMPTY_LAYER

    def after(self, base: _Holds, view: _Holds, paths: Iterable[str]) -> PlanNames:
        """These names once an op touching ``paths`` has turned the view into ``view``:
        each of them re-read, every other path left as it was."""
        added, removed = self.added, self.removed
        for path in paths:
            in_base = base.get(path) is not None
            in_view = view.get(path) is not None
            added = (added.with_path(path) if in_view and not in_base
                     else added.without_path(path))
            removed = (removed.with_path(path) if in_base and not in_view
                       else removed.without_path(path))
        return PlanNames(added, removed)


NO_OWN_NAMES: Final = PlanNames()
"""A plan that has applied no op: nothing added, nothing removed."""
