"""Where memories live in the tree, how a new one is named, and ``init_store``.

The layout is PARA-shaped: ``areas/<topic>/`` for ongoing subjects with
``areas/inbox/`` as the default landing place, ``resources/<topic>/`` and
``resources/people/`` for reference material, and ``archive/<YYYY>/<original
path>`` for whatever left the live set. The archive path keeps the original path
whole, so the mapping is injective and a dangling href to an archived memory can
be repaired by computing where it went rather than by searching.
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from returns.io import IOResult, IOSuccess

from memhtml.contracts.paths import ARCHIVE_FOLDER, is_reserved_name, path_key
from memhtml.contracts.paths import original_of_archived as _original_of_archived
from memhtml.contracts.services import GitService, PathChange, TreeEntry
from memhtml.contracts.view import HeadView
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError
from memhtml.store.merge_driver import MERGE_DRIVER, ensure_merge_driver

if TYPE_CHECKING:
    # The commit machinery loads only when init runs: reads that check the marker
    # (every command) import this module without it.
    from memhtml.store.landing import Draft, Landed

INBOX = "areas/inbox/"
TASKS = "areas/tasks/"
PEOPLE = "resources/people/"
ARCHIVE = "archive/"

LAYOUT_DIRS: tuple[str, ...] = (
    INBOX,
    "areas/<topic>/",
    "resources/<topic>/",
    PEOPLE,
    "archive/<YYYY>/",
)
"""The layout's directories; ``<topic>`` and ``<YYYY>`` ones are made on demand."""

KEEP_FILE = ".gitkeep"
SEEDED_DIRS: tuple[str, ...] = (INBOX, PEOPLE, ARCHIVE)
"""Directories ``init_store`` creates up front (git tracks no empty directory)."""

GITATTRIBUTES = ".gitattributes"
GITATTRIBUTE_LINES: tuple[str, ...] = (
    f"index.html merge={MERGE_DRIVER}",
    f"/sitemap.xml merge={MERGE_DRIVER}",
    f"/memhtml-site/memhtml.css merge={MERGE_DRIVER}",
    f"/_headers merge={MERGE_DRIVER}",
)
"""Generated artifacts are rebuilt rather than merged; see ``init_store`` and
``merge_driver``. Each line names one generated path (``index.html`` at any depth:
the listings and the memory pages), never a memory file."""
LEGACY_ATTRIBUTE_LINES: frozenset[str] = frozenset({
    "index.html merge=ours", "sitemap.xml merge=ours", ".site/memhtml.css merge=ours",
    "memhtml-site/memhtml.css merge=ours", "/_headers merge=ours",
})
"""The lines earlier releases wrote, naming git's generic ``ours`` driver, which
memhtml defined as ``true`` (keep this side, whatever the file): a store's own
``.gitattributes`` could then apply it to memory files and drop the other side's
edits in a plain ``git pull``. ``init_store`` replaces them with
``GITATTRIBUTE_LINES``."""
GITIGNORE = ".gitignore"
GITIGNORE_LINES: tuple[str, ...] = (
    ".memhtml/*", "!.memhtml/config.toml", "!.memhtml/store.toml", "!.memhtml/sleep/",
    "!.memhtml/state/",
)
"""Everything under ``.memhtml/`` but what travels with the store on purpose: its
settings and the sleep run's committed artifacts (reports, ledgers, the exported
access log). A release before this one wrote ``.memhtml/`` alone, which git reads
as the whole directory and then cannot re-include from; ``init_store`` rewrites that
one line."""
_OLD_GITIGNORE_LINE = ".memhtml/"

