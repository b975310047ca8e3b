"""Verify checks over a markdown tree: coverage, frontmatter presence, wikilinks.

Every check over-reports by design: it finds, and the author decides. Whether
a finding fails a run is the caller's statement for that run; nothing here has
a default about what counts, because some corpora keep a dangling ``[[name]]``
on purpose, as a note of something worth writing, and a gate that fires on
known-good files teaches its reader to wave findings through.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.mdindex.corpus import MARKDOWN_SUFFIX, Corpus
from memhtml.mdindex.errors import EmptyCheck, MdIndexError
from memhtml.mdindex.frontmatter import parse_frontmatter
from memhtml.mdindex.globs import glob_files
from memhtml.mdindex.links import NoteLinks, NoteNames, is_document_path
from memhtml.mdindex.reader import CorpusReader, Exclude, list_visible

FindingKind: TypeAlias = Literal["coverage", "backlink", "frontmatter", "wikilink"]

NoteReader: TypeAlias = Callable[[str, bytes], NoteLinks | None]
"""A note's title, its aliases and the wikilink targets it names, read from its path
and bytes the way ``import markdown`` reads them (``store.markdown_import.note_links``),
or None for a note that cannot be read. Handed in, so ``md verify`` resolves links
exactly as the import does without this room reading YAML or converting markdown."""

WIKILINK_REFERENCES_SHOWN = 3
"""How many referencing files a wikilink finding names; the rest are elided."""

# The whole body of a [[...]], alias and heading included, so the two
# commonest shapes ([[stem|shown]], [[stem#section]]) are scanned at all.
_WIKILINK = re.compile(r"\[\[([^\[\]]+?)\]\]")
# Any inline link destination; _link_target decides what is in scope. A
# destination never spans a line, and allowing newlines would let a stray
# "](" in prose swallow paragraphs.
_MD_LINK = re.compile(r"\]\(([^)\n]+)\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class Finding:
    """One verify observation: what kind, which file or target, and in words."""

    kind: FindingKind
    subject: str
    detail: str


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    return base[: -len(MARKDOWN_SUFFIX)] if base.endswith(MARKDOWN_SUFFIX) else base


def _link_target(destination: str) -> str | None:
    """The relative ``.md`` path a link destination must resolve to, if in scope.

    Fragment-only, protocol-relative, root-absolute and scheme links are out
    of scope: only relative markdown links are promised to resolve, and a
    root-absolute one would be resolved against a corpus root the caller may
    have placed anywhere inside a repository. The anchor or query is cut before
    the path is tested, so ``gone.md#top`` is checked like ``gone.md``.
    """
    target = destination.strip()
    if target.startswith("<"):
        end = target.find(">")
        if end >= 0:
            target = target[1:end]
    else:
        target = target.split(maxsplit=1)[0] if target.split() else ""
    if not target or target.startswith(("#", "/")) or _SCHEME.match(target):
        return None
    target = re.split(r"[#?]", target, maxsplit=1)[0]
    return target if target.endswith(MARKDOWN_SUFFIX) else None


def wikilink_target(body: str) -> str:
    """The half of a wikilink body that has to resolve: before any ``|`` or ``#``.

    A heading-only link (``[[#section]]``) reduces to ``""`` and refers to no file.
    """
    return re.split(r"[|#]", body, maxsplit=1)[0].strip()


def _nonempty(
    check: str, patterns: tuple[str, ...], matched: tuple[tuple[str, ...], ...]
) -> Result[None, EmptyCheck]:
    counts = tuple(len(m) for m in matched)
    if all(counts):
        return Success(None)
    shown = ", ".join(f"{p} matched {n}" for p, n in zip(patterns, counts, strict=True))
    return Failure(
        EmptyCheck(
            check,
            patterns,
            counts,
            f"{shown}: a side matching nothing is a broken check, not a pass",
        )
    )


def coverage(
    reader: CorpusReader, glob_a: str, glob_b: str, exclude: Exclude | None = None
) -> IOResult[tuple[Finding, ...], MdIndexError]:
    """Check one ``A:B`` pair of globs in both directions.

    Forward: every file matching A is named in the files matching B (a B
    file need not name itself), by one of: a relative link that resolves to
    it (``[x](topics/a.md)``), a wikilink to its stem or its path without the
    suffix (``[[a]]``, ``[[topics/a]]``), or its exact path, relative to the
    root or to the B file, standing as a whole word. A name that merely occurs
    inside other text (``a`` in ``data``, ``topics/a.md`` in
    ``old-topics/a.md``) names nothing: matching by substring let a check pass
    over an index that listed none of the files. Backward: every relative
    ``.md`` link inside a B file points at a file that exists. That is "every
    entry has an index line, and every index line points at a real entry" with
    the layout carried by the globs rather than assumed. Either glob matching
    nothing is an ``EmptyCheck`` failure.
    """
    listed: IOResult[tuple[str, ...], MdIndexError] = list_visible(reader, exclude)

    def sides(paths: tuple[str, ...]) -> IOResult[tuple[Finding, ...], MdIndexError]:
        matched: Result[tuple[tuple[str, ...], tuple[str, ...]], MdIndexError] = glob_files(
            glob_a, paths
        ).bind(lambda a: glob_files(glob_b, paths).map(lambda b: (a, b)))
        checked = matched.bind(
            lambda ab: _nonempty("coverage", (glob_a, glob_b), ab).map(lambda _: ab)
        )
        return IOResult.from_result(checked).bind(
            lambda ab: reader.read_files(ab[1]).map(
                lambda raw: _coverage_findings(ab[0], ab[1], raw, frozenset(paths), glob_b)
            )
        )

    return listed.bind(sides)


def _coverage_findings(
    a_files: Sequence[str],
    b_files: Sequence[str],
    b_raw: Sequence[bytes],
    existing: frozenset[str],
    glob_b: str,
) -> tuple[Finding, ...]:
    b_texts = [_decode(raw) for raw in b_raw]
    b_set = frozenset(b_files)
    named = _named(b_files, b_texts)
    findings: list[Finding] = []
    for a in a_files:
        if a in b_set:
            continue
        stem = _stem(a)
        if not ({a, a[: -len(MARKDOWN_SUFFIX)], stem} & named["wikilink"]) and a not in (
            named["path"]
        ):
            findings.append(
                Finding(
                    "coverage",
                    a,
                    f"{a}: no file matching {glob_b} links to it ([x]({a}) or [[{stem}]])"
                    " or names its path",
                )
            )
    for b, text in zip(b_files, b_texts, strict=True):
        directory = posixpath.dirname(b)
        for match in _MD_LINK.finditer(text):
            target = _link_target(match.group(1))
            if target is None:
                continue
            resolved = posixpath.normpath(posixpath.join(directory, target))
            if resolved not in existing:
                # Quoted as written so the reader can find the line; the
                # resolved path says what was looked for.
                findings.append(
                    Finding(
                        "backlink",
                        b,
                        f"{b} links {match.group(1).strip()} which does not exist"
                        f" (resolved {resolved})",
                    )
                )
    return tuple(findings)


# A path standing as a whole word: not preceded or followed by a character
# that could continue it, so ``a.md`` is not found inside ``data.md``.
_PATH_WORD = re.compile(r"(?<![\w./\-])[\w./\-]*\w\.md(?![\w/\-])")


def _named(b_files: Sequence[str], b_texts: Sequence[str]) -> dict[str, set[str]]:
    """What the B files name: wikilink targets, and paths (linked or written out).

    Paths are root-relative, resolved from each B file's directory; a path
    written out is also taken as written, relative to the root.
    """
    wikilinked: set[str] = set()
    paths: set[str] = set()
    for b, text in zip(b_files, b_texts, strict=True):
        directory = posixpath.dirname(b)
        wikilinked.update(wikilink_target(m.group(1)) for m in _WIKILINK.finditer(text))
        for match in _MD_LINK.finditer(text):
            target = _link_target(match.group(1))
            if target is not None:
                paths.add(posixpath.normpath(posixpath.join(directory, target)))
        for match in _PATH_WORD.finditer(text):
            written = match.group(0)
            paths.add(posixpath.normpath(written))
            paths.add(posixpath.normpath(posixpath.join(directory, written)))
    return {"wikilink": wikilinked, "path": paths}


def frontmatter_present(
    reader: CorpusReader,
    glob: str,
    exempt: Sequence[str] = (),
    exclude: Exclude | None = None,
) -> IOResult[tuple[Finding, ...], MdIndexError]:
    """Report files matching the glob whose frontmatter has no ``name:``.

    ``exempt`` holds basename prefixes the caller declares to be listings
    rather than entries (an index page is not an entry). Nothing is exempt by
    default: a built-in prefix would be a guess about someone else's layout.
    A glob matching nothing is an ``EmptyCheck`` failure.
    """
    listed: IOResult[tuple[str, ...], MdIndexError] = list_visible(reader, exclude)

    def check(paths: tuple[str, ...]) -> IOResult[tuple[Finding, ...], MdIndexError]:
        matched: Result[tuple[str, ...], MdIndexError] = glob_files(glob, paths)
        checked = matched.bind(
            lambda files: _nonempty("frontmatter", (glob,), (files,)).map(lambda _: files)
        ).map(
            lambda files: tuple(
                f for f in files if not posixpath.basename(f).startswith(tuple(exempt))
            )
        )
        return IOResult.from_result(checked).bind(
            lambda files: reader.read_files(files).map(
                lambda raw: tuple(
                    Finding("frontmatter", f, f"{f}: no name: in frontmatter")
                    for f, blob in zip(files, raw, strict=True)
                    if parse_frontmatter(_decode(blob)).name is None
                )
            )
        )

    return listed.bind(check)


def wikilinks(reader: CorpusReader, corpus: Corpus, read_note: NoteReader | None = None
              ) -> IOResult[tuple[Finding, ...], MdIndexError]:
    """Report every ``[[target]]`` in the corpus that names no note.

    Aliased (``[[stem|text]]``) and heading (``[[stem#part]]``) links are
    checked by their target half. With ``read_note`` (the import's reader), a
    link resolves as the import resolves it (``mdindex.links``: the path without
    ``.md``, the stem, the title, an alias, case aside; links in code are none);
    without it, it names a file stem or a frontmatter ``name`` exactly, found by
    pattern in the raw text. One finding per target, sorted, naming up to three
    referencing files.
    """
    read: IOResult[tuple[bytes, ...], MdIndexError] = reader.read_files(corpus.files)
    if read_note is not None:
        return read.map(lambda raw: _resolved_findings(corpus.files, raw, read_note))
    return read.map(lambda raw: _wikilink_findings(corpus.files, [_decode(b) for b in raw]))


def _resolved_findings(files: Sequence[str], raw: Sequence[bytes], read_note: NoteReader
                       ) -> tuple[Finding, ...]:
    notes = [(path, read_note(path, blob)) for path, blob in zip(files, raw, strict=True)]
    names = NoteNames.of((path, note.title, note.aliases) for path, note in notes
                         if note is not None and note.is_note)
    unresolved: dict[str, list[str]] = {}
    for path, note in notes:
        for target in note.targets if note is not None else ():
            if is_document_path(target) or names.resolve(target) is not None:
                continue
            refs = unresolved.setdefault(target, [])
            if len(refs) < WIKILINK_REFERENCES_SHOWN and path not in refs:
                refs.append(path)
    return _unresolved(unresolved, "no note (no path, file stem, title or alias)")


def _wikilink_findings(files: Sequence[str], texts: Sequence[str]) -> tuple[Finding, ...]:
    known = {_stem(f) for f in files}
    known.update(n for n in (parse_frontmatter(t).name for t in texts) if n is not None)
    unresolved: dict[str, list[str]] = {}
    for path, text in zip(files, texts, strict=True):
        for match in _WIKILINK.finditer(text):
            target = wikilink_target(match.group(1))
            if not target or target in known:
                continue
            refs = unresolved.setdefault(target, [])
            if len(refs) < WIKILINK_REFERENCES_SHOWN and path not in refs:
                refs.append(path)
    return _unresolved(unresolved)


def _unresolved(unresolved: dict[str, list[str]],
                what: str = "no file stem or frontmatter name") -> tuple[Finding, ...]:
    return tuple(
        Finding(
            "wikilink",
            target,
            f"[[{target}]] resolves to {what}"
            f" (e.g. from {', '.join(unresolved[target])})",
        )
        for target in sorted(unresolved)
    )
