"""When each path came onto a branch: one walk down its first-parent chain.

``PygitService.arrived`` (and ``arrivals``, its step counts) asks this for every live
memory of a store at once, so the walk's cost is the store's whole first-parent
history: one comparison of each commit's tree with its first parent's. Three things
keep that to a fraction of ``load_head`` at 5,000 memories over 5,000 commits:

- **Trees are read raw** (``odb.read``) and split by one regular expression into
  ``(mode, name, id)`` triples, compared as sets: a tree object per entry, which
  pygit2's iteration builds, cost several times the walk. A tree that does not split
  exactly into entries is refused rather than read wrong.
- **Only directories a path still to place lies in are entered**, and only where the
  two trees' ids differ: a night's commit under ``archive/`` or ``.memhtml/`` costs
  one comparison at the top.
- **A wide directory** (an import of thousands of notes into one folder) is compared
  by libgit2's diff of the two trees, linear in C, instead of two Python sets.

No name is ever looked up in a pygit2 ``Tree``: pygit2 1.21 leaks memory on every
lookup of a name the tree lacks, which is what an arrival walk would mostly do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta, timezone
from typing import Final, TypeAlias, cast

import pygit2
import pygit2.enums

from memhtml.contracts.services import Arrival

_DIR_MODE: Final = b"40000"
"""A subtree's mode as git writes it (``040000`` with the zero is read as one too)."""
_WIDE_TREE_BYTES: Final = 8_192
"""Above this many bytes (about 150 entries) a directory pair is compared by libgit2's
diff rather than as two sets built in Python."""
_CACHED_TREES: Final = 512
"""Split trees kept between steps: a commit's trees are its parent's next step."""

_Triple: TypeAlias = tuple[bytes, bytes, bytes]
"""One tree entry as stored: mode (octal digits), name, raw object id."""
Changes: TypeAlias = dict[bytes, tuple[bytes | None, bytes | None]]
"""Path -> (raw blob id before or None, raw blob id after or None), files only."""


def _is_dir(mode: bytes) -> bool:
    return mode.lstrip(b"0") == _DIR_MODE


class TreeReader:
    """Trees of one repository, split into entries, the most recent kept."""

    def __init__(self, repo: pygit2.Repository, oid_size: int) -> None:
        self._repo = repo
        self._odb = repo.odb
        entry = rb"([0-7]{1,7}) ([^\x00]+)\x00(.{%d})" % oid_size
        self._entry = re.compile(entry, re.DOTALL)
        self._whole = re.compile(rb"(?:%s)*" % entry.replace(b"(", b"(?:"), re.DOTALL)
        self._cache: dict[bytes, tuple[int, frozenset[_Triple]]] = {}

    def read(self, oid: bytes) -> tuple[int, frozenset[_Triple]]:
        """The tree's size in bytes and its entries."""
        found = self._cache.get(oid)
        if found is not None:
            return found
        _kind, data = self._odb.read(pygit2.Oid(raw=oid))
        if self._whole.fullmatch(data) is None:
            raise ValueError(f"tree {oid.hex()} does not read as git's tree entries")
        found = (len(data), frozenset(self._entry.findall(data)))
        if len(self._cache) >= _CACHED_TREES:
            del self._cache[next(iter(self._cache))]
        self._cache[oid] = found
        return found

    def wide_changes(self, prefix: bytes, old: bytes, new: bytes, out: Changes) -> None:
        """Both trees compared by libgit2, below them too. With no rename detection
        each delta is one path: added (no mode before), deleted (none after), or
        changed."""
        before = self._repo[pygit2.Oid(raw=old)]
        after = self._repo[pygit2.Oid(raw=new)]
        assert isinstance(before, pygit2.Tree) and isinstance(after, pygit2.Tree)
        for delta in before.diff_to_tree(after).deltas:
            was = delta.old_file.id.raw if delta.old_file.mode else None
            now = delta.new_file.id.raw if delta.new_file.mode else None
            name = delta.new_file.path if now is not None else delta.old_file.path
            out[prefix + name.encode("utf-8", "surrogateescape")] = (was, now)


def tree_changes(trees: TreeReader, old: bytes | None, new: bytes | None,
                 dirs: Collection[bytes] | None) -> Changes:
    """Every file whose entry differs between the trees ``old`` and ``new`` (raw ids;
    None: no tree), with its blob before and after (None: absent, or a directory).
    ``dirs`` (``b"a/"``, ``b"a/b/"``...) limits the directories entered below the top;
    None enters all."""
    out: Changes = {}
    stack: list[tuple[bytes, bytes | None, bytes | None]] = [(b"", old, new)]
    while stack:
        prefix, was_tree, now_tree = stack.pop()
        if was_tree == now_tree:
            continue
        size_was, before = (0, frozenset()) if was_tree is None else trees.read(was_tree)
        size_now, after = (0, frozenset()) if now_tree is None else trees.read(now_tree)
        if was_tree is not None and now_tree is not None and (
                size_was > _WIDE_TREE_BYTES or size_now > _WIDE_TREE_BYTES):
            trees.wide_changes(prefix, was_tree, now_tree, out)
            continue
        gone = {name: (mode, oid) for mode, name, oid in before - after}
        came = {name: (mode, oid) for mode, name, oid in after - before}
        for name in gone.keys() | came.keys():
            then, now = gone.get(name), came.get(name)
            path = prefix + name
            sub_then = then[1] if then is not None and _is_dir(then[0]) else None
            sub_now = now[1] if now is not None and _is_dir(now[0]) else None
            if (sub_then is not None or sub_now is not None) and (
                    dirs is None or path + b"/" in dirs):
                stack.append((path + b"/", sub_then, sub_now))
            file_then = then[1] if then is not None and sub_then is None else None
            file_now = now[1] if now is not None and sub_now is None else None
            if file_then is not None or file_now is not None:
                out[path] = (file_then, file_now)
    return out


