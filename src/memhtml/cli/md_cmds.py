"""``memhtml md``: query and verify a markdown memory directory; ``memhtml import
markdown``: convert one into memory files, committed to a store in one commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

from cyclopts import App, Parameter

from memhtml.cli.choices import ChannelName
from memhtml.cli.common import Common, no_scope, open_common, with_vectors
from memhtml.cli.inputs import Many, Words
from memhtml.cli.landed import landed_reply
from memhtml.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    Reply,
    UsageError,
    respond,
    store_value,
)

if TYPE_CHECKING:
    from returns.io import IOResult

    from memhtml.mdindex import Corpus, CorpusReader, Exclude, MdIndexError
    from memhtml.store.markdown_decisions import Carried, Kept

md_app = App(name="md", help="A markdown memory directory: query it, verify it, count it.")
import_app = App(name="import", help="Bring memories in from another format.")

_COMMON = Common()
Root = Annotated[Path, Parameter(name="--root")]
Excludes = Annotated[tuple[str, ...], Parameter(consume_multiple=False, negative_iterable=())]
K = Annotated[int, Parameter(name=["--k", "-k"])]


T = TypeVar("T")

ERR_FINDINGS = "ERR_FINDINGS"
"""``md verify`` ran and a check found something (the findings are the answer)."""
ERR_NOT_CONVERTED = "ERR_NOT_CONVERTED"
"""The code of a file ``import markdown`` left out (each is listed under ``skipped``
with why); the run itself still succeeds."""


def _md_value(result: IOResult[T, MdIndexError]) -> T:
    """The value, or the error in the composition root's plain words with its code."""
    from memhtml.cli.output import unwrap_io

    return unwrap_io(result)


def _reader(root: Path) -> CorpusReader:
    """The composition root's reader over a markdown directory on disk."""
    from memhtml.cli.output import unwrap_io
    from memhtml.compose import markdown_reader

    return unwrap_io(markdown_reader(root))


def _scope(root: Path, exclude: tuple[str, ...]) -> tuple[CorpusReader, Exclude, tuple[str, ...]]:
    """The folder's reader after one walk, this run's exclusion (hidden directories,
    ``.trash`` and the caller's globs), and a note for each entry the walk skipped."""
    from returns.io import IOResult

    from memhtml.mdindex.globs import exclusion
    from memhtml.mdindex.walk import ListedReader, WalkingReader

    excluded = _md_value(IOResult.from_result(exclusion(exclude)))
    reader = _reader(root)
    if not isinstance(reader, WalkingReader):
        return reader, excluded, ()
    walked = _md_value(reader.walk(excluded))
    notes = tuple(f"skipped: {s.path}: {s.reason}" for s in walked.skipped
                  if not excluded(s.path))
    return ListedReader(reader, walked.files), excluded, notes


def _corpus(root: Path, cache: bool = True,
            exclude: tuple[str, ...] = ()) -> tuple[Corpus, tuple[str, ...]]:
    """The index of the folder, rebuilt only where files changed since the cached one
    (``--no-cache`` builds it whole and leaves the cache alone), and the walk's notes."""
    from memhtml.compose.mdcache import index_markdown

    reader, excluded, notes = _scope(root, exclude)
    return _md_value(index_markdown(reader, root, excluded, cache=cache)).corpus, notes


@md_app.command(name="query")
def md_query(*text: Words, root: Root, channel: tuple[ChannelName, ...] = ("bm25",),
             k: K = 10, exclude: Excludes = (), no_cache: bool = False,
             common: Common = _COMMON) -> int:
    """The files that best match TEXT, one receipt line each: scores, the channel that
    found it, frontmatter name and type, file:line (where the paragraph starts) and a
    snippet.

    Parameters
    ----------
    text
        What to look for: one or more words, quoted or not.
    root
        The markdown directory.
    channel
        bm25 or trigram; repeat to fuse several.
    k
        How many files.
    exclude
        A glob of paths to leave out: with a `/` it matches the whole path (`notes/old/*`),
        without one any file or directory name (`drafts`, `*.tmp.md`); repeatable.
        Hidden directories and `.trash` are always left out.
    no_cache
        Build the index from every file, neither reading nor writing the cache.
    """

    query = " ".join(text)

    def body() -> Reply:
        no_scope(common)
        from returns.io import IOResult

        from memhtml.mdindex import format_receipt, make_channels, retrieve, to_dict

        corpus, notes = _corpus(root, not no_cache, exclude)
        channels = _md_value(IOResult.from_result(make_channels(corpus, channel)))
        hits = retrieve(corpus, channels, query, k)
        return Reply({"query": query, "channels": list(channel),
                      "hits": [to_dict(hit) for hit in hits]},
                     "\n".join(format_receipt(hit) for hit in hits) or "no matches",
                     notes=notes)

    return respond(common.json, body)


