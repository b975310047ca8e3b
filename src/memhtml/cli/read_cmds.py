"""The read commands: read, search, related, status, doctor, log. Nothing here writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memhtml.cli.choices import MemoryTypeName, TierName
from memhtml.cli.common import Common, open_common
from memhtml.cli.inputs import Many
from memhtml.cli.output import EXIT_FAILED, EXIT_OK, Reply, respond, store_value, table

if TYPE_CHECKING:
    from memhtml.compose import Coverage
    from memhtml.head import SearchHit
    from memhtml.store import Finding, Related, Store, StoreStatus

_COMMON = Common()
SNIPPET = 100


def warm(store: Store, as_json: bool) -> None:
    """Load the tip's version under a progress bar when there is no snapshot yet, so
    the first load of a large store (a full parse) shows that it is working."""
    from memhtml.store.snapshot import snapshot_files

    state = store.deps.state_dir
    if state is not None and snapshot_files(state):
        return
    from memhtml.cli.progress import progress, shown

    if not shown(as_json):
        return
    with progress("reading the store (first load, no snapshot yet)", None, as_json):
        store_value(store.head())


def read(path: str, /, *, tier: TierName = "all", at: str | None = None,
         common: Common = _COMMON) -> int:
    """Print a memory: the whole file, or one tier of it.

    Parameters
    ----------
    path
        The memory's path (areas/inbox/x.html).
    tier
        all (the file), gist (the claim), summary (claim and summary lines), details
        (the article's text).
    at
        Read the memory as it was at this commit or ref.
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common)
        text = store_value(doors.read(store, path, tier, at))
        return Reply({"path": path, "tier": tier, "at": at, "text": text}, text)

    return respond(common.json, body)


def _short(text: str) -> str:
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1].rstrip() + "…"


def render_hits(hits: list[SearchHit], mode: str) -> str:
    if not hits:
        return f"no matches ({mode})"
    lines = []
    for rank, hit in enumerate(hits, start=1):
        lines.append(f"{rank:>2}. {hit.path}  score={hit.score:.4f}  arms={','.join(hit.arms)}")
        lines.append(f"    {_short(hit.claim)}")
    return "\n".join(lines)


def search(query: str, /, *, type: tuple[MemoryTypeName, ...] = (),
           entity: Many = (), tag: Many = (), prefix: str | None = None, limit: int = 10,
           at: str | None = None, common: Common = _COMMON) -> int:
    """Search the active memories. Lexical (BM25), and hybrid with the vector arm when
    an embedder is configured and memhtml embed has covered every memory.

    Parameters
    ----------
    query
        What to look for.
    type
        Only memories of this type; repeatable (any of them).
    entity
        Only memories with this entity; repeatable (all of them).
    tag
        Only memories with this tag; repeatable (all of them).
    prefix
        Only memories under this path (areas/checkout/).
    limit
        How many hits.
    at
        Search the store as it was at this commit or ref.
    """
    from memhtml.compose.search import search_memories

    def body() -> Reply:
        services, store = open_common(common)
        warm(store, common.json)
        found = store_value(search_memories(
            services, store, query, at=at, types=type, entities=entity, tags=tag,
            prefix=prefix, limit=limit))
        payload = {"query": query, "mode": found.mode, "commit": found.commit,
                   "hits": found.hits}
        return Reply(payload, render_hits(found.hits, found.mode),
                     notes=(f"note: {found.note}",) if found.note else ())

    return respond(common.json, body)


def render_related(related: Related) -> str:
    lines = [related.path, "outbound:"]
    lines += [f"  {link.rel} {link.href}{'' if link.exists else '  (missing)'}"
              for link in related.outbound] or ["  (none)"]
    lines.append("inbound:")
    lines += [f"  {link.rel} from {link.path}" for link in related.inbound] or ["  (none)"]
    return "\n".join(lines)


