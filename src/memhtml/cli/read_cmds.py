"""The read commands: read, search, related, list, status, doctor, log. Nothing here
writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memhtml.cli.choices import MemoryTypeName, TierName
from memhtml.cli.common import Common, open_common
from memhtml.cli.inputs import Many, Words
from memhtml.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    Reply,
    print_err,
    respond,
    store_value,
    table,
)
from memhtml.contracts.vocabulary import OWN_SCOPE

if TYPE_CHECKING:
    from memhtml.compose.search import ArmRun, When
    from memhtml.compose.status import StatusReport
    from memhtml.head import SearchHit
    from memhtml.store import Finding, Listing, Related, Store

_COMMON = Common()
SNIPPET = 100


def warm(store: Store, as_json: bool) -> None:
    """Load the tip's version when there is no snapshot yet (the first command in a
    fresh clone parses every file): spread over this process's cores by the fork
    pool, under a progress bar when stderr is a terminal."""
    snapshots = store.deps.snapshots
    if snapshots is not None and snapshots.saved():
        return
    from memhtml.cli.progress import LoadBar, progress
    from memhtml.compose.fan_out import fan_out

    with progress("reading the store (first load, no snapshot yet)", None, as_json) as bar:
        store_value(store.head(fan=fan_out(), progress=LoadBar(bar)))


def read(path: str, /, *, tier: TierName = "summary", at: str | None = None,
         common: Common = _COMMON) -> int:
    """Print a memory at a tier: summary unless told (as the MCP server answers), the
    whole file with --tier all. A path whose memory was archived says where it went.

    Parameters
    ----------
    path
        The memory's path (areas/inbox/x.html).
    tier
        gist (the claim), summary (the claim and the body's first two paragraphs, cut
        at 800 characters), details (the whole article as text, code blocks line for
        line), all (the file as committed: HTML, metadata and edges).
    at
        Read the memory as it was at this commit or ref.
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common, writes=False)
        text = store_value(doors.read(store, path, tier, at))
        return Reply({"path": path, "tier": tier, "at": at, "text": text}, text)

    return respond(common.json, body)


def _short(text: str) -> str:
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1].rstrip() + "…"


_ARM_SCORE = {"lexical": ("lex", "bm25"), "vector": ("vec", "cos")}


def render_arms(arms: tuple[ArmRun, ...]) -> str:
    """The header line: which arms ran, with what; why the vector arm sat out when no
    note on stderr says it (no embedder configured at all)."""
    ran = " + ".join(f"{run.arm} ({run.by})" for run in arms if run.ran)
    idle = [f"{run.arm} ({run.by}) did not run" if run.by != "none"
            else f"{run.arm} off: {run.reason}" for run in arms if not run.ran]
    return "; ".join([f"arms: {ran}", *idle])


def render_scores(hit: SearchHit, hybrid: bool) -> str:
    """One hit's account: each arm's rank and raw score, then the fused score."""
    shown = {rank.arm: rank for rank in hit.ranks}
    parts = []
    for arm in ("lexical", "vector") if hybrid else ("lexical",):
        short, unit = _ARM_SCORE[arm]
        found = shown.get(arm)
        parts.append(f"{short} {found.rank} ({unit} {found.score:.2f})" if found
                     else f"{short} -")
    parts.append(f"fused {hit.score:.4f}")
    if "recency" in hit.arms:
        parts.append("tie: newer first")
    if hit.holds is not None and hit.holds.stated:
        until = f" until {hit.holds.until}" if hit.holds.until else ""
        parts.append(f"holds from {hit.holds.since[:10]}{until[:17]}")
    return " · ".join(parts)


def render_hits(hits: list[SearchHit], mode: str, arms: tuple[ArmRun, ...] = (),
                when: When | None = None, scopes: Sequence[str] = ()) -> str:
    """The hits as a person reads them; a hit of a scope other than the own store
    (``scopes``, one name a hit) names its scope after its path."""
    header = [render_arms(arms)] if arms else []
    if when is not None and when.as_of is not None:
        header.append(f"as of {when.as_of}: what the store held then, valid then")
    if when is not None and when.phrase is not None:
        bounds = f"{when.start or '…'} to {when.end or '…'}"
        header.append(f"time: {when.phrase!r} ({bounds}); its memories first")
    if not hits:
        return "\n".join([*header, f"no matches ({mode})"])
    lines = header
    names = list(scopes) or [OWN_SCOPE] * len(hits)
    for rank, (hit, name) in enumerate(zip(hits, names, strict=True), start=1):
        where = hit.path if name == OWN_SCOPE else f"{hit.path} (scope {name})"
        lines.append(f"{rank:>2}. {where}  {render_scores(hit, mode == 'hybrid')}")
        lines.append(f"    {_short(hit.claim)}")
    return "\n".join(lines)


