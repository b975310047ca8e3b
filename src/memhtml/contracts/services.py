"""The services a pure room may be handed: narrow Protocols, implemented in ``adapters``.

Every call that touches the outside world returns an ``IOResult`` whose failure
side is a typed error value, never a stray exception.

One module over 600 lines, on purpose: it is the list of what the core asks of the
outside world (git's two ports, remotes, embedders, the model, the clock, the state
plane), each Protocol beside the small values it speaks in, and nearly all of it is
signatures and the docstrings that are their contracts. The ports with a module of
their own (journals, local state, vectors, transcripts) are the ones a room other
than these imports alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt
from returns.io import IOResult

from memhtml.contracts.errors import (
    EmbedFailure,
    GitError,
    ModelError,
    RemoteError,
    StateError,
)

Vector = npt.NDArray[np.float32]

FILE_MODE_BLOB = 0o100644
FILE_MODE_EXECUTABLE = 0o100755
FILE_MODE_LINK = 0o120000


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One blob in a commit's tree: tree-form path, blob id (hex) and git file mode."""

    path: str
    blob_id: str
    mode: int = FILE_MODE_BLOB

    @property
    def is_symlink(self) -> bool:
        return self.mode == FILE_MODE_LINK


@dataclass(frozen=True, slots=True)
class PathChange:
    """One path in a commit: new bytes to write, or ``None`` to delete it. ``mode``
    None keeps the mode the path has (a plain file when it is new); a merge sets it to
    carry the other side's symbolic link or executable bit across."""

    path: str
    data: bytes | None
    mode: int | None = None


@dataclass(frozen=True, slots=True)
class FileStat:
    """What ``lstat`` said of a working-tree file, in the fields git keeps in an index
    entry: a write records it for each file it puts in the checkout, so the entry it
    then sets says what ``git checkout`` would have said of that file."""

    ctime_s: int
    ctime_ns: int
    mtime_s: int
    mtime_ns: int
    dev: int
    ino: int
    mode: int
    uid: int
    gid: int
    size: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        return cls(int(st.st_ctime), st.st_ctime_ns % 1_000_000_000, int(st.st_mtime),
                   st.st_mtime_ns % 1_000_000_000, st.st_dev, st.st_ino, st.st_mode,
                   st.st_uid, st.st_gid, st.st_size)


@dataclass(frozen=True, slots=True)
class IndexUpdate:
    """One compare-and-set on a checkout's index entry.

    The entry is set to ``blob_id`` (``None`` removes it) only while it still holds
    ``expected`` (``None``: no entry), so a change the user staged is never replaced.
    """

    path: str
    expected: str | None
    blob_id: str | None
    mode: int = FILE_MODE_BLOB
    stat: FileStat | None = None
    """The working-tree file as the write left it, holding ``blob_id`` as git checks it
    out. The entry records it only while the file still has it (a file touched since
    gets none, so git looks at its content); None records none."""


