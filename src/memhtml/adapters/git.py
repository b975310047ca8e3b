"""``GitService`` over pygit2: trees read in one pass, commits built in memory.

Writes never touch a working tree. ``commit`` builds the new tree in an
in-memory index over the parent's tree, writes the commit object, and only then
moves the ref, under the ref's lock, if it still points at the expected parent.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

import pygit2
from pygit2.enums import (
    AttrCheck,
    ConfigLevel,
    FileMode,
    FileStatus,
    FilterMode,
    ObjectType,
    ReferenceType,
    RepositoryOpenFlag,
    SortMode,
)
from pygit2.errors import check_error
from pygit2.ffi import C, ffi
from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.adapters.git_arrivals import first_parent_arrivals
from memhtml.adapters.git_names import entry_at, reference, tree_entry
from memhtml.adapters.git_remote import git_environment
from memhtml.adapters.tree_edit import edited_tree, tree_delta
from memhtml.contracts.errors import GitError, GitFailure, NotFound, RefMoved
from memhtml.contracts.local_files import create_exclusive, read_regular
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import (
    Arrival,
    CommitInfo,
    FileStat,
    IndexUpdate,
    PathChange,
    Signature,
    TreeEntry,
)

_T = TypeVar("_T")

# pygit2's own errors subclass GitError plus KeyError or ValueError; OSError covers
# the file system under .git. Anything else is a bug and is left to surface.
_CONVERTED = (pygit2.GitError, KeyError, ValueError, OSError)

_FULL_SHA = re.compile(r"[0-9a-fA-F]{40}")
_TRAILER = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)")
_BLANK = re.compile(r"\n(?:[ \t]*\n)+")

_LOCK_WAIT_SECONDS = 2.0
"""How long ``commit`` waits for another writer to release the ref's lock."""
_GITLINK_MODE = 0o160000
"""A gitlink (a submodule's commit): names an object of another repository, so its id
is never looked up in this one."""

_SYMREF_DEPTH = 5
_OWN_CONFIG_LEVELS = frozenset({ConfigLevel.LOCAL, ConfigLevel.WORKTREE})
"""The repository's own config files: what ``set_config`` writes, and no user's."""


def _config_key(key: str) -> str:
    """A config key as git compares it: section and name folded, a subsection as
    written (``Core.Sub Section.Name`` is ``core.Sub Section.name``)."""
    section, _, rest = key.partition(".")
    head, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{head}{dot}{name.lower()}"


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _guarded(operation: str, thunk: Callable[[], Result[_T, GitError]]) -> IOResult[_T, GitError]:
    try:
        outcome = thunk()
    except _CONVERTED as exc:
        return IOFailure(GitFailure(operation, _reason(exc)))
    return IOResult.from_result(outcome)


def _signature(author: Signature, at: datetime) -> Result[pygit2.Signature, GitError]:
    offset = at.utcoffset()
    if offset is None:
        return Failure(GitFailure("commit", "the commit time must be timezone-aware"))
    return Success(
        pygit2.Signature(
            author.name,
            author.email,
            math.floor(at.timestamp()),
            int(offset.total_seconds()) // 60,
            "utf-8",
        )
    )


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
        if not _FULL_SHA.fullmatch(blob_id):
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


def _hex_or_none(oid: pygit2.Oid | None) -> str | None:
    return None if oid is None else str(oid)


def parse_trailers(message: str) -> tuple[tuple[str, str], ...]:
    """``Key: value`` lines of the message's last paragraph, in order.

    Read as ``git interpret-trailers`` does, a little stricter: the subject
    paragraph never holds trailers, a line starting with whitespace continues
    the previous value (unfolded with one space), and a last paragraph with any
    other line is prose, with no trailers (git tolerates a few such lines next
    to a ``Signed-off-by``; memhtml writes its own trailers and needs no slack).
    """
    paragraphs = _BLANK.split(message.strip())
    if len(paragraphs) < 2:
        return ()
    found: list[tuple[str, str]] = []
    for line in paragraphs[-1].split("\n"):
        if line[:1] in (" ", "\t") and found:
            key, value = found[-1]
            found[-1] = (key, f"{value} {line.strip()}".strip())
            continue
        matched = _TRAILER.fullmatch(line.rstrip())
        if matched is None:
            return ()
        found.append((matched.group(1), matched.group(2).strip()))
    return tuple(found)


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


