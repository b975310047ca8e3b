"""The checkout half of the pygit2 adapter (``Checkout``): the index read and set by
compare-and-set, the working tree as git sees it (status, the stat check, clean and
smudge filters), the index lock a dead writer left, and the repository's own config.

``PygitService`` inherits it beside its repository half (``memhtml.adapters.git``),
so one handle serves both ports over one ``pygit2.Repository``.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import (
    AttrCheck,
    ConfigLevel,
    FileMode,
    FileStatus,
    FilterMode,
    ObjectType,
    RepositoryOpenFlag,
)
from pygit2.errors import check_error
from pygit2.ffi import C, ffi
from returns.io import IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.adapters.git_guard import guarded
from memhtml.adapters.git_names import FULL_SHA
from memhtml.adapters.git_remote import git_environment
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


def _status_paths(repo: pygit2.Repository) -> Result[tuple[str, ...], GitError]:
    status = repo.status(untracked_files="normal", ignored=False)
    return Success(tuple(sorted(path for path, flags in status.items()
                                if flags != pygit2.enums.FileStatus.CURRENT)))


STATUS_TIMEOUT_S = 60.0
"""How long git's own walk of a checkout may take before libgit2 is asked instead (a
hung fsmonitor hook, a stalled network drive)."""


_PROGRAM_KEY = re.compile(rb"filter\..*\.(clean|smudge|process)|core\.fsmonitor",
                          re.IGNORECASE | re.DOTALL)
_FALSE = (b"", b"false", b"no", b"off", b"0")


def _plain_config(git_dir: Path, worktree: Path) -> bool:
    """Whether git's configuration, as git reads it here, names no program a status
    could run (no filter driver, fsmonitor off) and does not fold case; False when
    it cannot be read."""
    command = ["git", "--git-dir", str(git_dir), "-C", str(worktree), "config", "--list",
               "-z"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              env=git_environment(os.environ), timeout=STATUS_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    if done.returncode != 0:
        return False
    for item in done.stdout.split(b"\0"):
        key, _, value = item.partition(b"\n")
        value = value.strip().lower()
        if _PROGRAM_KEY.fullmatch(key) is not None and (
                key.lower() != b"core.fsmonitor" or value not in _FALSE):
            return False
        if key.lower() == b"core.ignorecase" and value not in _FALSE:
            return False
    return True


def _status_started(git_dir: Path, worktree: Path) -> subprocess.Popen[bytes] | None:
    """``git status`` on this repository, running; None when git cannot be started.

    ``--no-optional-locks`` keeps it from refreshing (and locking) the index beside a
    person's git; ``-z`` gives the paths raw; ``--no-renames`` one path an entry.
    Variables that would point it at another repository are dropped."""
    command = ["git", "--no-optional-locks", "--git-dir", str(git_dir), "--work-tree",
               str(worktree), "-C", str(worktree), "status", "--porcelain=v1", "-z",
               "--untracked-files=normal", "--no-renames"]
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=git_environment(os.environ))
    except OSError:
        return None


def _status_finished(walk: subprocess.Popen[bytes]) -> tuple[str, ...] | None:
    """The sorted paths of a finished ``_status_started``; None when it failed, timed
    out (then it is killed) or printed what does not parse."""
    try:
        out, _ = walk.communicate(timeout=STATUS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        walk.kill()
        walk.communicate()
        return None
    if walk.returncode != 0:
        return None
    paths: set[str] = set()
    for entry in out.split(b"\0"):
        if not entry:
            continue
        if len(entry) < 4 or entry[2:3] != b" ":
            return None
        try:
            paths.add(entry[3:].decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return tuple(sorted(paths))


# -- the checkout as git sees it: stat check, clean and smudge filters -------------------

_WORKTREE_DIFFERS = (FileStatus.WT_NEW | FileStatus.WT_MODIFIED | FileStatus.WT_DELETED
                     | FileStatus.WT_TYPECHANGE | FileStatus.WT_RENAMED
                     | FileStatus.WT_UNREADABLE | FileStatus.CONFLICTED | FileStatus.IGNORED)
"""Status flags that say the working-tree file is not the index entry as staged."""

STATUS_ONE_BY_ONE = 64
"""Up to this many paths, ``worktree_blobs`` asks libgit2's status of each path on its
own (a path-limited walk, about half a millisecond each); past it, one diff of the
whole index against the working tree costs less."""

_FILTER_ATTRIBUTES = frozenset({b"text", b"eol", b"crlf", b"ident"})
"""The attributes by which libgit2's own filters (line endings, ``$Id$``) apply."""
_ATTRIBUTES_FILE = ".gitattributes"


