"""``GitService`` in memory: the test double of ``PygitService``, held to the same contract.
This module is the repository half; the checkout half is ``memory_checkout.InMemoryCheckout``,
as the pygit2 adapter's is ``git_checkout.PygitCheckout``.

It keeps git's own objects under the ids git gives them, so a history built here has
the very shas libgit2 writes; ``tests/contract`` runs one suite on both and asserts that.
It is mutable, as a repository is, and one lock serializes every call so threads may
share an instance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import MappingProxyType

from returns.pipeline import is_successful

from memhtml.adapters.git import parse_trailers  # one parser: the double cannot drift
from memhtml.adapters.memory_checkout import InMemoryCheckout
from memhtml.adapters.memory_git_base import (
    FULL_SHA,
    GITLINK_MODE,
    INDEX_MODES,
    Entry,
    Flat,
    RefusalError,
    git_operation,
    ntfs_safe,
    object_id,
)
from memhtml.contracts.errors import GitFailure, NotFound, RefMoved
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    Arrival,
    CommitInfo,
    PathChange,
    Signature,
    TreeEntry,
)

_TREE_MODE = 0o40000
_HEX = re.compile(r"[0-9a-fA-F]+")
_ALL_CAPS = re.compile(r"[A-Z](?:[A-Z_]*[A-Z])?")
_REF_BAD_CHARS = frozenset(" ~^:?[*\\\x7f" + "".join(map(chr, range(0x20))))
_DWIM = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
         "refs/remotes/{}/HEAD")
_MIN_PREFIX = 4
"""libgit2 calls a shorter sha prefix ambiguous, whatever the repository holds."""
_CRUD = "".join(map(chr, range(33))) + ",:;\"\\'"
"""What libgit2 trims from both ends of a signature's name and email."""


@dataclass(frozen=True, slots=True)
class _Commit:
    tree: str
    parents: tuple[str, ...]
    author: Signature
    time: int  # seconds as stored: libgit2 writes a 32-bit unsigned number
    offset: int  # minutes east of UTC
    message: str

    def body(self) -> bytes:
        hours, minutes = divmod(abs(self.offset), 60)
        sign = "-" if self.offset < 0 else "+"
        person = (f"{self.author.name} <{self.author.email}> {self.time} "
                  f"{sign}{hours:02d}{minutes:02d}")
        lines = [f"tree {self.tree}", *(f"parent {p}" for p in self.parents),
                 f"author {person}", f"committer {person}"]
        return ("\n".join(lines) + "\n\n" + self.message).encode()


def _tree_body(tree: Mapping[str, Entry]) -> bytes:
    # git orders a tree by name bytes, a subtree's name read as if it ended in "/".
    def key(name: str) -> bytes:
        return name.encode() + (b"/" if tree[name][0] == _TREE_MODE else b"")

    return b"".join(b"%o %s\0" % (tree[name][0], name.encode()) + bytes.fromhex(tree[name][1])
                    for name in sorted(tree, key=key))


def _valid_ref_name(name: str) -> bool:
    """``pygit2.reference_is_valid_name``: git's check-ref-format rules, as libgit2 has them."""
    if name == "@":
        return True
    segments = name.split("/")
    if name.endswith(".") or not _REF_BAD_CHARS.isdisjoint(name):
        return False
    if any(not s or s.startswith(".") or ".." in s or "@{" in s or s.endswith(".lock")
           for s in segments):
        return False
    if len(segments) == 1:
        return _ALL_CAPS.fullmatch(name) is not None
    return segments[0] != "@" and _ALL_CAPS.fullmatch(segments[0]) is None


def _signature(author: Signature, at: datetime) -> tuple[Signature, int, int]:
    """The signature as libgit2 stores it: trimmed, the time wrapped, the offset in minutes."""
    offset = at.utcoffset()
    if offset is None:
        raise RefusalError(GitFailure("commit", "the commit time must be timezone-aware"))
    name = author.name.split("\0", 1)[0]  # pygit2 passes the name on as a C string
    if any(ch in "<>" for ch in name) or any(ch in "<>\0" for ch in author.email):
        raise RefusalError("a signature may not hold angle brackets, nor an email NUL")
    trimmed = Signature(name.strip(_CRUD), author.email.strip(_CRUD))
    if not trimmed.name or not trimmed.email:
        raise RefusalError("a signature cannot have an empty name or email")
    return trimmed, math.floor(at.timestamp()) % 2**32, int(offset.total_seconds()) // 60


