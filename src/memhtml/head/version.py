"""One immutable version of the corpus per commit.

``load_head`` reads a whole tree once; ``advance_head`` costs only the paths two
commits differ on and shares every untouched record and index node with its
parent, so a chain of versions costs its deltas. A candidate file that fails to
parse is recorded in ``skipped_files`` with the reason, never thrown.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Success

from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.record import MemoryRecord, record_rows, records_from_rows
from memhtml.contracts.services import FanOut, Repository, TreeEntry
from memhtml.head.indexes import IndexedView, build_indexes, is_active, replace_paths


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A candidate file left out of a version, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class HeadVersion(IndexedView):
    """The version at one commit. ``parent`` is a pointer, not a copy."""

    parent: HeadVersion | None = field(default=None, compare=False, repr=False)
    skipped_files: tuple[SkippedFile, ...] = ()

    @property
    def skipped(self) -> int:
        return len(self.skipped_files)


def is_candidate_path(path: str) -> bool:
    """Whether a tree path is a memory file the head parses: an ``.html`` blob not under
    a top-level ``.memhtml/`` and not a generated ``index.html``. Anything else
    (``.gitattributes``, ``sitemap.xml``) is neither a record nor a skip."""
    if not path.endswith(".html") or path.startswith(".memhtml/"):
        return False
    return path.rsplit("/", 1)[-1] != "index.html"


LoadProgress: TypeAlias = Callable[[str, int, int], None]
"""Told ``(what, done, total)`` as a full load works: ``("parsing", files read, files)``
after each round of files, then ``("indexing", files, files)``. The edge that asked
for it draws it (a bar on a terminal); the load itself prints nothing."""
LOAD_ROUND = 4096
"""Files a full load parses between two progress reports (and, with a fan-out, in
one round of forked workers: a round costs a fork, so it is a few thousand files)."""


def _entry_of(entry: TreeEntry, blobs: dict[str, bytes]) -> MemoryRecord | SkippedFile:
    """One candidate file's record, or why it is left out."""
    from memhtml.head.record import record_from

    if entry.is_symlink:
        return SkippedFile(entry.path, "a symbolic link, not a memory file")
    data = blobs.get(entry.blob_id)
    if data is None:
        return SkippedFile(entry.path, f"blob {entry.blob_id} missing from the read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return SkippedFile(entry.path, f"not UTF-8 text: {exc.reason}")
    parsed = record_from(text, entry.path)
    if isinstance(parsed, Success):
        record: MemoryRecord = parsed.unwrap()
        return record
    return SkippedFile(entry.path, parsed.failure().reason)


def _parse_entries(
    entries: Iterable[TreeEntry], blobs: dict[str, bytes]
) -> tuple[list[MemoryRecord], list[SkippedFile]]:
    # Parsing pulls in the whole format package (lxml and the checker); a version
    # restored from a snapshot and advanced over nothing never needs it.
    records: list[MemoryRecord] = []
    skipped: list[SkippedFile] = []
    with _collector_paused():
        for entry in entries:
            read = _entry_of(entry, blobs)
            if isinstance(read, SkippedFile):
                skipped.append(read)
            else:
                records.append(read)
    return records, skipped


def _tokenized(entry: TreeEntry, blobs: dict[str, bytes]
               ) -> tuple[tuple[object, ...] | SkippedFile, str | None]:
    """One file's record as a row of its fields (``record_rows``: a tuple unpickles
    in the parent for about half what a record object costs) or why it is left out,
    and, for an active record, its lexical tokens joined by spaces (a token is a run
    of word characters, so never holds one): one string pickles back from a worker in
    one copy, where a list of a few hundred short strings cost more than tokenizing
    them again."""
    from memhtml.head.lexical import document_text, tokenize

    read = _entry_of(entry, blobs)
    if isinstance(read, SkippedFile):
        return read, None
    [row] = record_rows((read,))
    return row, " ".join(tokenize(document_text(read))) if is_active(read) else None


def _parse_all(entries: list[TreeEntry], blobs: dict[str, bytes], fan: FanOut | None,
               progress: LoadProgress | None
               ) -> tuple[list[MemoryRecord], list[SkippedFile], dict[str, list[str]] | None]:
    """Every entry parsed, in rounds of ``LOAD_ROUND`` reported to ``progress``; with a
    fan-out, each round is spread over its workers, tokens for the lexical index
    computed there too (the records are the same either way: ``FanOut`` returns what
    the loop would, and a row holds every field)."""
    if fan is None and progress is None:
        parsed, left_out = _parse_entries(entries, blobs)
        return parsed, left_out, None
    records: list[MemoryRecord] = []
    skipped: list[SkippedFile] = []
    tokens: dict[str, list[str]] | None = {} if fan is not None else None
    with _collector_paused():
        for start in range(0, len(entries), LOAD_ROUND):
            chunk = entries[start:start + LOAD_ROUND]
            if fan is None or tokens is None:
                for entry in chunk:
                    read = _entry_of(entry, blobs)
                    if isinstance(read, SkippedFile):
                        skipped.append(read)
                    else:
                        records.append(read)
            else:
                rows: list[tuple[object, ...]] = []
                joined_rows: list[str | None] = []
                for row, joined in fan(lambda entry: _tokenized(entry, blobs), chunk):
                    if isinstance(row, SkippedFile):
                        skipped.append(row)
                    else:
                        rows.append(row)
                        joined_rows.append(joined)
                made = records_from_rows(rows)
                records.extend(made)
                for record, joined in zip(made, joined_rows, strict=True):
                    if joined is not None:
                        tokens[record.path] = joined.split(" ") if joined else []
            if progress is not None:
                progress("parsing", start + len(chunk), len(entries))
    return records, skipped, tokens


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while a tree is parsed.

    Each file makes many small containers (tuples, lists, dicts) and keeps some in
    its record, so the collector runs over and over during a load, and its full
    passes walk every record kept so far: about 6 to 9 per cent of the parse at
    20,000 files. The parse makes no reference cycles (a test holds that), so
    nothing waits for the collector meanwhile; on the way out it is switched back
    on only if it was on, which leaves a caller that turned it off, or a
    concurrent load, as they were.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read(git: Repository, entries: list[TreeEntry]) -> IOResult[dict[str, bytes], GitError]:
    ids = sorted({e.blob_id for e in entries if not e.is_symlink})
    return git.read_blobs(ids).map(dict)


def version_from_records(records: Iterable[MemoryRecord], sha: str) -> HeadVersion:
    """A version from records already parsed (a snapshot). It has no parent and no
    skips: a snapshot holds records only, so it cannot say what its load left out."""
    return HeadVersion(build_indexes(records), sha)


def load_head(git: Repository, sha: str, *, fan: FanOut | None = None,
              progress: LoadProgress | None = None) -> IOResult[HeadVersion, GitError]:
    """The version at ``sha`` from a full tree read: one listing, one batched read.

    ``fan`` spreads the parse over its workers (the CLI's fork pool: the first
    command in a fresh clone parses every file); ``progress`` is told how far the
    parse is (``LoadProgress``). Neither changes the version.

    Any ``Repository`` will do; here the in-memory one. Only ``.html`` files are
    candidates, and one that does not parse is skipped with its reason. A later
    commit is reached with ``advance_head``, which reads only the changed paths and
    keeps every untouched record:

    >>> from datetime import UTC, datetime
    >>> from memhtml.adapters.memory_git import InMemoryGit
    >>> from memhtml.compose import value_of
    >>> from memhtml.contracts.services import PathChange, Signature
    >>> from memhtml.format import NewMemoryInput, render_template
    >>> from memhtml.head import advance_head, load_head
    >>> def change(path, title, claim):
    ...     html = render_template(NewMemoryInput(
    ...         title=title, claim=claim, memory_type="semantic", at="2026-01-06T09:00:00Z"))
    ...     return PathChange(path, html.encode())
    >>> git, ada = InMemoryGit(), Signature("Ada", "ada@example.org")
    >>> at = datetime(2026, 1, 6, 9, 0, tzinfo=UTC)
    >>> first = value_of(git.commit("refs/heads/main", None, [
    ...     change("areas/inbox/deploys.html", "Deploy window", "Deploys happen on Tuesdays."),
    ...     PathChange("README.txt", b"not a memory")], "first", ada, at))
    >>> older = value_of(load_head(git, first))
    >>> list(older.paths()), older.sha == first
    (['areas/inbox/deploys.html'], True)
    >>> second = value_of(git.commit("refs/heads/main", first, [
    ...     change("areas/inbox/coffee.html", "Coffee machine", "Coffee is on floor two."),
    ...     PathChange("areas/inbox/scratch.html", b"<p>a note</p>")], "second", ada, at))
    >>> newer = value_of(advance_head(git, older, second))
    >>> list(newer.paths()), [skipped.path for skipped in newer.skipped_files]
    (['areas/inbox/coffee.html', 'areas/inbox/deploys.html'], ['areas/inbox/scratch.html'])
    >>> newer.get("areas/inbox/deploys.html") is older.get("areas/inbox/deploys.html")
    True
    """

    def build(entries: tuple[TreeEntry, ...]) -> IOResult[HeadVersion, GitError]:
        candidates = [e for e in entries if is_candidate_path(e.path)]

        def parsed(blobs: dict[str, bytes]) -> HeadVersion:
            records, skipped, tokens = _parse_all(candidates, blobs, fan, progress)
            if progress is not None:
                progress("indexing", len(candidates), len(candidates))
            return HeadVersion(build_indexes(records, tokens), sha, None, tuple(skipped))

        return _read(git, candidates).map(parsed)

    return git.list_tree(sha).bind(build)


def advance_head(git: Repository, parent: HeadVersion, to: str) -> IOResult[HeadVersion, GitError]:
    """The version at ``to``, built from ``parent`` plus the paths the trees differ on.

    Each changed path is removed, then re-inserted when it is still a candidate at
    ``to`` (``replace_paths``: a per-path fold for a few paths, a bulk rebuild of the
    maps past ``REBUILD_FRACTION`` of them, equal either way). A path whose blob id
    equals the parent record's keeps the parent's record object (changed and changed
    back), and nothing else is touched, so every unchanged record is the very object
    the parent holds; a commit that changes only metadata keeps the parent's lexical
    index itself. ``to`` equal to the parent's commit returns the parent itself.

    The result equals ``load_head(git, to)`` except in which twin holds a content
    hash: a load inserts in path order, while an advance keeps each untouched holder
    and re-inserts only the changed paths (see ``insert_record``/``remove_record``),
    on the bulk path too.
    """
    if parent.sha is None:
        return IOFailure(GitFailure("advance_head", "the parent version has no commit"))
    if to == parent.sha:
        return IOSuccess(parent)
    base_sha = parent.sha

    def with_changes(changed: tuple[str, ...]) -> IOResult[HeadVersion, GitError]:
        candidates = [p for p in changed if is_candidate_path(p)]
        if not candidates:
            return IOSuccess(HeadVersion(parent.indexes, to, parent, parent.skipped_files))
        return git.entries_at(to, candidates).bind(lambda found: apply(candidates, found))

    def apply(
        candidates: list[str], found: tuple[TreeEntry, ...]
    ) -> IOResult[HeadVersion, GitError]:
        records = parent.indexes.records
        keep: list[MemoryRecord] = []
        to_read: list[TreeEntry] = []
        for entry in found:
            old = records.get(entry.path)
            if old is not None and old.blob_sha == entry.blob_id and not entry.is_symlink:
                keep.append(old)
            else:
                to_read.append(entry)

        def assemble(blobs: dict[str, bytes]) -> HeadVersion:
            fresh, skipped = _parse_entries(to_read, blobs)
            indexes = replace_paths(parent.indexes, candidates, keep + fresh)
            touched = set(candidates)
            carried = [s for s in parent.skipped_files if s.path not in touched]
            all_skipped = tuple(sorted(carried + skipped, key=lambda s: s.path))
            return HeadVersion(indexes, to, parent, all_skipped)

        return _read(git, to_read).map(assemble)

    return git.changed_paths(base_sha, to).bind(with_changes)
