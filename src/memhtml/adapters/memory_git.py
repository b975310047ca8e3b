"""``GitService`` in memory: the test double of ``PygitService``, held to the same contract.

It keeps git's own objects under the ids git gives them, so a history built here has
the very shas libgit2 writes; ``tests/contract`` runs one suite on both and asserts that.
It is mutable, as a repository is, and one lock serializes every call so threads may
share an instance.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import threading
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Concatenate, ParamSpec, TypeAlias, TypeVar

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful

from memhtml.adapters.git import parse_trailers  # one parser: the double cannot drift
from memhtml.contracts.errors import GitError, GitFailure, NotFound, RefMoved
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    FILE_MODE_EXECUTABLE,
    FILE_MODE_LINK,
    IN_PROGRESS,
    Arrival,
    CommitInfo,
    FileStat,
    IndexUpdate,
    PathChange,
    Signature,
    TreeEntry,
)

_T = TypeVar("_T")
_P = ParamSpec("_P")
_Entry: TypeAlias = tuple[int, str]
"""A file in a tree: git file mode and blob id."""
_Flat: TypeAlias = Mapping[str, _Entry]

_TREE_MODE = 0o40000
_GITLINK_MODE = 0o160000
_INDEX_MODES = frozenset({FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK, _GITLINK_MODE})
_FULL_SHA = re.compile(r"[0-9a-fA-F]{40}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_CONFIG_PART = re.compile(r"[A-Za-z0-9-]+")
_ALL_CAPS = re.compile(r"[A-Z](?:[A-Z_]*[A-Z])?")
_REF_BAD_CHARS = frozenset(" ~^:?[*\\\x7f" + "".join(map(chr, range(0x20))))
_DWIM = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
         "refs/remotes/{}/HEAD")
_MIN_PREFIX = 4
"""libgit2 calls a shorter sha prefix ambiguous, whatever the repository holds."""
_CRUD = "".join(map(chr, range(33))) + ",:;\"\\'"
"""What libgit2 trims from both ends of a signature's name and email."""
_NTFS_RESERVED = (b".git", b"git~1")
"""Refused as tree components even off Windows: libgit2's core.protectNTFS defaults on."""


class _RefusalError(Exception):
    """Raised inside a call, returned at its edge; a ``str`` is a ``GitFailure`` reason."""

    def __init__(self, error: GitError | str) -> None:
        super().__init__(error)
        self.error = error


def _config_key(key: str) -> str:
    """git lower-cases a key's section and name; a subsection keeps its case."""
    section, _, rest = key.partition(".")
    name = rest.rpartition(".")[2]
    return f"{section.lower()}.{rest[: len(rest) - len(name)]}{name.lower()}"


_Rules: TypeAlias = tuple[tuple[tuple[str, tuple[str, ...]], ...],
                         tuple[tuple[re.Pattern[str], bool, tuple[str, ...]], ...]]
"""One ``.gitattributes``: its macro definitions, and its pattern lines (the pattern
as a regular expression, whether it matches the whole path or the name alone, the
attribute tokens)."""