def _parents_of(path: bytes) -> set[bytes]:
    parts = path.split(b"/")[:-1]
    return {b"/".join(parts[: i + 1]) + b"/" for i in range(len(parts))}


def _first_parent(repo: pygit2.Repository, commit: pygit2.Commit) -> pygit2.Commit | None:
    # ``repo[id]`` rather than ``commit.parents``, which builds every parent.
    if not commit.parent_ids:
        return None
    found = repo[commit.parent_ids[0]]
    if found.type != pygit2.enums.ObjectType.COMMIT:
        raise ValueError(f"the parent of {commit.id} is not a commit")
    return cast(pygit2.Commit, found)


def committed_at(commit: pygit2.Commit) -> datetime:
    """The commit's committer time, in the zone it was committed in."""
    zone = timezone(timedelta(minutes=commit.commit_time_offset))
    return datetime.fromtimestamp(commit.commit_time, zone)


def first_parent_arrivals(repo: pygit2.Repository, tip: pygit2.Commit,
                          paths: Collection[str],
                          is_move: Callable[[pygit2.Commit], bool] | None = None
                          ) -> Mapping[str, Arrival]:
    """Each of ``paths`` that ``tip``'s tree holds as a file, with the commit of
    ``tip``'s first-parent chain that brought it (see ``GitService.arrived``).

    Walking back, a path's first change seen decides it: a deletion means the tip does
    not hold it (absent), an addition is its arrival (or a move to follow, where
    ``is_move`` says the commit is one), an edit sends the walk on. A path the walk
    never sees change is the root commit's, or absent when the root lacks it too.
    """
    trees = TreeReader(repo, len(tip.id.raw))
    waiting: dict[bytes, str] = {}
    for path in paths:
        try:
            waiting[path.encode("utf-8", "surrogateescape")] = path
        except UnicodeEncodeError:
            continue  # no tree can hold a name git cannot store
    dirs: set[bytes] = set()
    for name in waiting:
        dirs |= _parents_of(name)
    placed: dict[str, Arrival] = {}
    commit, steps = tip, 0
    while waiting:
        parent = _first_parent(repo, commit)
        changes = tree_changes(trees, None if parent is None else parent.tree_id.raw,
                               commit.tree_id.raw, dirs)
        came: list[tuple[bytes, bytes]] = []
        for name, (then, now) in changes.items():
            if name not in waiting:
                continue
            if now is None:
                del waiting[name]  # deleted here and never brought back: the tip lacks it
            elif then is None:
                came.append((name, now))
        moved: dict[bytes, bytes] = {}
        if came and parent is not None and is_move is not None and is_move(commit):
            moved = _moves(trees, parent, commit, came, waiting)
        for name, _blob in came:
            asked = waiting.pop(name)
            earlier = moved.get(name)
            if earlier is not None:
                waiting[earlier] = asked
                dirs |= _parents_of(earlier)
            else:
                placed[asked] = Arrival(steps, str(commit.id), committed_at(commit),
                                        name.decode("utf-8", "surrogateescape"))
        if parent is None:
            break
        commit, steps = parent, steps + 1
    return placed


def _moves(trees: TreeReader, parent: pygit2.Commit, commit: pygit2.Commit,
           came: list[tuple[bytes, bytes]], waiting: Mapping[bytes, str]
           ) -> dict[bytes, bytes]:
    """For the paths ``commit`` brought, the one each was moved from: the single path
    the commit deleted holding the very same blob, when no other path it brought
    holds that blob too. Every directory is read here, since the earlier path may lie
    where nothing else is being placed."""
    everything = tree_changes(trees, parent.tree_id.raw, commit.tree_id.raw, None)
    deleted: dict[bytes, list[bytes]] = {}
    added: dict[bytes, int] = {}
    for name, (then, now) in everything.items():
        if then is not None and now is None:
            deleted.setdefault(then, []).append(name)
        elif then is None and now is not None:
            added[now] = added.get(now, 0) + 1
    out: dict[bytes, bytes] = {}
    for name, blob in came:
        sources = deleted.get(blob, [])
        if len(sources) == 1 and added.get(blob) == 1 and sources[0] not in waiting:
            out[name] = sources[0]
    return out