def _names_a_filter(data: bytes) -> bool:
    """Whether a gitattributes file could set an attribute libgit2 filters by, read
    loosely (any word of any line; a macro definition counts, since it could): a
    doubt is a yes, which only costs the exact route."""
    for line in data.splitlines():
        words = line.split()
        if not words or words[0].startswith(b"#"):
            continue
        if words[0].startswith(b"[attr]"):
            return True
        if any(word.lstrip(b"-!").split(b"=", 1)[0] in _FILTER_ATTRIBUTES for word in words):
            return True
    return False


_ATTRIBUTES_READ_CAP = 1 << 20
"""An attributes file larger than this is not read, only taken to name a filter."""


def _file_names_a_filter(path: Path) -> bool | None:
    """``_names_a_filter`` of the file at ``path``; None when there is none; True when
    something else is there (a link, a FIFO, a directory), it is larger than any
    attributes file a person writes, or it cannot be read: nothing but a regular file
    is opened."""
    try:
        if not path.is_symlink() and not path.exists():
            return None
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _ATTRIBUTES_READ_CAP:
            return True
        return _names_a_filter(path.read_bytes())
    except OSError:
        return True


def _committed_attributes(repo: pygit2.Repository, directory: str) -> bool:
    """Whether HEAD's tree holds ``<directory>/.gitattributes`` (git reads the index's
    copy when the working tree has none). The trees are walked by listing, stopping
    past where the name sorts: a lookup of a missing name leaks in pygit2 1.21."""
    try:
        tree: pygit2.Tree = repo.head.peel(pygit2.Commit).tree
    except (pygit2.GitError, KeyError, ValueError):
        return False
    parts = directory.split("/") if directory else []
    for part, wanted in [*((p, os.fsencode(p) + b"/") for p in parts),
                         (_ATTRIBUTES_FILE, os.fsencode(_ATTRIBUTES_FILE))]:
        found: pygit2.Object | None = None
        for obj in tree:
            name = obj.name or ""
            key = os.fsencode(name) + (b"/" if isinstance(obj, pygit2.Tree) else b"")
            if key == wanted or (name == part and part == _ATTRIBUTES_FILE):
                found = obj
                break
            if key > wanted:
                break
        if found is None:
            return False
        if part == _ATTRIBUTES_FILE:
            return True
        if not isinstance(found, pygit2.Tree):
            return False
        tree = found
    return False


def _may_filter(repo: pygit2.Repository, paths: Collection[str]) -> bool:
    """Whether libgit2 could filter any of ``paths`` between the checkout and git
    (``core.autocrlf`` on, or an attributes file that could name ``text``, ``eol``,
    ``crlf`` or ``ident`` for them, or a configuration this check does not read).
    When it cannot, a file's blob is the id of its bytes and a blob is checked out as
    it is, and neither needs the index (opening it costs 0.1-0.3 s at 100,000 files)."""
    config = repo.config
    autocrlf = str(config["core.autocrlf"]).strip().lower() if "core.autocrlf" in config \
        else "false"
    if autocrlf not in ("false", "no", "off", "0", "") or "core.attributesfile" in config:
        return True
    git_dir, workdir = Path(repo.path), Path(repo.workdir or repo.path)
    if (git_dir / "commondir").exists():
        return True
    shared = [git_dir / "info" / "attributes",
              Path(pygit2.settings.search_path[ConfigLevel.XDG]) / "attributes",
              Path(pygit2.settings.search_path[ConfigLevel.SYSTEM]) / "gitattributes"]
    if any(_file_names_a_filter(path) for path in shared):
        return True
    directories = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        directories.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    for directory in sorted(directories):
        named = _file_names_a_filter(workdir / directory / _ATTRIBUTES_FILE)
        if named or (named is None and _committed_attributes(repo, directory)):
            return True
    return False


