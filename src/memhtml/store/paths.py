"""Path arguments as the doors and reads take them: checked to stay inside the store.

Kept apart from the write planning so a read command can check a path without
importing the machinery that plans and lands commits.

A read or an edit names a file that exists, spelled as the tree spells it, so it
is only checked to stay inside the store (``check_store_path``). A *new* name is
held to more: it must be portable (``check_portable_path``), and it must not differ
only by case or Unicode normalization from a file or directory the tree already
has, because a clone on NTFS or APFS would fold the two into one file and lose one
of them. NFC is the form a new name is stored in. The leading part of a new path
that names, as given, a directory the tree already has is not new: it keeps that
directory's spelling and is not judged again, so a correction lands beside the
memory it corrects even in a directory made decomposed on an older macOS, or named
``a:b`` before these rules.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused
from memhtml.contracts.paths import (
    check_portable_path,
    check_store_path,
    path_key,
    shown_path,
    to_tree_path,
)
from memhtml.head.version import is_candidate_path
from memhtml.store.errors import StoreError


def tree_path(path: str) -> Result[str, StoreError]:
    """A caller's path in tree form, checked to stay inside the store. A leading
    slash is refused here: a path argument is read as a file path, and an absolute
    one names something outside the repository."""
    checked: Result[str, PathRefused] = check_store_path(path)
    return checked.alt(lambda e: e)


def href_path(href: str) -> Result[str, StoreError]:
    """A link target in either spelling: an href is root-relative (``/a/b.html``) by
    the format's rule, so its leading slash means the store root, not the disk's."""
    return tree_path(to_tree_path(href.strip()))


def _candidate(tree: str) -> Result[str, StoreError]:
    if not is_candidate_path(tree):
        return Failure(PathRefused(tree, "a memory path ends in .html, is not an "
                                         "index.html and is not under .memhtml/"))
    return Success(tree)


def memory_path(path: str) -> Result[str, StoreError]:
    """A path a memory may be written at: inside the store and indexed by the head."""
    return tree_path(path).bind(_candidate)


def _directories(path: str) -> list[str]:
    """``a/b/c.html`` -> ``["a", "a/b"]``."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@dataclass(frozen=True)
class Spellings:
    """Every spelling of each file and directory name in a tree, by ``path_key``, with
    how many files each spelling accounts for (a directory counts the files under it),
    so a layer of removed paths can take a directory away when it empties."""

    files: Mapping[str, Counter[str]]
    dirs: Mapping[str, Counter[str]]

    @classmethod
    def of(cls, paths: Iterable[str], directories: Iterable[str] = ()) -> Spellings:
        """The spellings of ``paths``, plus ``directories`` (tree form, a trailing slash
        or none) known to exist, each counted once, where no file spells any of their
        steps."""
        listed = list(paths)
        parents: Counter[str] = Counter(
            path.rsplit("/", 1)[0] for path in listed if "/" in path)
        dirs: dict[str, Counter[str]] = {}
        # Folding each distinct parent once, not each file's, keeps this linear in the
        # number of directories, which is what a large store has few of.
        for parent, count in parents.items():
            for directory in (*_directories(parent), parent):
                dirs.setdefault(path_key(directory), Counter())[directory] += count
        for extra in directories:
            steps = (*_directories(extra.strip("/")), extra.strip("/"))
            # A directory the tree already spells some other way is not added: the
            # tree's spelling is the one that exists.
            if all(step and path_key(step) not in dirs for step in steps):
                for step in steps:
                    dirs[path_key(step)] = Counter({step: 1})
        return cls(_spelled(listed), dirs)


    @classmethod
    def listed(cls, files: Iterable[str], directories: Iterable[str]) -> Spellings:
        """The spellings a partial listing of a tree knows: ``files`` and
        ``directories`` (tree form, no trailing slash), each directory on the way to
        one counted too, each spelling once. A few directories' names (those on the
        way to a new path) are all a twin of that path can be among."""
        listed = sorted(set(files))
        dirs: dict[str, Counter[str]] = {}
        wanted = {*directories, *(path.rsplit("/", 1)[0] for path in listed if "/" in path)}
        for directory in wanted:
            for step in (*_directories(directory), directory):
                if step:
                    dirs.setdefault(path_key(step), Counter())[step] = 1
        return cls(_spelled(listed), dirs)


def _spelled(paths: list[str]) -> Mapping[str, Counter[str]]:
    """Each file key's spellings, counted: a plain spelling per key, a ``Counter``
    only for the keys spelled more than once (or listed twice). A hundred thousand
    ``Counter``s cost a write to a store that size 0.26 s; nearly every key has one."""
    keys = [path_key(path) for path in paths]
    single = dict(zip(keys, paths, strict=True))
    many: dict[str, Counter[str]] = {}
    if len(single) != len(paths):
        repeated = {key for key, n in Counter(keys).items() if n > 1}
        for key, path in zip(keys, paths, strict=True):
            if key in repeated:
                many.setdefault(key, Counter())[path] += 1
    return _Spelled(single, many)


