"""The working tree as git sees it, for the checkout half of the pygit2 adapter: which
paths differ from the index and HEAD (libgit2's status, or git's own walk in a process
of its own), each file's blob through the stat check and the clean filters, and a blob's
bytes through the smudge filters.

It is its own module because all of it only reads: functions of a repository handle
and paths that never write the index, take git's index lock or change the config (the
work of ``git_checkout.PygitCheckout``, which calls them), and tests call them directly.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import (
    ConfigLevel,
    FileStatus,
    FilterMode,
    ObjectType,
    RepositoryOpenFlag,
)
from pygit2.errors import check_error
from pygit2.ffi import C, ffi
from returns.result import Failure, Result, Success

from memhtml.adapters.git_names import FULL_SHA
from memhtml.adapters.git_remote import git_environment
from memhtml.contracts.errors import GitError, GitFailure


def status_paths(repo: pygit2.Repository) -> Result[tuple[str, ...], GitError]:
    status = repo.status(untracked_files="normal", ignored=False)
    return Success(tuple(sorted(path for path, flags in status.items()
                                if flags != pygit2.enums.FileStatus.CURRENT)))


STATUS_TIMEOUT_S = 60.0
"""How long git's own walk of a checkout may take before libgit2 is asked instead (a
hung fsmonitor hook, a stalled network drive)."""


_PROGRAM_KEY = re.compile(rb"filter\..*\.(clean|smudge|process)|core\.fsmonitor",
                          re.IGNORECASE | re.DOTALL)
_FALSE = (b"", b"false", b"no", b"off", b"0")


def plain_config(git_dir: Path, worktree: Path) -> bool:
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


def status_started(git_dir: Path, worktree: Path) -> subprocess.Popen[bytes] | None:
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


def status_finished(walk: subprocess.Popen[bytes]) -> tuple[str, ...] | None:
    """The sorted paths of a finished ``status_started``; None when it failed, timed
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


def may_filter(repo: pygit2.Repository, paths: Collection[str]) -> bool:
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


def checkout_view(repo: pygit2.Repository) -> pygit2.Repository | None:
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


def plain_blob(workdir: Path, path: str) -> str | None:
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
                      blobs: Mapping[str, str], known: Mapping[str, bytes] | None = None
                      ) -> Result[Mapping[str, bytes], GitError]:
    """Each blob filtered for its path through ``view``; as it is without one, taken
    from ``known`` (bytes by blob id) when there, else read from ``repo``."""
    found: dict[str, bytes] = {}
    for path, blob_id in blobs.items():
        if not FULL_SHA.fullmatch(blob_id):
            return Failure(GitFailure("checkout_bytes", f"not a full object id: {blob_id!r}"))
        if view is None and known and (data := known.get(blob_id)) is not None:
            found[path] = data
            continue
        obj = (view or repo).get(blob_id)
        if not isinstance(obj, pygit2.Blob):
            continue
        found[path] = obj.data if view is None else _smudged(view, obj, path)
    return Success(found)