def search(*query: Words, type: tuple[MemoryTypeName, ...] = (),
           entity: Many = (), tag: Many = (), prefix: str | None = None, limit: int = 10,
           at: str | None = None, as_of: str | None = None,
           common: Common = _COMMON) -> int:
    """Search the active memories. Lexical (BM25), and hybrid with the vector arm when
    an embedder is configured and memhtml embed has covered every memory.

    With scopes configured the search spans them, each hit naming its scope, merged by
    rank (docs/design.md); --at names a commit of one store, so with it only this
    store (or the --scope named) is searched.

    Parameters
    ----------
    query
        What to look for: one or more words, quoted or not (search deploy window is
        search "deploy window").
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
    as_of
        Search what the store held as true at this date (YYYY-MM-DD, the end of that
        day) or UTC instant: the version the branch had then, memories valid then. A
        time named in the query itself (in August 2023, last year, before the
        migration) puts that time's memories first.
    """
    from memhtml.cli.common import open_spanning
    from memhtml.cli.output import jsonable
    from memhtml.compose.scoped import search_scopes

    text = " ".join(query)

    def body() -> Reply:
        scopes, broken = open_spanning(common, alone=at is not None)
        for scope in scopes:
            warm(scope.store, common.json)
        spanned = store_value(search_scopes(
            scopes, text, limit=limit, broken=broken, at=at, as_of=as_of, types=type,
            entities=entity, tags=tag, prefix=prefix))
        found = spanned.answers[0][1]
        hits = [hit for _, hit in spanned.hits]
        names = [name for name, _ in spanned.hits]
        payload: dict[str, object] = {
            "query": text, "mode": found.mode, "commit": found.commit, "arms": found.arms,
            "note": found.note, "when": found.when, "hits": hits}
        if len(scopes) > 1 or broken or common.scope is not None:
            # Scopes configured or named: each hit names its scope, and each scope
            # how it answered. Without, the answer is the one store's as it was.
            payload |= {
                "hits": [{**_as_dict(jsonable(hit)), "scope": name}
                         for name, hit in spanned.hits],
                "scopes": [{"scope": name, "mode": each.mode, "commit": each.commit,
                            "note": each.note} for name, each in spanned.answers],
                "skipped": spanned.skipped}
        notes = tuple(f"note: {each.note}" if name == scopes[0].name
                      else f"note: scope {name}: {each.note}"
                      for name, each in spanned.answers if each.note)
        for skip in spanned.skipped:
            # On stderr in --json mode too, as a settings warning is: a scope the
            # person configured did not answer, and the JSON's "skipped" says which.
            print_err(f"warning: {skip.note}")
        return Reply(payload, render_hits(hits, found.mode, found.arms, found.when, names),
                     notes=notes)

    return respond(common.json, body)


def _as_dict(value: object) -> dict[str, object]:
    assert isinstance(value, dict), "a hit is a dataclass"
    return value


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
        _, store = open_common(common, writes=False)
        found = store_value(doors.related(store, path, at))
        return Reply(found, render_related(found))

    return respond(common.json, body)


def render_listing(found: Listing) -> str:
    """The folder and its count, each subfolder with its count, then one line per
    memory shown (status, path, title), and how many the limit left out."""
    from memhtml.store.listing import status_of

    where = found.dir or "the root"
    scope = "at any depth" if found.recursive else "directly in it"
    lines = [f"{where}: {found.total} memor{'y' if found.total == 1 else 'ies'} {scope}"]
    if found.dirs:
        lines.append(table([("  " + folder.path, str(folder.memories))
                            for folder in found.dirs]))
    if found.memories:
        lines.append(table([(status_of(r), r.path, r.title) for r in found.memories]))
    left = found.total - len(found.memories)
    if left > 0:
        lines.append(f"... {left} more (--limit shows more)")
    return "\n".join(lines)