def _wildmatch(pattern: str) -> re.Pattern[str]:
    """git's wildmatch with ``WM_PATHNAME``, as a regular expression."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            break
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negated = body[:1] in ("!", "^")
            inner = re.escape(body[1:] if negated else body).replace("\\-", "-")
            out.append(f"[^/{inner}]" if negated else f"(?!/)[{inner}]")
            i = end
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out))


def _attribute_lines(data: bytes) -> _Rules:
    macros: list[tuple[str, tuple[str, ...]]] = []
    lines: list[tuple[re.Pattern[str], bool, tuple[str, ...]]] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        pattern, tokens = words[0], tuple(words[1:])
        if pattern.startswith("[attr]"):
            macros.append((pattern.removeprefix("[attr]"), tokens))
            continue
        if pattern.endswith("/") or pattern.startswith("!"):
            continue  # a directory-only pattern, or a negation git refuses here
        anchored = "/" in pattern
        lines.append((_wildmatch(pattern.lstrip("/")), anchored, tokens))
    return tuple(macros), tuple(lines)


def _merge_attribute(path: str, rules: Mapping[str, _Rules],
                     macros: Mapping[str, tuple[str, ...]]) -> bool | str | None:
    """The ``merge`` attribute of ``path``: True (set), False (unset), a value, or
    None (unspecified)."""
    value: bool | str | None = None

    def apply(tokens: tuple[str, ...], depth: int = 0) -> None:
        nonlocal value
        for token in tokens:
            if token == "merge":
                value = True
            elif token == "-merge":
                value = False
            elif token == "!merge":
                value = None
            elif token.startswith("merge="):
                value = token.removeprefix("merge=")
            elif token in macros and depth < 8:
                apply(macros[token], depth + 1)

    parts = path.split("/")
    for level in range(len(parts)):
        folder = "/".join(parts[:level])
        if folder not in rules:
            continue
        rest = "/".join(parts[level:])
        for pattern, anchored, tokens in rules[folder][1]:
            if pattern.fullmatch(rest if anchored else parts[-1]):
                apply(tokens)
    return value


def _operation(name: str) -> Callable[
    [Callable[Concatenate[InMemoryGit, _P], _T]],
    Callable[Concatenate[InMemoryGit, _P], IOResult[_T, GitError]],
]:
    """Run a method under the lock and return its refusal as the failure, as
    ``PygitService`` turns libgit2's errors into ``GitFailure(operation, reason)``."""

    def wrap(method: Callable[Concatenate[InMemoryGit, _P], _T]
             ) -> Callable[Concatenate[InMemoryGit, _P], IOResult[_T, GitError]]:
        @functools.wraps(method)
        def run(self: InMemoryGit, /, *args: _P.args, **kwargs: _P.kwargs
                ) -> IOResult[_T, GitError]:
            with self._lock:
                try:
                    return IOSuccess(method(self, *args, **kwargs))
                except _RefusalError as refused:
                    error = refused.error
                    return IOFailure(GitFailure(name, error) if isinstance(error, str) else error)
        return run
    return wrap


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


def _object_id(kind: bytes, body: bytes) -> str:
    return hashlib.sha1(b"%s %d\0%s" % (kind, len(body), body), usedforsecurity=False).hexdigest()


def _tree_body(tree: Mapping[str, _Entry]) -> bytes:
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


def _ntfs_safe(path: str) -> bool:
    """False for a component Windows reads as ``.git`` (``.git.``, ``GIT~1``, ``.git:x``)."""
    for part in path.encode().split(b"/"):
        for reserved in _NTFS_RESERVED:
            rest = part[len(reserved):]
            if part[: len(reserved)].lower() == reserved and (
                    rest[:1] in (b":", b"\\") or not rest.strip(b" .")):
                return False
    return True


def _signature(author: Signature, at: datetime) -> tuple[Signature, int, int]:
    """The signature as libgit2 stores it: trimmed, the time wrapped, the offset in minutes."""
    offset = at.utcoffset()
    if offset is None:
        raise _RefusalError(GitFailure("commit", "the commit time must be timezone-aware"))
    name = author.name.split("\0", 1)[0]  # pygit2 passes the name on as a C string
    if any(ch in "<>" for ch in name) or any(ch in "<>\0" for ch in author.email):
        raise _RefusalError("a signature may not hold angle brackets, nor an email NUL")
    trimmed = Signature(name.strip(_CRUD), author.email.strip(_CRUD))
    if not trimmed.name or not trimmed.email:
        raise _RefusalError("a signature cannot have an empty name or email")
    return trimmed, math.floor(at.timestamp()) % 2**32, int(offset.total_seconds()) // 60


def _shown_untracked(path: str, index: Mapping[str, _Entry]) -> str:
    """How git's status names an untracked file: the highest folder on its way that
    holds nothing tracked (``folder/``), else the file itself."""
    parts = path.split("/")
    tracked = list(index)
    for n in range(1, len(parts)):
        folder = "/".join(parts[:n]) + "/"
        if not any(p.startswith(folder) for p in tracked):
            return folder
    return path