class InMemoryGit(InMemoryCheckout):
    """One repository in memory. ``bare`` as in ``PygitService.init``: a bare repository
    has no index, so ``update_index`` updates nothing. A checkout's working tree is its
    index until a file is written or removed (by a door through ``put_file``, or by a
    person through ``person_writes``); the ``person_*`` methods are what a person's
    own git and editor do beside memhtml, for tests.

    ``resolve`` knows what memhtml names: ``HEAD``/``@``, branches, full refs and shas
    or their prefixes. It refuses rev-parse operators (``~``, ``^``, ``:``, ``@{``) with a
    ``GitFailure`` rather than guess, and there are no tags.
    """

    def __init__(self, initial_branch: str = "main", *, bare: bool = False) -> None:
        super().__init__(initial_branch, bare=bare)
        self._trees: dict[str, Flat] = {}
        """Each tree by id, as the files under it by relative path: enough for every
        read, and the nested form is rebuilt only to hash a new tree."""
        self._commits: dict[str, _Commit] = {}

    # -- the Repository Protocol ----------------------------------------------------------

    @git_operation("resolve")
    def resolve(self, ref: str) -> str:
        return self._peel(ref)

    @git_operation("list_tree")
    def list_tree(self, commit: str) -> tuple[TreeEntry, ...]:
        flat = self._tree_of(commit)
        return tuple(TreeEntry(p, oid, mode) for p, (mode, oid) in sorted(flat.items()))

    @git_operation("read_blobs")
    def read_blobs(self, blob_ids: Sequence[str]) -> Mapping[str, bytes]:
        if bad := [blob_id for blob_id in blob_ids if not FULL_SHA.fullmatch(blob_id)]:
            raise RefusalError(f"not a full object id: {bad[0]!r}")
        return {b: self._blobs[b.lower()] for b in blob_ids if b.lower() in self._blobs}

    @git_operation("entries_at")
    def entries_at(self, commit: str, paths: Sequence[str]) -> tuple[TreeEntry, ...]:
        flat = self._tree_of(commit)
        # PygitService walks to a path's directory from the root tree, where one leading
        # "/" names the root again; so a path found there is found here.
        held = ((path, flat.get(path.removeprefix("/"))) for path in paths)
        found = [TreeEntry(path, entry[1], entry[0]) for path, entry in held if entry]
        return tuple(sorted(found, key=lambda e: e.path))

    @git_operation("names_in")
    def names_in(self, commit: str, directories: Sequence[str]
                 ) -> Mapping[str, tuple[str, ...]]:
        flat = self._tree_of(commit)
        wanted = set(directories)
        found: dict[str, set[str]] = {}
        for path in flat:
            parts = path.split("/")
            for depth in range(len(parts)):
                directory = "/".join(parts[:depth])
                if directory in wanted:
                    rest = parts[depth:]
                    found.setdefault(directory, set()).add(
                        rest[0] + ("/" if len(rest) > 1 else ""))
        return {directory: tuple(sorted(names)) for directory, names in found.items()}

    @git_operation("changed_paths")
    def changed_paths(self, old: str, new: str) -> tuple[str, ...]:
        before, after = self._tree_of(old), self._tree_of(new)
        return tuple(sorted(p for p in before.keys() | after.keys()
                            if before.get(p) != after.get(p)))

    @git_operation("commit")
    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> str:
        return self._commit_changes(ref, expected_parent, changes, message, author, at, {})

    @git_operation("commit_merge")
    def commit_merge(self, ref: str, expected_parent: str, other_parent: str,
                     changes: Sequence[PathChange], message: str, author: Signature,
                     at: datetime) -> str:
        return self._commit_changes(ref, expected_parent, changes, message, author, at, {},
                                    self._peel(other_parent))

    @git_operation("merge_base")
    def merge_base(self, a: str, b: str) -> str | None:
        common = set(self._chain(self._peel(a))) & set(self._chain(self._peel(b)))
        # The best common ancestors: those no other common one descends from. Of
        # several (criss-cross), the newest is taken; the Protocol leaves it open.
        below = {older for sha in common for older in self._chain(sha)[1:]}
        best = common - below
        return max(best, key=lambda sha: (self._commits[sha].time, sha)) if best else None

    @git_operation("is_ancestor")
    def is_ancestor(self, a: str, b: str) -> bool:
        return self._peel(a) in self._chain(self._peel(b))

    @git_operation("commit")
    def chmod(self, ref: str, expected_parent: str, modes: Mapping[str, int], message: str,
              author: Signature, at: datetime) -> str:
        """Commit new modes for existing files, with ``commit``'s compare-and-swap.

        Not in the Protocol, whose commits only keep modes; but real repositories hold
        executables and symlinks committed by git itself, and tests need such trees.
        """
        return self._commit_changes(ref, expected_parent, (), message, author, at, modes)

    @git_operation("create_branch")
    def create_branch(self, name: str, at: str) -> None:
        full = self._branch(name)
        if full == "refs/heads/HEAD" or full.startswith("refs/heads/-"):
            raise RefusalError(f"git does not create a branch named {name!r}")
        if full in self._refs:
            raise RefusalError(f"branch {full.removeprefix('refs/heads/')!r} already exists")
        target = self._peel(at)
        self._lock_ref(full)
        self._refs[full] = target

    @git_operation("move_ref")
    def move_ref(self, ref: str, expected: str | None, target: str) -> None:
        refname = self._direct_ref(ref)
        sha = self._peel(target)
        self._lock_ref(refname)
        actual = self._refs.get(refname)
        if actual != expected:
            raise RefusalError(RefMoved(ref, expected, actual))
        self._refs[refname] = sha

    @git_operation("delete_branch")
    def delete_branch(self, name: str) -> None:
        full = self._branch(name)
        if full not in self._refs:
            raise RefusalError(f"no branch {full.removeprefix('refs/heads/')!r}")
        if self._head == full:
            raise RefusalError(f"cannot delete {full}: it is the current HEAD")
        del self._refs[full]

    @git_operation("branches")
    def branches(self, prefix: str) -> tuple[str, ...]:
        return tuple(sorted(short for ref in self._refs
                            if ref.startswith("refs/heads/")
                            and (short := ref.removeprefix("refs/heads/")).startswith(prefix)))

    @git_operation("commit_info")
    def commit_info(self, sha: str) -> CommitInfo:
        return self._info(self._peel(sha))

    @git_operation("commits_between")
    def commits_between(self, old: str | None, new: str) -> tuple[str, ...]:
        # For a linear history libgit2's topological-time order is the chain, oldest
        # first; across merges the set is git's, the order of unrelated commits may not be.
        chain = self._chain(self._peel(new))
        hidden = set() if old is None else set(self._chain(self._peel(old)))
        return tuple(reversed([sha for sha in chain if sha not in hidden]))

    @git_operation("commits_touching")
    def commits_touching(self, ref: str, path: str, limit: int) -> tuple[CommitInfo, ...]:
        checked = check_tree_path(path)
        if not is_successful(checked):
            raise RefusalError(checked.failure().reason)
        found: list[CommitInfo] = []
        chain = self._chain(self._peel(ref))
        for sha in chain if limit > 0 else ():
            commit = self._commits[sha]
            before = self._at(commit.parents[0], path) if commit.parents else None
            if self._at(sha, path) != before:
                found.append(self._info(sha))
                if len(found) >= limit:
                    break
        return tuple(found)

    @git_operation("commits_mentioning")
    def commits_mentioning(self, ref: str, text: str, limit: int) -> tuple[CommitInfo, ...]:
        found: list[CommitInfo] = []
        for sha in self._chain(self._peel(ref)) if limit > 0 else ():
            if text in self._commits[sha].message:
                found.append(self._info(sha))
                if len(found) >= limit:
                    break
        return tuple(found)

    @git_operation("arrivals")
    def arrivals(self, ref: str, paths: Collection[str]) -> Mapping[str, int]:
        return {path: arrival.steps
                for path, arrival in self._arrived(self._peel(ref), paths, None).items()}

    @git_operation("arrived")
    def arrived(self, ref: str, paths: Collection[str],
                follow: Collection[tuple[str, str]] = ()) -> Mapping[str, Arrival]:
        return self._arrived(self._peel(ref), paths, frozenset(follow) or None)

    # -- internals ------------------------------------------------------------------------

    def _arrived(self, sha: str, paths: Collection[str],
                 follow: frozenset[tuple[str, str]] | None) -> dict[str, Arrival]:
        """Down the first-parent chain until the parent lacks each path (see
        ``GitService.arrived``); a move is followed to the one path the commit deleted
        holding the same blob, when it brought no other copy of it."""
        held = self._tree_of(sha)
        waiting = {path: path for path in paths if path in held}
        placed: dict[str, Arrival] = {}
        steps = 0
        while waiting:
            commit = self._commits[sha]
            tree = self._trees[commit.tree]
            before = self._tree_of(commit.parents[0]) if commit.parents else {}
            came = [name for name in waiting if name not in before]
            moved: dict[str, str] = {}
            if came and commit.parents and follow is not None and any(
                    pair in follow for pair in parse_trailers(commit.message)):
                moved = self._moved_from(before, tree, came, waiting)
            for name in came:
                asked = waiting.pop(name)
                if name in moved:
                    waiting[moved[name]] = asked
                else:
                    placed[asked] = Arrival(steps, sha, self._committed_at(sha), name)
            if not commit.parents:
                break
            sha, steps = commit.parents[0], steps + 1
        return placed

    @staticmethod
    def _moved_from(before: Flat, after: Flat, came: list[str],
                    waiting: Mapping[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name in came:
            blob = after[name][1]
            sources = [p for p, entry in before.items() if p not in after and entry[1] == blob]
            copies = [p for p, entry in after.items() if p not in before and entry[1] == blob]
            if len(sources) == 1 and copies == [name] and sources[0] not in waiting:
                out[name] = sources[0]
        return out

    def _committed_at(self, sha: str) -> datetime:
        commit = self._commits[sha]
        return datetime.fromtimestamp(commit.time, timezone(timedelta(minutes=commit.offset)))

    def _info(self, sha: str) -> CommitInfo:
        commit = self._commits[sha]
        zone = timezone(timedelta(minutes=commit.offset))
        # The double signs a commit's committer line with its author (``body``), as
        # ``PygitService`` does when it is given no committer.
        return CommitInfo(sha, commit.parents, commit.message, commit.author,
                          datetime.fromtimestamp(commit.time, zone), parse_trailers(commit.message),
                          commit.author)

    def _at(self, sha: str, path: str) -> tuple[Entry | None, list[tuple[str, Entry]]] | None:
        """What a commit holds at ``path``, file or directory: equal exactly when git's
        entries (id and mode) there are, since equal directories have equal tree ids."""
        flat, under = self._trees[self._commits[sha].tree], path + "/"
        held = (flat.get(path), sorted((p, e) for p, e in flat.items() if p.startswith(under)))
        return held if held != (None, []) else None

    def _tree_of(self, rev: str) -> Flat:
        return self._trees[self._commits[self._peel(rev)].tree]

    def _target(self, name: str) -> str | None:
        return self._refs.get(self._head if name == "HEAD" else name)

    def _kind(self, oid: str) -> str | None:
        stores: dict[str, Container[str]] = {
            "commit": self._commits, "tree": self._trees, "blob": self._blobs}
        return next((kind for kind, store in stores.items() if oid in store), None)

    def _peel(self, rev: str) -> str:
        """The commit ``rev`` names, or the refusal ``PygitService._commit`` gives."""
        oid = self._lookup(rev)
        if oid is None:
            raise RefusalError(NotFound(f"commit {rev!r}"))
        kind = self._kind(oid)
        if kind != "commit":
            raise RefusalError(GitFailure("resolve", f"{rev!r} names a {kind}, not a commit"))
        return oid

    def _lookup(self, rev: str) -> str | None:
        """libgit2's order: a whole sha; the branch (before a tag, as PygitService prefers);
        each short-name rule in turn, where the last rule's verdict on the name alone
        decides "invalid" over "not found"; then a sha prefix."""
        if FULL_SHA.fullmatch(rev):
            return rev.lower() if self._kind(rev.lower()) else None
        name = "HEAD" if rev == "@" else rev
        candidates = [f"refs/heads/{rev}", *(rule.format(name) for rule in _DWIM)]
        # Every stored ref was checked when made, so an invalid candidate cannot match.
        if (target := next(filter(None, map(self._target, candidates)), None)) is not None:
            return target
        if not _valid_ref_name(candidates[-1]):
            raise RefusalError(f"invalid revision {rev!r}")
        if not _HEX.fullmatch(rev):
            return None
        if len(rev) < _MIN_PREFIX:
            raise RefusalError(f"ambiguous sha prefix {rev!r}: too short")
        found = [oid for store in (self._commits, self._trees, self._blobs)
                 for oid in store if oid.startswith(rev.lower())]
        if len(found) > 1:
            raise RefusalError(f"ambiguous sha prefix {rev!r}")
        return found[0] if found else None

    def _chain(self, sha: str) -> list[str]:
        """``sha`` and every ancestor, newest first, each commit before its parents;
        for a linear history, the first-parent chain."""
        done: list[str] = []
        seen: set[str] = set()
        stack: list[tuple[str, bool]] = [(sha, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                done.append(node)  # every parent of node is already in done
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((parent, False) for parent in reversed(self._commits[node].parents))
        return done[::-1]

    def _branch(self, name: str) -> str:
        full = f"refs/heads/{name.removeprefix('refs/heads/')}"
        if not _valid_ref_name(full):
            raise RefusalError(f"not a valid branch name: {name!r}")
        return full

    def _direct_ref(self, ref: str) -> str:
        """The direct ref ``ref`` ends at: ``HEAD`` moves the branch it names."""
        name = ref if ref == "HEAD" or ref.startswith("refs/") else f"refs/heads/{ref}"
        if not _valid_ref_name(name):
            raise RefusalError(f"not a valid ref name: {ref!r}")
        return self._head if name == "HEAD" else name

    def _lock_ref(self, name: str) -> None:
        """Refs are files under ``.git``, so ``a`` and ``a/b`` cannot both exist: git
        cannot take the lock of the one that would be created."""
        if any(ref.startswith(f"{name}/") or name.startswith(f"{ref}/") for ref in self._refs):
            raise RefusalError(f"could not lock {name}: a ref is in the way")

    def _write_tree(self, flat: Flat) -> str:
        entries: dict[str, Entry] = {}
        subtrees: dict[str, dict[str, Entry]] = {}
        for path, entry in flat.items():
            head, slash, rest = path.partition("/")
            if slash:
                subtrees.setdefault(head, {})[rest] = entry
            else:
                entries[head] = entry
        entries.update({name: (_TREE_MODE, self._write_tree(sub))
                        for name, sub in subtrees.items()})
        oid = object_id(b"tree", _tree_body(entries))
        self._trees.setdefault(oid, MappingProxyType(dict(flat)))
        return oid

    def _apply(self, flat: dict[str, Entry], change: PathChange) -> None:
        """One change as libgit2's index takes it: a write keeps the mode it replaces, and
        one that would displace a file or directory of its name is refused."""
        path = change.path
        if change.data is None:
            flat.pop(path, None)
            return
        blob = object_id(b"blob", change.data)
        self._blobs[blob] = change.data
        if not ntfs_safe(path):
            raise RefusalError(f"invalid path: {path!r}")
        parts = path.split("/")
        if any("/".join(parts[:n]) in flat for n in range(1, len(parts))) or any(
                p.startswith(path + "/") for p in flat):
            raise RefusalError(f"{path!r} collides with a file or directory of the same name")
        if change.mode is not None and change.mode not in INDEX_MODES - {GITLINK_MODE}:
            raise RefusalError(f"mode {change.mode:o} for {path!r} is not a file's or a link's")
        kept = flat[path][0] if path in flat else FILE_MODE_BLOB
        flat[path] = (change.mode if change.mode is not None else kept, blob)

    def _commit_changes(self, ref: str, expected_parent: str | None,
                        changes: Sequence[PathChange], message: str, author: Signature,
                        at: datetime, modes: Mapping[str, int],
                        other_parent: str | None = None) -> str:
        for change in changes:
            checked = check_tree_path(change.path)
            if not is_successful(checked):
                refused = checked.failure()
                raise RefusalError(f"{refused.path!r}: {refused.reason}")
        person, seconds, offset = _signature(author, at)
        refname = self._direct_ref(ref)
        parent = None if expected_parent is None else self._peel(expected_parent)
        flat = {} if parent is None else dict(self._tree_of(parent))
        for change in changes:
            self._apply(flat, change)
        for path, mode in modes.items():
            if path not in flat or mode not in INDEX_MODES - {GITLINK_MODE}:
                raise RefusalError(f"cannot set mode {mode:o} on {path!r}")
            flat[path] = (mode, flat[path][1])
        tree = self._write_tree(flat)
        if parent is not None and other_parent is None and tree == self._commits[parent].tree:
            sha = parent  # nothing changed: no commit, but the swap is still checked
        else:
            # Written before the swap, as libgit2 does: a lost swap leaves only garbage.
            parents = () if parent is None else (parent,)
            made = _Commit(tree, parents + ((other_parent,) if other_parent else ()), person,
                           seconds, offset, message.split("\0", 1)[0])
            sha = object_id(b"commit", made.body())
            self._commits[sha] = made
        self._lock_ref(refname)
        actual = self._refs.get(refname)
        if actual != parent:
            raise RefusalError(RefMoved(ref, parent, actual))
        self._refs[refname] = sha
        return sha