def _entry_at(tree: pygit2.Tree, path: str) -> tuple[pygit2.Oid, int] | None:
    obj = entry_at(tree, path)
    return None if obj is None else (obj.id, obj.filemode)


_INDEX_READS = 6
_INDEX_READ_PAUSE_S = 0.005
"""Attempts at reading git's index while another process replaces it, and the pause
before the next (growing by this much each time)."""


class PygitService:
    """One repository, read and written through libgit2.

    Each commit carries the ``author`` its caller passes; the committer is the
    ``committer`` this handle was made with, or the author when there is none (so a
    commit a person's identity authors still says which program made it)."""

    def __init__(self, repo: pygit2.Repository, committer: Signature | None = None) -> None:
        self._repo = repo
        self._committer = committer

    def with_committer(self, committer: Signature) -> PygitService:
        """A handle on the same repository whose commits name ``committer``."""
        return PygitService(self._repo, committer)

    def configured_identity(self, env: Mapping[str, str]) -> tuple[str | None, str | None]:
        """Who git would say is committing here: ``GIT_AUTHOR_NAME`` and
        ``GIT_AUTHOR_EMAIL`` of ``env``, else ``user.name`` and ``user.email`` of the
        repository's config, then the user's global one. Each part is None when
        nothing names it, or when the config cannot be read."""
        try:
            config = self._repo.config
            found = {key: str(config[key]) if key in config else None
                     for key in ("user.name", "user.email")}
        except _CONVERTED:
            found = {}
        name = env.get("GIT_AUTHOR_NAME") or found.get("user.name")
        email = env.get("GIT_AUTHOR_EMAIL") or found.get("user.email")
        return (name.strip() or None if name else None, email.strip() or None if email else None)

    def head_branch(self) -> tuple[str | None, bool]:
        """The branch HEAD names (short form; None when HEAD is detached) and whether
        that branch is unborn (no commit yet)."""
        try:
            head = reference(self._repo, "HEAD")
        except _CONVERTED:
            return None, False
        target = None if head is None else head.target
        if not isinstance(target, str) or not target.startswith("refs/heads/"):
            return None, False
        return target.removeprefix("refs/heads/"), reference(self._repo, target) is None

    def point_head(self, branch: str) -> IOResult[None, GitError]:
        """Make HEAD name ``branch`` (``git symbolic-ref HEAD refs/heads/<branch>``);
        for a repository whose HEAD branch is unborn, where nothing is checked out."""

        def pointed() -> Result[None, GitError]:
            refname = f"refs/heads/{branch}"
            if not pygit2.reference_is_valid_name(refname):
                return Failure(GitFailure("point_head", f"not a valid branch name: {branch!r}"))
            self._repo.references.create("HEAD", refname, force=True)
            return Success(None)

        return _guarded("point_head", pointed)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> IOResult[PygitService, GitFailure]:
        """Open the repository at ``path`` itself; parent directories are not searched."""
        try:
            repo = pygit2.Repository(os.fspath(path), RepositoryOpenFlag.NO_SEARCH)
        except pygit2.GitError as exc:
            return IOFailure(GitFailure("open", _reason(exc)))
        return IOSuccess(cls(repo))

    @classmethod
    def init(
        cls, path: str | os.PathLike[str], initial_branch: str = "main", *, bare: bool = False
    ) -> IOResult[PygitService, GitFailure]:
        """Create a repository whose HEAD names ``initial_branch`` (unborn until a commit)."""
        try:
            repo = pygit2.init_repository(os.fspath(path), bare=bare, initial_head=initial_branch)
        except (pygit2.GitError, OSError) as exc:
            return IOFailure(GitFailure("init", _reason(exc)))
        return IOSuccess(cls(repo))

    @property
    def path(self) -> str:
        """The git directory (``.git`` of a checkout, or the bare repository)."""
        return str(self._repo.path)

    # -- reading ---------------------------------------------------------------------

    def resolve(self, ref: str) -> IOResult[str, GitError]:
        """A branch name (preferred over a tag of that name), full ref, tag, sha or
        sha prefix, or any rev-parse expression, peeled to a commit."""
        return _guarded("resolve", lambda: self._commit(ref).map(lambda c: str(c.id)))

    def list_tree(self, commit: str) -> IOResult[tuple[TreeEntry, ...], GitError]:
        return _guarded("list_tree", lambda: self._commit(commit).map(self._walk_tree))

    def read_blobs(self, blob_ids: Sequence[str]) -> IOResult[Mapping[str, bytes], GitError]:
        """Keyed by the ids as given. A missing id, or one naming a non-blob, is absent;
        an id that is not 40 hex digits is a ``GitFailure``."""
        return _guarded("read_blobs", lambda: self._read_blobs(blob_ids))

    def changed_paths(self, old: str, new: str) -> IOResult[tuple[str, ...], GitError]:
        return _guarded("changed_paths", lambda: self._changed_paths(old, new))

    def entries_at(
        self, commit: str, paths: Sequence[str]
    ) -> IOResult[tuple[TreeEntry, ...], GitError]:
        return _guarded(
            "entries_at", lambda: self._commit(commit).map(lambda c: self._entries(c, paths))
        )

    def names_in(self, commit: str, directories: Sequence[str]
                 ) -> IOResult[Mapping[str, tuple[str, ...]], GitError]:
        return _guarded("names_in", lambda: self._commit(commit).map(
            lambda c: self._names_in(c, directories)))

    def commit_info(self, sha: str) -> IOResult[CommitInfo, GitError]:
        return _guarded("commit_info", lambda: self._commit(sha).map(self._info))

    def commits_between(self, old: str | None, new: str) -> IOResult[tuple[str, ...], GitError]:
        return _guarded("commits_between", lambda: self._commits_between(old, new))

    def commits_touching(
        self, ref: str, path: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        """Up to ``limit`` commits whose entry at ``path`` (file or directory) differs
        from their first parent's; a root commit holding the path counts."""
        return _guarded("commits_touching", lambda: self._commits_touching(ref, path, limit))

    def commits_mentioning(
        self, ref: str, text: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        return _guarded("commits_mentioning",
                        lambda: self._commits_mentioning(ref, text, limit))

    def arrivals(self, ref: str, paths: Collection[str]
                 ) -> IOResult[Mapping[str, int], GitError]:
        return _guarded("arrivals", lambda: self._commit(ref).map(
            lambda tip: {path: arrival.steps for path, arrival in
                         first_parent_arrivals(self._repo, tip, paths).items()}))

    def arrived(self, ref: str, paths: Collection[str],
                follow: Collection[tuple[str, str]] = ()
                ) -> IOResult[Mapping[str, Arrival], GitError]:
        wanted = frozenset(follow)

        def is_move(commit: pygit2.Commit) -> bool:
            return any(pair in wanted for pair in parse_trailers(commit.message))

        return _guarded("arrived", lambda: self._commit(ref).map(
            lambda tip: first_parent_arrivals(self._repo, tip, paths,
                                              is_move if wanted else None)))

    # -- writing ---------------------------------------------------------------------

    def commit(
        self,
        ref: str,
        expected_parent: str | None,
        changes: Sequence[PathChange],
        message: str,
        author: Signature,
        at: datetime,
    ) -> IOResult[str, GitError]:
        """Commit ``changes`` on ``expected_parent`` and move ``ref`` there, or nothing.

        Changes apply in order, so a later change to the same path wins. A write
        keeps the mode of the file it replaces (new files are 100644); deleting a
        path the tree lacks, or a directory, is a no-op. If the resulting tree
        equals the parent's, no commit is made and the parent's sha comes back
        (still ``RefMoved`` if the ref is elsewhere). A write whose path is a
        directory, or runs through a file, is refused rather than replacing it.
        """
        return _guarded(
            "commit",
            lambda: self._commit_changes(ref, expected_parent, changes, message, author, at),
        )

    def commit_merge(self, ref: str, expected_parent: str, other_parent: str,
                     changes: Sequence[PathChange], message: str, author: Signature,
                     at: datetime) -> IOResult[str, GitError]:
        """``commit`` recording ``other_parent`` as the second parent; never a no-op."""
        return _guarded(
            "commit_merge",
            lambda: self._commit(other_parent).bind(
                lambda other: self._commit_changes(ref, expected_parent, changes, message,
                                                   author, at, other.id)),
        )

    def merge_base(self, a: str, b: str) -> IOResult[str | None, GitError]:
        def base() -> Result[str | None, GitError]:
            return self._commit(a).bind(lambda left: self._commit(b).map(
                lambda right: _hex_or_none(self._repo.merge_base(left.id, right.id))))

        return _guarded("merge_base", base)

    def is_ancestor(self, a: str, b: str) -> IOResult[bool, GitError]:
        def ancestor() -> Result[bool, GitError]:
            # descendant_of is strict (a commit does not descend from itself); git's
            # --is-ancestor, which the Protocol follows, counts the commit itself.
            return self._commit(a).bind(lambda older: self._commit(b).map(
                lambda newer: older.id == newer.id
                or bool(self._repo.descendant_of(newer.id, older.id))))

        return _guarded("is_ancestor", ancestor)

    def create_branch(self, name: str, at: str) -> IOResult[None, GitError]:
        """A new branch at the commit ``at`` names; ``GitFailure`` if it exists."""
        return _guarded("create_branch", lambda: self._create_branch(name, at))

    def delete_branch(self, name: str) -> IOResult[None, GitError]:
        """``GitFailure`` if there is no such branch or it is checked out."""
        return _guarded("delete_branch", lambda: self._delete_branch(name))

    def branches(self, prefix: str) -> IOResult[tuple[str, ...], GitError]:
        def listed() -> Result[tuple[str, ...], GitError]:
            return Success(tuple(sorted(name for name in self._repo.branches.local
                                        if name.startswith(prefix))))

        return _guarded("branches", listed)

    def move_ref(self, ref: str, expected: str | None, target: str) -> IOResult[None, GitError]:
        def move() -> Result[None, GitError]:
            named = self._direct_ref(ref)
            if not is_successful(named):
                return named.map(lambda _: None)
            found = self._commit(target)
            if not is_successful(found):
                return found.map(lambda _: None)
            commit = found.unwrap()
            return self._swap_ref(ref, named.unwrap(), expected, commit.id,
                                  f"memhtml: move to {commit.id}")

        return _guarded("move_ref", move)

    def worktree_changes(self) -> IOResult[tuple[str, ...], GitError]:
        def changes() -> Result[tuple[str, ...], GitError]:
            if self._repo.is_bare:
                return Success(())
            return _status_paths(self._repo)

        return _guarded("worktree_changes", changes)

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
        return _guarded("set_config", lambda: self._set_config(key, value))

    def config_value(self, key: str) -> IOResult[str | None, GitError]:
        """Every level git reads (repository, user, system), as ``git config`` does."""

        def read() -> Result[str | None, GitError]:
            try:
                return Success(str(self._repo.config[key]))
            except KeyError:
                return Success(None)

        return _guarded("config_value", read)

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

        return _guarded("local_config_value", read)

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

        return _guarded("drop_config", drop)

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

        return _guarded("merge_attributes", read)

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

        return _guarded("unmerged_paths", unmerged)

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
        return _guarded("update_index", lambda: self._update_index(updates))

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

        return _guarded("worktree_blobs", blobs)

    def checkout_bytes(self, blobs: Mapping[str, str]) -> IOResult[Mapping[str, bytes], GitError]:
        """A bare repository has no checkout to filter for: its blobs as they are."""

        def checked_out() -> Result[Mapping[str, bytes], GitError]:
            filtering = bool(blobs) and not self._repo.is_bare and _may_filter(
                self._repo, list(blobs))
            view = _checkout_view(self._repo) if filtering else None
            return checkout_bytes_of(view, self._repo, blobs)

        return _guarded("checkout_bytes", checked_out)

    def index_entries(self, paths: Collection[str] | None = None
                      ) -> IOResult[Mapping[str, str], GitError]:
        return _guarded("index_entries", lambda: self._index_entries(paths))

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

        return _guarded("clear_stale_index_lock", clear)

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
        if not _take_lock(lock, _LOCK_WAIT_SECONDS):
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

    def _lookup(self, rev: str) -> pygit2.Object | None:
        if _FULL_SHA.fullmatch(rev):
            return self._repo.get(rev)
        # revparse's dwim order tries refs/tags/<name> before refs/heads/<name>;
        # memhtml names branches, so a branch wins over a tag of the same name.
        branch = f"refs/heads/{rev}"
        if pygit2.reference_is_valid_name(branch):
            found = reference(self._repo, branch)
            if found is not None:
                return self._repo.get(found.resolve().target)
        return self._repo.revparse_single(rev)

    def _commit(self, rev: str) -> Result[pygit2.Commit, GitError]:
        try:
            obj = self._lookup(rev)
        except KeyError:
            obj = None
        if obj is None:
            return Failure(NotFound(f"commit {rev!r}"))
        try:
            return Success(obj.peel(pygit2.Commit))
        except ValueError:
            return Failure(GitFailure("resolve", f"{rev!r} names a {obj.type_str}, not a commit"))

    def _walk_tree(self, commit: pygit2.Commit) -> tuple[TreeEntry, ...]:
        # An explicit stack rather than recursion or Index.read_tree: one visit per
        # tree object, no Python frames per directory, and no index entries built.
        found: list[TreeEntry] = []
        stack: list[tuple[str, pygit2.Tree]] = [("", commit.tree)]
        tree_type = pygit2.Tree
        blob_type = pygit2.Blob
        while stack:
            prefix, tree = stack.pop()
            for obj in tree:
                if isinstance(obj, tree_type):
                    stack.append((f"{prefix}{obj.name}/", obj))
                elif isinstance(obj, blob_type):
                    found.append(TreeEntry(f"{prefix}{obj.name}", str(obj.id), obj.filemode))
        found.sort(key=lambda entry: entry.path)
        return tuple(found)

    @staticmethod
    def _entries(commit: pygit2.Commit, paths: Sequence[str]) -> tuple[TreeEntry, ...]:
        # Each directory is resolved once: a by-path lookup would re-read and re-parse
        # a large parent tree for every path asked about. Names are found by index
        # (``git_names``): pygit2 keeps every name a tree is asked about by name.
        trees: dict[str, pygit2.Tree | None] = {"": commit.tree}
        entries: list[TreeEntry] = []
        for path in paths:
            directory, _, name = path.rpartition("/")
            tree = PygitService._tree_at(trees, directory)
            obj = None if tree is None else tree_entry(tree, name)
            if isinstance(obj, pygit2.Blob):
                entries.append(TreeEntry(path, str(obj.id), obj.filemode))
        return tuple(sorted(entries, key=lambda entry: entry.path))

    @staticmethod
    def _names_in(commit: pygit2.Commit, directories: Sequence[str]
                  ) -> dict[str, tuple[str, ...]]:
        # Each tree on the way is found by index, never by a lookup of a name:
        # pygit2 1.21 keeps every name it is asked about (see git_names).
        trees: dict[str, pygit2.Tree | None] = {"": commit.tree}
        listed: dict[str, tuple[str, ...]] = {}
        for directory in directories:
            tree = PygitService._tree_at(trees, directory)
            if tree is not None:
                listed[directory] = tuple(sorted(
                    f"{obj.name}/" if isinstance(obj, pygit2.Tree) else str(obj.name)
                    for obj in tree))
        return listed

    @staticmethod
    def _tree_at(trees: dict[str, pygit2.Tree | None], directory: str) -> pygit2.Tree | None:
        """The tree at ``directory``, from ``trees`` (the root under "") or resolved
        from its nearest known ancestor down, each level kept in ``trees``."""
        missing: list[str] = []
        known = directory
        while known not in trees:
            missing.append(known)
            known = known.rpartition("/")[0]
        tree = trees[known]
        for folder in reversed(missing):
            found = None if tree is None else tree_entry(tree, folder.rpartition("/")[2])
            tree = found if isinstance(found, pygit2.Tree) else None
            trees[folder] = tree
        return tree

    def _read_blobs(self, blob_ids: Sequence[str]) -> Result[Mapping[str, bytes], GitError]:
        read = self._repo.odb.read
        full_sha = _FULL_SHA.fullmatch
        blob_kind = int(ObjectType.BLOB)
        blobs: dict[str, bytes] = {}
        for blob_id in blob_ids:
            # A prefix would make libgit2 guess; only whole ids are looked up.
            if not full_sha(blob_id):
                return Failure(GitFailure("read_blobs", f"not a full object id: {blob_id!r}"))
            try:
                kind, data = read(blob_id)
            except KeyError:
                continue
            if kind == blob_kind:
                blobs[blob_id] = data
        return Success(blobs)

    def _changed_paths(self, old: str, new: str) -> Result[tuple[str, ...], GitError]:
        return self._commit(old).bind(
            lambda before: self._commit(new).map(
                lambda after: tree_delta(self._repo, before.tree, after.tree)
            )
        )

    def _info(self, commit: pygit2.Commit) -> CommitInfo:
        author = commit.author
        zone = timezone(timedelta(minutes=author.offset))
        committer = commit.committer
        return CommitInfo(
            sha=str(commit.id),
            parents=tuple(str(parent) for parent in commit.parent_ids),
            message=commit.message,
            author=Signature(author.name, author.email),
            time=datetime.fromtimestamp(author.time, zone),
            trailers=parse_trailers(commit.message),
            committer=Signature(committer.name, committer.email),
        )

    def _commits_mentioning(
        self, ref: str, text: str, limit: int
    ) -> Result[tuple[CommitInfo, ...], GitError]:
        tip = self._commit(ref)
        if not is_successful(tip) or limit <= 0:
            return tip.map(lambda _: ())
        # The raw bytes are searched, so no message is decoded unless it matches.
        needle = text.encode("utf-8")
        found: list[CommitInfo] = []
        for commit in self._repo.walk(tip.unwrap().id, SortMode.TOPOLOGICAL | SortMode.TIME):
            if needle in commit.raw_message:
                found.append(self._info(commit))
                if len(found) >= limit:
                    break
        return Success(tuple(found))

    def _commits_between(self, old: str | None, new: str) -> Result[tuple[str, ...], GitError]:
        tip = self._commit(new)
        if not is_successful(tip):
            return tip.map(lambda _: ())
        walker = self._repo.walk(
            tip.unwrap().id, SortMode.TOPOLOGICAL | SortMode.TIME | SortMode.REVERSE
        )
        if old is not None:
            base = self._commit(old)
            if not is_successful(base):
                return base.map(lambda _: ())
            walker.hide(base.unwrap().id)
        return Success(tuple(str(commit.id) for commit in walker))

    def _commits_touching(
        self, ref: str, path: str, limit: int
    ) -> Result[tuple[CommitInfo, ...], GitError]:
        checked = check_tree_path(path)
        if not is_successful(checked):
            return Failure(GitFailure("commits_touching", checked.failure().reason))
        tip = self._commit(ref)
        if not is_successful(tip) or limit <= 0:
            return tip.map(lambda _: ())
        touching: list[CommitInfo] = []
        for commit in self._repo.walk(tip.unwrap().id, SortMode.TOPOLOGICAL | SortMode.TIME):
            # Comparing the entry (id and mode) at the path is the path-limited diff
            # against the first parent, without diffing the rest of either tree.
            before = _entry_at(commit.parents[0].tree, path) if commit.parent_ids else None
            if _entry_at(commit.tree, path) != before:
                touching.append(self._info(commit))
                if len(touching) >= limit:
                    break
        return Success(tuple(touching))

    def _direct_ref(self, ref: str) -> Result[str, GitError]:
        """The full name of the direct ref ``ref`` ends at, following symbolic refs.

        ``HEAD`` therefore moves the branch it names, not HEAD itself.
        """
        name = ref if ref == "HEAD" or ref.startswith("refs/") else f"refs/heads/{ref}"
        for _ in range(_SYMREF_DEPTH):
            if not pygit2.reference_is_valid_name(name):
                return Failure(GitFailure("commit", f"not a valid ref name: {ref!r}"))
            found = reference(self._repo, name)
            if found is None or found.type != ReferenceType.SYMBOLIC:
                return Success(name)
            name = str(found.target)
        return Failure(GitFailure("commit", f"symbolic ref chain too deep at {ref!r}"))

    def _ref_target(self, name: str) -> str | None:
        found = reference(self._repo, name)
        return None if found is None else str(found.target)

    def _commit_changes(
        self,
        ref: str,
        expected_parent: str | None,
        changes: Sequence[PathChange],
        message: str,
        author: Signature,
        at: datetime,
        other_parent: pygit2.Oid | None = None,
    ) -> Result[str, GitError]:
        for change in changes:
            checked = check_tree_path(change.path)
            if not is_successful(checked):
                refused = checked.failure()
                return Failure(GitFailure("commit", f"{refused.path!r}: {refused.reason}"))
        signed = _signature(author, at)
        if not is_successful(signed):
            return signed.map(lambda _: "")
        named = self._direct_ref(ref)
        if not is_successful(named):
            return named.map(lambda _: "")
        refname = named.unwrap()

        parent: pygit2.Commit | None = None
        if expected_parent is not None:
            found = self._commit(expected_parent)
            if not is_successful(found):
                return found.map(lambda _: "")
            parent = found.unwrap()
        expected = None if parent is None else str(parent.id)

        built = self._build_tree(parent, changes)
        if not is_successful(built):
            return built.map(lambda _: "")
        tree_id = built.unwrap()

        if parent is not None and other_parent is None and tree_id == parent.tree_id:
            actual = self._ref_target(refname)
            if actual != expected:
                return Failure(RefMoved(ref, expected, actual))
            return Success(str(parent.id))

        signature = signed.unwrap()
        committer = signature
        if self._committer is not None:
            made_by = _signature(self._committer, at)
            if not is_successful(made_by):
                return made_by.map(lambda _: "")
            committer = made_by.unwrap()
        parents = [] if parent is None else [parent.id]
        if other_parent is not None:
            parents.append(other_parent)
        # The object is written unreferenced first; if the swap below loses, it is
        # garbage for gc and the ref never saw it.
        commit_id = self._repo.create_commit(None, signature, committer, message, tree_id,
                                             parents)
        subject = message.split("\n", 1)[0]
        return self._swap_ref(ref, refname, expected, commit_id, f"commit: {subject}").map(
            lambda _: str(commit_id)
        )

    def _build_tree(
        self, parent: pygit2.Commit | None, changes: Sequence[PathChange]
    ) -> Result[pygit2.Oid, GitError]:
        # Only the directories the changes touch are read and written (tree_edit):
        # reading the whole tree into an index cost a commit at 100,000 memories 0.85 s.
        return edited_tree(self._repo, None if parent is None else parent.tree, changes)

    def _swap_ref(
        self, ref: str, refname: str, expected: str | None, target: pygit2.Oid, reflog: str
    ) -> Result[None, GitError]:
        """Point ``refname`` at ``target`` if it still names ``expected``.

        The check runs while holding the ref's lock file (the same ``.lock``
        protocol git uses), so no other process can move the ref between the
        read and the write. A ref locked by another writer is waited for briefly.
        """
        deadline = time.monotonic() + _LOCK_WAIT_SECONDS
        pause = 0.001
        while True:
            with self._repo.transaction() as txn:
                try:
                    txn.lock_ref(refname)
                except pygit2.GitError as exc:
                    if time.monotonic() >= deadline:
                        return Failure(GitFailure("commit", f"could not lock {refname}: {exc}"))
                else:
                    actual = self._ref_target(refname)
                    if actual != expected:
                        return Failure(RefMoved(ref, expected, actual))
                    txn.set_target(refname, target, message=reflog)
                    return Success(None)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _create_branch(self, name: str, at: str) -> Result[None, GitError]:
        short = name.removeprefix("refs/heads/")
        if not pygit2.reference_is_valid_name(f"refs/heads/{short}"):
            return Failure(GitFailure("create_branch", f"not a valid branch name: {name!r}"))
        if self._repo.branches.local.get(short) is not None:
            return Failure(GitFailure("create_branch", f"branch {short!r} already exists"))
        found = self._commit(at)
        if not is_successful(found):
            return found.map(lambda _: None)
        # force=False: a branch created meanwhile by another process is an error, not
        # overwritten.
        self._repo.branches.local.create(short, found.unwrap(), force=False)
        return Success(None)

    def _delete_branch(self, name: str) -> Result[None, GitError]:
        short = name.removeprefix("refs/heads/")
        if not pygit2.reference_is_valid_name(f"refs/heads/{short}"):
            return Failure(GitFailure("delete_branch", f"not a valid branch name: {name!r}"))
        branch = self._repo.branches.local.get(short)
        if branch is None:
            return Failure(GitFailure("delete_branch", f"no branch {short!r}"))
        branch.delete()
        return Success(None)
