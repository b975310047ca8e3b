"""Phase 16, state-export: ``.memhtml/state/access.jsonl``, this clone's read log as data
the tree can carry. One commit, when the file changes.

The access log lives in the state plane, under the git directory, where a clone cannot
supply it and a reviewer cannot see it. The export puts what retention reads of it
into the run's own commits, so the reason a memory was kept or evicted travels with
the branch that kept or evicted it.

What the file holds: one line per memory that has been read, sorted by path, each a
JSON object with sorted keys::

    {"last_read":"2026-11-29T09:00:00Z","path":"areas/inbox/x.html","reads":3}

``reads`` counts every ``read`` access the plane has logged for that path since its
log began (a read door's answer at the tip; search hits are not reads), and
``last_read`` is the latest, as a UTC instant to the second. Only paths that hold a
memory at the phase's version are written: an access to a path since moved or
archived counts under ``unknown_paths`` instead, since the export describes this tree.
A store nobody has read from gets an empty file. The read is one snapshot of the
plane, so a read landing while the run goes on appears in the next export.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import AccessCount, PathChange, TreeEntry
from memhtml.sleep.contract import ACCESS_EXPORT_PATH, LOG_START, stamp_text
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import describe


def render_access(counts: Mapping[str, AccessCount], known: set[str]
                  ) -> tuple[bytes, int, int]:
    """The file's bytes, the paths written and the reads they carry."""
    lines: list[str] = []
    reads = 0
    for path in sorted(p for p in counts if p in known):
        count = counts[path]
        reads += count.count
        lines.append(json.dumps({"last_read": stamp_text(count.last), "path": path,
                                 "reads": count.count},
                                sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    return "".join(f"{line}\n" for line in lines).encode("utf-8"), len(lines), reads


def state_export(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    version = env.version
    known = {record.path for record in version.records()}

    def exported(counts: Mapping[str, AccessCount]) -> IOResult[PhaseResult, PhaseFault]:
        data, paths, reads = render_access(counts, known)
        tallies = {"paths": paths, "reads": reads,
                   "unknown_paths": sum(1 for p in counts if p not in known)}
        return _current(env).map(lambda current: PhaseResult(
            counts=tallies,
            commits=() if current == data else (PhaseCommit(
                f"access log, {paths} path(s), {reads} read(s)",
                (PathChange(ACCESS_EXPORT_PATH, data),)),)))

    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read").alt(lambda error: PhaseFault(
            f"the state plane's access log cannot be read: {error.reason}"))
    return read.bind(exported)


def _current(env: PhaseEnv) -> IOResult[bytes | None, PhaseFault]:
    sha = env.version.sha
    if sha is None:
        return IOSuccess(None)
    git = env.git
    found: IOResult[tuple[TreeEntry, ...], PhaseFault] = git.entries_at(
        sha, [ACCESS_EXPORT_PATH]).alt(lambda error: PhaseFault(describe(error)))

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[bytes | None, PhaseFault]:
        if not entries:
            return IOSuccess(None)
        if entries[0].is_symlink:
            return IOFailure(PhaseFault(f"{ACCESS_EXPORT_PATH} is a symbolic link in the tree; "
                                        "it is never rewritten"))
        blob = entries[0].blob_id
        return git.read_blobs([blob]).map(lambda blobs: blobs.get(blob)).alt(
            lambda error: PhaseFault(describe(error)))

    return found.bind(read)
