"""A person's work in the checkout that memhtml must see before it writes.

memhtml commits straight onto the branch and then brings the checkout up to date, but
only where the checkout still holds what the branch held before: a person's edit is
never overwritten. That leaves the edited file and memhtml's commit disagreeing, and
the person's next ``git commit -a`` would commit their file over memhtml's change,
silently undoing it. So a door that would change a path the person has edited and not
committed refuses instead, naming the path and how to commit or discard the edit
(``uncommitted_in``); ``status`` and ``doctor`` list every such file (``local_edits``),
since search and read see only what is committed.

The same holds for a merge, rebase, cherry-pick or revert that git has left half done:
a commit landing under it would be dropped or fought over when the person finishes it,
so a door refuses while one is in progress (``operation_in_progress``), and ``doctor``
reports it along with every path left in conflict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import GitService, TreeEntry
from memhtml.store.checkout import file_blobs, on_branch
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import MergeInProgress, StoreError, UncommittedEdits

EditKind = Literal["modified", "deleted", "added", "untracked"]

@dataclass(frozen=True, slots=True)
class LocalEdit:
    """A path the checkout holds differently from the branch tip, by the person's hand."""

    path: str
    kind: EditKind
    staged: bool
    """The index differs from the branch tip (``git add`` was run)."""
    unstaged: bool
    """The working-tree file differs from the index."""

    def describe(self) -> str:
        """What the edit is, and the two commands that settle it."""
        path = _quoted(self.path)
        match self.kind:
            case "untracked":
                return (f"{self.path}: a new file git does not track; commit it (git add "
                        f"{path} && git commit) or remove it")
            case _:
                where = ("staged" if self.staged and not self.unstaged
                         else "staged, and edited again since" if self.staged
                         else "not staged")
                discard = f"git checkout HEAD -- {path}" if self.staged \
                    else f"git checkout -- {path}"
                if self.kind == "added":
                    discard = f"git rm --cached {path}"
                return (f"{self.path}: {self.kind}, {where}; commit it (git commit {path}) "
                        f"or discard it ({discard})")


def _quoted(path: str) -> str:
    """A path as a shell word (quoted only when it has to be)."""
    if path and all(c.isalnum() or c in "-_./+@%:," for c in path):
        return path
    return "'" + path.replace("'", "'\\''") + "'"


def is_store_file(path: str) -> bool:
    """A path a door may write: a memory (any ``.html``) or a generated page; the
    store's own settings under ``.memhtml/`` are not listed."""
    if path.startswith(".memhtml/"):
        return False
    # Imported here: the site model pulls in the parser, and this module sits on every
    # write's import path (a cold command would pay for it).
    from memhtml.store.site_model import is_generated_path

    return path.endswith(".html") or is_generated_path(path)


def _classify(path: str, tip: str | None, index: str | None, file: str | bool | None
              ) -> LocalEdit | None:
    """None when the three agree; otherwise what kind of edit the person made."""
    if tip == index and index == file:
        return None
    kind: EditKind
    if tip is None and index is None:
        kind = "untracked"
    elif tip is None:
        kind = "added"
    elif index is None or file is None:
        kind = "deleted"
    else:
        kind = "modified"
    return LocalEdit(path, kind, staged=index != tip, unstaged=file != index)


def _edits(git: GitService, paths: Sequence[str], tip: Mapping[str, str],
           index: Mapping[str, str]) -> IOResult[tuple[LocalEdit, ...], StoreError]:
    """The edits among ``paths``, each file seen as git sees it (``file_blobs``: its
    stat check and clean filters, so a CRLF checkout of an LF blob is no edit)."""
    ordered = sorted(set(paths))

    def classified(files: Mapping[str, str | bool | None]) -> tuple[LocalEdit, ...]:
        found = (_classify(path, tip.get(path), index.get(path), files.get(path, False))
                 for path in ordered)
        return tuple(edit for edit in found if edit is not None)

    likely = {path: (tip.get(path), index.get(path)) for path in ordered}
    return file_blobs(git, ordered, likely).map(classified)


def _checkout(deps: StoreDeps) -> GitService | None:
    """The checkout the doors keep up to date; None without one."""
    return deps.git if deps.checkout_git_dir is not None else None


# -- what a door checks ------------------------------------------------------------------