class InMemoryGit:
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
        self._lock = threading.RLock()
        self._bare = bare
        self._blobs: dict[str, bytes] = {}
        self._trees: dict[str, _Flat] = {}
        """Each tree by id, as the files under it by relative path: enough for every
        read, and the nested form is rebuilt only to hash a new tree."""
        self._commits: dict[str, _Commit] = {}
        self._refs: dict[str, str] = {}
        self._head = f"refs/heads/{initial_branch}"  # HEAD, which is always symbolic here
        self._config: dict[str, str] = {}
        self._index: dict[str, _Entry] = {}
        self._written: dict[str, bytes | None] = {}
        """The working tree where it may differ from the index: a path's bytes, or None
        where there is no file. A path not here holds its index entry's blob (a checkout
        nobody wrote to is its index); ``update_index`` pins each path it moves here
        first, so the index moving never moves a file."""
        self._writes = 0
        self._executable: set[str] = set()
        self._index_locked = False
        self._markers: set[str] = set()

    @property
    def config(self) -> Mapping[str, str]:
        """What ``set_config`` stored, under git's normalized key."""
        with self._lock:
            return MappingProxyType(dict(self._config))

    @property
    def index(self) -> tuple[TreeEntry, ...]:
        """The checkout's index, sorted by path (empty for a bare repository)."""
        with self._lock:
            return tuple(TreeEntry(p, oid, mode) for p, (mode, oid) in sorted(self._index.items()))

    # -- the GitService Protocol ----------------------------------------------------------

    @_operation("resolve")
    def resolve(self, ref: str) -> str:
        return self._peel(ref)

    @_operation("list_tree")
    def list_tree(self, commit: str) -> tuple[TreeEntry, ...]:
        flat = self._tree_of(commit)
        return tuple(TreeEntry(p, oid, mode) for p, (mode, oid) in sorted(flat.items()))

    @_operation("read_blobs")
    def read_blobs(self, blob_ids: Sequence[str]) -> Mapping[str, bytes]:
        if bad := [blob_id for blob_id in blob_ids if not _FULL_SHA.fullmatch(blob_id)]:
            raise _RefusalError(f"not a full object id: {bad[0]!r}")
        return {b: self._blobs[b.lower()] for b in blob_ids if b.lower() in self._blobs}

    @_operation("entries_at")
    def entries_at(self, commit: str, paths: Sequence[str]) -> tuple[TreeEntry, ...]:
        flat = self._tree_of(commit)
        # PygitService walks to a path's directory from the root tree, where one leading
        # "/" names the root again; so a path found there is found here.
        held = ((path, flat.get(path.removeprefix("/"))) for path in paths)
        found = [TreeEntry(path, entry[1], entry[0]) for path, entry in held if entry]
        return tuple(sorted(found, key=lambda e: e.path))

    @_operation("names_in")
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

    @_operation("changed_paths")
    def changed_paths(self, old: str, new: str) -> tuple[str, ...]:
        before, after = self._tree_of(old), self._tree_of(new)
        return tuple(sorted(p for p in before.keys() | after.keys()
                            if before.get(p) != after.get(p)))

    @_operation("commit")
    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> str:
        return self._commit_changes(ref, expected_parent, changes, message, author, at, {})

    @_operation("commit_merge")
    def commit_merge(self, ref: str, expected_parent: str, other_parent: str,
                     changes: Sequence[PathChange], message: str, author: Signature,
                     at: datetime) -> str:
        return self._commit_changes(ref, expected_parent, changes, message, author, at, {},
                                    self._peel(other_parent))

    @_operation("merge_base")
    def merge_base(self, a: str, b: str) -> str | None:
        common = set(self._chain(self._peel(a))) & set(self._chain(self._peel(b)))
        # The best common ancestors: those no other common one descends from. Of
        # several (criss-cross), the newest is taken; the Protocol leaves it open.
        below = {older for sha in common for older in self._chain(sha)[1:]}
        best = common - below
        return max(best, key=lambda sha: (self._commits[sha].time, sha)) if best else None

    @_operation("is_ancestor")
    def is_ancestor(self, a: str, b: str) -> bool:
        return self._peel(a) in self._chain(self._peel(b))

    @_operation("commit")
    def chmod(self, ref: str, expected_parent: str, modes: Mapping[str, int], message: str,
              author: Signature, at: datetime) -> str:
        """Commit new modes for existing files, with ``commit``'s compare-and-swap.

        Not in the Protocol, whose commits only keep modes; but real repositories hold
        executables and symlinks committed by git itself, and tests need such trees.
        """
        return self._commit_changes(ref, expected_parent, (), message, author, at, modes)

    @_operation("create_branch")
    def create_branch(self, name: str, at: str) -> None:
        full = self._branch(name)
        if full == "refs/heads/HEAD" or full.startswith("refs/heads/-"):
            raise _RefusalError(f"git does not create a branch named {name!r}")
        if full in self._refs:
            raise _RefusalError(f"branch {full.removeprefix('refs/heads/')!r} already exists")
        target = self._peel(at)
        self._lock_ref(full)
        self._refs[full] = target

    @_operation("move_ref")
    def move_ref(self, ref: str, expected: str | None, target: str) -> None:
        refname = self._direct_ref(ref)
        sha = self._peel(target)
        self._lock_ref(refname)
        actual = self._refs.get(refname)
        if actual != expected:
            raise _RefusalError(RefMoved(ref, expected, actual))
        self._refs[refname] = sha

    @_operation("worktree_changes")
    def worktree_changes(self) -> tuple[str, ...]:
        """The paths the index holds differently from HEAD (staged), the files written
        or removed since that differ from the index (unstaged), and the untracked ones,
        a folder holding nothing tracked shown once as ``folder/`` as git shows it."""
        head = self._refs.get(self._head)
        tree = {} if head is None else dict(self._tree_of(head))
        if self._bare:
            return ()
        staged = {p for p, (_, oid) in self._index.items() if tree.get(p, (0, None))[1] != oid}
        removed = {p for p in tree if p not in self._index} if self._index else set()
        modified = {p for p, data in self._written.items() if p in self._index
                    and (data is None or _object_id(b"blob", data) != self._index[p][1])}
        untracked = {_shown_untracked(p, self._index) for p, data in self._written.items()
                     if data is not None and p not in self._index}
        return tuple(sorted(staged | removed | modified | untracked))

    def worktree_changes_begun(self) -> Callable[[], IOResult[tuple[str, ...], GitError]]:
        """Listed at once: nothing here is slow enough to overlap."""
        found: IOResult[tuple[str, ...], GitError] = self.worktree_changes()
        return lambda: found

    @_operation("delete_branch")
    def delete_branch(self, name: str) -> None:
        full = self._branch(name)
        if full not in self._refs:
            raise _RefusalError(f"no branch {full.removeprefix('refs/heads/')!r}")
        if self._head == full:
            raise _RefusalError(f"cannot delete {full}: it is the current HEAD")
        del self._refs[full]

    @_operation("branches")
    def branches(self, prefix: str) -> tuple[str, ...]:
        return tuple(sorted(short for ref in self._refs
                            if ref.startswith("refs/heads/")
                            and (short := ref.removeprefix("refs/heads/")).startswith(prefix)))

    @_operation("set_config")
    def set_config(self, key: str, value: str) -> None:
        section, dot, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        if ("\0" in key + value or not dot or not _CONFIG_PART.fullmatch(section)
                or not _CONFIG_PART.fullmatch(name) or "\n" in rest):
            raise _RefusalError(f"invalid config item name {key!r}")
        self._config[_config_key(key)] = value

    @_operation("config_value")
    def config_value(self, key: str) -> str | None:
        """What ``set_config`` stored under ``key`` (there is no user or system level)."""
        return self._config.get(_config_key(key))

    @_operation("local_config_value")
    def local_config_value(self, key: str) -> str | None:
        """``config_value``: the repository's own config is the only level held here."""
        return self._config.get(_config_key(key))

    @_operation("drop_config")
    def drop_config(self, key: str, value: str) -> bool:
        """Removes what ``set_config`` stored under ``key`` when it is ``value``."""
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        normal = f"{section.lower()}.{rest[: len(rest) - len(name)]}{name.lower()}"
        if self._config.get(normal) != value:
            return False
        del self._config[normal]
        return True

    @_operation("merge_attributes")
    def merge_attributes(self, commit: str, paths: Sequence[str]) -> Mapping[str, str]:
        """Read from the ``.gitattributes`` files of ``commit``'s tree alone (there is no
        checkout, ``info/attributes`` or user file in memory), by git's rules: a deeper
        file overrides a shallower one and a later line an earlier one; a pattern
        without a slash matches the name at any depth, one with a slash the path from
        the file's directory (``*`` and ``?`` never crossing a slash, ``**`` any number
        of directories); macros (``binary``, and ``[attr]`` lines of the top file)
        expand."""
        flat = self._tree_of(commit)
        files = {path.rpartition("/")[0] if "/" in path else "": self._blobs[oid]
                 for path, (mode, oid) in flat.items()
                 if path.rsplit("/", 1)[-1] == ".gitattributes" and mode != FILE_MODE_LINK}
        rules = {folder: _attribute_lines(data) for folder, data in files.items()}
        macros: dict[str, tuple[str, ...]] = {"binary": ("-diff", "-merge", "-text")}
        for name, tokens in rules.get("", ((), ()))[0]:
            macros[name] = tokens
        found: dict[str, str] = {}
        for path in paths:
            value = _merge_attribute(path, rules, macros)
            if value is False:
                found[path] = "binary"
            elif isinstance(value, str) and value != "text":
                found[path] = value
        return found

    @_operation("unmerged_paths")
    def unmerged_paths(self) -> tuple[str, ...]:
        """An index in memory is never left mid-merge."""
        return ()

    @_operation("update_index")
    def update_index(self, updates: Sequence[IndexUpdate]) -> tuple[str, ...]:
        """Compare-and-set as ``PygitService`` does: all or nothing, an entry that moved
        skipped, a new entry's object checked the way libgit2 checks it. Like git's,
        it changes the index only: the working tree's files stay as they were."""
        if self._bare or not updates:
            return ()
        index, done = dict(self._index), []
        for update in updates:
            checked = check_tree_path(update.path)
            if not is_successful(checked):
                raise _RefusalError(checked.failure().reason)
            if (index[update.path][1] if update.path in index else None) != update.expected:
                continue
            done.append(update.path)
            if update.blob_id is None:
                index.pop(update.path, None)
                continue
            blob = update.blob_id.lower().ljust(40, "0")  # as pygit2's Oid(hex=...) reads it
            if update.mode not in _INDEX_MODES or not _ntfs_safe(update.path):
                raise _RefusalError(f"invalid entry mode or path for {update.path!r}")
            # libgit2 checks the object is a blob, except for a submodule's commit.
            if not _FULL_SHA.fullmatch(blob) or (
                    update.mode != _GITLINK_MODE and blob not in self._blobs):
                raise _RefusalError(f"no blob {update.blob_id!r} for {update.path!r}")
            index[update.path] = (update.mode, blob)
        # The index moves, the files do not: each updated path keeps the file it had
        # (its old entry's bytes, or none), so only ``put_file`` changes what is there.
        for path in done:
            if path not in self._written:
                self._written[path] = self._file_bytes(path)
        self._index = index
        return tuple(sorted(done))

    @_operation("worktree_blobs")
    def worktree_blobs(self, paths: Sequence[str],
                       likely: Mapping[str, Collection[str]] | None = None
                       ) -> Mapping[str, str]:
        """Each asked path's file, as its blob id (no filters here: a file is its
        bytes); a path with no file is left out."""
        found: dict[str, str] = {}
        for path in paths:
            kind = self._file_bytes(path)
            if kind is not None:
                found[path] = _object_id(b"blob", kind)
        return found

    @_operation("checkout_bytes")
    def checkout_bytes(self, blobs: Mapping[str, str]) -> Mapping[str, bytes]:
        """No attributes, no ``core.autocrlf``: a blob is checked out as it is."""
        if bad := [blob_id for blob_id in blobs.values() if not _FULL_SHA.fullmatch(blob_id)]:
            raise _RefusalError(f"not a full object id: {bad[0]!r}")
        return {path: self._blobs[b.lower()] for path, b in blobs.items()
                if b.lower() in self._blobs}

    @_operation("index_entries")
    def index_entries(self, paths: Collection[str] | None = None) -> Mapping[str, str]:
        """The index as path -> blob id (of ``paths`` only, when given); empty for a
        bare repository."""
        wanted = None if paths is None else set(paths)
        return MappingProxyType({path: oid for path, (_, oid) in self._index.items()
                                 if wanted is None or path in wanted})

    @_operation("clear_stale_index_lock")
    def clear_stale_index_lock(self) -> bool:
        """An index in memory has no lock file to leave behind."""
        return False

    # -- the working tree's files (see ``Checkout``) -----------------------------------

    def _file_bytes(self, path: str) -> bytes | None:
        """The bytes of the file at ``path``; None when none is there."""
        if self._bare:
            return None
        if path in self._written:
            return self._written[path]
        entry = self._index.get(path)
        if entry is None or entry[0] in (FILE_MODE_LINK, _GITLINK_MODE):
            return None
        return self._blobs.get(entry[1])

    def _paths(self) -> set[str]:
        present = {p for p, data in self._written.items() if data is not None}
        return present | {p for p in self._index if p not in self._written}

    def file_kind(self, path: str) -> bool | None:
        with self._lock:
            if self._bare:
                return None
            if self._file_bytes(path) is not None:
                return True
            parts = path.split("/")
            for n in range(1, len(parts) + 1):
                step = "/".join(parts[:n])
                entry = self._index.get(step) if step not in self._written else None
                if entry is not None and entry[0] in (FILE_MODE_LINK, _GITLINK_MODE):
                    return False  # a link on the way, or a submodule's folder
            prefix = path + "/"
            return False if any(p.startswith(prefix) for p in self._paths()) else None

    def file_stat(self, path: str) -> FileStat | None:
        with self._lock:
            data = self._file_bytes(path)
            return None if data is None else self._stat(path, data)

    def _stat(self, path: str, data: bytes) -> FileStat:
        mode = 0o100755 if path in self._executable else 0o100644
        return FileStat(0, 0, self._writes, 0, 0, 0, mode, 0, 0, len(data))

    def put_file(self, path: str, data: bytes | None, *, executable: bool = False
                 ) -> FileStat | bool:
        with self._lock:
            parts = path.split("/")
            if self._bare or not is_successful(check_tree_path(path)) or any(
                    self._file_bytes("/".join(parts[:n])) is not None
                    for n in range(1, len(parts))):
                return False
            if data is None:
                if self._file_bytes(path) is None:
                    return False
                self._written[path] = None
                return True
            if any(p.startswith(path + "/") for p in self._paths()):
                return False
            self._writes += 1
            self._written[path] = bytes(data)
            (self._executable.add if executable else self._executable.discard)(path)
            return self._stat(path, data)

    def files_under(self, directory: str) -> tuple[str, ...]:
        with self._lock:
            prefix = directory if directory.endswith("/") else directory + "/"
            return tuple(sorted(p for p in self._paths() if p.startswith(prefix)
                                and ".git" not in p.split("/")))

    def index_locked(self) -> bool:
        with self._lock:
            return not self._bare and self._index_locked

    def operation_in_progress(self) -> tuple[str, str] | None:
        with self._lock:
            for marker, name, fix in IN_PROGRESS:
                if marker in self._markers:
                    return name, fix
            return None

    # -- what a person does beside memhtml, for tests ------------------------------------

    def person_writes(self, path: str, data: bytes | None) -> None:
        """A person's editor writes (or, for None, deletes) a working-tree file."""
        with self._lock:
            self._written[path] = None if data is None else bytes(data)

    def person_holds_index_lock(self, held: bool) -> None:
        """A person's git takes (True) or releases git's index lock."""
        with self._lock:
            self._index_locked = held

    def person_leaves(self, marker: str, present: bool = True) -> None:
        """A person's git leaves (or clears) an operation's marker, e.g. ``MERGE_HEAD``."""
        with self._lock:
            (self._markers.add if present else self._markers.discard)(marker)

    @_operation("commit_info")
    def commit_info(self, sha: str) -> CommitInfo:
        return self._info(self._peel(sha))

    @_operation("commits_between")
    def commits_between(self, old: str | None, new: str) -> tuple[str, ...]:
        # For a linear history libgit2's topological-time order is the chain, oldest
        # first; across merges the set is git's, the order of unrelated commits may not be.
        chain = self._chain(self._peel(new))
        hidden = set() if old is None else set(self._chain(self._peel(old)))
        return tuple(reversed([sha for sha in chain if sha not in hidden]))

    @_operation("commits_touching")
    def commits_touching(self, ref: str, path: str, limit: int) -> tuple[CommitInfo, ...]:
        checked = check_tree_path(path)
        if not is_successful(checked):
            raise _RefusalError(checked.failure().reason)
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

    @_operation("commits_mentioning")
    def commits_mentioning(self, ref: str, text: str, limit: int) -> tuple[CommitInfo, ...]:
        found: list[CommitInfo] = []
        for sha in self._chain(self._peel(ref)) if limit > 0 else ():
            if text in self._commits[sha].message:
                found.append(self._info(sha))
                if len(found) >= limit:
                    break
        return tuple(found)

    @_operation("arrivals")
    def arrivals(self, ref: str, paths: Collection[str]) -> Mapping[str, int]:
        return {path: arrival.steps
                for path, arrival in self._arrived(self._peel(ref), paths, None).items()}

    @_operation("arrived")
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
    def _moved_from(before: _Flat, after: _Flat, came: list[str],
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

    def _at(self, sha: str, path: str) -> tuple[_Entry | None, list[tuple[str, _Entry]]] | None:
        """What a commit holds at ``path``, file or directory: equal exactly when git's
        entries (id and mode) there are, since equal directories have equal tree ids."""
        flat, under = self._trees[self._commits[sha].tree], path + "/"
        held = (flat.get(path), sorted((p, e) for p, e in flat.items() if p.startswith(under)))
        return held if held != (None, []) else None

    def _tree_of(self, rev: str) -> _Flat:
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
            raise _RefusalError(NotFound(f"commit {rev!r}"))
        kind = self._kind(oid)
        if kind != "commit":
            raise _RefusalError(GitFailure("resolve", f"{rev!r} names a {kind}, not a commit"))
        return oid

    def _lookup(self, rev: str) -> str | None:
        """libgit2's order: a whole sha; the branch (before a tag, as PygitService prefers);
        each short-name rule in turn, where the last rule's verdict on the name alone
        decides "invalid" over "not found"; then a sha prefix."""
        if _FULL_SHA.fullmatch(rev):
            return rev.lower() if self._kind(rev.lower()) else None
        name = "HEAD" if rev == "@" else rev
        candidates = [f"refs/heads/{rev}", *(rule.format(name) for rule in _DWIM)]
        # Every stored ref was checked when made, so an invalid candidate cannot match.
        if (target := next(filter(None, map(self._target, candidates)), None)) is not None:
            return target
        if not _valid_ref_name(candidates[-1]):
            raise _RefusalError(f"invalid revision {rev!r}")
        if not _HEX.fullmatch(rev):
            return None
        if len(rev) < _MIN_PREFIX:
            raise _RefusalError(f"ambiguous sha prefix {rev!r}: too short")
        found = [oid for store in (self._commits, self._trees, self._blobs)
                 for oid in store if oid.startswith(rev.lower())]
        if len(found) > 1:
            raise _RefusalError(f"ambiguous sha prefix {rev!r}")
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
            raise _RefusalError(f"not a valid branch name: {name!r}")
        return full

    def _direct_ref(self, ref: str) -> str:
        """The direct ref ``ref`` ends at: ``HEAD`` moves the branch it names."""
        name = ref if ref == "HEAD" or ref.startswith("refs/") else f"refs/heads/{ref}"
        if not _valid_ref_name(name):
            raise _RefusalError(f"not a valid ref name: {ref!r}")
        return self._head if name == "HEAD" else name

    def _lock_ref(self, name: str) -> None:
        """Refs are files under ``.git``, so ``a`` and ``a/b`` cannot both exist: git
        cannot take the lock of the one that would be created."""
        if any(ref.startswith(f"{name}/") or name.startswith(f"{ref}/") for ref in self._refs):
            raise _RefusalError(f"could not lock {name}: a ref is in the way")

    def _write_tree(self, flat: _Flat) -> str:
        entries: dict[str, _Entry] = {}
        subtrees: dict[str, dict[str, _Entry]] = {}
        for path, entry in flat.items():
            head, slash, rest = path.partition("/")
            if slash:
                subtrees.setdefault(head, {})[rest] = entry
            else:
                entries[head] = entry
        entries.update({name: (_TREE_MODE, self._write_tree(sub))
                        for name, sub in subtrees.items()})
        oid = _object_id(b"tree", _tree_body(entries))
        self._trees.setdefault(oid, MappingProxyType(dict(flat)))
        return oid

    def _apply(self, flat: dict[str, _Entry], change: PathChange) -> None:
        """One change as libgit2's index takes it: a write keeps the mode it replaces, and
        one that would displace a file or directory of its name is refused."""
        path = change.path
        if change.data is None:
            flat.pop(path, None)
            return
        blob = _object_id(b"blob", change.data)
        self._blobs[blob] = change.data
        if not _ntfs_safe(path):
            raise _RefusalError(f"invalid path: {path!r}")
        parts = path.split("/")
        if any("/".join(parts[:n]) in flat for n in range(1, len(parts))) or any(
                p.startswith(path + "/") for p in flat):
            raise _RefusalError(f"{path!r} collides with a file or directory of the same name")
        if change.mode is not None and change.mode not in _INDEX_MODES - {_GITLINK_MODE}:
            raise _RefusalError(f"mode {change.mode:o} for {path!r} is not a file's or a link's")
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
                raise _RefusalError(f"{refused.path!r}: {refused.reason}")
        person, seconds, offset = _signature(author, at)
        refname = self._direct_ref(ref)
        parent = None if expected_parent is None else self._peel(expected_parent)
        flat = {} if parent is None else dict(self._tree_of(parent))
        for change in changes:
            self._apply(flat, change)
        for path, mode in modes.items():
            if path not in flat or mode not in _INDEX_MODES - {_GITLINK_MODE}:
                raise _RefusalError(f"cannot set mode {mode:o} on {path!r}")
            flat[path] = (mode, flat[path][1])
        tree = self._write_tree(flat)
        if parent is not None and other_parent is None and tree == self._commits[parent].tree:
            sha = parent  # nothing changed: no commit, but the swap is still checked
        else:
            # Written before the swap, as libgit2 does: a lost swap leaves only garbage.
            parents = () if parent is None else (parent,)
            made = _Commit(tree, parents + ((other_parent,) if other_parent else ()), person,
                           seconds, offset, message.split("\0", 1)[0])
            sha = _object_id(b"commit", made.body())
            self._commits[sha] = made
        self._lock_ref(refname)
        actual = self._refs.get(refname)
        if actual != parent:
            raise _RefusalError(RefMoved(ref, parent, actual))
        self._refs[refname] = sha
        return sha
