"""Where memories live in the tree, how a new one is named, and ``init_store``.

The layout is PARA-shaped: ``areas/<topic>/`` for ongoing subjects with
``areas/inbox/`` as the default landing place, ``resources/<topic>/`` and
``resources/people/`` for reference material, and ``archive/<YYYY>/<original
path>`` for whatever left the live set. The archive path keeps the original path
whole, so the mapping is injective and a dangling href to an archived memory can
be repaired by computing where it went rather than by searching.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.errors import NotFound
from memhtml.contracts.services import PathChange
from memhtml.contracts.view import HeadView
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, Landed, land

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
    "index.html merge=ours",
    "sitemap.xml merge=ours",
    ".site/memhtml.css merge=ours",
)
"""Generated artifacts are rebuilt rather than merged; see ``init_store``."""
GITIGNORE = ".gitignore"
GITIGNORE_LINES: tuple[str, ...] = (".memhtml/",)
MERGE_OURS_DRIVER = ("merge.ours.driver", "true")

SLUG_MAX = 60
_RESERVED_SLUGS = frozenset({"index"})
"""``index.html`` is a generated page, never a memory."""
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def archive_path(path: str, year: int | str) -> str:
    """``archive/<YYYY>/<original path>``: where ``path`` goes when archived in ``year``."""
    return f"{ARCHIVE}{int(year):04d}/{path}"


def original_of_archived(path: str) -> str | None:
    """The original path an archive path was made from, or None for a live path."""
    parts = path.split("/", 2)
    if len(parts) == 3 and parts[0] + "/" == ARCHIVE and parts[1].isdigit():
        return parts[2]
    return None


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
    so archiving the new memory later can never collide with an older archive.
    """
    folder = normalize_directory(directory)
    slug = slug_of(title)
    archived = {
        original
        for path in view.paths()
        if (original := original_of_archived(path)) is not None
    }
    blocked = set(taken)
    n = 1
    while True:
        candidate = f"{folder}{slug}.html" if n == 1 else f"{folder}{slug}-{n}.html"
        if view.get(candidate) is None and candidate not in blocked and candidate not in archived:
            return candidate
        n += 1


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


def _init_draft(deps: StoreDeps) -> IOResult[Draft, StoreError]:
    git = deps.git
    resolved = git.resolve(deps.ref)
    if not is_successful(resolved):
        failure = unsafe_perform_io(resolved.failure())
        if not isinstance(failure, NotFound):
            return IOFailure(failure)
        tip: str | None = None
    else:
        tip = unsafe_perform_io(resolved.unwrap())
    keeps = [f"{d}{KEEP_FILE}" for d in SEEDED_DIRS]
    wanted = [*keeps, GITATTRIBUTES, GITIGNORE]
    current: dict[str, bytes] = {}
    present_dirs: set[str] = set()
    if tip is not None:
        listed = git.list_tree(tip)
        if not is_successful(listed):
            return IOFailure(unsafe_perform_io(listed.failure()))
        entries = unsafe_perform_io(listed.unwrap())
        for entry in entries:
            for d in SEEDED_DIRS:
                if entry.path.startswith(d):
                    present_dirs.add(d)
        ids = {e.path: e.blob_id for e in entries if e.path in wanted}
        blobs = git.read_blobs(sorted(set(ids.values())))
        if not is_successful(blobs):
            return IOFailure(unsafe_perform_io(blobs.failure()))
        data = unsafe_perform_io(blobs.unwrap())
        current = {path: data[blob] for path, blob in ids.items() if blob in data}
    changes: list[PathChange] = [
        PathChange(f"{d}{KEEP_FILE}", b"") for d in SEEDED_DIRS if d not in present_dirs
    ]
    attributes = _with_lines(current.get(GITATTRIBUTES), GITATTRIBUTE_LINES,
                             "# Generated by memhtml publish: regenerate, never merge.")
    if attributes is not None:
        changes.append(PathChange(GITATTRIBUTES, attributes))
    ignore = _with_lines(current.get(GITIGNORE), GITIGNORE_LINES,
                         "# memhtml's local state: snapshots, vectors, the state database.")
    if ignore is not None:
        changes.append(PathChange(GITIGNORE, ignore))
    changes.sort(key=lambda c: c.path)
    before = {c.path: current.get(c.path) for c in changes}
    return IOSuccess(
        Draft(tip, tuple(changes), ("init",), "store layout",
              "Create the layout directories, mark generated pages merge=ours, "
              "and ignore local state.", before)
    )


def init_store(deps: StoreDeps) -> IOResult[Landed, StoreError]:
    """Make a repository a store: the layout, ``.gitattributes``, ``.gitignore``.

    Idempotent: on a repository with history only what is missing is added, in one
    commit, and nothing is committed when nothing is missing. The ``merge=ours``
    attribute does nothing unless the ``ours`` merge driver is configured, and
    config is not part of the tree, so it is set here on every run.
    """
    key, value = MERGE_OURS_DRIVER
    configured = deps.git.set_config(key, value)
    if not is_successful(configured):
        return IOFailure(unsafe_perform_io(configured.failure()))
    if deps.state_dir is not None:
        try:
            deps.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return IOFailure(Refused(f"cannot create {deps.state_dir}: {exc}"))
    return land(deps, lambda: _init_draft(deps))
