"""Looking names up in pygit2 without handing it the names.

pygit2 (1.21, and the releases before it) converts a name argument with
``pgit_borrow_fsdefault``, which takes a new reference from ``PyOS_FSPath`` and never
drops it, so the string passed is never freed. A name made at run time (a path split
into its parts, an f-string) is a new object each call, and each call strands it:
about 110 bytes for a 60-character name. The calls that do this are a tree's ``in``,
``[name]`` and ``/``, ``TreeBuilder.get`` and ``remove``, and every reference lookup
by name (``references.get``, ``references[...]``, ``in references``). The MCP server
made such lookups for the paths of every watched write before every call, and grew by
tens of kilobytes a call. ``python -m bench.pygit2_leaks`` measures each call and each
way round it; ``docs/design.md`` has the figures and a five-line reproduction.

So the git adapters never pass a name to those calls:

- a tree entry is found by a binary search over the tree's entries by index (an
  integer passes no name), the search libgit2's own lookup makes;
- entries leave a tree by rewriting its raw object without them, never through
  ``TreeBuilder.remove`` (``insert`` takes its name without keeping it);
- a reference is looked up under the interned name: the reference kept is then one
  string per distinct name (the few branches and remote refs a store has), however
  many lookups there are.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Collection

import pygit2
from pygit2.enums import ObjectType

FULL_SHA = re.compile(r"[0-9a-fA-F]{40}")
"""A whole SHA-1 object id as written: looked up as an id, never as a name."""


def _prefix_order(key: bytes, name: bytes) -> int:
    """-1, 0 or 1 as ``key`` sorts before, with or after ``name`` on their common
    length: libgit2's homing comparison, which finds an entry whether git sorted it
    as a file (``name``) or a directory (``name/``)."""
    n = min(len(key), len(name))
    a, b = key[:n], name[:n]
    return -1 if a < b else (1 if a > b else 0)


def tree_entry(tree: pygit2.Tree, name: str) -> pygit2.Object | None:
    """The entry ``name`` of ``tree`` (one level, no ``/``), or None.

    The same search as libgit2's ``git_tree_entry_byname``: a binary search for an
    entry sharing ``name``'s prefix, then a scan both ways over the entries that do.
    Each step reads an entry by index, about twelve for a directory of 4,000 files."""
    key = os.fsencode(name)
    low, high = 0, len(tree)
    while low < high:
        mid = (low + high) // 2
        order = _prefix_order(key, tree[mid].raw_name or b"")
        if order < 0:
            high = mid
        elif order > 0:
            low = mid + 1
        else:
            return _scan(tree, key, mid)
    return None


def _scan(tree: pygit2.Tree, key: bytes, homing: int) -> pygit2.Object | None:
    """libgit2's scan from the homing entry: forward until an entry sorts after
    ``key``, then back until one sorts before it. Entries between may not share the
    prefix (``a-b`` and ``a.b`` lie either side of ``a/``), so only the direction's
    own bound stops it."""
    for step, past in ((1, -1), (-1, 1)):
        at = homing if step == 1 else homing - 1
        while 0 <= at < len(tree):
            entry = tree[at]
            raw = entry.raw_name or b""
            if _prefix_order(key, raw) == past:
                break
            if raw == key:
                return entry
            at += step
    return None


def entry_at(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
    """The entry (a file or a directory) at ``path`` under ``tree``, one directory at
    a time, or None when a part is missing or is not a directory."""
    here: pygit2.Object = tree
    for part in path.split("/"):
        if not isinstance(here, pygit2.Tree):
            return None
        found = tree_entry(here, part)
        if found is None:
            return None
        here = found
    return here


def tree_without(repo: pygit2.Repository, tree: pygit2.Tree, names: Collection[str]
                 ) -> pygit2.Tree:
    """``tree`` with its entries ``names`` left out, written to ``repo``.

    The raw object is copied entry by entry, each left as it was (mode, name and id
    bytes), so a tree git wrote comes out as git would write it without those
    entries."""
    dropped = {os.fsencode(name) for name in names}
    _, data = repo.odb.read(tree.id)
    kept: list[bytes] = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        end = nul + 21
        if data[space + 1:nul] not in dropped:
            kept.append(data[at:end])
        at = end
    written = repo.get(repo.odb.write(ObjectType.TREE, b"".join(kept)))
    if not isinstance(written, pygit2.Tree):
        raise pygit2.GitError(f"the tree written without {sorted(names)!r} is missing")
    return written


def reference(repo: pygit2.Repository, name: str) -> pygit2.Reference | None:
    """The reference ``name`` (``HEAD``, ``refs/heads/main``), or None when there is
    none or the name is not a reference's."""
    return repo.references.get(sys.intern(name))
