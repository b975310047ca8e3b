"""What a tree brought from elsewhere may hold: the doors' path rules, applied to
every path another clone's branch brings, before any of it lands.

A door refuses a name that would leave the store or enter git's directory, one no
checkout can hold (a name over 255 bytes), one some file system would read as
another name or a device, one that differs from another only by case or Unicode
normalization, and it refuses to write through or over a symbolic link. A remote's
branch was made by whatever wrote it (plain git, a script, a hostile server), so
``memhtml sync`` holds each path the remote brings to the same rules, here, before
it moves the branch or touches the checkout; a path that breaks one refuses the
whole sync, and every such path is named.

The rules are the doors' own (``memhtml.contracts.paths`` and ``store.paths``);
this module only decides which apply to which path:

- every brought path: ``check_checkout_path`` (what git and a checkout can hold);
- a *new* name (no file at that path here): ``check_carried_path``, with the leading
  directories that already exist here, as spelled, not judged again (as a door
  does), and no case or normalization twin in the tree the sync would make;
- a symbolic link: not at a layout path (``layout_link_problem``), where a door
  writes through or over it.

A name that already exists here is not judged as new: a remote editing a memory an
older release named ``a:b.html`` is not refused for the name.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused
from memhtml.contracts.paths import STATE_DIR, check_carried_path, check_checkout_path
from memhtml.contracts.services import TreeEntry
from memhtml.store.layout import ARCHIVE, GITATTRIBUTES, GITIGNORE, GITIGNORE_LINES, LAYOUT_DIRS
from memhtml.store.paths import Names, Spellings, existing_depth
from memhtml.store.site_model import SITE_DIR, is_generated_path

__all__ = ["TRAVELLING", "carried_refusals", "layout_link_problem"]

TRAVELLING: frozenset[str] = frozenset(
    line.removeprefix(f"!{STATE_DIR}/").rstrip("/") for line in GITIGNORE_LINES
    if line.startswith(f"!{STATE_DIR}/"))
"""The names under ``.memhtml/`` that travel with a store (its settings, its marker,
the sleep run's reports, the exported access log): the ones its ``.gitignore`` lets
git carry. Anything else there is this clone's own state."""

_WHOLE_TREES: tuple[str, ...] = (ARCHIVE, f"{SITE_DIR}/", f"{STATE_DIR}/")
"""Subtrees every path of which is the layout's: the archive mirrors live paths under
its years, the site is publish's, the state directory is memhtml's."""
_LAYOUT_STEPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(pattern.strip("/").split("/")) for pattern in LAYOUT_DIRS)
_LAYOUT_ROOTS = frozenset({SITE_DIR, STATE_DIR})
"""Layout directories at the root that ``LAYOUT_DIRS`` does not list."""
_OWN_FILES = frozenset({GITATTRIBUTES, GITIGNORE})
"""Files at the root that ``init`` writes and keeps."""
_LINK_REASON = ("a symbolic link where the store's layout has {where}; the doors refuse "
                "to write through or over a link ({doors} would stop working there)")


def _layout_directory(parts: Sequence[str]) -> bool:
    """Whether ``parts`` spell a directory ``LAYOUT_DIRS`` names, or one on the way to
    it (``<topic>`` and ``<YYYY>`` stand for any one name)."""
    return any(len(parts) <= len(steps) and all(
        step.startswith("<") or step == part for step, part in zip(steps, parts, strict=False))
        for steps in _LAYOUT_STEPS)


def layout_link_problem(path: str) -> str | None:
    """Why a symbolic link may not stand at ``path``, or None where one may.

    Refused where the layout keeps a directory a door writes into (``areas``,
    ``resources`` and each topic under them, ``areas/inbox``, ``areas/tasks``,
    ``resources/people``, ``archive`` and everything under it, ``memhtml-site`` and
    everything under it, ``.memhtml`` and everything under it) and at a file memhtml
    writes itself (``.gitattributes``, ``.gitignore``, every generated page). A link
    elsewhere (``areas/inbox/x.html``) is a file that is not a memory: the head skips
    it, and the doors refuse only to write over it."""
    if path in _LAYOUT_ROOTS or path.startswith(_WHOLE_TREES) \
            or _layout_directory(path.split("/")):
        return _LINK_REASON.format(where="a directory the doors write into",
                                   doors="write, task add, archive, publish")
    if path in _OWN_FILES:
        return ("a symbolic link at a file memhtml keeps itself; git reads no attributes "
                "or ignore rules through a link, and init would rewrite the link")
    if is_generated_path(path):
        return _LINK_REASON.format(where="a page publish writes", doors="publish")
    return None


def carried_refusals(brought: Iterable[TreeEntry], here: Collection[str],
                     after: Iterable[str]) -> tuple[PathRefused, ...]:
    """Each path of ``brought`` (a remote's entries at the paths it changed) that the
    doors would refuse, with the first rule it breaks, sorted by path.

    ``here`` holds every file path of the local tree (a brought path already in it is
    not a new name); ``after`` every file path of the tree the sync would make, which
    a new name must not twin."""
    entries = sorted(brought, key=lambda entry: entry.path)
    fresh = [entry.path for entry in entries if entry.path not in here]
    names_here = Names((Spellings.of(here),)) if fresh else Names(())
    names_after = Names((Spellings.of(after),)) if fresh else Names(())
    refused: list[PathRefused] = []
    for entry in entries:
        checked = _judged(entry, entry.path not in here, names_here, names_after)
        if isinstance(checked, Failure):
            refused.append(checked.failure())
    return tuple(refused)


def _judged(entry: TreeEntry, new: bool, here: Names, after: Names
            ) -> Result[str, PathRefused]:
    path = entry.path
    checked = check_checkout_path(path)
    if new:
        # Only what is new in the name is judged: the leading directories this clone
        # has, as spelled, keep their names (a twin of one is the other's fault).
        depth = existing_depth(path, here)
        checked = checked.bind(lambda tree: check_carried_path(
            tree, depth, TRAVELLING)).bind(lambda tree: _unshared(tree, after, depth))
    if entry.is_symlink:
        checked = checked.bind(_not_a_layout_link)
    return checked


def _unshared(path: str, after: Names, existing: int) -> Result[str, PathRefused]:
    reason = after.twin(path, existing)
    return Success(path) if reason is None else Failure(PathRefused(path, reason))


def _not_a_layout_link(path: str) -> Result[str, PathRefused]:
    reason = layout_link_problem(path)
    return Success(path) if reason is None else Failure(PathRefused(path, reason))
