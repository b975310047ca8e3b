"""Error values, one closed union per room.

Errors are frozen dataclasses rather than exceptions: a pure function returns
them inside a ``returns`` container, and the edge (CLI, MCP) renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

VIOLATION_SEPARATOR = "; "
"""How a violation list is joined into the one string ``reason`` carries."""


@dataclass(frozen=True, slots=True)
class InvalidMemory:
    """A file that is not a memory: every violation found, in constraint order."""

    path: str
    reason: str
    violations: tuple[str, ...] = field(default=())

    @staticmethod
    def of(path: str, violations: tuple[str, ...]) -> InvalidMemory:
        """Build the error from a violation list, joining it into ``reason``."""
        return InvalidMemory(path, VIOLATION_SEPARATOR.join(violations), violations)


@dataclass(frozen=True, slots=True)
class GitFailure:
    """A git operation that failed: what was attempted and why."""

    operation: str
    reason: str


@dataclass(frozen=True, slots=True)
class RefMoved:
    """Compare-and-swap lost: the ref no longer points at the expected parent.

    Retryable: the caller re-applies its change on ``actual`` and tries again.
    """

    ref: str
    expected: str | None
    actual: str | None


@dataclass(frozen=True, slots=True)
class PathRefused:
    """A path that would leave the store, or is not a legal memory path."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class NotFound:
    """A path, ref or commit that does not exist where it was looked for."""

    what: str


@dataclass(frozen=True, slots=True)
class TextUnreadable:
    """A memory's text in this clone's snapshot was found damaged when it was read,
    and git could not give it back. The snapshot is dropped when the damage is seen,
    so the next command builds its version from git again."""

    path: str
    field: str
    """Which text: ``html`` (the file) or ``body_text`` (its article, as text)."""


@dataclass(frozen=True, slots=True)
class OverlayRefused:
    """An overlay op that does not resolve against the view it is applied to."""

    op: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class EmbedFailure:
    """An embedder that failed or answered out of contract (count or width)."""

    model_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class ModelUnavailable:
    """A language model that could not be asked: the transport failed, it timed out,
    the credentials were refused, or retries ran out."""

    model_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class ModelMalformed:
    """A model that answered, but not with what was asked: unparseable JSON, an answer
    off the schema, no tool call, a refusal, a truncated or oversized answer. The batch
    that asked is skipped; nothing of the answer is used."""

    model_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class BudgetExhausted:
    """The run's model-call budget is spent: the call was not made."""

    reason: str


ModelError: TypeAlias = ModelUnavailable | ModelMalformed | BudgetExhausted


@dataclass(frozen=True, slots=True)
class StateUnusable:
    """This clone's state database cannot be used as it stands: it is not a sqlite
    database (corrupt, truncated, another file), or its schema is newer than this code.

    Never recreated in place: it holds what the tree cannot rebuild (corroboration
    counts, consolidation watermarks, the access log), so a person decides. ``reason``
    names the file.
    """

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class StateFailure:
    """A state-plane call that failed (the file locked past the busy timeout, a disk
    error, an argument out of contract): the file, what was attempted, and why."""

    path: str
    operation: str
    reason: str


@dataclass(frozen=True, slots=True)
class ClassifyFailure:
    """A content classifier that could not answer (its package or model missing or
    unreadable, its runtime failing) or answered out of contract (a score outside
    [0, 1], an empty label)."""

    model_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class TranscriptFailure:
    """The transcripts directory (or one transcript in it) could not be listed or
    read: the path and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class RemoteMissing:
    """A remote name this clone's git config does not define. ``reason`` says how to
    add it (``git remote add <name> <url>``)."""

    remote: str
    reason: str


@dataclass(frozen=True, slots=True)
class PushRejected:
    """A push the remote (or git, before sending) refused without changing the
    remote branch: it moved since it was fetched, or the update would not be a
    fast-forward. Retryable: fetch, merge again, push again."""

    remote: str
    branch: str
    reason: str


@dataclass(frozen=True, slots=True)
class TransportFailed:
    """The git executable could not talk to the remote (unreachable, credentials
    refused, timed out) or failed in a way that names no refused ref: ``reason`` is
    git's own message."""

    remote: str
    operation: str
    reason: str


@dataclass(frozen=True, slots=True)
class PushForbidden:
    """The remote refused a push for lack of permission (HTTP 401 or 403, a server's
    "permission denied") after this clone could read it: the credentials git found
    may read, not push. Not retryable by syncing again; ``url`` is the push URL with
    any credentials taken out, ``reason`` git's words, equally scrubbed."""

    remote: str
    branch: str
    url: str
    reason: str


@dataclass(frozen=True, slots=True)
class PushDeclined:
    """The remote's own policy refused the update (a pre-receive or update hook, a
    protected branch): ``[remote rejected]`` for a reason other than a race. The
    remote branch is unchanged and nothing local is lost; pushing again gets the same
    answer until the remote's owner changes it."""

    remote: str
    branch: str
    url: str
    reason: str


@dataclass(frozen=True, slots=True)
class RemoteRewound:
    """The remote's branch no longer holds the commit this clone last saw there
    (``seen``, its tracking ref): someone rewrote its history (a force-push back to
    an older commit, or onto another history). A sync follows only a history that
    grows, so it neither takes ``found`` nor pushes over it; the tracking ref keeps
    ``seen`` until the person decides."""

    remote: str
    branch: str
    seen: str
    found: str


GitError: TypeAlias = GitFailure | RefMoved | NotFound
RemoteError: TypeAlias = (GitError | RemoteMissing | PushRejected | PushForbidden
                          | PushDeclined | RemoteRewound | TransportFailed)
"""What talking to a remote can fail with. Kept apart from ``GitError`` so the local
operations, which never touch a network, do not grow cases they cannot produce."""
HeadError: TypeAlias = InvalidMemory | GitFailure | RefMoved | NotFound
OverlayError: TypeAlias = InvalidMemory | OverlayRefused
StateError: TypeAlias = StateUnusable | StateFailure
