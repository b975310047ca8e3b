"""``GitService`` over pygit2: trees read in one pass, commits built in memory. This
module is the repository half; the checkout half is ``git_checkout.PygitCheckout``.

Writes never touch a working tree. ``commit`` builds the new tree in an
in-memory index over the parent's tree, writes the commit object, and only then
moves the ref, under the ref's lock, if it still points at the expected parent.

Over 600 lines, on purpose: it is one class, the ``Repository`` port's every method
over one pygit2 handle and its lock; the pieces that stand alone are already apart
(``git_names``, ``git_guard``, ``git_arrivals``, ``git_remote``, ``tree_edit``).
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta, timezone

import pygit2
from pygit2.enums import (
    ObjectType,
    ReferenceType,
    RepositoryOpenFlag,
    SortMode,
)
from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.adapters.git_arrivals import first_parent_arrivals
from memhtml.adapters.git_checkout import PygitCheckout
from memhtml.adapters.git_guard import CONVERTED, failure_reason, guarded
from memhtml.adapters.git_names import FULL_SHA, entry_at, reference, tree_entry
from memhtml.adapters.tree_edit import edited_tree, tree_delta
from memhtml.contracts.errors import GitError, GitFailure, NotFound, RefMoved
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.services import (
    Arrival,
    CommitInfo,
    PathChange,
    Signature,
    TreeEntry,
)

_TRAILER = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)")
_BLANK = re.compile(r"\n(?:[ \t]*\n)+")

_LOCK_WAIT_SECONDS = 2.0
"""How long ``commit`` waits for another writer to release the ref's lock."""

_SYMREF_DEPTH = 5


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


def _entry_at(tree: pygit2.Tree, path: str) -> tuple[pygit2.Oid, int] | None:
    obj = entry_at(tree, path)
    return None if obj is None else (obj.id, obj.filemode)


