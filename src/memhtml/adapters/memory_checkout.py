"""The checkout half of the in-memory twin (``Checkout``): the index and its
compare-and-set, the working tree where it differs from the index, the index lock and
an operation's markers a person's git leaves, and the repository's config.

``InMemoryGit`` inherits it beside its repository half (``memhtml.adapters.memory_git``),
as ``PygitService`` inherits ``git_checkout.PygitCheckout``: the two ports are two
bodies of state and rules, and the one thing this half needs of the other is a
commit's tree (``_tree_of``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TypeAlias

from returns.io import IOResult
from returns.pipeline import is_successful

from memhtml.adapters.memory_git_base import (
    FULL_SHA,
    GITLINK_MODE,
    INDEX_MODES,
    Entry,
    Flat,
    InMemoryGitBase,
    RefusalError,
    git_operation,
    ntfs_safe,
    object_id,
)
from memhtml.contracts.errors import GitError
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import (
    FILE_MODE_LINK,
    IN_PROGRESS,
    FileStat,
    IndexUpdate,
    TreeEntry,
)

_CONFIG_PART = re.compile(r"[A-Za-z0-9-]+")


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

def _shown_untracked(path: str, index: Mapping[str, Entry]) -> str:
    """How git's status names an untracked file: the highest folder on its way that
    holds nothing tracked (``folder/``), else the file itself."""
    parts = path.split("/")
    tracked = list(index)
    for n in range(1, len(parts)):
        folder = "/".join(parts[:n]) + "/"
        if not any(p.startswith(folder) for p in tracked):
            return folder
    return path


class InMemoryCheckout(InMemoryGitBase, ABC):
    """The ``Checkout`` port over the state ``InMemoryGit`` holds: its index, the files
    written or removed since (``_written``), the lock and markers a person's git
    leaves, and the config; the class that inherits it reads commits' trees."""

    def __init__(self, initial_branch: str = "main", *, bare: bool = False) -> None:
        super().__init__(initial_branch, bare=bare)
        self._config: dict[str, str] = {}
        self._index: dict[str, Entry] = {}
        self._written: dict[str, bytes | None] = {}
        """The working tree where it may differ from the index: a path's bytes, or None
        where there is no file. A path not here holds its index entry's blob (a checkout
        nobody wrote to is its index); ``update_index`` pins each path it moves here
        first, so the index moving never moves a file."""
        self._writes = 0
        self._executable: set[str] = set()
        self._index_locked = False
        self._markers: set[str] = set()

    @abstractmethod
    def _tree_of(self, rev: str) -> Flat:
        """The files of the commit ``rev`` names, by path; a refusal when it names none."""

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

    # -- the Checkout Protocol ------------------------------------------------------------

    @git_operation("worktree_changes")
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
                    and (data is None or object_id(b"blob", data) != self._index[p][1])}
        untracked = {_shown_untracked(p, self._index) for p, data in self._written.items()
                     if data is not None and p not in self._index}
        return tuple(sorted(staged | removed | modified | untracked))

    def worktree_changes_begun(self) -> Callable[[], IOResult[tuple[str, ...], GitError]]:
        """Listed at once: nothing here is slow enough to overlap."""
        found: IOResult[tuple[str, ...], GitError] = self.worktree_changes()
        return lambda: found

    @git_operation("set_config")
    def set_config(self, key: str, value: str) -> None:
        section, dot, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        if ("\0" in key + value or not dot or not _CONFIG_PART.fullmatch(section)
                or not _CONFIG_PART.fullmatch(name) or "\n" in rest):
            raise RefusalError(f"invalid config item name {key!r}")
        self._config[_config_key(key)] = value

    @git_operation("config_value")
    def config_value(self, key: str) -> str | None:
        """What ``set_config`` stored under ``key`` (there is no user or system level)."""
        return self._config.get(_config_key(key))

    @git_operation("local_config_value")
    def local_config_value(self, key: str) -> str | None:
        """``config_value``: the repository's own config is the only level held here."""
        return self._config.get(_config_key(key))

    @git_operation("drop_config")
    def drop_config(self, key: str, value: str) -> bool:
        """Removes what ``set_config`` stored under ``key`` when it is ``value``."""
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        normal = f"{section.lower()}.{rest[: len(rest) - len(name)]}{name.lower()}"
        if self._config.get(normal) != value:
            return False
        del self._config[normal]
        return True

    @git_operation("merge_attributes")
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

    @git_operation("unmerged_paths")
    def unmerged_paths(self) -> tuple[str, ...]:
        """An index in memory is never left mid-merge."""
        return ()

    @git_operation("update_index")
    def update_index(self, updates: Sequence[IndexUpdate], tip: str | None = None
                     ) -> tuple[str, ...]:
        """Compare-and-set as ``PygitService`` does: all or nothing, an entry that moved
        skipped, a new entry's object checked the way libgit2 checks it, nothing when
        HEAD has left ``tip``. Like git's, it changes the index only: the working
        tree's files stay as they were."""
        if self._bare or not updates:
            return ()
        if tip is not None and self._refs.get(self._head) != tip:
            return ()
        index, done = dict(self._index), []
        for update in updates:
            checked = check_tree_path(update.path)
            if not is_successful(checked):
                raise RefusalError(checked.failure().reason)
            if (index[update.path][1] if update.path in index else None) != update.expected:
                continue
            done.append(update.path)
            if update.blob_id is None:
                index.pop(update.path, None)
                continue
            blob = update.blob_id.lower().ljust(40, "0")  # as pygit2's Oid(hex=...) reads it
            if update.mode not in INDEX_MODES or not ntfs_safe(update.path):
                raise RefusalError(f"invalid entry mode or path for {update.path!r}")
            # libgit2 checks the object is a blob, except for a submodule's commit.
            if not FULL_SHA.fullmatch(blob) or (
                    update.mode != GITLINK_MODE and blob not in self._blobs):
                raise RefusalError(f"no blob {update.blob_id!r} for {update.path!r}")
            index[update.path] = (update.mode, blob)
        # The index moves, the files do not: each updated path keeps the file it had
        # (its old entry's bytes, or none), so only ``put_file`` changes what is there.
        for path in done:
            if path not in self._written:
                self._written[path] = self._file_bytes(path)
        self._index = index
        return tuple(sorted(done))

    @git_operation("worktree_blobs")
    def worktree_blobs(self, paths: Sequence[str],
                       likely: Mapping[str, Collection[str]] | None = None
                       ) -> Mapping[str, str]:
        """Each asked path's file, as its blob id (no filters here: a file is its
        bytes); a path with no file is left out."""
        found: dict[str, str] = {}
        for path in paths:
            kind = self._file_bytes(path)
            if kind is not None:
                found[path] = object_id(b"blob", kind)
        return found

    @git_operation("checkout_bytes")
    def checkout_bytes(self, blobs: Mapping[str, str]) -> Mapping[str, bytes]:
        """No attributes, no ``core.autocrlf``: a blob is checked out as it is."""
        if bad := [blob_id for blob_id in blobs.values() if not FULL_SHA.fullmatch(blob_id)]:
            raise RefusalError(f"not a full object id: {bad[0]!r}")
        return {path: self._blobs[b.lower()] for path, b in blobs.items()
                if b.lower() in self._blobs}

    @git_operation("index_entries")
    def index_entries(self, paths: Collection[str] | None = None) -> Mapping[str, str]:
        """The index as path -> blob id (of ``paths`` only, when given); empty for a
        bare repository."""
        wanted = None if paths is None else set(paths)
        return MappingProxyType({path: oid for path, (_, oid) in self._index.items()
                                 if wanted is None or path in wanted})

    @git_operation("clear_stale_index_lock")
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
        if entry is None or entry[0] in (FILE_MODE_LINK, GITLINK_MODE):
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
                if entry is not None and entry[0] in (FILE_MODE_LINK, GITLINK_MODE):
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
