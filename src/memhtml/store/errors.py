"""The store's closed error union, and the one line each error reads as.

Everything a door can fail with is a value: what the head, the overlay or git
reported, passed through unchanged, plus ``Refused`` for the store's own rules
(a path that is taken, a body with a block tag, a task door on a non-task), and
the rules every door holds a write to with a code of their own: a path that holds
no memory (``NotFound``), a claim a live memory already holds (``DuplicateClaim``),
an edge to a memory that does not exist (``DanglingLinks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias, assert_never

from memhtml.contracts.errors import (
    GitFailure,
    InvalidMemory,
    NotFound,
    OverlayRefused,
    PathRefused,
    RefMoved,
    TextUnreadable,
)
from memhtml.contracts.paths import shown_path


@dataclass(frozen=True, slots=True)
class Refused:
    """A door declined the request: why, and every rule it broke when there are several."""

    reason: str
    violations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DuplicateClaim:
    """A write's claim is one a live memory already holds (``store.duplicates``): a
    second file would only split the fact's edges, labels and corrections between two
    paths, so nothing was written. The caller may ask for the copy anyway."""

    claim: str
    existing: str
    """The live memory holding the claim (tree path)."""


@dataclass(frozen=True, slots=True)
class DanglingLinks:
    """Edges a door was asked to add to memories that do not exist. Every such target
    is named, in the order given, and nothing was written."""

    targets: tuple[str, ...]
    """Each missing target as asked for (document form, ``/areas/x.html``)."""


@dataclass(frozen=True, slots=True)
class Archived:
    """A path that holds no live memory because the one there was archived: where it
    went (and when, and what superseded it, when the file says), so the reader can
    follow it instead of concluding the memory never existed."""

    path: str
    archived_at: str
    """The archive path the memory now lives at (tree form)."""
    on: str | None = None
    """The instant it was archived (its ``memhtml-archived`` meta), when known."""
    superseded_by: str | None = None
    """The memory that replaced it (``memhtml-superseded-by``), when a correction did."""


@dataclass(frozen=True, slots=True)
class Moved:
    """A path that holds no memory because the one there was moved (a person's
    ``memhtml move``, a sleep run filing an inbox note): where it went, and the commit
    that moved it, so a reader follows it instead of concluding it never existed."""

    path: str
    moved_to: str
    """Where the memory is read now (tree form): where it was moved, or the archive
    path it reached afterwards."""
    commit: str
    """The commit that moved it from ``path``."""
    on: str | None = None
    """When that commit was made (``YYYY-MM-DD``), when known."""


@dataclass(frozen=True, slots=True)
class UncommittedEdits:
    """A write would change paths the person has edited in the checkout and not
    committed; their next ``git commit -a`` would undo it, so nothing was written."""

    paths: tuple[str, ...]
    violations: tuple[str, ...]
    """One line per path: what the edit is, and how to commit or discard it."""


@dataclass(frozen=True, slots=True)
class MergeInProgress:
    """A merge, rebase, cherry-pick or revert waits in the checkout; a commit landing
    under it would be lost or fought over when the person finishes it."""

    operation: str
    fix: str


@dataclass(frozen=True, slots=True)
class FrontmatterOverLimit:
    """A note's frontmatter goes past what ``import markdown`` reads, found while its
    YAML is parsed and before any value is built: an alias (``*name``, which can make
    a few hundred bytes expand to billions of values), nesting deeper than the cap,
    more values than the cap, or a block larger than the cap. The note is left out
    with this reason; the rest of the import goes on."""

    file: str
    """The note, as a path under the imported folder."""
    limit: str
    """Which bound: ``alias``, ``depth``, ``nodes`` or ``size``."""
    line: int
    """The note's line where the bound was crossed (1 for the whole block)."""
    reason: str


@dataclass(frozen=True, slots=True)
class FrontmatterDuplicateField:
    """A note's frontmatter names one field twice, as written (YAML requires names in
    a mapping to differ; a loader that kept the last would drop the first value
    without a word). The note is left out with both lines; the rest goes on."""

    file: str
    field: str
    lines: tuple[int, ...]
    """The note's lines holding the name, in order."""
    reason: str


FrontmatterRefused: TypeAlias = FrontmatterOverLimit | FrontmatterDuplicateField
"""Why a note's frontmatter was not read, as a typed value with its own code."""


def describe_frontmatter(error: FrontmatterRefused) -> str:
    """The note and why its frontmatter was not read, in one line."""
    where = f"{error.file}: " if error.file else ""
    return f"{where}{error.reason}"


