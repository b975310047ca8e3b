"""The checkout half of the pygit2 adapter (``Checkout``): the index read and set by
compare-and-set, the working tree's files, the index lock a dead writer left, and the
repository's own config. How git sees the working tree (status, the stat check, clean
and smudge filters) is read by ``git_worktree``, which this half calls.

``PygitService`` inherits it beside its repository half (``memhtml.adapters.git``),
so one handle serves both ports over one ``pygit2.Repository``.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import socket
import stat
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import (
    AttrCheck,
    ConfigLevel,
    FileMode,
    ObjectType,
)
from pygit2.errors import check_error
from pygit2.ffi import C
from returns.io import IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.adapters.git_guard import guarded
from memhtml.adapters.git_worktree import (
    checkout_bytes_of,
    checkout_view,
    may_filter,
    plain_blob,
    plain_config,
    status_finished,
    status_paths,
    status_started,
    worktree_blobs_of,
)
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.local_files import create_exclusive, read_regular, write_replacing
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import IN_PROGRESS, FileStat, IndexUpdate

_INDEX_LOCK_WAIT_SECONDS = 2.0
"""How long ``update_index`` waits for another writer to release the index lock."""
_GITLINK_MODE = 0o160000
"""A gitlink (a submodule's commit): names an object of another repository, so its id
is never looked up in this one."""

_OWN_CONFIG_LEVELS = frozenset({ConfigLevel.LOCAL, ConfigLevel.WORKTREE})
"""The repository's own config files: what ``set_config`` writes, and no user's."""


def _config_key(key: str) -> str:
    """A config key as git compares it: section and name folded, a subsection as
    written (``Core.Sub Section.Name`` is ``core.Sub Section.name``)."""
    section, _, rest = key.partition(".")
    head, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{head}{dot}{name.lower()}"


def _int32(value: int) -> int:
    """``value`` as the signed 32 bits libgit2's index time holds (git keeps 32)."""
    low = value & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def _add_entry(index: pygit2.Index, entry: pygit2.IndexEntry, stat: FileStat | None) -> None:
    """``index.add(entry)``, with ``stat`` written into the entry as git writes a file's
    stat data (each field cut to the 32 bits the index keeps)."""
    if stat is None:
        index.add(entry)
        return
    centry, keep = entry._to_c()
    centry.ctime.seconds = _int32(stat.ctime_s)
    centry.ctime.nanoseconds = stat.ctime_ns
    centry.mtime.seconds = _int32(stat.mtime_s)
    centry.mtime.nanoseconds = stat.mtime_ns
    centry.dev = stat.dev & 0xFFFFFFFF
    centry.ino = stat.ino & 0xFFFFFFFF
    centry.uid = stat.uid & 0xFFFFFFFF
    centry.gid = stat.gid & 0xFFFFFFFF
    centry.file_size = stat.size & 0xFFFFFFFF
    check_error(C.git_index_add(index._index, centry), io=True)
    del keep


def _unchanged_since(workdir: str | None, update: IndexUpdate) -> FileStat | None:
    """``update.stat`` when the working-tree file still has it (read under the index
    lock): only then does its entry say the file holds the blob; else None."""
    if update.stat is None or workdir is None:
        return None
    try:
        now = FileStat.of(os.lstat(Path(workdir) / update.path))
    except OSError:
        return None
    return update.stat if now == update.stat else None


def _index_entries_of(index: pygit2.Index, paths: Collection[str]) -> dict[str, str]:
    """The stage 0 entries of ``paths`` that ``index`` holds, each found by a search of
    the sorted index rather than by listing it."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            entry = index[path]
        except (KeyError, ValueError):
            continue
        found[path] = str(entry.id)
    return found


_LOCK_OWNER = b"memhtml-lock "


def _owner_line() -> bytes:
    return _LOCK_OWNER + f"{socket.gethostname()} {os.getpid()}\n".encode()


def _take_lock(lock: Path, wait_seconds: float) -> bool:
    """Create ``lock`` exclusively (git's own protocol for its lock files), waiting up
    to ``wait_seconds`` while another process holds it.

    The lock names its owner (host and pid; git never reads a lock's content), so a
    lock left by a memhtml process that died holding it can be told from one a live
    git holds, and cleared by the next command (``clear_stale_index_lock``). The
    owner is written to a private file first and hard-linked into place, which is as
    exclusive as git's own ``O_EXCL`` create: the lock never exists without its owner.
    """
    deadline = time.monotonic() + wait_seconds
    pause = 0.001
    claim = lock.with_name(f"memhtml-lock-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    with create_exclusive(claim) as private:
        private.write(_owner_line())
    try:
        while True:
            try:
                os.link(claim, lock)
            except FileExistsError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
            else:
                return True
    finally:
        claim.unlink(missing_ok=True)


def _dead_pid(name: str) -> bool:
    """For ``memhtml-<kind>-<pid>-<token>.tmp``: True when that process is gone."""
    parts = name.split("-")
    return len(parts) >= 3 and parts[2].isdigit() and not _alive(int(parts[2]))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _dead_owner(lock: Path) -> bool:
    """True when ``lock`` was taken by a memhtml process on this host that is gone."""
    try:
        # git's lock, read only as a regular file: a FIFO there must not hold the command.
        content = read_regular(lock, 200)
    except OSError:
        return False
    if not content.startswith(_LOCK_OWNER):
        return False
    fields = content[len(_LOCK_OWNER):].decode("utf-8", "replace").split()
    if len(fields) != 2 or fields[0] != socket.gethostname() or not fields[1].isdigit():
        return False
    return not _alive(int(fields[1]))


_INDEX_READS = 6
_INDEX_READ_PAUSE_S = 0.005
"""Attempts at reading git's index while another process replaces it, and the pause
before the next (growing by this much each time)."""


# -- the working tree's files ----------------------------------------------------------


def _file_kind(root: Path, path: str) -> bool | None:
    # Joined as strings: a ``Path`` built for each step cost more than the lstat.
    current = os.fspath(root)
    try:
        mode = 0
        for part in path.split("/"):
            current = os.path.join(current, part)
            mode = os.lstat(current).st_mode
            if stat.S_ISLNK(mode):
                return False
        return stat.S_ISREG(mode)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        return None if error.errno == errno.ENAMETOOLONG else False


def _put_file(root: Path, path: str, data: bytes | None, executable: bool) -> FileStat | bool:
    target = root / path
    try:
        if data is None:
            target.unlink()
            parent = target.parent
            while parent != root and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
            return True
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        # Created as git's checkout creates a file (0777 or 0666, under the umask); a
        # full disk or a refused rename leaves no half-written copy behind.
        write_replacing(target, data, temporary, mode=0o777 if executable else 0o666)
        return FileStat.of(os.lstat(target))
    except OSError:
        return False


def _files_under(root: Path, directory: str) -> tuple[str, ...]:
    folder = root / directory
    try:
        return tuple(sorted(f.relative_to(root).as_posix() for f in folder.rglob("*")
                            if f.is_file() and ".git" not in f.relative_to(root).parts))
    except OSError:
        return ()


class PygitCheckout:
    """The ``Checkout`` port over one ``pygit2.Repository`` (``_repo``, set by the
    class that inherits it)."""

    _repo: pygit2.Repository
    _recent_blobs: Mapping[str, bytes]
    """The blobs the last commit through this handle wrote, by id: what a checkout
    brought up to that commit reads, and need not read back from the object database
    (a blob's id is the hash of its bytes)."""

    def worktree_changes(self) -> IOResult[tuple[str, ...], GitError]:
        def changes() -> Result[tuple[str, ...], GitError]:
            if self._repo.is_bare:
                return Success(())
            return status_paths(self._repo)

        return guarded("worktree_changes", changes)

    def worktree_changes_begun(self) -> Callable[[], IOResult[tuple[str, ...], GitError]]:
        """Git itself walks the checkout, in a process of its own, while this one goes
        on: libgit2 holds the interpreter for the whole walk (0.3-0.4 s over 100,000
        files), so a thread could not overlap it with the snapshot's decode. The
        program's listing is the same as ``worktree_changes``' (a law checks them on
        generated checkouts); without a usable ``git``, or from output that does not
        parse, libgit2 lists the paths when they are asked for.

        Git would run programs its configuration names while it walks (a filter
        driver's clean command, on any file a committed ``.gitattributes`` assigns to
        it; an fsmonitor hook; the same in a submodule's own configuration); libgit2
        runs none. So git walks only when its own view of its configuration (every
        file, include and variable it reads, as ``git config --list`` shows them)
        names no filter driver and no fsmonitor, does not fold case (where the two
        list differently), and the checkout has no ``.gitmodules``; otherwise libgit2
        walks as before. What a clone's tree says never decides that a program runs
        (tests plant drivers and hooks that would leave a mark)."""
        if self._repo.is_bare or self._repo.workdir is None:
            return lambda: IOSuccess(())
        git_dir, worktree = Path(self._repo.path), Path(self._repo.workdir)
        if (worktree / ".gitmodules").exists() or not plain_config(git_dir, worktree):
            return self.worktree_changes
        walk = status_started(git_dir, worktree)

        def answer() -> IOResult[tuple[str, ...], GitError]:
            listed = None if walk is None else status_finished(walk)
            return IOSuccess(listed) if listed is not None else self.worktree_changes()

        return answer

    def set_config(self, key: str, value: str) -> IOResult[None, GitError]:
        """Written to the repository's own config file, never the user's global one."""
        return guarded("set_config", lambda: self._set_config(key, value))

    def config_value(self, key: str) -> IOResult[str | None, GitError]:
        """Every level git reads (repository, user, system), as ``git config`` does."""

        def read() -> Result[str | None, GitError]:
            try:
                return Success(str(self._repo.config[key]))
            except KeyError:
                return Success(None)

        return guarded("config_value", read)

    def local_config_value(self, key: str) -> IOResult[str | None, GitError]:
        """The repository's own levels only (``.git/config`` and what it includes, and
        ``config.worktree``): libgit2 lists entries from the lowest level up, each file
        in order, so the last one found there is the one git would answer with."""

        def read() -> Result[str | None, GitError]:
            wanted = _config_key(key)
            found: str | None = None
            for entry in self._repo.config:
                if entry.level in _OWN_CONFIG_LEVELS and _config_key(entry.name) == wanted:
                    found = entry.value
            return Success(found)

        return guarded("local_config_value", read)

    def drop_config(self, key: str, value: str) -> IOResult[bool, GitError]:
        """Only the repository's own file (``<git-dir>/config``) is looked at and
        written; the user's and the system's are never touched."""

        def drop() -> Result[bool, GitError]:
            own = pygit2.Config(str(Path(self._repo.path) / "config"))
            try:
                found = own[key]
            except KeyError:
                return Success(False)
            if str(found) != value:
                return Success(False)
            del own[key]
            return Success(True)

        return guarded("drop_config", drop)

    def merge_attributes(self, commit: str, paths: Sequence[str]
                         ) -> IOResult[Mapping[str, str], GitError]:
        """libgit2's reading of git's attribute files, with ``commit``'s tree included
        (so a bare repository, and a checkout whose files differ from the commit, are
        read as the commit has them too)."""

        def read() -> Result[Mapping[str, str], GitError]:
            flags = AttrCheck.FILE_THEN_INDEX | AttrCheck.INCLUDE_COMMIT
            oid = self._repo.revparse_single(commit).peel(pygit2.Commit).id
            found: dict[str, str] = {}
            for path in paths:
                value = self._repo.get_attr(path, "merge", flags, oid)
                if value is False:
                    found[path] = "binary"
                elif isinstance(value, str) and value != "text":
                    found[path] = value
            return Success(found)

        return guarded("merge_attributes", read)

    def unmerged_paths(self) -> IOResult[tuple[str, ...], GitError]:
        def unmerged() -> Result[tuple[str, ...], GitError]:
            index_path = Path(self._repo.path) / "index"
            if self._repo.is_bare or not index_path.exists():
                return Success(())
            # Read afresh: the repository's own index object is a cache of an earlier read.
            conflicts = pygit2.Index(str(index_path)).conflicts
            if conflicts is None:
                return Success(())
            return Success(tuple(sorted({
                entry.path for stages in conflicts for entry in stages if entry is not None})))

        return guarded("unmerged_paths", unmerged)

    def update_index(self, updates: Sequence[IndexUpdate], tip: str | None = None
                     ) -> IOResult[tuple[str, ...], GitError]:
        """Compare-and-set on the checkout's index, read and written under git's lock.

        ``index.lock`` is taken the way git takes it (created exclusively) before the
        index is read, and held until the new index has replaced the old, so a
        person's ``git add`` can neither slip in between (and be lost) nor be
        overwritten. A lock held by another git command is waited for briefly, then
        reported. An entry that no longer holds ``expected`` is skipped, not
        overwritten: it is something the user staged. An entry carries the stat data
        its update recorded when the working-tree file, looked at under the lock, still
        has it (git's own checkout records the same); otherwise none, and git looks at
        that file's content on its next status. With ``tip``, HEAD is read under the
        lock and nothing is updated when it no longer resolves to ``tip``.
        """
        return guarded("update_index", lambda: self._update_index(updates, tip))

    def worktree_blobs(self, paths: Sequence[str],
                       likely: Mapping[str, Collection[str]] | None = None
                       ) -> IOResult[Mapping[str, str], GitError]:
        """Where no filter can apply (``may_filter``: no ``core.autocrlf``, no attributes
        file that could name one) and a file's bytes are a blob the caller named as
        ``likely``, that blob is the answer (the stat check could only confirm it) and
        the index is never opened: 0.1-0.3 s at 100,000 files. Every other path takes
        the exact route, with the checkout opened afresh, so a long-lived handle (the
        MCP server's) answers with the index, config and attributes of now."""

        def blobs() -> Result[Mapping[str, str], GitError]:
            workdir = self._repo.workdir
            if not paths or self._repo.is_bare or workdir is None:
                return Success({})
            found: dict[str, str] = {}
            rest = list(paths)
            if not may_filter(self._repo, paths):
                expected = likely or {}
                rest = []
                for path in paths:
                    blob = plain_blob(Path(workdir), path)
                    if blob is not None and blob in expected.get(path, ()):
                        found[path] = blob
                    else:
                        rest.append(path)
            view = checkout_view(self._repo) if rest else None
            if view is not None:
                found.update(worktree_blobs_of(view, rest))
            return Success(found)

        return guarded("worktree_blobs", blobs)

    def checkout_bytes(self, blobs: Mapping[str, str]) -> IOResult[Mapping[str, bytes], GitError]:
        """A bare repository has no checkout to filter for: its blobs as they are."""

        def checked_out() -> Result[Mapping[str, bytes], GitError]:
            filtering = bool(blobs) and not self._repo.is_bare and may_filter(
                self._repo, list(blobs))
            view = checkout_view(self._repo) if filtering else None
            return checkout_bytes_of(view, self._repo, blobs,
                                     getattr(self, "_recent_blobs", {}))

        return guarded("checkout_bytes", checked_out)

    def index_entries(self, paths: Collection[str] | None = None
                      ) -> IOResult[Mapping[str, str], GitError]:
        return guarded("index_entries", lambda: self._index_entries(paths))

    def clear_stale_index_lock(self) -> IOResult[bool, GitError]:
        """Remove ``index.lock`` when a memhtml process on this host took it and has
        died (killed mid-update); a lock of a live process, or of git, is left."""

        def clear() -> Result[bool, GitError]:
            git_dir = Path(self._repo.path)
            lock = git_dir / "index.lock"
            # Claims and scratch indexes of dead processes are litter, never state.
            for litter in (*git_dir.glob("memhtml-lock-*.tmp"),
                           *git_dir.glob("memhtml-index-*.tmp")):
                if _dead_pid(litter.name):
                    litter.unlink(missing_ok=True)
            if self._repo.is_bare or not _dead_owner(lock):
                return Success(False)
            lock.unlink(missing_ok=True)
            return Success(True)

        return guarded("clear_stale_index_lock", clear)

    # -- internals -------------------------------------------------------------------

    def _set_config(self, key: str, value: str) -> Result[None, GitError]:
        self._repo.config[key] = value
        return Success(None)

    def _is_entry_object(self, update: IndexUpdate) -> bool:
        """The object an index entry names is a blob this repository holds; a
        submodule's entry names a commit of another repository, so it is not looked up.
        (A repository's own index checks this; the standalone index written under the
        lock does not.)"""
        if update.mode == _GITLINK_MODE:
            return True
        if update.blob_id in getattr(self, "_recent_blobs", {}):
            return True
        try:
            found = self._repo.get(update.blob_id or "")
        except ValueError:
            return False
        if found is None:
            return False
        return bool(found.type == ObjectType.BLOB)

    def _index_entries(self, paths: Collection[str] | None
                       ) -> Result[Mapping[str, str], GitError]:
        if self._repo.is_bare:
            return Success({})
        index_path = Path(self._repo.path) / "index"
        # Read without git's lock (a read must not hold up the person's git), the file
        # can be replaced under the reader, which then sees a torn file ("extension is
        # truncated"): the read is retried, and only a file that stays unreadable fails.
        for attempt in range(_INDEX_READS):
            if not index_path.exists():
                return Success({})
            try:
                index = pygit2.Index(str(index_path))
                if paths is None:
                    return Success({entry.path: str(entry.id) for entry in index})
                return Success(_index_entries_of(index, paths))
            except pygit2.GitError:
                if attempt == _INDEX_READS - 1:
                    raise
                time.sleep(_INDEX_READ_PAUSE_S * (attempt + 1))
        return Success({})

    def _update_index(self, updates: Sequence[IndexUpdate], tip: str | None
                      ) -> Result[tuple[str, ...], GitError]:
        if self._repo.is_bare or not updates:
            return Success(())
        for update in updates:
            checked = check_tree_path(update.path)
            if not is_successful(checked):
                return Failure(GitFailure("update_index", checked.failure().reason))
            if update.blob_id is not None and not self._is_entry_object(update):
                return Failure(GitFailure("update_index", f"no blob {update.blob_id!r} for "
                                                          f"{update.path!r}"))
        git_dir = Path(self._repo.path)
        lock = git_dir / "index.lock"
        if not _take_lock(lock, _INDEX_LOCK_WAIT_SECONDS):
            return Failure(GitFailure(
                "update_index", f"{lock} is held by another git command; the index was "
                                "left as it was"))
        scratch = git_dir / f"memhtml-index-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        try:
            if tip is not None and self._head_commit() != tip:
                return Success(())
            index_path = git_dir / "index"
            if index_path.exists():
                shutil.copyfile(index_path, scratch)
            index = pygit2.Index(str(scratch))
            done: list[str] = []
            for update in updates:
                current = str(index[update.path].id) if update.path in index else None
                if current != update.expected:
                    continue
                if update.blob_id is None:
                    if current is not None:
                        index.remove(update.path)
                else:
                    _add_entry(index, pygit2.IndexEntry(update.path,
                                                        pygit2.Oid(hex=update.blob_id),
                                                        FileMode(update.mode)),
                               _unchanged_since(self._repo.workdir, update))
                done.append(update.path)
            if done:
                index.write()
                with scratch.open("rb") as written:
                    os.fsync(written.fileno())
                os.replace(scratch, index_path)
            return Success(tuple(sorted(done)))
        finally:
            scratch.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)

    def _head_commit(self) -> str | None:
        """The commit HEAD resolves to now (libgit2 reads HEAD and a loose branch
        file from disk at each lookup); None when unborn or unreadable."""
        try:
            return str(self._repo.head.target)
        except (pygit2.GitError, KeyError, ValueError):
            return None

    # -- the working tree's files (see ``Checkout``) ------------------------------------

    def _workdir(self) -> Path | None:
        workdir = self._repo.workdir
        return None if workdir is None else Path(workdir)

    def file_kind(self, path: str) -> bool | None:
        root = self._workdir()
        return None if root is None else _file_kind(root, path)

    def file_stat(self, path: str) -> FileStat | None:
        root = self._workdir()
        if root is None:
            return None
        try:
            return FileStat.of(os.lstat(root / path))
        except OSError:
            return None

    def put_file(self, path: str, data: bytes | None, *, executable: bool = False
                 ) -> FileStat | bool:
        root = self._workdir()
        return False if root is None else _put_file(root, path, data, executable)

    def files_under(self, directory: str) -> tuple[str, ...]:
        root = self._workdir()
        return () if root is None else _files_under(root, directory)

    def index_locked(self) -> bool:
        # Anything at the lock's name is a held lock, a dangling link included, as git
        # sees it (it creates the lock exclusively and cannot while a link stands there).
        return self._repo.workdir is not None and os.path.lexists(
            Path(self._repo.path) / "index.lock")

    def operation_in_progress(self) -> tuple[str, str] | None:
        git_dir = Path(self._repo.path)
        for marker, name, fix in IN_PROGRESS:
            if (git_dir / marker).exists():
                return name, fix
        return None