def _depth_globs(paths: tuple[str, ...]) -> list[str]:
    """``*.md``, ``*/*.md``, ... for each depth that holds a markdown file: the globs
    have no ``**``, and a glob matching nothing would fail the check."""
    depths = sorted({p.count("/") for p in paths if p.endswith(".md")})
    return ["*/" * depth + "*.md" for depth in depths] or ["*.md"]


@md_app.command(name="verify")
def md_verify(*, root: Root, coverage: Many = (), frontmatter: bool = False,
              frontmatter_glob: Many = (), exempt: Many = (), wikilinks: bool = False,
              exclude: Excludes = (), report: bool = False, no_cache: bool = False,
              common: Common = _COMMON) -> int:
    """Run the checks named; exit 1 when any finds something or cannot run (with
    --report, print the findings and exit 0: a check that cannot run still fails).

    Parameters
    ----------
    root
        The markdown directory.
    coverage
        A:B globs (`topics/*.md:INDEX.md`): every file matching A is linked from a file
        matching B (`[x](topics/a.md)` or `[[a]]`) or named there by its exact path,
        and every relative .md link in B resolves; repeatable.
    frontmatter
        Every markdown file (or every file matching --frontmatter-glob) has a
        frontmatter name:.
    frontmatter_glob
        The files the frontmatter check reads (`*.md`, `notes/*.md`); repeatable.
        Default: every markdown file, at every depth.
    exempt
        A basename prefix the frontmatter check skips (index pages); repeatable.
    wikilinks
        Every `[[target]]` names a note, resolved as `import markdown` resolves it:
        by path without .md, file stem, title (frontmatter name or title, else the
        first # heading) or alias, case aside; links in code are not links.
    exclude
        A glob of paths to leave out, as for `md query`; repeatable. Hidden directories
        and `.trash` are always left out.
    report
        Report only: print the findings and exit 0 (the checks gate by default).
    no_cache
        Build the index the wikilinks check reads from every file, neither reading nor
        writing the cache.
    """

    def body() -> Reply:
        no_scope(common)
        from memhtml.compose.mdcache import index_markdown
        from memhtml.mdindex import Finding, frontmatter_present, list_visible
        from memhtml.mdindex import coverage as check_coverage
        from memhtml.mdindex import wikilinks as check_wikilinks

        if not (coverage or frontmatter or frontmatter_glob or wikilinks):
            raise UsageError("md verify runs only the checks it is given, and none was "
                             "given: pass --coverage A:B, --frontmatter or --wikilinks")
        malformed = [pair for pair in coverage if ":" not in pair]
        if malformed:
            raise UsageError(f"--coverage takes A:B (files matching glob A must be named in "
                             f"files matching glob B), got {malformed[0]!r}")
        reader, excluded, notes = _scope(root, exclude)
        findings: list[Finding] = []
        for pair in coverage:
            glob_a, _, glob_b = pair.partition(":")
            findings += _md_value(check_coverage(reader, glob_a, glob_b, excluded))
        if frontmatter or frontmatter_glob:
            globs = frontmatter_glob or _depth_globs(_md_value(list_visible(reader, excluded)))
            for glob in globs:
                findings += _md_value(frontmatter_present(reader, glob, exempt, excluded))
        if wikilinks:
            corpus = _md_value(index_markdown(reader, root, excluded, cache=not no_cache)).corpus
            from memhtml.store.markdown_note import note_links

            findings += _md_value(check_wikilinks(reader, corpus, note_links))
        text = "\n".join(f"{f.kind}: {f.detail}" for f in findings) or "no findings"
        if not findings:
            return Reply({"ok": True, "findings": []}, text, notes=notes)
        if report:
            return Reply({"ok": True, "report": True, "findings": findings}, text,
                         notes=notes)
        return Reply({"ok": False, "code": ERR_FINDINGS, "findings": findings}, text,
                     EXIT_FAILED, notes)

    return respond(common.json, body)