def _checkout_view(repo: pygit2.Repository) -> pygit2.Repository | None:
    """The checkout opened afresh: its index, configuration (libgit2 keeps
    ``core.autocrlf`` in a per-handle cache) and attributes as they are on disk now,
    not as a long-lived handle last read them. None for a bare repository; the handle
    itself, its index read again, should the checkout open as another repository."""
    workdir = repo.workdir
    if repo.is_bare or workdir is None:
        return None
    view = pygit2.Repository(workdir, RepositoryOpenFlag.NO_SEARCH)
    if view.workdir is not None and Path(view.path) == Path(repo.path):
        return view
    repo.index.read(False)
    return repo


def _stage_zero(index: pygit2.Index, path: str) -> str | None:
    try:
        return str(index[path].id)
    except (KeyError, ValueError):
        return None


def _worktree_differs(view: pygit2.Repository, paths: Sequence[str], one_by_one: int
                      ) -> set[str]:
    """Which of ``paths`` git's status finds changed in the working tree against the
    index (its stat check first, then the content after the clean filters)."""
    if len(paths) <= one_by_one:
        differs: set[str] = set()
        for path in paths:
            try:
                flags = view.status_file(path)
            except (KeyError, pygit2.GitError):
                differs.add(path)
                continue
            if flags & _WORKTREE_DIFFERS:
                differs.add(path)
        return differs
    changed: set[str] = set()
    for delta in view.index.diff_to_workdir().deltas:
        changed.update(p for p in (delta.old_file.path, delta.new_file.path) if p)
    return set(paths) & changed


def worktree_blobs_of(view: pygit2.Repository, paths: Sequence[str],
                      one_by_one: int = STATUS_ONE_BY_ONE) -> dict[str, str]:
    """``PygitService.worktree_blobs`` on a checkout opened afresh, the exact route;
    ``one_by_one`` is where it turns from a status per path to one diff (a test holds
    the two to one answer)."""
    index = view.index
    differs = _worktree_differs(view, paths, one_by_one)
    workdir = Path(view.workdir or view.path)
    indexed_at = _whole_seconds(Path(view.path) / "index")
    found: dict[str, str] = {}
    for path in paths:
        staged = _stage_zero(index, path)
        unchanged = staged is not None and path not in differs
        if unchanged and not _racy(workdir / path, indexed_at):
            found[path] = str(staged)
            continue
        try:
            # libgit2 reads the file and applies the clean filters its attributes and
            # config name (crlf, ident); a filter driver's program is never run.
            blob = str(view.hashfile(path, ObjectType.BLOB, as_path=path))
        except (pygit2.GitError, OSError, ValueError):
            continue
        # git calls a file whose size is not the one its entry recorded changed without
        # reading it (a CRLF checkout saved with LF endings), as libgit2 does: no blob
        # names that, so the path is left out rather than answered with the entry's.
        if unchanged or blob != staged:
            found[path] = blob
    return found


def _whole_seconds(path: Path) -> int | None:
    try:
        return int(os.lstat(path).st_mtime)
    except OSError:
        return None


def _racy(file: Path, indexed_at: int | None) -> bool:
    """Whether git reads this file's content although its stat data matches: git
    compares whole seconds (it is built without nanosecond stat checks), so a file
    modified in the second the index was written, or later, is racily clean to git
    where libgit2, comparing nanoseconds, trusts the stat data."""
    modified = _whole_seconds(file)
    return indexed_at is not None and modified is not None and modified >= indexed_at


def _plain_blob(workdir: Path, path: str) -> str | None:
    """The id of the file's bytes as they are; None for an executable file (its mode
    may be a change of its own) or one that cannot be read."""
    target = workdir / path
    try:
        if os.lstat(target).st_mode & 0o111:
            return None
        return str(pygit2.hashfile(str(target)))
    except (pygit2.GitError, OSError, ValueError):
        return None