MARKER = ".memhtml/store.toml"
"""The committed file that makes a repository a store, and names the store's branch.

Commands other than ``init`` refuse a repository whose branch lacks it: a memory
written into an arbitrary repository would land on that project's branch unasked."""
MARKER_FORMAT = 1
_LAYOUT_ATTRIBUTES = frozenset({"index.html merge=ours", f"index.html merge={MERGE_DRIVER}"})
"""The line every release's ``init`` wrote into ``.gitattributes`` (``merge=ours`` before
the ``memhtml-generated`` driver): with a seeded directory beside it, how a store made
before the marker existed (or one whose marker was removed since) is recognised.
``init`` on such a store adds the marker, and replaces a ``merge=ours`` line."""
_BRANCH_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}")
RUN_BRANCH_PREFIX = "sleep/"
"""Where the sleep run keeps its branches (``memhtml.sleep.contract.BRANCH_PREFIX``): a
store's branch is never one of them, since ``sleep abort`` deletes them."""
BRANCH_KEY = "memhtml.branch"
"""The git config key (in the repository's own ``.git/config``) where a clone records the
branch its store lives on: set by ``init`` and ``clone``, never by a committed file."""

SLUG_MAX = 60
_RESERVED_SLUGS = frozenset({"index"})
"""``index.html`` is a generated page, never a memory."""
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def archive_path(path: str, year: int | str, ordinal: int = 1) -> str:
    """``archive/<YYYY>/<original path>``: where ``path`` goes when archived in ``year``.

    ``ordinal`` counts the archives of one original path in one year: the second is
    ``archive/<YYYY>-2/<original path>``, and so on (``free_archive_path``). The
    original path stays whole below the year's folder, so ``original_of_archived``
    reads it back from any of them."""
    folder = f"{int(year):04d}" if ordinal <= 1 else f"{int(year):04d}-{ordinal}"
    return f"{ARCHIVE}{folder}/{path}"


def free_archive_path(path: str, year: int | str, taken: Callable[[str], bool]) -> str:
    """The first of ``archive/<YYYY>/<path>``, ``archive/<YYYY>-2/<path>``, ... that
    ``taken`` does not claim: where ``path`` is archived in ``year``.

    A memory archived, then another written at its path (an explicit ``--path``, a
    re-import, a restored deletion) and archived the same year, would otherwise find
    the first copy's name taken. The ordinal goes on the year's folder, not the file's
    name, so the archive path still ends in the original path whole: an href repaired
    by computing where a memory went, ``read`` of the old path, ``restore`` and a
    sync's merge all read the original back the one way."""
    ordinal = 1
    while taken(candidate := archive_path(path, year, ordinal)):
        ordinal += 1
    return candidate


def archive_rank(path: str) -> tuple[int, int] | None:
    """(year, ordinal) of an archive path (``archive/2026-2/x.html`` is (2026, 2)), or
    None for a path that is not one: the later of two archives of one path ranks
    higher."""
    parts = path.split("/", 2)
    if len(parts) != 3 or parts[0] + "/" != ARCHIVE or not parts[2]:
        return None
    found = ARCHIVE_FOLDER.fullmatch(parts[1])
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2) or 1)


def original_of_archived(path: str) -> str | None:
    """The original path an archive path (``archive/<YYYY>/<path>`` or
    ``archive/<YYYY>-<n>/<path>``) was made from, or None for a live path (the rule is
    ``contracts.paths``', which the head reads too)."""
    return _original_of_archived(path)