def uncommitted_in(deps: StoreDeps, before: Mapping[str, str | None]
                   ) -> IOResult[None, StoreError]:
    """Refuse a write whose paths (each with its blob at the tip the write read) the
    person has edited and not committed, or that would land under a merge or rebase
    in progress. Nothing to check without a checkout; no edit to check when the
    checkout is on another branch (a commit there cannot undo the store's)."""
    git = _checkout(deps)
    if git is None or not before:
        return IOSuccess(None)

    def judge(tip: str | None) -> IOResult[None, StoreError]:
        if tip is None:
            return IOSuccess(None)
        blocked = _in_the_way(git, before)
        if blocked:
            return IOFailure(UncommittedEdits(tuple(p for p, _ in blocked),
                                              tuple(why for _, why in blocked)))
        indexed: IOResult[Mapping[str, str], StoreError] = git.index_entries(list(before))
        held = {path: blob for path, blob in before.items() if blob is not None}
        return indexed.bind(lambda index: _edits(git, list(before), held, index)
                            ).bind(_refuse)

    # A rebase detaches HEAD, so an operation in progress is checked before the branch.
    busy = git.operation_in_progress()
    if busy is not None:
        return IOFailure(MergeInProgress(*busy))
    return on_branch(git, deps.ref).bind(judge)


def _in_the_way(git: GitService, paths: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Files standing where a folder of ``paths`` belongs (``areas/todo`` a file of the
    person's, a write going to ``areas/todo/x.html``): the commit would land and the
    checkout could not hold it, so the person's next ``git commit -a`` would delete it.
    Each with the line that says so."""
    found: dict[str, str] = {}
    for path in paths:
        parts = path.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            if folder not in found and git.file_kind(folder) is True:
                found[folder] = (f"{folder}: a file stands where the folder of {path} "
                                 "belongs, so the checkout could not hold the write; move "
                                 "it aside and run the command again")
    return tuple(sorted(found.items()))


def _refuse(edits: tuple[LocalEdit, ...]) -> IOResult[None, StoreError]:
    if not edits:
        return IOSuccess(None)
    return IOFailure(UncommittedEdits(tuple(e.path for e in edits),
                                      tuple(e.describe() for e in edits)))


# -- what status and doctor list ---------------------------------------------------------


def _expand(git: GitService, changed: Sequence[str]) -> list[str]:
    """Changed paths with each untracked directory (``dir/``) walked for its files."""
    paths: list[str] = []
    for path in changed:
        paths += git.files_under(path) if path.endswith("/") else [path]
    return paths


def local_edits(deps: StoreDeps) -> IOResult[tuple[LocalEdit, ...], StoreError]:
    """Every memory file and generated page the person has edited in the checkout and
    not committed: modified, deleted, added or new, staged or not. Git's own status
    picks the candidates (its stat cache keeps this cheap); each is then compared by
    content. Nothing without a checkout, or when the checkout is on another branch."""
    return local_edits_begun(deps)()


def local_edits_begun(deps: StoreDeps) -> Callable[[], IOResult[tuple[LocalEdit, ...],
                                                                  StoreError]]:
    """``local_edits``, with git's walk of the checkout started now and the rest done by
    the returned call: ``status`` decodes its snapshot while git walks (0.3-0.4 s over
    100,000 files). Nothing may write the checkout before the call."""
    git = _checkout(deps)
    if git is None:
        return lambda: IOSuccess(())
    walked = git.worktree_changes_begun()

    def compare(tip: str, paths: list[str]) -> IOResult[tuple[LocalEdit, ...], StoreError]:
        if not paths:
            return IOSuccess(())
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(tip, paths)
        indexed: IOResult[Mapping[str, str], StoreError] = git.index_entries(paths)
        return entries.bind(lambda held: indexed.bind(lambda index: _edits(
            git, paths, {e.path: e.blob_id for e in held}, index)))

    def listed(tip: str | None) -> IOResult[tuple[LocalEdit, ...], StoreError]:
        # Waited for on every path, so the walk never outlives the call.
        changed: IOResult[tuple[str, ...], StoreError] = walked()
        if tip is None:
            return IOSuccess(())
        return changed.bind(lambda paths: compare(
            tip, [p for p in _expand(git, paths) if is_store_file(p)]))

    return lambda: on_branch(git, deps.ref).bind(listed)


def unmerged(deps: StoreDeps) -> IOResult[tuple[str, ...], StoreError]:
    """Paths the checkout's index holds in conflict; none without a checkout."""
    if _checkout(deps) is None:
        return IOSuccess(())
    found: IOResult[tuple[str, ...], StoreError] = deps.git.unmerged_paths()
    return found