@md_app.command(name="stats")
def md_stats(*, root: Root, exclude: Excludes = (), no_cache: bool = False,
             common: Common = _COMMON) -> int:
    """What the index holds: the schema and ranking versions, files, paragraphs, bytes,
    terms, and paragraphs per top-level directory.

    Parameters
    ----------
    root
        The markdown directory.
    exclude
        A glob of paths to leave out, as for `md query`; repeatable. Hidden directories
        and `.trash` are always left out.
    no_cache
        Build the index from every file, neither reading nor writing the cache.
    """

    def body() -> Reply:
        no_scope(common)
        from memhtml.mdindex import RANKING_VERSION, SCHEMA_VERSION

        corpus, notes = _corpus(root, not no_cache, exclude)
        payload = {
            "schema": SCHEMA_VERSION, "ranking": RANKING_VERSION, "files": len(corpus.files),
            "chunks": len(corpus.chunks), "bytes": corpus.bytes, "terms": len(corpus.df),
            "avg_len": round(corpus.avg_len, 3), "by_class": dict(corpus.by_class),
        }
        lines = [f"{key:<9} {payload[key]}" for key in
                 ("schema", "ranking", "files", "chunks", "bytes", "terms", "avg_len")]
        lines += [f"  {name}: {n}" for name, n in corpus.by_class.items()]
        return Reply(payload, "\n".join(lines), notes=notes)

    return respond(common.json, body)