def related(path: str, /, *, at: str | None = None, common: Common = _COMMON) -> int:
    """A memory's links: outbound edges (and whether each target exists) and inbound ones.

    Parameters
    ----------
    path
        The memory.
    at
        As at this commit or ref.
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common)
        found = store_value(doors.related(store, path, at))
        return Reply(found, render_related(found))

    return respond(common.json, body)


def render_status(state: StoreStatus, vectors: Coverage | None) -> str:
    def counts(pairs: tuple[tuple[str, int], ...]) -> str:
        return ", ".join(f"{name} {n}" for name, n in pairs) or "none"

    lines = [
        f"commit    {state.commit or '(no commit yet)'}",
        f"memories  {state.memories}",
        f"types     {counts(state.by_type)}",
        f"status    {counts(state.by_status)}",
        f"tasks     {counts(state.tasks)}; overdue {state.overdue}",
    ]
    if vectors is not None:
        lines.append(f"vectors   {vectors.embedder} ({vectors.space or 'no space yet'}): "
                     f"{vectors.have} of {vectors.total} embedded")
        if vectors.note:
            lines.append(f"          {vectors.note}")
    if state.skipped:
        lines.append(f"skipped   {len(state.skipped)} file(s) that are not memories:")
        lines += [f"  {s.path}: {s.reason}" for s in state.skipped]
    return "\n".join(lines)


def status(*, common: Common = _COMMON) -> int:
    """The store at a glance: head commit, counts by type and status, tasks, files that
    are not memories (and why), and vector coverage when an embedder is configured."""
    from returns.io import IOResult, IOSuccess

    from memhtml import store as doors
    from memhtml.cli.output import unwrap_io
    from memhtml.compose import SettingsError

    def body() -> Reply:
        services, store = open_common(common)
        warm(store, common.json)
        state = store_value(doors.status(store))
        # An embedder that cannot be used here (a missing extra, no endpoint) is a
        # note, not a failed status: the store itself is fine.
        covered: IOResult[tuple[Coverage | None, str | None], SettingsError] = \
            services.coverage(store_value(store.head())).map(lambda coverage: (coverage, None))
        covered = covered.lash(lambda e: IOSuccess((None, e.reason)))
        vectors, problem = unwrap_io(covered, str)
        payload = {"store": str(services.settings.store), **_plain(state), "vectors": vectors,
                   "vectors_problem": problem}
        return Reply(payload, render_status(state, vectors),
                     notes=(f"note: vectors: {problem}",) if problem else ())

    return respond(common.json, body)


def _plain(state: StoreStatus) -> dict[str, object]:
    return {
        "commit": state.commit,
        "memories": state.memories,
        "by_type": dict(state.by_type),
        "by_status": dict(state.by_status),
        "tasks": dict(state.tasks),
        "overdue": state.overdue,
        "skipped": [{"path": s.path, "reason": s.reason} for s in state.skipped],
    }


def render_findings(findings: list[Finding]) -> str:
    if not findings:
        return "no findings"
    return table([(f.path, f.kind, f.message) for f in findings])


def doctor(*, fix: bool = False, common: Common = _COMMON) -> int:
    """Check the whole store: every file's violations and warnings, stale content-hash
    metas, dangling links, status/path mismatches, stale published pages, and a
    checkout left behind its branch. Exits 1 when anything but a warning is found.

    Parameters
    ----------
    fix
        Bring a checkout left behind its branch up to date first (only paths that
        still hold what a memhtml commit replaced; a person's own edits are kept).
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common)
        notes: tuple[str, ...] = ()
        if fix:
            behind = store_value(doors.checkout_behind(store.deps))
            synced = store_value(doors.fix_behind(store.deps.git, store.deps.worktree,
                                                  store.deps.ref, behind)) \
                if behind and store.deps.worktree is not None else None
            if synced is not None:
                notes = (f"fixed: {len(synced.paths)} path(s) brought up to date"
                         + (f"; kept (a person's change): {', '.join(synced.kept)}"
                            if synced.kept else ""),)
        warm(store, common.json)
        findings = store_value(doors.doctor(store))
        serious = [f for f in findings if f.kind != "warning"]
        code = EXIT_FAILED if serious else EXIT_OK
        return Reply({"ok": not serious, "findings": findings}, render_findings(findings),
                     code, notes)

    return respond(common.json, body)


def log(path: str, /, *, limit: int = 20, common: Common = _COMMON) -> int:
    """The commits that touched a memory, newest first.

    Parameters
    ----------
    path
        The memory's path.
    limit
        How many commits at most.
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common)
        commits = store_value(doors.log(store, path, limit))
        rows = [{"commit": c.sha, "time": c.time, "author": c.author.name,
                 "subject": c.message.splitlines()[0] if c.message else ""} for c in commits]
        text = "\n".join(f"{c.sha[:10]} {c.time:%Y-%m-%d %H:%M} {r['subject']}"
                         for c, r in zip(commits, rows, strict=True)) or "no commits"
        return Reply({"path": path, "commits": rows}, text)

    return respond(common.json, body)