def slug_of(title: str) -> str:
    """A lowercase ASCII slug: accents folded, anything else a single hyphen.

    Cut at a hyphen near ``SLUG_MAX`` so a long title keeps whole words. A title with
    no ASCII letters or digits at all becomes ``memory``.
    """
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", folded.lower()).strip("-")
    if len(slug) > SLUG_MAX:
        cut = slug.rfind("-", 0, SLUG_MAX + 1)
        slug = slug[: cut if cut >= SLUG_MAX // 2 else SLUG_MAX].strip("-")
    if not slug:
        slug = "memory"
    if slug in _RESERVED_SLUGS:
        slug = f"{slug}-memory"
    return slug


def normalize_directory(directory: str) -> str:
    """A tree-form directory with exactly one trailing slash ('' is the root)."""
    stripped = directory.strip().strip("/")
    return f"{stripped}/" if stripped else ""


def unique_path(view: HeadView, directory: str, title: str,
                taken: Collection[str] = ()) -> str:
    """``<directory>/<slug>.html``, with ``-2``, ``-3``... until the path is free.

    A path counts as taken when the view holds it, when ``taken`` lists it (files
    in the tree that are not memories), or when it was archived under that name,
    so archiving the new memory later can never collide with an older archive; and
    a name that differs from any of those only by case or Unicode normalization is
    taken too. A slug that is a Windows device name (``con``) gets ``-memory``.
    """
    folder = normalize_directory(directory)
    slug = slug_of(title)
    if is_reserved_name(slug):
        # con.html, aux.html, com1.html name a device on Windows; like index, kept
        # recognizable with a suffix rather than refused.
        slug = f"{slug}-memory"
    paths = list(view.paths())
    archived = [original for path in paths
                if (original := original_of_archived(path)) is not None]
    # Compared folded: a name that differs from a taken one only by case or Unicode
    # normalization is the same file on NTFS or APFS, so it is taken too.
    blocked = {path_key(path) for path in (*paths, *taken, *archived)}
    n = 1
    while True:
        candidate = f"{folder}{slug}.html" if n == 1 else f"{folder}{slug}-{n}.html"
        if path_key(candidate) not in blocked:
            return candidate
        n += 1


def marker_bytes(branch: str) -> bytes:
    """The marker's content: a word to whoever opens it, the format, the branch (a
    JSON string is a TOML basic string, so any name reads back as written)."""
    return ("# This repository is a memhtml store: its memories are HTML files on the\n"
            "# branch below. Written by `memhtml init`; keep it committed.\n"
            f"format = {MARKER_FORMAT}\n"
            f"branch = {json.dumps(branch)}\n").encode()


def is_branch_name(name: str) -> bool:
    """A plain branch name (``main``, ``memory/notes``): what a marker may record and
    ``init --branch`` may name. Anything else (``..``, a leading dash, a lock suffix,
    control characters, ``HEAD``, a full ref name) is refused rather than handed to git."""
    return (_BRANCH_NAME.fullmatch(name) is not None and ".." not in name
            # Not a ref of another kind, nor HEAD: a marker naming refs/tags/v1 or
            # refs/remotes/origin/main must never move that ref.
            and name != "HEAD" and not name.startswith("refs/")
            and "//" not in name and not name.endswith((".lock", "/", "."))
            and "/." not in name)


def is_run_branch(name: str) -> bool:
    """A sleep run's branch (``sleep/...``), or ``sleep`` itself, which would stand where
    the runs' branches go; compared case-folded, since a ref on a case-insensitive file
    system is one file whatever its case."""
    folded = name.removeprefix("refs/heads/").casefold()
    return folded == RUN_BRANCH_PREFIX.rstrip("/") or folded.startswith(RUN_BRANCH_PREFIX)


def is_store_branch(name: str) -> bool:
    """A branch a store may live on: a plain branch name (``is_branch_name``) that is not
    a sleep run's (``is_run_branch``). No door ever commits anywhere else."""
    return is_branch_name(name) and not is_run_branch(name)


def store_branch_problem(name: str) -> str | None:
    """Why ``name`` cannot be a store's branch, in words; None when it can."""
    if is_run_branch(name):
        return (f"{name!r} is a sleep run's branch ({RUN_BRANCH_PREFIX}...), which "
                "`memhtml sleep abort` deletes; a store never lives there")
    if not is_branch_name(name):
        return (f"{name!r} is not a branch name memhtml takes: letters, digits and "
                "'._/-', not starting with a dot, slash or dash, no '..'")
    return None


def marker_text_branch(data: bytes) -> str | None:
    """The ``branch`` string a marker's text holds, whatever it names; None when the text
    holds none (not TOML, not UTF-8, no string ``branch``)."""
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    branch = table.get("branch")
    return branch if isinstance(branch, str) else None


def marker_branch(data: bytes) -> str | None:
    """The branch a marker records; None when its text names none a store may live on
    (a sleep run's branch, a ref of another kind, a malformed name): the file still
    marks a store, and the branch it was read from is the store's."""
    branch = marker_text_branch(data)
    return branch if branch is not None and is_store_branch(branch) else None


@dataclass(frozen=True, slots=True)
class StoreMark:
    """What a branch tip says about being a store: it carries the marker (and maybe
    names a branch), or it holds the layout an ``init`` from before the marker made."""

    kind: Literal["marker", "layout"]
    branch: str | None = None
    """The branch the marker records, when it names a usable one."""


def _mark_of(entries: tuple[TreeEntry, ...], blobs: Mapping[str, bytes]) -> StoreMark | None:
    by_path = {entry.path: blobs.get(entry.blob_id) for entry in entries}
    if MARKER in by_path:
        marker = by_path[MARKER]
        return StoreMark("marker", None if marker is None else marker_branch(marker))
    attributes = by_path.get(GITATTRIBUTES) or b""
    lines = {line.strip() for line in attributes.decode("utf-8", "replace").splitlines()}
    seeded = any(f"{d}{KEEP_FILE}" in by_path for d in SEEDED_DIRS)
    return StoreMark("layout") if lines & _LAYOUT_ATTRIBUTES and seeded else None


def store_mark(git: GitService, tip: str) -> IOResult[StoreMark | None, StoreError]:
    """Whether the commit ``tip`` is a store's: its marker, or the older layout; None
    for anything else (a project's own branch, a repository never made a store)."""
    wanted = [MARKER, GITATTRIBUTES, *(f"{d}{KEEP_FILE}" for d in SEEDED_DIRS)]

    def judged(entries: tuple[TreeEntry, ...]) -> IOResult[StoreMark | None, StoreError]:
        ids = sorted({e.blob_id for e in entries if e.path in (MARKER, GITATTRIBUTES)})
        read: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs(ids)
        return read.map(lambda blobs: _mark_of(entries, blobs))

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(tip, wanted)
    return listed.bind(judged)


def _disagreement(named: str | None, ours: str) -> str | None:
    if named is None or named == ours:
        return None
    record = f"this clone writes to {ours}, its own record (git config {BRANCH_KEY})"
    if is_store_branch(named):
        return (f"names branch {named}, but {record}, which a pulled marker never moves. "
                f"To write {named} instead: git config {BRANCH_KEY} {named}; to make the "
                f"marker name {ours}: memhtml init")
    return f"names {store_branch_problem(named)}; {record}, and that is where it stays"


def marker_note(git: GitService, tip: str | None, branch: str
                ) -> IOResult[str | None, StoreError]:
    """What to tell the person when the marker at ``tip`` names another branch than
    ``branch``, the one this clone writes: a collaborator moved the store, or pushed a
    marker (or a sleep run's name) to move it. None when it names ``branch`` or none."""
    if tip is None:
        return IOSuccess(None)
    ours = branch.removeprefix("refs/heads/")

    def judged(entries: tuple[TreeEntry, ...]) -> IOResult[str | None, StoreError]:
        ids = [e.blob_id for e in entries if e.path == MARKER and not e.is_symlink]
        read: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs(ids)
        return read.map(lambda blobs: _disagreement(
            next((marker_text_branch(data) for data in blobs.values()), None), ours))

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(tip, [MARKER])
    return listed.bind(judged)


def _without_old_ignore(existing: bytes | None) -> bytes | None:
    if existing is None:
        return None
    lines = existing.decode("utf-8", "replace").splitlines(keepends=True)
    kept = [line for line in lines if line.strip() != _OLD_GITIGNORE_LINE]
    return existing if len(kept) == len(lines) else "".join(kept).encode()


def _without_legacy_attributes(existing: bytes | None) -> bytes | None:
    """``existing`` without the ``merge=ours`` lines an earlier ``init`` wrote."""
    if existing is None:
        return None
    lines = existing.decode("utf-8", "replace").splitlines(keepends=True)
    kept = [line for line in lines if line.strip() not in LEGACY_ATTRIBUTE_LINES]
    return existing if len(kept) == len(lines) else "".join(kept).encode()


def legacy_attribute_lines(existing: bytes | None) -> tuple[str, ...]:
    """The ``merge=ours`` lines of an earlier ``init`` that ``existing`` still holds."""
    if existing is None:
        return ()
    present = {line.strip() for line in existing.decode("utf-8", "replace").splitlines()}
    return tuple(sorted(present & LEGACY_ATTRIBUTE_LINES))


def legacy_attributes_at(git: GitService, tip: str) -> IOResult[tuple[str, ...], StoreError]:
    """The earlier release's ``merge=ours`` lines the root ``.gitattributes`` holds at
    ``tip`` (none when it is absent or a link)."""

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[tuple[str, ...], StoreError]:
        ids = sorted({e.blob_id for e in entries if not e.is_symlink})
        blobs: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs(ids)
        return blobs.map(lambda found: tuple(
            line for e in entries if not e.is_symlink
            for line in legacy_attribute_lines(found.get(e.blob_id))))

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(tip, [GITATTRIBUTES])
    return listed.bind(read)


def attributes_bytes(existing: bytes | None) -> bytes | None:
    """The ``.gitattributes`` a store should have, from the one it has: memhtml's lines
    for generated pages added where missing, an earlier release's ``merge=ours`` lines
    removed, every other line kept as it is; None when nothing changes."""
    stripped = _without_legacy_attributes(existing)
    updated = _with_lines(stripped, GITATTRIBUTE_LINES,
                          "# Generated by memhtml publish: regenerate, never merge.")
    if updated is None and stripped != existing:
        updated = stripped
    return updated


def _with_lines(existing: bytes | None, lines: tuple[str, ...], header: str) -> bytes | None:
    """``existing`` with any of ``lines`` it lacks appended; None when nothing is missing."""
    text = "" if existing is None else existing.decode("utf-8", "replace")
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if not missing:
        return None
    if not text:
        return ("\n".join([header, *missing]) + "\n").encode()
    prefix = text if text.endswith("\n") else text + "\n"
    return (prefix + "\n".join(missing) + "\n").encode()


Seen = tuple[set[str], dict[str, bytes]]


def _seeded(deps: StoreDeps, tip: str | None, also: tuple[str, ...] = ()
            ) -> IOResult[Seen, StoreError]:
    """Which seeded directories the tip already has, and the bytes of the files
    ``init_store`` maintains (and of ``also``), as far as they exist."""
    if tip is None:
        return IOSuccess((set(), {}))
    git = deps.git
    wanted = {*(f"{d}{KEEP_FILE}" for d in SEEDED_DIRS), GITATTRIBUTES, GITIGNORE, MARKER,
              *also}

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[Seen, StoreError]:
        present = {d for entry in entries for d in SEEDED_DIRS if entry.path.startswith(d)}
        ids = {e.path: e.blob_id for e in entries if e.path in wanted}
        return git.read_blobs(sorted(set(ids.values()))).map(lambda data: (present, {
            path: data[blob] for path, blob in ids.items() if blob in data}))

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.list_tree(tip)
    return listed.bind(read)


def _layout_draft(branch: str, tip: str | None, present_dirs: set[str],
                  current: dict[str, bytes], settings: PathChange | None = None) -> Draft:
    changes: list[PathChange] = [
        PathChange(f"{d}{KEEP_FILE}", b"") for d in SEEDED_DIRS if d not in present_dirs
    ]
    marker = current.get(MARKER)
    if settings is not None and marker is None and settings.path not in current:
        # A new store's first settings; a store's own file (or one a person wrote
        # before this init) is never replaced.
        changes.append(settings)
    if marker is None or marker_branch(marker) != branch:
        # A marker naming another branch (the branch was renamed, or init runs on a
        # new one) is rewritten: init says which branch the store is on.
        changes.append(PathChange(MARKER, marker_bytes(branch)))
    attributes = attributes_bytes(current.get(GITATTRIBUTES))
    if attributes is not None:
        changes.append(PathChange(GITATTRIBUTES, attributes))
    stripped = _without_old_ignore(current.get(GITIGNORE))
    ignore = _with_lines(stripped, GITIGNORE_LINES,
                         "# memhtml: only the store's settings and sleep reports travel.")
    if ignore is None and stripped != current.get(GITIGNORE):
        ignore = stripped
    if ignore is not None:
        changes.append(PathChange(GITIGNORE, ignore))
    changes.sort(key=lambda c: c.path)
    before = {c.path: current.get(c.path) for c in changes}
    from memhtml.store.landing import Draft

    recorded = (f" Record the store's first settings in {settings.path}."
                if settings is not None and settings in changes else "")
    return Draft(tip, tuple(changes), ("init",), "store layout",
                 f"Mark the repository a store on {branch} ({MARKER}), create the layout "
                 f"directories, mark generated pages merge={MERGE_DRIVER}, and ignore local "
                 f"state.{recorded}",
                 before)


def _init_draft(deps: StoreDeps, settings: PathChange | None) -> IOResult[Draft, StoreError]:
    branch = deps.branch.removeprefix("refs/heads/")
    also = (settings.path,) if settings is not None else ()
    return deps.tip().bind(lambda tip: _seeded(deps, tip, also).map(
        lambda seen: _layout_draft(branch, tip, *seen, settings=settings)))


def _attributes_draft(deps: StoreDeps) -> IOResult[Draft, StoreError]:
    def drafted(tip: str | None, seen: Seen) -> Draft:
        from memhtml.store.landing import Draft

        current = seen[1].get(GITATTRIBUTES)
        # Only an earlier release's lines are replaced: memhtml's own lines a person
        # removed on purpose are not put back here (``init`` adds what is missing).
        attributes = attributes_bytes(current) if legacy_attribute_lines(current) else None
        changes = () if attributes is None else (PathChange(GITATTRIBUTES, attributes),)
        return Draft(tip, changes, ("init",), "generated pages' merge driver",
                     f"Mark generated pages merge={MERGE_DRIVER} in {GITATTRIBUTES}, in "
                     "place of merge=ours (a driver that keeps this side of any file).",
                     {GITATTRIBUTES: current})

    return deps.tip().bind(lambda tip: _seeded(deps, tip).map(lambda seen: drafted(tip, seen)))


def migrate_attributes(deps: StoreDeps) -> IOResult[Landed, StoreError]:
    """Replace an earlier release's ``merge=ours`` lines in ``.gitattributes`` with
    memhtml's own (one commit; nothing when there is nothing to replace): what
    ``doctor --fix`` does, and ``init_store`` does with the rest of the layout."""
    from memhtml.store.landing import land

    return land(deps, lambda: _attributes_draft(deps))


def init_store(deps: StoreDeps, settings: PathChange | None = None
               ) -> IOResult[Landed, StoreError]:
    """Make a repository a store: the marker naming ``deps.branch``, the layout,
    ``.gitattributes``, ``.gitignore``; all on ``deps.branch``. ``settings`` is the
    store's first settings file (``memhtml init`` records the offline embedder
    there), added only when the repository is not yet a store and holds no such file.

    Idempotent: on a repository with history only what is missing is added, in one
    commit, and nothing is committed when nothing is missing; an earlier release's
    ``merge=ours`` lines are replaced in that commit. The attribute lines do nothing
    unless the ``memhtml-generated`` driver is configured, and config is not part of
    the tree, so it is set here (``ensure_merge_driver``), as every command that opens
    a checkout sets it.
    """
    local = deps.local

    def state(_: object) -> IOResult[None, StoreError]:
        if local is None:
            return IOSuccess(None)
        return local.prepare().alt(Refused)

    from memhtml.store.landing import land

    return ensure_merge_driver(deps.git).bind(state).bind(
        lambda _: land(deps, lambda: _init_draft(deps, settings)))
