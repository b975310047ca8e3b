"""``as_of``: what the store held as true at a moment, in both of its times.

A memory has two clocks. Git's is when the store learned a fact (the commit that
wrote it); the file's ``memhtml-valid-from``/``-until`` say when the fact itself was
true. "What did we hold as true on 2024-03-05" needs both: the version the branch
had then (the last commit made on or before that moment, first parent back from
the tip, so a merge's arrival time counts and not its side branch's authoring),
searched for the memories valid at that moment. ``--at REV`` names a version by
commit; ``--as-of DATE`` names it by time and filters by validity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import reduce

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.services import CommitInfo
from memhtml.store.errors import Refused, StoreError, widen
from memhtml.store.session import Store

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
AS_OF_FORMS = "a date (2024-03-05, the end of that day) or a UTC instant (2024-03-05T17:00:00Z)"


def as_of_moment(text: str) -> Result[str, StoreError]:
    """The instant ``text`` names: a date means the end of that day (what held on
    the 5th includes what was written that afternoon); an instant is itself."""
    value = text.strip()
    try:
        if _DATE.match(value):
            datetime.strptime(value, "%Y-%m-%d")
            return Success(f"{value}T23:59:59Z")
        if _INSTANT.match(value):
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
            return Success(value)
    except ValueError:
        pass
    return Failure(Refused(f"as-of {text!r} is not {AS_OF_FORMS}"))


def _stamp(info: CommitInfo) -> str:
    return info.time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_at(infos: Mapping[str, CommitInfo], tip: str, moment: str) -> str | None:
    """From ``tip`` back along first parents, the first commit made at or before
    ``moment``; None when every one was made after it. A loop, not a recursion: a
    store's history is as long as its writes."""
    sha: str | None = tip
    while sha is not None:
        info = infos[sha]
        if _stamp(info) <= moment:
            return sha
        sha = info.parents[0] if info.parents else None
    return None


def commit_as_of(store: Store, moment: str) -> IOResult[str, StoreError]:
    """The last commit the branch had at ``moment``. Refused when the store did not
    exist yet then. Reads every commit's header once (a question about the past is
    rare, and one pass costs far less than the search after it)."""
    git = store.deps.git

    def read(tip: str) -> IOResult[str, StoreError]:
        def one(acc: IOResult[dict[str, CommitInfo], StoreError], sha: str
                ) -> IOResult[dict[str, CommitInfo], StoreError]:
            return acc.bind(lambda got: git.commit_info(sha).alt(widen).map(
                lambda info: _kept(got, info)))

        start: IOResult[dict[str, CommitInfo], StoreError] = IOSuccess({})
        shas: IOResult[tuple[str, ...], StoreError] = git.commits_between(None, tip).alt(widen)
        return shas.bind(lambda listed: reduce(one, listed, start)).bind(
            lambda infos: found(last_at(infos, tip, moment), infos))

    def found(sha: str | None, infos: Mapping[str, CommitInfo]) -> IOResult[str, StoreError]:
        if sha is not None:
            return IOSuccess(sha)
        first = min(_stamp(info) for info in infos.values())
        return IOFailure(Refused(f"the store held nothing as of {moment}: its first "
                                 f"commit was made {first}"))

    def from_tip(tip: str | None) -> IOResult[str, StoreError]:
        if tip is None:
            return IOFailure(Refused("the store has no commit yet (run memhtml init)"))
        return read(tip)

    return store.tip().bind(from_tip)


def _kept(infos: dict[str, CommitInfo], info: CommitInfo) -> dict[str, CommitInfo]:
    infos[info.sha] = info
    return infos