@dataclass(frozen=True, slots=True)
class Signature:
    """Who a commit is attributed to."""

    name: str
    email: str


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """What a commit says: its message, trailers in order, parents, author and
    committer. The committer is which program wrote the commit (memhtml's doors and
    runs sign as memhtml; a person's own ``git commit`` signs as the person), so a
    history read can tell the two apart."""

    sha: str
    parents: tuple[str, ...]
    message: str
    author: Signature
    time: datetime
    trailers: tuple[tuple[str, str], ...] = field(default=())
    committer: Signature | None = None
    """None only where a caller built the value by hand; both repositories fill it."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """When a path came onto a branch, as the branch's first-parent history says.

    ``commit`` is the first-parent commit that brought it (the newest whose first
    parent lacks it; a root commit holding it counts), ``steps`` how many first-parent
    steps back from the ref that is, and ``at`` its committer time: when the branch
    took it, which a person's author date (an import, a rebase, a backdated note) does
    not say. ``came_as`` is the path it arrived under: the asked path itself, or the
    earlier path of a move the caller asked to follow."""

    steps: int
    commit: str
    at: datetime
    came_as: str


class Repository(Protocol):
    """A repository's objects, refs and history: trees and blobs read, commits made,
    refs moved by compare-and-set, diffs, merge bases, who brought a path. Nothing here
    reads or writes a working tree, an index or a config file, so a bare repository and
    the in-memory twin answer every call."""

    def resolve(self, ref: str) -> IOResult[str, GitError]:
        """The commit sha a ref, branch name or sha prefix names."""
        ...

    def list_tree(self, commit: str) -> IOResult[tuple[TreeEntry, ...], GitError]:
        """Every blob of a commit's tree, recursively, in one pass, sorted by path."""
        ...

    def read_blobs(self, blob_ids: Sequence[str]) -> IOResult[Mapping[str, bytes], GitError]:
        """Many blobs in one batch, by id. An id git lacks is absent from the map."""
        ...

    def entries_at(
        self, commit: str, paths: Sequence[str]
    ) -> IOResult[tuple[TreeEntry, ...], GitError]:
        """The blob entries of ``paths`` at ``commit``; a path that is absent there (or
        names a directory) is left out. Costs the paths asked for, not the tree."""
        ...

    def names_in(self, commit: str, directories: Sequence[str]
                 ) -> IOResult[Mapping[str, tuple[str, ...]], GitError]:
        """The names each of ``directories`` (tree paths, ``""`` for the root) holds at
        ``commit``, sorted: a file's (or link's) name as it is, a subdirectory's with a
        trailing ``/``. A directory that is absent there (or names a file) is left out.
        Costs the directories asked for and those on the way to them, not the tree."""
        ...

    def changed_paths(self, old: str, new: str) -> IOResult[tuple[str, ...], GitError]:
        """Paths whose blob differs between two commits' trees, sorted.

        No rename detection: a rename contributes both of its paths.
        """
        ...

    def commit(
        self,
        ref: str,
        expected_parent: str | None,
        changes: Sequence[PathChange],
        message: str,
        author: Signature,
        at: datetime,
    ) -> IOResult[str, GitError]:
        """Commit ``changes`` on top of ``expected_parent`` and move ``ref`` to it.

        The tree is built in memory from the parent's tree; no working tree is
        touched. If ``ref`` no longer points at ``expected_parent`` the result is
        ``RefMoved`` and nothing moves; the caller re-applies and retries.
        """
        ...

    def commit_merge(
        self,
        ref: str,
        expected_parent: str,
        other_parent: str,
        changes: Sequence[PathChange],
        message: str,
        author: Signature,
        at: datetime,
    ) -> IOResult[str, GitError]:
        """``commit`` with two parents, ``[expected_parent, other_parent]``: the tree
        is ``expected_parent``'s with ``changes`` applied, and ``ref`` moves only while
        it still names ``expected_parent`` (else ``RefMoved``). A merge commit is made
        even when the tree equals the first parent's, since recording ``other_parent``
        is what makes the other side's history part of this one."""
        ...

    def merge_base(self, a: str, b: str) -> IOResult[str | None, GitError]:
        """A best common ancestor of two commits; None when their histories share no
        commit. With several best ones (criss-cross merges) which one is unspecified."""
        ...

    def is_ancestor(self, a: str, b: str) -> IOResult[bool, GitError]:
        """True when ``a`` is ``b`` or in its history (``git merge-base --is-ancestor``)."""
        ...

    def create_branch(self, name: str, at: str) -> IOResult[None, GitError]: ...

    def move_ref(self, ref: str, expected: str | None, target: str) -> IOResult[None, GitError]:
        """Point ``ref`` at the existing commit ``target`` while it still names
        ``expected`` (None: the ref must not exist); otherwise ``RefMoved`` and nothing
        moves. The sleep merge's fast-forward of main onto a reviewed branch."""
        ...

    def delete_branch(self, name: str) -> IOResult[None, GitError]: ...

    def branches(self, prefix: str) -> IOResult[tuple[str, ...], GitError]:
        """Local branch names (short form, no ``refs/heads/``) that start with
        ``prefix``, sorted: how the sleep commands find the runs this clone holds."""
        ...

    def commit_info(self, sha: str) -> IOResult[CommitInfo, GitError]: ...

    def commits_between(self, old: str | None, new: str) -> IOResult[tuple[str, ...], GitError]:
        """Commits reachable from ``new`` and not from ``old``, oldest first."""
        ...

    def commits_touching(
        self, ref: str, path: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        """Newest-first commits on ``ref`` whose change set includes ``path``."""
        ...

    def commits_mentioning(
        self, ref: str, text: str, limit: int
    ) -> IOResult[tuple[CommitInfo, ...], GitError]:
        """Newest-first commits reachable from ``ref`` whose message contains ``text``
        (``git log -F --grep``), at most ``limit``: one walk that reads messages only,
        so a question about many paths costs the history once, not once a path."""
        ...

    def arrivals(self, ref: str, paths: Collection[str]
                 ) -> IOResult[Mapping[str, int], GitError]:
        """For each of ``paths`` that ``ref``'s tree holds as a file, how long it has been
        on the branch: the steps back along ``ref``'s first-parent chain to the commit
        that brought it (the newest whose first parent lacks it; a root commit holding
        it counts), 0 when ``ref`` itself did. More steps: committed earlier. A path
        ``ref`` does not hold is absent. The walk stops once every path is placed."""
        ...

    def arrived(self, ref: str, paths: Collection[str],
                follow: Collection[tuple[str, str]] = ()
                ) -> IOResult[Mapping[str, Arrival], GitError]:
        """``arrivals`` with each commit and its committer time: for each of ``paths``
        that ``ref``'s tree holds as a file, the ``Arrival`` that brought it.

        ``follow`` names trailers (key and value, exactly) that mark a commit as a
        move: where such a commit brought a path and deleted exactly one other path
        holding the very same blob (and brought no other path with it), the path keeps
        the arrival of the one it was moved from, followed back as far as the moves
        go. A move that also changed the file's bytes, or one among identical copies,
        is not followed: the path counts from the move. The walk reads only the
        directories the paths still to place lie in, so a commit elsewhere costs one
        tree comparison at the top."""
        ...



IN_PROGRESS: tuple[tuple[str, str, str], ...] = (
    ("rebase-merge", "rebase", "git rebase --continue, or git rebase --abort"),
    ("rebase-apply/applying", "am", "git am --continue, or git am --abort"),
    ("rebase-apply", "rebase", "git rebase --continue, or git rebase --abort"),
    ("MERGE_HEAD", "merge", "resolve the conflicts and git commit, or git merge --abort"),
    ("CHERRY_PICK_HEAD", "cherry-pick", "git cherry-pick --continue, or git cherry-pick --abort"),
    ("REVERT_HEAD", "revert", "git revert --continue, or git revert --abort"),
)
"""What git leaves in its directory while an operation waits for the person (the
marker, the operation, how to finish or abort it), checked in this order
(``rebase-apply`` is also where ``git am`` keeps its state)."""


class Checkout(Protocol):
    """A checkout beside the repository: its index (entries read and compare-and-set),
    its working tree as git sees it (changes, the blob a file cleans to, the bytes a
    blob checks out as), the index lock a dead writer left, a merge left in conflict,
    and the repository's own config as git reads it. A bare repository answers as a
    checkout with nothing in it."""

    def worktree_changes(self) -> IOResult[tuple[str, ...], GitError]:
        """Paths the checkout holds differently from its HEAD commit (staged,
        unstaged or untracked, not ignored), sorted; a bare repository has none."""
        ...

    def worktree_changes_begun(self) -> Callable[[], IOResult[tuple[str, ...], GitError]]:
        """``worktree_changes`` started now, its answer given by the returned call: a
        command with other work to do (decoding a snapshot) lets git walk the checkout
        beside it. Nothing may write the checkout in between."""
        ...

    def set_config(self, key: str, value: str) -> IOResult[None, GitError]:
        """Set a key in the repository's own config (``.git/config``), e.g. the merge
        driver a ``.gitattributes`` line names, which git does not carry in the tree."""
        ...

    def config_value(self, key: str) -> IOResult[str | None, GitError]:
        """The value git reads for ``key`` (the repository's config, then the user's,
        then the system's); None when no level sets it."""
        ...

    def local_config_value(self, key: str) -> IOResult[str | None, GitError]:
        """The value the repository's own config sets for ``key`` (what ``set_config``
        writes: ``.git/config``, and a worktree's own file where git keeps one); None
        when it sets none. The user's and the system's levels are not read, so a key that
        records this one repository's choice cannot be supplied by them."""
        ...

    def drop_config(self, key: str, value: str) -> IOResult[bool, GitError]:
        """Remove ``key`` from the repository's own config when it holds exactly
        ``value`` there (a setting an earlier release made, and only that); True when it
        was removed. Other levels, and any other value, are left as they are."""
        ...

    def merge_attributes(self, commit: str, paths: Sequence[str]
                         ) -> IOResult[Mapping[str, str], GitError]:
        """The merge driver git's attributes give each of ``paths``, for the paths they
        give one: the driver's name (``ours``, ``union``, a custom one), or ``binary``
        where ``merge`` is unset (``-merge``, the ``binary`` macro). Paths with git's
        default text merge (``merge`` unspecified, set, or ``text``) are left out.
        Read as git reads them: every ``.gitattributes`` in ``commit``'s tree, and on
        disk a checkout's own, the repository's ``info/attributes`` and the user's and
        the system's attribute files."""
        ...

    def unmerged_paths(self) -> IOResult[tuple[str, ...], GitError]:
        """Paths the checkout's index holds in conflict (a merge, a rebase or a stash
        left unresolved), sorted; a bare repository has none."""
        ...

    def update_index(self, updates: Sequence[IndexUpdate], tip: str | None = None
                     ) -> IOResult[tuple[str, ...], GitError]:
        """Compare-and-set entries of a checkout's index after a commit moved its branch,
        so the index does not read as a staged revert of that commit. Returns the paths
        updated; a bare repository has no index and updates nothing.

        With ``tip`` (the commit the updates follow), nothing is updated unless HEAD
        still resolves to it under git's index lock: a person's ``git commit`` holds
        that lock while it moves the branch, so an update decided against the tip
        before such a commit would otherwise land after it, and make the index the
        commit read (one without the write) look like the write's own."""
        ...

    def worktree_blobs(self, paths: Sequence[str],
                       likely: Mapping[str, Collection[str]] | None = None
                       ) -> IOResult[Mapping[str, str], GitError]:
        """The blob git sees in each of ``paths``, regular files of the checkout (the
        caller has looked): the index entry's own when git's stat check finds the file
        as it was staged, else the id of its content after the checkout's clean filters
        (``core.autocrlf``, the ``text``/``eol``/``ident`` attributes; never a filter
        driver's program). What ``git status`` compares, so a file checked out with
        CRLF line endings holds the LF blob it came from. ``likely`` names, per path,
        the blobs the caller expects (its index entry's, the branch's): an answer among
        them may be given without opening the index. A path left out is one git calls
        changed with no blob to say how (its size is not the one the index recorded,
        though its content cleans to the entry's blob), or one that cannot be read; a
        bare or in-memory repository has no working tree and answers an empty map."""
        ...

    def checkout_bytes(self, blobs: Mapping[str, str]) -> IOResult[Mapping[str, bytes], GitError]:
        """For each path -> blob id: the bytes ``git checkout`` writes for that blob at
        that path (its smudge filters: LF to CRLF under ``core.autocrlf=true`` or
        ``eol=crlf``; nothing for binary or ``-text``; never a filter driver's
        program), with the checkout's attributes as they are on disk now. A blob git
        lacks is left out."""
        ...

    def index_entries(self, paths: Collection[str] | None = None
                      ) -> IOResult[Mapping[str, str], GitError]:
        """The checkout's index as path -> blob id (stage 0 entries), of every path or
        only of ``paths`` (those the index holds); a bare repository has no index and
        answers an empty map. A write checks a few paths of an index that may hold
        100,000: listing it whole cost a cold write at that size a second."""
        ...

    def clear_stale_index_lock(self) -> IOResult[bool, GitError]:
        """Remove the checkout's index lock when a memhtml process took it and died
        holding it; True when one was removed. A live holder's lock is left."""
        ...

    # The working tree's files, as a write leaves them and a check finds them. Each
    # answer is total: the file system refusing is an answer (False, None or an empty
    # tuple), never a failure, since a checkout a person shares with memhtml may hold
    # anything at any name. A bare repository has no working tree: nothing is there and
    # nothing can be written.

    def file_kind(self, path: str) -> bool | None:
        """True for a regular file reached without a symbolic link; None when nothing
        is there (a name too long for the file system cannot be); False when something
        else is (a directory, a link on the way, an entry that cannot be looked at).
        ``path`` comes from a tree, which may hold any name git can: every step is
        looked at, never followed."""
        ...

    def file_stat(self, path: str) -> FileStat | None:
        """The file's stat data as git records it in an index entry, not following a
        final link; None when nothing is there or it cannot be looked at."""
        ...

    def put_file(self, path: str, data: bytes | None, *, executable: bool = False
                 ) -> FileStat | bool:
        """Write ``data`` at ``path`` (a temporary file renamed over it, so a reader
        never sees half a file), executable when its tree entry is (as ``git checkout``
        makes it: 0777, else 0666, under the umask), and return its stat data for the
        index entry; for None, remove the file and every folder the removal leaves
        empty, and return True. False when it cannot be done (nothing else is
        changed, no temporary left)."""
        ...

    def files_under(self, directory: str) -> tuple[str, ...]:
        """Every file under ``directory`` (``dir/``, as git's status lists an untracked
        folder), as paths from the top, nothing under a ``.git``; none when it cannot be
        walked."""
        ...

    def index_locked(self) -> bool:
        """Whether git's ``index.lock`` is there now: another git command is
        rewriting the index, and a write waits for it (``store.checkout``)."""
        ...

    def operation_in_progress(self) -> tuple[str, str] | None:
        """The git operation left waiting in the checkout (``merge``, ``rebase``,
        ``cherry-pick``, ``revert``) and how to finish or abort it; None when none is."""
        ...


class GitService(Repository, Checkout, Protocol):
    """Both ports over one repository, as the pygit2 adapter and the in-memory twin
    implement them: what a store holding a checkout takes. Code that reads or commits
    only asks for a ``Repository``."""


Progress: TypeAlias = Callable[[str], None]
"""Receives each progress line git prints while it talks to a remote."""


class RemoteService(Protocol):
    """Fetching from and pushing to the remotes one clone's git config names.

    A push is never forced: it updates the remote branch only as a fast-forward from
    the sha the caller last saw there, and anything else is ``PushRejected``, after
    which the caller fetches, merges again and retries.
    """

    def remotes(self) -> IOResult[tuple[str, ...], RemoteError]:
        """The configured remote names, sorted."""
        ...

    def fetch(
        self, remote: str, branch: str, on_progress: Progress | None = None
    ) -> IOResult[str | None, RemoteError]:
        """Bring ``branch`` of ``remote`` into ``refs/remotes/<remote>/<branch>`` and
        return its sha; None when the remote has no such branch (then the stale
        tracking ref, if any, is removed). An unknown remote is ``RemoteMissing``."""
        ...

    def push(
        self,
        remote: str,
        branch: str,
        sha: str,
        expected: str | None,
        on_progress: Progress | None = None,
    ) -> IOResult[None, RemoteError]:
        """Move ``branch`` on ``remote`` to the local commit ``sha``, only as a
        fast-forward and only when the remote is found naming ``expected`` (None: the
        branch must not exist yet); otherwise ``PushRejected`` and the remote is
        unchanged. A branch that moves during the push is either refused or
        fast-forwarded from a commit ``sha``'s history holds, so no remote commit is
        ever dropped. The tracking ref follows a push that landed."""
        ...

    def point_head(self, remote: str, branch: str, sha: str) -> IOResult[str | None, RemoteError]:
        """Point ``remote``'s HEAD at ``branch`` when it names a branch the remote does
        not have (what ``git init --bare`` leaves) and ``branch`` there is at ``sha``,
        where that can be done at all: a bare repository on this machine (git cannot
        set a remote's HEAD by pushing). The branch HEAD named before, or None when
        nothing was changed; a HEAD naming a branch the remote has is never changed."""
        ...


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """One embedder's space. Vectors from two different spaces are never compared."""

    model_id: str
    dimension: int

    @property
    def key(self) -> str:
        """A file-system-safe name for the space, used to key on-disk caches."""
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in self.model_id)
        return f"{safe}-{self.dimension}"