def _smudged(view: pygit2.Repository, blob: pygit2.Blob, path: str) -> bytes:
    """The bytes libgit2's checkout writes for ``blob`` at ``path``. pygit2's own
    ``FilterList`` reads its output up to the first NUL, so the list is driven here."""
    filters = ffi.new("git_filter_list **")
    handle = ffi.new("git_blob **")
    ffi.buffer(handle)[:] = blob._pointer[:]
    check_error(C.git_filter_list_load(filters, view._repo, handle[0], os.fsencode(path),
                                       int(FilterMode.TO_WORKTREE), 0))
    if filters[0] == ffi.NULL:
        return blob.data
    out = ffi.new("git_buf *")
    try:
        check_error(C.git_filter_list_apply_to_blob(out, filters[0], handle[0]))
        return bytes(ffi.buffer(out.ptr, out.size)) if out.size else b""
    finally:
        C.git_buf_dispose(out)
        C.git_filter_list_free(filters[0])


def checkout_bytes_of(view: pygit2.Repository | None, repo: pygit2.Repository,
                      blobs: Mapping[str, str]) -> Result[Mapping[str, bytes], GitError]:
    """Each blob filtered for its path through ``view``; as it is without one."""
    found: dict[str, bytes] = {}
    for path, blob_id in blobs.items():
        if not FULL_SHA.fullmatch(blob_id):
            return Failure(GitFailure("checkout_bytes", f"not a full object id: {blob_id!r}"))
        obj = (view or repo).get(blob_id)
        if not isinstance(obj, pygit2.Blob):
            continue
        found[path] = obj.data if view is None else _smudged(view, obj, path)
    return Success(found)


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
    current = root
    try:
        mode = 0
        for part in path.split("/"):
            current = current / part
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

    def worktree_changes(self) -> IOResult[tuple[str, ...], GitError]:
        def changes() -> Result[tuple[str, ...], GitError]:
            if self._repo.is_bare:
                return Success(())
            return _status_paths(self._repo)

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
        if (worktree / ".gitmodules").exists() or not _plain_config(git_dir, worktree):
            return self.worktree_changes
        walk = _status_started(git_dir, worktree)

        def answer() -> IOResult[tuple[str, ...], GitError]:
            listed = None if walk is None else _status_finished(walk)
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

    def update_index(self, updates: Sequence[IndexUpdate]) -> IOResult[tuple[str, ...], GitError]:
        """Compare-and-set on the checkout's index, read and written under git's lock.

        ``index.lock`` is taken the way git takes it (created exclusively) before the
        index is read, and held until the new index has replaced the old, so a
        person's ``git add`` can neither slip in between (and be lost) nor be
        overwritten. A lock held by another git command is waited for briefly, then
        reported. An entry that no longer holds ``expected`` is skipped, not
        overwritten: it is something the user staged. An entry carries the stat data
        its update recorded when the working-tree file, looked at under the lock, still
        has it (git's own checkout records the same); otherwise none, and git looks at
        that file's content on its next status.
        """
        return guarded("update_index", lambda: self._update_index(updates))

    def worktree_blobs(self, paths: Sequence[str],
                       likely: Mapping[str, Collection[str]] | None = None
                       ) -> IOResult[Mapping[str, str], GitError]:
        """Where no filter can apply (``_may_filter``: no ``core.autocrlf``, no attributes
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
            if not _may_filter(self._repo, paths):
                expected = likely or {}
                rest = []
                for path in paths:
                    blob = _plain_blob(Path(workdir), path)
                    if blob is not None and blob in expected.get(path, ()):
                        found[path] = blob
                    else:
                        rest.append(path)
            view = _checkout_view(self._repo) if rest else None
            if view is not None:
                found.update(worktree_blobs_of(view, rest))
            return Success(found)

        return guarded("worktree_blobs", blobs)

    def checkout_bytes(self, blobs: Mapping[str, str]) -> IOResult[Mapping[str, bytes], GitError]:
        """A bare repository has no checkout to filter for: its blobs as they are."""

        def checked_out() -> Result[Mapping[str, bytes], GitError]:
            filtering = bool(blobs) and not self._repo.is_bare and _may_filter(
                self._repo, list(blobs))
            view = _checkout_view(self._repo) if filtering else None
            return checkout_bytes_of(view, self._repo, blobs)

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

    def _update_index(self, updates: Sequence[IndexUpdate]) -> Result[tuple[str, ...], GitError]:
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
