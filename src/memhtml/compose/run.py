"""Running a container for a Python caller: the value, or the error as a typed value.

Every door and read returns an ``IOResult`` whose failure side is a typed error (a
frozen dataclass). A program that wants the value, and an exception carrying the
error when there is none, calls ``value_of``; one that prefers to match on the
outcome calls ``perform`` and gets a plain ``Result``. Either way the failure reads
as one line with every violation listed, not as a bare ``UnwrapFailedError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, TypeVar, get_args

from returns.io import IOResult
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

T = TypeVar("T")
E = TypeVar("E")


class MemhtmlError(Exception):
    """A failed call: ``error`` is the typed error value, ``str()`` the line to show."""

    def __init__(self, error: object) -> None:
        super().__init__(explain(error))
        self.error = error


def explain(error: object) -> str:
    """One line in plain words for any memhtml error value: what failed, where, and
    what to do when the error alone does not make that plain; every violation listed.

    The store's errors read as the store describes them; the other rooms' errors are
    worded here, so the CLI, the MCP server and a Python caller show the same line
    and no error reads as its class name. The credentials of any URL in the line are
    taken out (``redact_credentials``): git's messages name URLs, and a line shown or
    logged must never carry a token."""
    from memhtml.contracts.credentials import redact_credentials

    return redact_credentials(_explained(error))


def _explained(error: object) -> str:
    from memhtml.store.errors import StoreError, describe

    if isinstance(error, get_args(StoreError)):
        return describe(error)
    worded = _worded(error)
    if worded is not None:
        return worded
    reason = getattr(error, "reason", None)
    if isinstance(reason, str):
        return reason
    return str(error) if isinstance(error, str) else repr(error)


def _worded(error: object) -> str | None:
    """The line for an error of a room other than the store's, or None for one with
    nothing to add to its own ``reason``."""
    from memhtml.contracts.errors import (
        EmbedFailure,
        ModelMalformed,
        ModelUnavailable,
        PushDeclined,
        PushForbidden,
        PushRejected,
        RemoteMissing,
        RemoteRewound,
        StateFailure,
        StateUnusable,
        TranscriptFailure,
        TransportFailed,
    )
    from memhtml.head.gate import HeadGateFailed
    from memhtml.mdindex.errors import BadGlob, ChannelRefused, ReadFailure
    from memhtml.sleep.errors import RunNotFound, SleepRefused, describe_sleep_error
    from memhtml.store.errors import (
        FrontmatterDuplicateField,
        FrontmatterOverLimit,
        describe_frontmatter,
    )
    from memhtml.sync.errors import RemotePathsRefused, describe_refusal

    match error:
        case RunNotFound() | SleepRefused() | StateUnusable() | StateFailure():
            return describe_sleep_error(error)
        case FrontmatterOverLimit() | FrontmatterDuplicateField():
            return describe_frontmatter(error)
        case HeadGateFailed():
            account = error.reason.removeprefix("head gate: ")
            return (f"head gate failed: {account}; the landed version finds less of what "
                    "its base found (the report ranks each probe at both versions)")
        case EmbedFailure(model_id=model_id, reason=reason):
            return f"the embedder {model_id} failed: {reason}"
        case ModelUnavailable(model_id=model_id, reason=reason):
            return f"the language model {model_id} could not be asked: {reason}"
        case ModelMalformed(model_id=model_id, reason=reason):
            return f"the language model {model_id} answered off its contract: {reason}"
        case TranscriptFailure(path=path, reason=reason):
            return f"cannot read the transcripts at {path}: {reason}"
        case ReadFailure(path=path, reason=reason):
            return f"cannot read {path}: {reason}"
        case BadGlob(pattern=pattern, reason=reason):
            return f"glob {pattern!r} cannot be matched: {reason}"
        case RemoteMissing(remote=remote, reason=reason):
            return f"no remote {remote!r}: {reason}"
        case PushRejected(remote=remote, branch=branch, reason=reason):
            return (f"{remote}/{branch} moved while syncing and kept moving: {reason}; run "
                    "sync again (nothing was lost: the local commits are still here)")
        case PushForbidden(remote=remote, branch=branch, url=url, reason=reason):
            return (f"{remote} ({url}) refused the push to {branch}: the credentials git "
                    f"gave may read it, not push to it ({reason}). Nothing was lost: the "
                    "local commits stay in this clone. Ask the remote's owner for write "
                    "access, or give git a credential that may push (a credential helper: "
                    "git credential approve); until then sync pulls only")
        case PushDeclined(remote=remote, branch=branch, url=url, reason=reason):
            return (f"{remote} ({url}) declined the push to {branch}: {reason}. Its own "
                    "policy (a hook, a protected branch) refused it, so syncing again gets "
                    "the same answer until its owner changes it. Nothing was lost: the "
                    "local commits stay in this clone")
        case RemoteRewound(remote=remote, branch=branch, seen=seen, found=found):
            return (f"{remote}/{branch} went back: it was at {seen[:12]} and now is at "
                    f"{found[:12]}, which does not hold it; someone rewrote its history (a "
                    "force-push). sync neither follows a rewind nor pushes over it, so "
                    "nothing was changed here or there. If the rewind was a mistake, "
                    f"git fetch {remote} and then memhtml sync put this clone's history "
                    "back on it (a plain fast-forward push, when it went back to an older "
                    f"commit); if it was meant, take it by hand with git fetch {remote} and "
                    f"git reset --keep {remote}/{branch}, which leaves the commits after "
                    "it behind (git reflog still has them)")
        case TransportFailed(remote=remote, operation=operation, reason=reason):
            return f"git {operation} with {remote} failed: {reason}" + _credential_hint(reason)
        case RemotePathsRefused():
            return describe_refusal(error)
        case ChannelRefused(name=name, reason=reason):
            return f"channel {name!r}: {reason}" if name else reason
        case _:
            return None


def _credential_hint(reason: str) -> str:
    """What to do when git found no credential it may use: with no terminal and no
    askpass program, git cannot ask, so the credential must be in a helper."""
    if "terminal prompts disabled" in reason or "Authentication failed" in reason:
        return ("; git had no credential it could use and memhtml never waits for one to "
                "be typed: store it in git's credential helper (git config --global "
                "credential.helper store, or your system's keychain helper, then git "
                "credential approve, or one git fetch by hand)")
    return ""


ERROR_CODES: Final[Mapping[str, str]] = MappingProxyType({
    # The spec's name for a refused landing; every other code is derived below.
    "HeadGateFailed": "ERR_DISCRIMINATION_FAILED",
    # A vector cache that could not be read or written was a SettingsError when the
    # code was published.
    "VectorCacheFault": "ERR_SETTINGS_ERROR",
})
"""Codes that differ from the derived spelling. A code, once published, never changes
(agents match on it); renaming an error class means adding its old code here."""


_WORD_START: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""Where a word starts inside a class name: after a lower-case letter or digit, or at
the last capital of a run (``NotAStore`` is NOT_A_STORE, ``HTTPError`` HTTP_ERROR)."""


