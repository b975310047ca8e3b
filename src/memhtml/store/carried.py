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

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused
from memhtml.contracts.paths import STATE_DIR, check_carried_path, check_checkout_path
from memhtml.contracts.services import TreeEntry
from memhtml.store.layout import ARCHIVE, GITATTRIBUTES, GITIGNORE, GITIGNORE_LINES, LAYOUT_DIRS
from memhtml.store.paths import Names, Spellings, existing_depth
from memhtml.store.site_model import SITE_DIR, is_generated_path

__all__ = ["TRAVELLING", "Around", "carried_refusals", "directories_around",
           "layout_link_problem"]

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


def directories_around(paths: Iterable[str]) -> tuple[str, ...]:
    """The root (``""``) and every directory on the way to each of ``paths``: where a
    twin of one of them, or of a directory it names, can be. Sorted."""
    found = {""}
    for path in paths:
        parts = path.split("/")
        found.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
    return tuple(sorted(found))


def _joined(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name


@dataclass(frozen=True, slots=True)
class Around:
    """What two trees hold around the new names a remote brings, enough to judge them
    without listing either tree: for each directory on the way to a new name
    (``directories_around``), the names it holds here and on the remote
    (``Repository.names_in``: a subdirectory with a trailing slash); the paths the
    remote removed since the merge base; and this side's own additions since then,
    which a merge keeps (None: the histories share no commit, so all of this side
    is its own)."""

    here: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    theirs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    removed: frozenset[str] = frozenset()
    added: frozenset[str] | None = frozenset()

    def names_here(self) -> Names:
        """The local tree, as far as the listing shows it."""
        files, dirs = _split(self.here.items())
        return Names((Spellings.listed(files, dirs),))

    def names_after(self) -> Names:
        """The tree the sync would make, as far as the listing shows it: the remote's
        names, and this side's that the remote did not remove (a file it deleted, a
        directory it emptied and this side added nothing to)."""
        files, dirs = _split(self.theirs.items())
        # The directories this side added something to: a merge keeps them.
        holding = None if self.added is None else set(directories_around(self.added))
        for directory, names in self.here.items():
            for name in names:
                path = _joined(directory, name.rstrip("/"))
                if not name.endswith("/"):
                    if path not in self.removed:
                        files.append(path)
                elif holding is None or path in holding:
                    dirs.append(path)
        return Names((Spellings.listed(files, dirs),))


def _split(listed: Iterable[tuple[str, tuple[str, ...]]]) -> tuple[list[str], list[str]]:
    files: list[str] = []
    dirs: list[str] = []
    for directory, names in listed:
        for name in names:
            (dirs if name.endswith("/") else files).append(_joined(directory,
                                                                   name.rstrip("/")))
    return files, dirs


def carried_refusals(brought: Iterable[TreeEntry], held: Collection[str],
                     around: Around | None = None) -> tuple[PathRefused, ...]:
    """Each path of ``brought`` (a remote's entries at the paths it changed) that the
    doors would refuse, with the first rule it breaks, sorted by path.

    ``held`` names the brought paths this clone has a file at (not a new name);
    ``around`` is what the two trees hold around the new ones (needed only when
    there is one)."""
    entries = sorted(brought, key=lambda entry: entry.path)
    fresh = any(entry.path not in held for entry in entries)
    context = around if around is not None else Around()
    names_here = context.names_here() if fresh else Names(())
    names_after = context.names_after() if fresh else Names(())
    refused: list[PathRefused] = []
    for entry in entries:
        checked = _judged(entry, entry.path not in held, names_here, names_after)
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