def list_folder(dir: str = "", /, *, recursive: bool = True, limit: int = 50,
                common: Common = _COMMON) -> int:
    """List a folder: its memories, those in its subfolders included unless
    --no-recursive, and each subfolder with the count of memories under it. A folder
    with no memory under it is ERR_NOT_FOUND. The same answer memory_list gives over
    MCP.

    Parameters
    ----------
    dir
        The folder (areas/ops/); default the store's root.
    recursive
        Count and list the memories in its subfolders too; --no-recursive lists only
        those directly in it.
    limit
        How many memories to show at most (the count covers them all).
    """
    from memhtml.store.listing import listing, status_of

    def body() -> Reply:
        _, store = open_common(common, writes=False)
        warm(store, common.json)
        found = store_value(listing(store, dir, recursive=recursive, limit=limit))
        payload = {
            "dir": found.dir, "recursive": found.recursive, "total": found.total,
            "dirs": found.dirs,
            "memories": [{"path": r.path, "title": r.title, "type": r.memory_type,
                          "status": status_of(r), "updated": r.updated_at, "claim": r.claim}
                         for r in found.memories]}
        return Reply(payload, render_listing(found))

    return respond(common.json, body)


def render_status(report: StatusReport) -> str:
    from memhtml.compose.status import UNCOMMITTED_NOTE

    state, vectors = report.state, report.vectors

    def counts(pairs: tuple[tuple[str, int], ...]) -> str:
        return ", ".join(f"{name} {n}" for name, n in pairs) or "none"

    lines = [
        f"branch    {report.branch}",
        *([f"          the marker {report.branch_note}"] if report.branch_note else []),
        f"commit    {state.commit or '(no commit yet)'}",
        f"memories  {state.memories}",
        f"types     {counts(state.by_type)}",
        f"status    {counts(state.by_status)}",
        f"tasks     {counts(state.tasks)}; overdue {state.overdue}",
    ]
    if vectors is not None:
        lines.append(f"vectors   {vectors.embedder} ({vectors.space or 'no space yet'}): "
                     f"{vectors.have} of {vectors.total} memories embedded "
                     f"({vectors.passages_have} of {vectors.passages_total} passages; "
                     f"{vectors.memory_vectors} memory vectors for sleep)")
        if vectors.note:
            lines.append(f"          {vectors.note}")
    if state.skipped:
        lines.append(f"skipped   {len(state.skipped)} file(s) that are not memories:")
        lines += [f"  {s.path}: {s.reason}" for s in state.skipped]
    if report.in_progress:
        lines.append(f"git       a {report.in_progress} is in progress in the checkout; "
                     "memhtml will not write until it is finished")
    if report.uncommitted:
        lines.append(f"edits     {len(report.uncommitted)} file(s) edited in the checkout and "
                     f"not committed ({UNCOMMITTED_NOTE}):")
        lines += [f"  {edit.describe()}" for edit in report.uncommitted]
    return "\n".join(lines)


def status(*, common: Common = _COMMON) -> int:
    """The store at a glance: head commit, counts by type and status, tasks, files that
    are not memories (and why), vector coverage when an embedder is configured, and
    memory files edited in the checkout and not committed (search does not see them)."""
    from memhtml.compose.status import status_payload, status_report

    def body() -> Reply:
        services, store = open_common(common, writes=False)
        warm(store, common.json)
        report = store_value(status_report(services, store))
        notes = (f"note: vectors: {report.vectors_problem}",) if report.vectors_problem else ()
        return Reply(status_payload(report), render_status(report), notes=notes)

    return respond(common.json, body)


def render_findings(findings: list[Finding]) -> str:
    """Errors first, then advice, each a row; a last line counts both."""
    if not findings:
        return "no findings"
    ordered = sorted(findings, key=lambda f: f.severity != "error")
    errors = sum(1 for f in findings if f.severity == "error")
    rows = table([(f.severity, f.path, f.kind, f.message) for f in ordered])
    return f"{rows}\n{errors} error(s), {len(findings) - errors} advice"