class DocumentEmbedder(Protocol):
    """Embeds documents into one vector space."""

    @property
    def space(self) -> VectorSpace: ...

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        """One vector per text, in order, each ``space.dimension`` wide."""
        ...


class QueryEmbedder(DocumentEmbedder, Protocol):
    """An embedder that also embeds a search query (some models prefix queries)."""

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]: ...


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One question to a language model: answer ``prompt`` under ``system`` with one
    JSON object matching ``schema``, through the tool (or response format)
    ``tool_name``, in at most ``max_output_tokens``. A phase keeps ``system`` and
    ``tool_name`` identical across its batches, and ``schema`` across batches of one
    size (it names the batch's keys, ``m1``..``mN``), so they form a cacheable prefix;
    ``prompt`` changes. The order of ``schema``'s properties is sent as declared.
    ``time_limit`` (seconds) bounds this one call below the model's own timeout: what a
    run's wall-clock budget has left when it is asked."""

    system: str
    prompt: str
    schema: Mapping[str, object]
    tool_name: str
    max_output_tokens: int
    time_limit: float | None = None


class LanguageModel(Protocol):
    """A model asked for one JSON object matching a schema."""

    @property
    def model_id(self) -> str: ...

    def complete_json(self, request: ModelRequest) -> IOResult[Mapping[str, object], ModelError]:
        """The answer, checked against ``request.schema`` (never coerced), or why not."""
        ...


class Clock(Protocol):
    """The one source of "now", and of waiting: injected so commits are deterministic
    and a retry loop's back-off can be run in tests without real time passing."""

    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a test clock advances its "now" instead)."""
        ...


_T = TypeVar("_T")
_R = TypeVar("_R")


class FanOut(Protocol):
    """A pure function over many items, perhaps on several cores at once.

    Returns (or raises) exactly what ``[fn(x) for x in items]`` would, in order: only
    where the work runs may differ. ``fn`` must be pure (what it returns depends on
    its item and on nothing it changes), and what it returns must pickle, since a
    result may come back from another process."""

    def __call__(self, fn: Callable[[_T], _R], items: Sequence[_T]) -> list[_R]: ...


# -- the state plane: what a sleep run keeps that the tree cannot hold -----------------

CounterKind: TypeAlias = Literal["entity", "edge", "session"]
"""What a corroboration counter counts detections of: an entity merge the model
alone proposed, a machine-detected ``contradicts`` edge, or a night on which a
transcript session's answer kept nothing (trace-consolidation retries it, then hands
it to a person)."""
COUNTER_KINDS: tuple[CounterKind, ...] = ("entity", "edge", "session")

AccessKind: TypeAlias = Literal["read"]
"""How a memory was accessed. Only a read door's answer counts: the retention signal
is retrieval by a reader, and a search hit is the ranker's choice, not the reader's
(counting hits would let rank keep what rank already favours)."""
ACCESS_KINDS: tuple[AccessKind, ...] = ("read",)


@dataclass(frozen=True, slots=True)
class CounterKey:
    """One corroboration counter. ``key`` is the caller's canonical spelling of what
    was detected (an unordered pair sorted, a merge's sorted member names), so two
    runs that reach the same conclusion bump the same counter."""

    kind: CounterKind
    key: str


@dataclass(frozen=True, slots=True)
class Detection:
    """What a bump answers.

    ``detections`` is the counter after the call. ``counted`` is False when this run
    id had already been counted (a resume, a repeat), and nothing moved. ``promotes``
    is True for exactly one run id per counter: the one whose detection was the
    ``threshold``-th. A resume of that run is told so again, since its promotion may
    not have landed before it stopped; the promotion write is idempotent."""

    detections: int
    counted: bool
    promotes: bool


@dataclass(frozen=True, slots=True)
class Counter:
    """A counter's current value, as ``counters`` lists it."""

    key: CounterKey
    detections: int


@dataclass(frozen=True, slots=True)
class AccessCount:
    """A path's accesses since an instant: how many, and the latest (UTC)."""

    path: str
    count: int
    last: datetime


@dataclass(frozen=True, slots=True)
class MinedRow:
    """One derived ``relates_to`` pair as the state plane keeps it: two tree paths
    (``source`` < ``target``, the unordered pair written once) and their cosine."""

    source: str
    target: str
    similarity: float


@dataclass(frozen=True, slots=True)
class QuietRun:
    """A sleep run that found nothing to do: every phase it ran finished with nothing
    to change, so it made no commit and kept no branch. The state plane is the one
    place it is recorded (a commit would be the change it did not have)."""

    run_id: str
    base: str
    """The main commit it read."""
    stamp: datetime
    """The run's one clock reading (UTC, whole seconds)."""
    phases: tuple[str, ...]
    """The phases it ran, each done with nothing to change, in run order."""


class StatePlane(Protocol):
    """This clone's sleep state: corroboration counters, consolidation watermarks and
    the access log, none of which can be rebuilt from the tree; relationship-mining's
    edges, a cache that can; and the runs that found nothing to do.

    Every instant must be timezone-aware (a naive one is refused as ``StateFailure``);
    instants come back in UTC, to the microsecond.
    """

    def bump(self, counter: CounterKey, run_id: str, threshold: int, at: datetime
             ) -> IOResult[Detection, StateError]:
        """Count one detection by run ``run_id``, at most once per run id, and say
        whether it is the one that reaches ``threshold`` (at least 1)."""
        ...

    def detections(self, counter: CounterKey) -> IOResult[int, StateError]:
        """A counter's value; 0 for one never bumped."""
        ...

    def readings(self, counter: CounterKey) -> IOResult[tuple[str, ...], StateError]:
        """The run ids a counter counted, in the order it counted them (empty for one
        never bumped): what a caller reads to judge whether a new detection is
        independent of the ones before it."""
        ...

    def counters(self, kind: CounterKind) -> IOResult[tuple[Counter, ...], StateError]:
        """Every counter of ``kind`` that has been bumped, sorted by key."""
        ...

    def mark_consolidated(self, session_ids: Collection[str], run_id: str, at: datetime
                          ) -> IOResult[tuple[str, ...], StateError]:
        """Mark transcript sessions consolidated by ``run_id``. A session already
        marked keeps its first mark. Returns the ids this call newly marked, sorted."""
        ...

    def unconsolidated(self, session_ids: Collection[str]
                       ) -> IOResult[tuple[str, ...], StateError]:
        """Those of ``session_ids`` not yet marked, sorted, each once."""
        ...

    def append_access(self, path: str, at: datetime, kind: AccessKind
                      ) -> IOResult[None, StateError]:
        """Log one access of the memory at tree path ``path``."""
        ...

    def access_counts(self, since: datetime, kind: AccessKind = "read"
                      ) -> IOResult[Mapping[str, AccessCount], StateError]:
        """Accesses of ``kind`` at or after ``since``, by path; a path with none is
        absent."""
        ...

    def mined_edges(self, commit: str, basis: str
                    ) -> IOResult[tuple[MinedRow, ...] | None, StateError]:
        """The rows saved for ``commit`` computed on ``basis`` (the vector space and
        the mining parameters, as the caller spells them), in the order saved; None
        when none are kept (never saved, or pruned since)."""
        ...

    def save_mined_edges(self, commit: str, basis: str, rows: Sequence[MinedRow]
                         ) -> IOResult[None, StateError]:
        """Keep ``rows`` (possibly none: a scan that found nothing is an answer too) for
        ``commit`` on ``basis``, replacing what was kept for that pair; only the newest
        few sets saved are kept, so the cache cannot grow with every night."""
        ...

    def record_quiet_run(self, run: QuietRun) -> IOResult[None, StateError]:
        """Remember a run that found nothing to do (one per run id and base: a later
        one of the same replaces it); only the newest few are kept."""
        ...

    def quiet_runs(self) -> IOResult[tuple[QuietRun, ...], StateError]:
        """The quiet runs kept, newest stamp first (then the later run id first)."""
        ...
