"""What both halves of ``InMemoryGit`` share: the state they both hold under one lock,
the refusal a call raises and the ``git_operation`` decorator that returns it as the
failure, and git's rules for an object's id and for what an entry may be.

It is its own module so that the repository half (``memory_git``) and the checkout half
(``memory_checkout``) each import it and neither imports the other, as ``git_guard``
and ``git_names`` serve the two halves of the pygit2 adapter.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Callable, Mapping
from typing import Concatenate, ParamSpec, TypeAlias, TypeVar

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.services import FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK

_T = TypeVar("_T")
_P = ParamSpec("_P")
Entry: TypeAlias = tuple[int, str]
"""A file in a tree: git file mode and blob id."""
Flat: TypeAlias = Mapping[str, Entry]

GITLINK_MODE = 0o160000
INDEX_MODES = frozenset({FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK, GITLINK_MODE})
FULL_SHA = re.compile(r"[0-9a-fA-F]{40}")
_NTFS_RESERVED = (b".git", b"git~1")
"""Refused as tree components even off Windows: libgit2's core.protectNTFS defaults on."""


class RefusalError(Exception):
    """Raised inside a call, returned at its edge; a ``str`` is a ``GitFailure`` reason."""

    def __init__(self, error: GitError | str) -> None:
        super().__init__(error)
        self.error = error


class InMemoryGitBase:
    """The state both halves read: the lock every call runs under, whether the
    repository is bare, its blobs (a commit writes them; the index names them and a
    checkout's files are read from them), and its refs with the branch HEAD names (the
    checkout's changes are against HEAD's tree). Each half sets up the rest of its own
    state on top of this."""

    def __init__(self, initial_branch: str = "main", *, bare: bool = False) -> None:
        self._lock = threading.RLock()
        self._bare = bare
        self._blobs: dict[str, bytes] = {}
        self._refs: dict[str, str] = {}
        self._head = f"refs/heads/{initial_branch}"  # HEAD, which is always symbolic here


_S = TypeVar("_S", bound=InMemoryGitBase)


def git_operation(name: str) -> Callable[
    [Callable[Concatenate[_S, _P], _T]],
    Callable[Concatenate[_S, _P], IOResult[_T, GitError]],
]:
    """Run a method under the lock and return its refusal as the failure, as
    ``PygitService`` turns libgit2's errors into ``GitFailure(operation, reason)``."""

    def wrap(method: Callable[Concatenate[_S, _P], _T]
             ) -> Callable[Concatenate[_S, _P], IOResult[_T, GitError]]:
        @functools.wraps(method)
        def run(self: _S, /, *args: _P.args, **kwargs: _P.kwargs
                ) -> IOResult[_T, GitError]:
            with self._lock:
                try:
                    return IOSuccess(method(self, *args, **kwargs))
                except RefusalError as refused:
                    error = refused.error
                    return IOFailure(GitFailure(name, error) if isinstance(error, str) else error)
        return run
    return wrap


def object_id(kind: bytes, body: bytes) -> str:
    return hashlib.sha1(b"%s %d\0%s" % (kind, len(body), body), usedforsecurity=False).hexdigest()


def ntfs_safe(path: str) -> bool:
    """False for a component Windows reads as ``.git`` (``.git.``, ``GIT~1``, ``.git:x``)."""
    for part in path.encode().split(b"/"):
        for reserved in _NTFS_RESERVED:
            rest = part[len(reserved):]
            if part[: len(reserved)].lower() == reserved and (
                    rest[:1] in (b":", b"\\") or not rest.strip(b" .")):
                return False
    return True