class _Spelled(Mapping[str, Counter[str]]):
    """``_spelled``'s table, read as a key's ``Counter`` of spellings (a fresh one for
    a key spelled once, so nothing reading it can change the table)."""

    __slots__ = ("_many", "_single")

    def __init__(self, single: dict[str, str], many: dict[str, Counter[str]]) -> None:
        self._single, self._many = single, many

    def __getitem__(self, key: str) -> Counter[str]:
        found = self._many.get(key)
        if found is not None:
            return Counter(found)
        return Counter({self._single[key]: 1})

    def __contains__(self, key: object) -> bool:
        return key in self._single

    def __iter__(self) -> Iterator[str]:
        return iter(self._single)

    def __len__(self) -> int:
        return len(self._single)


@dataclass(frozen=True)
class Names:
    """The names a new path is judged against: the spellings ``present`` minus the
    spellings ``gone`` (files a plan removed, or the one a move takes away)."""

    present: tuple[Spellings, ...]
    gone: tuple[Spellings, ...] = ()

    def _count(self, table: Callable[[Spellings], Mapping[str, Counter[str]]], key: str
               ) -> Counter[str]:
        found = [counts for layer in self.present if (counts := table(layer).get(key))]
        gone = [counts for layer in self.gone if (counts := table(layer).get(key))]
        if not gone and len(found) <= 1:
            # Nearly every name: held by one layer or by none, and removed by none.
            return +found[0] if found else Counter()
        total: Counter[str] = Counter()
        for counts in found:
            total.update(counts)
        for counts in gone:
            total.subtract(counts)
        return +total

    def _dirs(self, directory: str) -> Counter[str]:
        return self._count(lambda layer: layer.dirs, path_key(directory))

    def has_directory(self, directory: str) -> bool:
        return self._dirs(directory)[directory] > 0

    def twin(self, path: str, existing: int = 0) -> str | None:
        """Why ``path`` would be one file with another name, or None when it would not.
        The first ``existing`` directories of ``path`` are known to be there as spelled:
        a twin of one of those is the other spelling's fault, not this path's."""
        for directory in _directories(path)[existing:]:
            other = sorted(s for s in self._dirs(directory) if s != directory)
            if other:
                return (f"directory {shown_path(directory)} differs only by case or Unicode "
                        f"normalization from the existing {shown_path(other[0])}"
                        f"{_composed(directory, other[0])}; a case-insensitive or "
                        "normalizing file system (Windows, macOS) would make them one")
        other = sorted(s for s in self._count(lambda layer: layer.files, path_key(path))
                       if s != path)
        if other:
            return (f"differs only by case or Unicode normalization from the existing "
                    f"{shown_path(other[0])}{_composed(path, other[0])}; a case-insensitive "
                    "or normalizing file system (Windows, macOS) would make them one file")
        return None


def _composed(name: str, other: str) -> str:
    """What to add when two names differ in Unicode normalization alone: they print
    alike, so the message says why two names that look the same are two."""
    if unicodedata.normalize("NFC", name) != unicodedata.normalize("NFC", other):
        return ""
    return " (the same characters, composed in one and decomposed in the other)"


def existing_depth(path: str, names: Names) -> int:
    """How many leading segments of ``path`` name, as spelled, a directory that exists."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        if names.has_directory("/".join(parts[:depth])):
            return depth
    return 0


def spelled(path: str, names: Names) -> str:
    """``path`` as a new name is stored: the leading directories that exist as given
    keep their spelling, and the rest is NFC."""
    parts = path.split("/")
    kept = existing_depth(path, names)
    rest = unicodedata.normalize("NFC", "/".join(parts[kept:]))
    return "/".join([*parts[:kept], rest])


SITE_DIR = "memhtml-site"
"""The published site's folder (``store.site_model.SITE_DIR``): ``publish`` writes a
memory's page at ``memhtml-site/view/<its path>/index.html``."""


def portable_path(path: str, names: Names) -> Result[str, StoreError]:
    """``path``, or its refusal when the part of it that is new is not portable, or
    when it lies in the published site's folder: a memory at
    ``memhtml-site/view/a.html`` is where ``publish`` puts the folder holding
    ``a.html``'s page, so the next publish would fail on it, and every door that names
    a new path (a write, a move) refuses it alike."""
    if path == SITE_DIR or path.startswith(SITE_DIR + "/"):
        return Failure(PathRefused(path, f"{SITE_DIR}/ holds the published site's "
                                         "generated pages; write the memory elsewhere"))
    checked: Result[str, PathRefused] = check_portable_path(path, existing_depth(path, names))
    return checked.alt(lambda e: e)


def new_memory_path(path: str, names: Names) -> Result[str, StoreError]:
    """A path a new memory may be written at: a memory path, and a portable one."""
    return memory_path(path).bind(lambda tree: portable_path(tree, names))


def unshared(path: str, names: Names) -> Result[str, StoreError]:
    """``path``, or its refusal when it is another name's case or normalization twin."""
    reason = names.twin(path)
    return Success(path) if reason is None else Failure(PathRefused(path, reason))
