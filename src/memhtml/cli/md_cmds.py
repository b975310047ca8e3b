"""``memhtml md``: query and verify a markdown memory directory; ``memhtml import
markdown``: convert one into memory files, committed to a store in one commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

from cyclopts import App, Parameter

from memhtml.cli.choices import ChannelName
from memhtml.cli.common import Common, open_common
from memhtml.cli.inputs import Many
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

    from memhtml.mdindex import Corpus, CorpusReader, MdIndexError

md_app = App(name="md", help="A markdown memory directory: query it, verify it, count it.")
import_app = App(name="import", help="Bring memories in from another format.")

_COMMON = Common()
Root = Annotated[Path, Parameter(name="--root")]


T = TypeVar("T")

ERR_FINDINGS = "ERR_FINDINGS"
"""``md verify`` ran and a check found something (the findings are the answer)."""
ERR_NOT_CONVERTED = "ERR_NOT_CONVERTED"
"""``import markdown`` left a file out (each is listed under ``skipped`` with why)."""


def _md_value(result: IOResult[T, MdIndexError]) -> T:
    """The value, or the error in the composition root's plain words with its code."""
    from memhtml.cli.output import unwrap_io

    return unwrap_io(result)


def _reader(root: Path) -> CorpusReader:
    """The composition root's reader over a markdown directory on disk."""
    from memhtml.cli.output import unwrap_io
    from memhtml.compose import markdown_reader

    return unwrap_io(markdown_reader(root))


def _corpus(root: Path) -> Corpus:
    from memhtml.mdindex import build

    return _md_value(build(_reader(root)))


@md_app.command(name="query")
def md_query(text: str, /, *, root: Root, channel: tuple[ChannelName, ...] = ("bm25",),
             k: int = 10, common: Common = _COMMON) -> int:
    """The files that best match TEXT, one receipt line each: scores, the channel that
    found it, frontmatter name and type, file:paragraph and a snippet.

    Parameters
    ----------
    text
        What to look for.
    root
        The markdown directory.
    channel
        bm25 or trigram; repeat to fuse several.
    k
        How many files.
    """

    def body() -> Reply:
        from returns.io import IOResult

        from memhtml.mdindex import format_receipt, make_channels, retrieve, to_dict

        corpus = _corpus(root)
        channels = _md_value(IOResult.from_result(make_channels(corpus, channel)))
        hits = retrieve(corpus, channels, text, k)
        return Reply({"query": text, "channels": list(channel),
                      "hits": [to_dict(hit) for hit in hits]},
                     "\n".join(format_receipt(hit) for hit in hits) or "no matches")

    return respond(common.json, body)


def _depth_globs(paths: tuple[str, ...]) -> list[str]:
    """``*.md``, ``*/*.md``, ... for each depth that holds a markdown file: the globs
    have no ``**``, and a glob matching nothing would fail the check."""
    depths = sorted({p.count("/") for p in paths if p.endswith(".md")})
    return ["*/" * depth + "*.md" for depth in depths] or ["*.md"]


@md_app.command(name="verify")
def md_verify(*, root: Root, coverage: Many = (), frontmatter: bool = False,
              frontmatter_glob: Many = (), exempt: Many = (), wikilinks: bool = False,
              common: Common = _COMMON) -> int:
    """Run the checks named; exit 1 when any finds something or cannot run.

    Parameters
    ----------
    root
        The markdown directory.
    coverage
        A:B globs: every file matching A is named in a file matching B, and every
        relative .md link in B resolves; repeatable.
    frontmatter
        Every markdown file (or every file matching --frontmatter-glob) has a
        frontmatter name:.
    frontmatter_glob
        The files the frontmatter check reads (*.md, notes/*.md); repeatable.
        Default: every markdown file, at every depth.
    exempt
        A basename prefix the frontmatter check skips (index pages); repeatable.
    wikilinks
        Every [[target]] resolves to a file stem or a frontmatter name.
    """

    def body() -> Reply:
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
        reader = _reader(root)
        findings: list[Finding] = []
        for pair in coverage:
            glob_a, _, glob_b = pair.partition(":")
            findings += _md_value(check_coverage(reader, glob_a, glob_b))
        if frontmatter or frontmatter_glob:
            globs = frontmatter_glob or _depth_globs(_md_value(list_visible(reader, None)))
            for glob in globs:
                findings += _md_value(frontmatter_present(reader, glob, exempt))
        if wikilinks:
            findings += _md_value(check_wikilinks(reader, _corpus(root)))
        text = "\n".join(f"{f.kind}: {f.detail}" for f in findings) or "no findings"
        if not findings:
            return Reply({"ok": True, "findings": []}, text)
        return Reply({"ok": False, "code": ERR_FINDINGS, "findings": findings}, text,
                     EXIT_FAILED)

    return respond(common.json, body)