def doctor(*, fix: bool = False, common: Common = _COMMON) -> int:
    """Check the whole store: every file's violations and warnings, stale content-hash
    metas, dangling links, status/path mismatches, stale published pages, a checkout
    left behind its branch, a merge or rebase in progress, conflicts, a clone without
    the merge driver, git attributes that give memory files a merge driver, anything in
    local state that is not memhtml's own file, memory files edited and not committed,
    and a marker naming another branch than the one this clone writes. Each finding is
    an error or advice (a warning, an uncommitted edit, a published page behind the
    memories); exits 1 only when an error is found.

    Parameters
    ----------
    fix
        Define the merge driver for generated pages when it is missing, replace an
        earlier release's merge=ours lines in .gitattributes (one commit), stamp each
        stale content hash with the hash its article has (one commit), and bring a
        checkout left behind its branch up to date (only paths that still hold what a
        memhtml commit replaced; a person's own edits are kept).
    """
    from memhtml import store as doors
    from memhtml.store.layout import GITATTRIBUTES, migrate_attributes
    from memhtml.store.merge_driver import MERGE_DRIVER, ensure_merge_driver
    from memhtml.store.restamp import restamp

    def body() -> Reply:
        _, store = open_common(common, writes=fix)
        notes: tuple[str, ...] = ()
        if fix:
            if store.deps.worktree is not None:
                notes += tuple(f"fixed: {done}"
                               for done in store_value(ensure_merge_driver(store.deps.git)))
            migrated = store_value(migrate_attributes(store.deps))
            if migrated.paths:
                notes += (f"fixed: marked generated pages merge={MERGE_DRIVER} in "
                          f"{GITATTRIBUTES} (commit {migrated.commit[:10]})",)
            stamped = store_value(restamp(store))
            if stamped.paths:
                notes += (f"fixed: {len(stamped.paths)} stale content hash(es) stamped "
                          f"again (commit {stamped.commit[:10]})",)
            behind = store_value(doors.checkout_behind(store.deps))
            synced = store_value(doors.fix_behind(store.deps.git, store.deps.ref, behind)) \
                if behind and store.deps.worktree is not None else None
            if synced is not None:
                notes += (f"fixed: {len(synced.paths)} path(s) brought up to date"
                          + (f"; kept (a person's change): {', '.join(synced.kept)}"
                             if synced.kept else ""),)
        warm(store, common.json)
        findings = store_value(doors.doctor(store))
        errors = sum(1 for f in findings if f.severity == "error")
        code = EXIT_FAILED if errors else EXIT_OK
        return Reply({"ok": not errors, "errors": errors,
                      "advice": len(findings) - errors, "findings": findings},
                     render_findings(findings), code, notes)

    return respond(common.json, body)


def log(path: str, /, *, limit: int = 20, common: Common = _COMMON) -> int:
    """The commits that touched a memory, newest first, followed back through the moves
    and archives that brought it to its path (each older row names the path it had
    then). A path whose memory was moved or archived says where it is now.

    Parameters
    ----------
    path
        The memory's path.
    limit
        How many commits at most.
    """
    from memhtml import store as doors
    from memhtml.store.errors import Archived, describe

    def body() -> Reply:
        _, store = open_common(common, writes=False)
        history = store_value(doors.log(store, path, limit))
        went = store_value(doors.whereabouts(store, path))
        rows = [{"commit": h.commit.sha, "time": h.commit.time, "author": h.commit.author.name,
                 "subject": h.commit.message.splitlines()[0] if h.commit.message else "",
                 "ops": list(doors.commit_ops(h.commit)), "path": h.path} for h in history]
        asked = history[0].path if history else path
        text = "\n".join(
            f"{h.commit.sha[:10]} {h.commit.time:%Y-%m-%d %H:%M} {r['subject']}"
            + (f"  (then at {h.path})" if h.path != asked else "")
            for h, r in zip(history, rows, strict=True)) or "no commits"
        payload: dict[str, object] = {"path": path, "commits": rows}
        if went is not None:
            now = went.archived_at if isinstance(went, Archived) else went.moved_to
            payload["now_at"] = now
            payload["went"] = "archived" if isinstance(went, Archived) else "moved"
            text += f"\n{describe(went)}"
        return Reply(payload, text)

    return respond(common.json, body)