def error_code(error: object) -> str:
    """The stable code of a memhtml error value, for ``--json`` output and MCP tool
    errors: ``ERR_`` and the error type's name in upper snake case (``NotFound`` is
    ``ERR_NOT_FOUND``), unless ``ERROR_CODES`` names another. A value that is not a
    memhtml error (a bare string) is ``ERR_FAILED``.

    >>> from memhtml.compose import error_code
    >>> from memhtml.contracts.errors import NotFound
    >>> error_code(NotFound("areas/inbox/nope.html"))
    'ERR_NOT_FOUND'
    >>> error_code("a bare string")
    'ERR_FAILED'
    """
    name = type(error).__name__
    if name in ERROR_CODES:
        return ERROR_CODES[name]
    if isinstance(error, (str, bytes)) or type(error).__module__ == "builtins":
        return "ERR_FAILED"
    return "ERR_" + _WORD_START.sub("_", name).upper()


def merge_refusal_code(refusal: str | None) -> str:
    """The stable code of a refused merge: a failed gate is the head gate's own
    ``ERR_DISCRIMINATION_FAILED``; every other refusal is ``ERR_MERGE_`` and its name
    (``main-advanced`` is ``ERR_MERGE_MAIN_ADVANCED``)."""
    if refusal == "gate-failed":
        return ERROR_CODES["HeadGateFailed"]
    return "ERR_MERGE_" + (refusal or "refused").upper().replace("-", "_")


def perform(io: IOResult[T, E]) -> Result[T, E]:
    """The outcome of an IO result as a plain ``Result``, to match or chain on.

    >>> from returns.io import IOFailure, IOSuccess
    >>> from memhtml.compose import perform
    >>> from memhtml.contracts.errors import NotFound
    >>> perform(IOSuccess(3))
    <Success: 3>
    >>> perform(IOFailure(NotFound("areas/inbox/nope.html")))
    <Failure: NotFound(what='areas/inbox/nope.html')>
    """
    if is_successful(io):
        return Success(unsafe_perform_io(io.unwrap()))
    return Failure(unsafe_perform_io(io.failure()))


def value_of(io: IOResult[T, E]) -> T:
    """The value of an IO result, or ``MemhtmlError`` carrying its typed error.

    >>> from returns.io import IOFailure, IOSuccess
    >>> from memhtml.compose import MemhtmlError, value_of
    >>> from memhtml.contracts.errors import NotFound
    >>> value_of(IOSuccess(3))
    3
    >>> try:
    ...     value_of(IOFailure(NotFound("areas/inbox/nope.html")))
    ... except MemhtmlError as failure:
    ...     print(failure)
    ...     print(failure.error)
    no areas/inbox/nope.html
    NotFound(what='areas/inbox/nope.html')
    """
    if is_successful(io):
        return unsafe_perform_io(io.unwrap())
    raise MemhtmlError(unsafe_perform_io(io.failure()))