@md_app.command(name="stats")
def md_stats(*, root: Root, common: Common = _COMMON) -> int:
    """What the index holds: the schema and ranking versions, files, paragraphs, bytes,
    terms, and paragraphs per top-level directory.

    Parameters
    ----------
    root
        The markdown directory.
    """

    def body() -> Reply:
        from memhtml.mdindex import RANKING_VERSION, SCHEMA_VERSION

        corpus = _corpus(root)
        payload = {
            "schema": SCHEMA_VERSION, "ranking": RANKING_VERSION, "files": len(corpus.files),
            "chunks": len(corpus.chunks), "bytes": corpus.bytes, "terms": len(corpus.df),
            "avg_len": round(corpus.avg_len, 3), "by_class": dict(corpus.by_class),
        }
        lines = [f"{key:<9} {payload[key]}" for key in
                 ("schema", "ranking", "files", "chunks", "bytes", "terms", "avg_len")]
        lines += [f"  {name}: {n}" for name, n in corpus.by_class.items()]
        return Reply(payload, "\n".join(lines))

    return respond(common.json, body)


@import_app.command(name="markdown")
def import_markdown(directory: Path, /, *, dir: str = "areas/imported/",
                    tag: Many = ("imported",), common: Common = _COMMON) -> int:
    """Convert a directory of markdown memories (frontmatter name, description and type
    used when present) into memory files, committed in one commit. Every file that is
    not converted is reported with the reason; exit 1 when any is.

    Parameters
    ----------
    directory
        The markdown directory.
    dir
        The store directory the memories go to (subdirectories are kept below it).
    tag
        A tag every imported memory gets; repeatable.
    """

    def body() -> Reply:
        from memhtml.cli.progress import progress
        from memhtml.store import BWrite, batch
        from memhtml.store.markdown_import import convert_tree

        reader = _reader(directory)
        # Hidden directories (.git, .obsidian) hold tooling, not memories.
        paths = _md_value(reader.list_files(lambda p: p.rsplit("/", 1)[-1].startswith(".")))
        paths = tuple(p for p in paths if not any(s.startswith(".") for s in p.split("/")))
        raw = _md_value(reader.read_files(paths))
        _, store = open_common(common)
        taken = store_value(store.head()).paths()
        with progress("converting", len(paths), common.json) as bar:
            converted = convert_tree(list(zip(paths, raw, strict=True)), dir, tag, taken,
                                     on_file=lambda _: bar.advance())
        skipped = [{"file": s.source, "reason": s.reason} for s in converted.skipped]
        notes = tuple(f"not converted: {s.source}: {s.reason}" for s in converted.skipped)
        code = EXIT_FAILED if converted.skipped else EXIT_OK
        if not converted.memories:
            return Reply({"ok": False, "code": ERR_NOT_CONVERTED, "commit": None,
                          "converted": [], "skipped": skipped},
                         "nothing converted", EXIT_FAILED, notes)
        with progress("committing", None, common.json):
            landed = store_value(batch(store, [BWrite(m.data) for m in converted.memories]))
        reply = landed_reply(landed)
        sources = {m.data.path: m.source for m in converted.memories}
        payload = {**reply.payload, "converted": [{"file": sources.get(p), "path": p}
                                                  for p in landed.paths],
                   "skipped": skipped} if isinstance(reply.payload, dict) else reply.payload
        if skipped and isinstance(payload, dict):
            payload = {**payload, "ok": False, "code": ERR_NOT_CONVERTED}
        return Reply(payload, reply.text, code, notes)

    return respond(common.json, body)