@import_app.command(name="markdown")
def import_markdown(directory: Path, /, *, dir: str = "areas/imported/",
                    tag: Many = ("imported",), exclude: Excludes = (), revive: Many = (),
                    common: Common = _COMMON) -> int:
    """Bring a folder of markdown notes in (frontmatter, links as edges, sections,
    lists, tables and code kept), or bring an earlier import of it up to date: new
    files are written, changed ones corrected, deleted ones archived, all in one
    commit. What was done in the store since is kept: a memory archived or corrected
    there stays so (each is listed; a changed note is named as a conflict), and a
    changed note's new version keeps the labels and links added in the store. Every
    file left out is reported with why (under skipped); the exit code is 0 when what
    could be imported landed, and 1 only when the run was refused.

    Parameters
    ----------
    directory
        The markdown folder (hidden directories and .trash are skipped).
    dir
        The store directory the memories go to (subdirectories are kept below it).
    tag
        A tag every imported memory gets; repeatable.
    exclude
        A glob of paths to leave out, as for `md query`: with a `/` it matches the whole
        path (`notes/old/*`), without one any file or directory name (`drafts`,
        `*.tmp.md`); repeatable. Hidden directories and `.trash` are always left out.
        A file left out this way is not imported, and one imported earlier is archived.
    revive
        A note (its path in the folder, `notes/x.md`) whose memory was archived or
        corrected in the store, to import again as a new live memory beside what the
        store holds; repeatable.
    """

    def body() -> Reply:
        from returns.io import IOResult

        from memhtml.compose import error_code
        from memhtml.compose.fan_out import fan_out
        from memhtml.mdindex.globs import exclusion
        from memhtml.store.markdown_run import import_folder
        from memhtml.store.markdown_source import gather_markdown

        excluded = _md_value(IOResult.from_result(exclusion(exclude)))
        if not directory.is_dir():
            raise UsageError(f"{directory} is not a directory; pass the markdown folder")
        walked = _md_value(gather_markdown(_reader(directory), excluded))
        services, store = open_common(common)
        imported = store_value(import_folder(store, walked.files, dir, tag, walked.refused,
                                             set(revive), fan=fan_out()))
        plan, landed = imported.plan, imported.landed
        refused = [{"file": r.source, "reason": r.reason,
                    "code": error_code(r.error) if r.error is not None else ERR_NOT_CONVERTED}
                   for r in plan.refused]
        payload: dict[str, object] = {
            "ok": True, "commit": None,
            "added": [{"file": s, "path": p} for s, p in plan.added],
            "changed": [_changed(s, a, b, plan.carried) for s, a, b in plan.changed],
            "archived": [{"file": s, "path": p} for s, p in plan.deleted],
            "unchanged": list(plan.unchanged), "indexes": [
                {"file": s, "page": p} for s, p in plan.indexes],
            "kept": [{"file": k.source, "path": k.path, "decision": k.decision,
                      "on": k.on, "by": k.by, "note_changed": k.note_changed}
                     for k in plan.kept],
            "revived": [{"file": s, "path": p} for s, p in plan.revived],
            "unresolved": [{"file": s, "target": t} for s, t in plan.unresolved],
            "skipped": refused}
        counts = (f"{len(plan.added)} added, {len(plan.changed)} changed, "
                  f"{len(plan.deleted)} archived, {len(plan.unchanged)} unchanged, "
                  f"{len(plan.kept)} kept as the store left them, "
                  f"{len(plan.indexes)} index pages, {len(refused)} not converted, "
                  f"{len(plan.unresolved)} unresolved links")
        if plan.revived:
            counts += f", {len(plan.revived)} revived"
        notes = tuple(f"not converted: {r.source}: {r.reason}" for r in plan.refused) + \
            tuple(_kept_line(k) for k in plan.kept if k.note_changed) + \
            tuple(_carried_line(c) for c in plan.carried) + \
            tuple(f"--revive {name}: no memory of it is archived or corrected in the "
                  "store; nothing to bring back" for name in sorted(
                      set(revive) - {s for s, _ in plan.revived})) + \
            tuple(f"skipped: {s}: {r}" for s, r in walked.passed)
        code = EXIT_OK
        if landed is None or not landed.paths:  # nothing to do, or pages already in step
            return Reply(payload, f"nothing to commit: {counts}", code, notes)
        payload["commit"] = landed.commit
        payload["converted"] = [{"file": s, "path": p} for s, p in plan.added] + [
            {"file": s, "path": p} for s, _, p in plan.changed] + [
            {"file": s, "path": p} for s, p in plan.revived]
        landed_notes = with_vectors(services, store, landed, landed_reply(landed)).notes
        return Reply(payload, f"{landed.commit[:12]}: {counts}", code, notes + landed_notes)

    return respond(common.json, body)


def _changed(source: str, old: str, new: str, carried: tuple[Carried, ...]
             ) -> dict[str, object]:
    """One corrected memory, with what its new version carries from the store."""
    entry: dict[str, object] = {"file": source, "from": old, "path": new}
    held = next((c for c in carried if c.source == source), None)
    if held is not None:
        entry["carried"] = {
            "entities": list(held.entities),
            "links": [{"rel": link.rel, "href": link.href} for link in held.links],
            "kept_unlinked": [{"rel": link.rel, "href": link.href} for link in held.dropped]}
    return entry


def _kept_line(kept: Kept) -> str:
    """A note that changed while the store keeps its memory archived or corrected."""
    when = f" on {kept.on[:10]}" if kept.on else ""
    by = f" by {kept.by}" if kept.by else ""
    return (f"kept {kept.decision}: {kept.path} ({kept.decision} in the store{when}{by}; "
            f"the note {kept.source} changed; --revive {kept.source} brings it back)")


def _carried_line(carried: Carried) -> str:
    """What a changed note's new version kept of the store's work on the old one."""
    parts = [f"label {e}" for e in carried.entities]
    parts += [f"link {link.rel} {link.href}" for link in carried.links]
    parts += [f"{link.rel} {link.href} left unlinked (removed in the store)"
              for link in carried.dropped]
    return f"carried onto {carried.path}: " + "; ".join(parts)