class PygitService(PygitCheckout):
    """One repository, read and written through libgit2.

    Each commit carries the ``author`` its caller passes; the committer is the
    ``committer`` this handle was made with, or the author when there is none (so a
    commit a person's identity authors still says which program made it)."""

    def __init__(self, repo: pygit2.Repository, committer: Signature | None = None) -> None:
        self._repo = repo
        self._committer = committer
        self._recent_blobs: Mapping[str, bytes] = {}

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
        except CONVERTED:
            found = {}
        name = env.get("GIT_AUTHOR_NAME") or found.get("user.name")
        email = env.get("GIT_AUTHOR_EMAIL") or found.get("user.email")
        return (name.strip() or None if name else None, email.strip() or None if email else None)

    def head_branch(self) -> tuple[str | None, bool]:
        """The branch HEAD names (short form; None when HEAD is detached) and whether
        that branch is unborn (no commit yet)."""
        try:
            head = reference(self._repo, "HEAD")
        except CONVERTED:
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

        return guarded("point_head", pointed)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> IOResult[PygitService, GitFailure]:
        """Open the repository at ``path`` itself; parent directories are not searched."""
        try:
            repo = pygit2.Repository(os.fspath(path), RepositoryOpenFlag.NO_SEARCH)
        except pygit2.GitError as exc:
            return IOFailure(GitFailure("open", failure_reason(exc)))
        return IOSuccess(cls(repo))

    @classmethod
    def init(
        cls, path: str | os.PathLike[str], initial_branch: str = "main", *, bare: bool = False
    ) -> IOResult[PygitService, GitFailure]:
        """Create a repository whose HEAD names ``initial_branch`` (unborn until a commit)."""
        try:
            repo = pygit2.init_repository(os.fspath(path), bare=bare, initial_head=initial_branch)
        except (pygit2.GitError, OSError) as exc:
            return IOFailure(GitFailure("init", failure_reason(exc)))
        return IOSuccess(cls(repo))

    @property
    def path(self) -> str:
        """The git directory (``.git`` of a checkout, or the bare repository)."""
        return str(self._repo.path)

    # -- reading ---------------------------------------------------------------------

    def resolve(self, ref: str) -> IOResult[str, GitError]:
        """A branch name (preferred over a tag of that name), full ref, tag, sha or
        sha prefix, or any rev-parse expression, peeled to a commit."""
        return guarded("resolve", lambda: self._commit(ref).map(lambda c: str(c.id)))

    def list_tree(self, commit: str) -> IOResult[tuple[TreeEntry, ...], GitError]:
        return guarded("list_tree", lambda: self._commit(commit).map(self._walk_tree))

    def read_blobs(self, blob_ids: Sequence[str]) -> IOResult[Mapping[str, bytes], GitError]:
        """Keyed by the ids as given. A missing id, or one naming a non-blob, is absent;
        an id that is not 40 hex digits is a ``GitFailure``."""
        return guarded("read_blobs", lambda: self._read_blobs(blob_ids))

    def changed_paths(self, old: str, new: str) -> IOResult[tuple[str, ...], GitError]:
        return guarded("changed_paths", lambda: self._changed_paths(old, new))

    def entries_at(
        self, commit: str, paths: Sequence[str]
    ) -> IOResult[tuple[TreeEntry, ...], GitError]:
        return guarded(
            "entries_at", lambda: self._commit(commit).map(lambda c: self._entries(c, paths))
        )

    def names_in(self, commit: str, directories: Sequence[str]
                 ) -> IOResult[Mapping[str, tuple[str, ...]], GitError]:
        return guarded("names_in", lambda: self._commit(commit).map(
            lambda c: self._names_in(c, directories)))

    def commit_info(self, sha: str) -> IOResult[CommitInfo, GitError]:
        return guarded("commit_info", lambda: self._commit(sha).map(self._info))

    def commits_between(self, old: str | None, new: str) -> IOResult[tuple[str, ...], GitError]:
        return guarded("commits_between", lambda: self._commits_between(old, new))

    def commits_touching(
        self, ref: str, path: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        """Up to ``limit`` commits whose entry at ``path`` (file or directory) differs
        from their first parent's; a root commit holding the path counts."""
        return guarded("commits_touching", lambda: self._commits_touching(ref, path, limit))

    def commits_mentioning(
        self, ref: str, text: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        return guarded("commits_mentioning",
                        lambda: self._commits_mentioning(ref, text, limit))

    def arrivals(self, ref: str, paths: Collection[str]
                 ) -> IOResult[Mapping[str, int], GitError]:
        return guarded("arrivals", lambda: self._commit(ref).map(
            lambda tip: {path: arrival.steps for path, arrival in
                         first_parent_arrivals(self._repo, tip, paths).items()}))

    def arrived(self, ref: str, paths: Collection[str],
                follow: Collection[tuple[str, str]] = ()
                ) -> IOResult[Mapping[str, Arrival], GitError]:
        wanted = frozenset(follow)

        def is_move(commit: pygit2.Commit) -> bool:
            return any(pair in wanted for pair in parse_trailers(commit.message))

        return guarded("arrived", lambda: self._commit(ref).map(
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
        return guarded(
            "commit",
            lambda: self._commit_changes(ref, expected_parent, changes, message, author, at),
        )

    def commit_merge(self, ref: str, expected_parent: str, other_parent: str,
                     changes: Sequence[PathChange], message: str, author: Signature,
                     at: datetime) -> IOResult[str, GitError]:
        """``commit`` recording ``other_parent`` as the second parent; never a no-op."""
        return guarded(
            "commit_merge",
            lambda: self._commit(other_parent).bind(
                lambda other: self._commit_changes(ref, expected_parent, changes, message,
                                                   author, at, other.id)),
        )

    def merge_base(self, a: str, b: str) -> IOResult[str | None, GitError]:
        def base() -> Result[str | None, GitError]:
            return self._commit(a).bind(lambda left: self._commit(b).map(
                lambda right: _hex_or_none(self._repo.merge_base(left.id, right.id))))

        return guarded("merge_base", base)

    def is_ancestor(self, a: str, b: str) -> IOResult[bool, GitError]:
        def ancestor() -> Result[bool, GitError]:
            # descendant_of is strict (a commit does not descend from itself); git's
            # --is-ancestor, which the Protocol follows, counts the commit itself.
            return self._commit(a).bind(lambda older: self._commit(b).map(
                lambda newer: older.id == newer.id
                or bool(self._repo.descendant_of(newer.id, older.id))))

        return guarded("is_ancestor", ancestor)

    def create_branch(self, name: str, at: str) -> IOResult[None, GitError]:
        """A new branch at the commit ``at`` names; ``GitFailure`` if it exists."""
        return guarded("create_branch", lambda: self._create_branch(name, at))

    def delete_branch(self, name: str) -> IOResult[None, GitError]:
        """``GitFailure`` if there is no such branch or it is checked out."""
        return guarded("delete_branch", lambda: self._delete_branch(name))

    def branches(self, prefix: str) -> IOResult[tuple[str, ...], GitError]:
        def listed() -> Result[tuple[str, ...], GitError]:
            return Success(tuple(sorted(name for name in self._repo.branches.local
                                        if name.startswith(prefix))))

        return guarded("branches", listed)

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

        return guarded("move_ref", move)

    def _lookup(self, rev: str) -> pygit2.Object | None:
        if FULL_SHA.fullmatch(rev):
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
        full_sha = FULL_SHA.fullmatch
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
        first = tip.unwrap()
        if limit == 1 and _entry_at(first.tree, path) != (
                _entry_at(first.parents[0].tree, path) if first.parent_ids else None):
            # The tip itself touched the path (the write just landed, whose journal
            # recovery checks): a sorted walk would read the whole history before
            # giving its first commit, once per path of a large batch.
            return Success((self._info(first),))
        touching: list[CommitInfo] = []
        for commit in self._repo.walk(first.id, SortMode.TOPOLOGICAL | SortMode.TIME):
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
        written: dict[str, bytes] = {}
        built = edited_tree(self._repo, None if parent is None else parent.tree, changes,
                            written)
        # The checkout that follows the commit asks for these very blobs; replaced
        # whole, so a reader on another thread sees one commit's or the next's.
        self._recent_blobs = written
        return built

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
