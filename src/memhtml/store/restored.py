"""Where ``memhtml restore`` finds a deleted memory: in the branch's own history.

A deletion is a commit like any other, so every version the branch ever held is
still there. The last one is in the parent of the newest commit that touched the
path (that commit is the deletion; a merge that dropped it counts, compared with
its first parent, which is the side that still had it). ``--at REV`` names the
version instead. Only a regular file is restored: a symbolic link or a directory at
the path is not a memory. An archive path that ``memhtml restore`` emptied (its memory
is live again at the original path) is not a deletion: there is nothing to put back.
"""

from __future__ import annotations

from collections.abc import Mapping

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import NotFound
from memhtml.contracts.services import CommitInfo, TreeEntry
from memhtml.store.errors import Refused, StoreError
from memhtml.store.layout import original_of_archived
from memhtml.store.recovery import commit_ops
from memhtml.store.session import Store

__all__ = ["last_version"]


def last_version(store: Store, tree: str, at: str | None = None
                 ) -> IOResult[tuple[str, str], StoreError]:
    """The commit holding the version of ``tree`` to restore, and the file's text:
    the one at ``at`` when given, else the last the branch held."""
    git = store.deps.git
    if at is not None:
        resolved: IOResult[str, StoreError] = git.resolve(at)
        return resolved.bind(lambda sha: _file_at(store, sha, tree, f"{at} ({sha[:12]})"))

    def newest(commits: tuple[CommitInfo, ...]) -> IOResult[tuple[str, str], StoreError]:
        if not commits:
            branch = store.deps.ref.removeprefix("refs/heads/")
            return IOFailure(NotFound(f"memory {tree} (it was never on {branch}: there is "
                                      "nothing to restore; search finds a memory by its "
                                      "words)"))
        last = commits[0]
        original = original_of_archived(tree)
        if original is not None and "restore" in commit_ops(last):
            return IOFailure(Refused(
                f"{tree} was brought back live at {original} by commit {last.sha[:12]} "
                "(memhtml restore): there is nothing to restore"))

        def held_then(entries: tuple[TreeEntry, ...]) -> IOResult[tuple[str, str], StoreError]:
            if entries:
                return _file_at(store, last.sha, tree, last.sha[:12])
            if not last.parents:
                return IOFailure(Refused(f"{tree} is not in any version the branch held"))
            return _file_at(store, last.parents[0], tree, last.parents[0][:12])

        found: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(last.sha, [tree])
        return found.bind(held_then)

    touching: IOResult[tuple[CommitInfo, ...], StoreError] = git.commits_touching(
        store.deps.ref, tree, 1)
    return touching.bind(newest)


def _file_at(store: Store, sha: str, tree: str, named: str
             ) -> IOResult[tuple[str, str], StoreError]:
    git = store.deps.git

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[tuple[str, str], StoreError]:
        if not entries:
            return IOFailure(NotFound(f"memory {tree} (commit {named} holds no file there)"))
        entry = entries[0]
        if entry.is_symlink:
            return IOFailure(Refused(f"commit {named} holds {tree} as a symbolic link, "
                                     "which is not a memory"))
        blobs: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs([entry.blob_id])
        return blobs.bind(lambda held: _text(held.get(entry.blob_id), sha, tree, named))

    found: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(sha, [tree])
    return found.bind(read)


def _text(data: bytes | None, sha: str, tree: str, named: str
          ) -> IOResult[tuple[str, str], StoreError]:
    if data is None:
        return IOFailure(Refused(f"commit {named} holds {tree}, but its bytes are not in "
                                 "this clone"))
    try:
        return IOSuccess((sha, data.decode("utf-8")))
    except UnicodeDecodeError:
        return IOFailure(Refused(f"{tree} at commit {named} is not UTF-8 text, so it is "
                                 "not a memory"))