StoreError: TypeAlias = (
    InvalidMemory | PathRefused | GitFailure | RefMoved | NotFound | OverlayRefused | Refused
    | UncommittedEdits | MergeInProgress
    | Archived | Moved | TextUnreadable | DuplicateClaim | DanglingLinks
)


def is_refusal(error: StoreError) -> bool:
    """Whether ``error`` declines one request for something about that request alone
    (a path that holds no memory or is refused, a rule the item breaks, a duplicate
    claim, a dangling edge), which a bulk step counts and moves past; anything else
    (git failing, the overlay refusing an edit it was handed) stops the step."""
    return isinstance(error, (Refused, PathRefused, NotFound, DuplicateClaim, DanglingLinks))


def widen(error: StoreError) -> StoreError:
    """The identity, typed: ``.alt(widen)`` lifts a narrower error union (git's, the
    overlay's, a record's) into ``StoreError``, which the checker does not infer through
    a container on its own."""
    return error


def _listed(head: str, violations: tuple[str, ...]) -> str:
    if not violations:
        return head
    return f"{head}: " + "; ".join(violations)


def _not_found(what: str) -> str:
    """One wording for a thing that is not there, whoever looked: "no memory at PATH"
    (a read, a door, a link target alike), "no commit 'REV' in this store"."""
    kind, _, where = what.partition(" ")
    if kind == "memory" and "(" in where:
        return f"no memory at {where}"  # the parenthesis says why the file is not one
    if kind == "memory" and where:
        return (f"no memory at {where}: check the path (a search finds a memory by its "
                "words)")
    if kind == "commit" and where:
        return (f"no commit {where} in this store: name a commit, branch or tag of its "
                "history")
    return f"no {what}"


def describe(error: StoreError) -> str:
    """One human-readable line, every violation listed, for the CLI and MCP to print."""
    match error:
        case InvalidMemory(path=path, reason=reason, violations=violations):
            where = path or "the memory"
            if violations:
                return _listed(f"{where} is not a valid memory ({len(violations)} violations)",
                               violations)
            return f"{where} is not a valid memory: {reason}"
        case PathRefused(path=path, reason=reason):
            return f"path {shown_path(path)} refused: {reason}"
        case GitFailure(operation=operation, reason=reason):
            return f"git {operation} failed: {reason}"
        case RefMoved(ref=ref, expected=expected, actual=actual):
            return (f"{ref} moved from {expected or '(unborn)'} to {actual or '(deleted)'} "
                    "while writing; gave up after retrying (another writer keeps moving "
                    "it): nothing was written, try again")
        case NotFound(what=what):
            return _not_found(what)
        case OverlayRefused(op=op, path=path, reason=reason):
            return f"{op} on {path} refused: {reason}"
        case Refused(reason=reason, violations=violations):
            return _listed(reason, violations)
        case Archived(path=path, archived_at=archived_at, on=on, superseded_by=by):
            when = f" on {on[:10]}" if on else ""
            later = f"; {by.lstrip('/')} superseded it" if by else ""
            return f"{path} was archived at {archived_at}{when}{later}; read it there"
        case Moved(path=path, moved_to=to, commit=commit, on=on):
            when = f" on {on}" if on else ""
            return (f"{path} was moved to {to}{when} (commit {commit[:10]}); read it there "
                    f"(memhtml log {to} shows its whole history)")
        case UncommittedEdits(paths=paths, violations=violations):
            return _listed(f"nothing was written: {len(paths)} path(s) it would change have "
                           "uncommitted edits in the checkout, which a git commit -a would "
                           "put back over the change; commit or discard each edit, then "
                           "retry", violations)
        case MergeInProgress(operation=operation, fix=fix):
            return (f"nothing was written: a git {operation} is in progress in the "
                    f"checkout; finish it ({fix}), then retry")
        case DuplicateClaim(existing=existing):
            return (f"nothing was written: {existing} already holds this claim (equal up "
                    "to case and spacing); read it, correct it if it is out of date, or ask "
                    "for a copy (write --allow-duplicate, memory_write allow_duplicate)")
        case DanglingLinks(targets=targets):
            return (f"no memory at {', '.join(targets)} to link to; nothing was written: "
                    "link only to an existing memory (write it first, or find its path "
                    "by searching)")
        case TextUnreadable(path=path, field=field):
            what = "text" if field == "html" else "article text"
            return (f"the local snapshot's copy of {path} ({what}) was damaged after it "
                    "was loaded and git could not give it back; the snapshot is dropped, "
                    "so the next command reads the store from git again (if it fails the "
                    "same way, the repository's object is missing: run git fsck)")
        case _ as never:
            assert_never(never)
