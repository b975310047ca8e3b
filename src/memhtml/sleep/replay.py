"""A run replayed onto a main that moved: what may land beside whose writes, and what
the merged tree is. Pure: the versions and the bytes are handed in.

A run is cut at main's tip and takes minutes; a memory agents write to all day moves
main many times meanwhile. Refusing every such merge would mean a busy store is never
curated, so a run is brought onto the new main when what landed there cannot collide
with it. The unit of a collision is the path, as in ``sync``'s merge: every memory is
one file, so two changes to different files are two facts and both stand.

What collides, decided here (``clash``):

- a path both changed: the run's edit and a writer's edit of one file (or both adding
  one path). Those are refused by name rather than merged fact by fact: the run's
  change was reviewed and gated as it stands, and a joined file would be neither;
- a commit of another run's report on main (``.memhtml/sleep/``): two nights folded
  one on the other would double what each decided from the same corpus (a confidence
  decayed twice, a counter read twice); the run is cut again instead;
- a link in a file one side changed into a memory the other side removed: followed to
  the archive path when the other side archived it (as the archive door rewrites
  inbound links), or to the new path when it moved it (the same article under another
  path: ``head.succession``, as the move door rewrites inbound links), a conflict
  naming both files when it was removed some other way (deleted), since no path can
  be derived for it.

What is not counted is what the run read. A run reads the whole corpus to decide
(neighbours, communities, ranks), so a read set would make every write a conflict.
What a concurrent write can break is checked on the result instead: no memory of
main's tip may be lost (``merge.lost_memories``) and the gate judges main's tip
against the merged tree.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.head import HeadVersion, is_candidate_path, moved_paths, record_from
from memhtml.head.indexes import replace_paths
from memhtml.sleep.contract import SLEEP_DIR
from memhtml.store.layout import original_of_archived
from memhtml.sync.merge import rewrite_hrefs

ClashKind: TypeAlias = Literal["conflict", "main-advanced"]
SHOWN = 20
"""Paths named in one line; the outcome carries them all."""


@dataclass(frozen=True, slots=True)
class Clash:
    """Why the run cannot be replayed onto main as it stands, each path named."""

    kind: ClashKind
    reason: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Sides:
    """The three versions a replay reads: where the run was cut, the run's tip, main's
    tip now; and the paths each side changed since the base."""

    base: HeadVersion
    tip: HeadVersion
    main: HeadVersion
    run_paths: frozenset[str]
    main_paths: frozenset[str]


@dataclass(frozen=True)
class Replay:
    """The merge commit's changes over main's tip, which files had a link followed, and
    the merged tree as a version (main's tip with the run's change laid over it)."""

    changes: tuple[PathChange, ...]
    followed: tuple[str, ...]
    version: HeadVersion


def shown(paths: Iterable[str]) -> str:
    listed = sorted(paths)
    return ", ".join(listed[:SHOWN]) + (f" and {len(listed) - SHOWN} more"
                                        if len(listed) > SHOWN else "")


def clash(run_paths: Collection[str], main_paths: Collection[str], main: str
          ) -> Clash | None:
    """The path-level refusal, or None: another run merged meanwhile, or paths both
    sides changed."""
    runs = sorted(p for p in main_paths if p.startswith(SLEEP_DIR))
    if runs:
        return Clash("main-advanced", f"another sleep run landed on {main} since this one "
                     f"was cut ({shown(runs)}); run sleep again", tuple(runs))
    both = sorted(set(run_paths) & set(main_paths))
    if both:
        return Clash("conflict", f"{len(both)} path(s) changed both by the run and on {main} "
                     f"since it was cut: {shown(both)}; run sleep again", tuple(both))
    return None


def _removed(base: HeadVersion, side: HeadVersion, paths: Iterable[str]) -> frozenset[str]:
    """Memories of the base this side no longer holds at their path."""
    return frozenset(p for p in paths if base.get(p) is not None and side.get(p) is None)


def _homes(base: HeadVersion, side: HeadVersion, paths: Iterable[str],
           removed: frozenset[str]) -> dict[str, str]:
    """Removed path -> where this side put it: the archive path it moved it to, or the
    path it moved it to among its own changes."""
    changed = frozenset(paths)
    homes = {original: p for p in sorted(changed)
             if (original := original_of_archived(p)) in removed and side.get(p) is not None}
    for old, new in sorted(moved_paths(base, side).items()):
        if old in removed and old not in homes and new in changed:
            homes[old] = new
    return homes


def _targets(record: MemoryRecord) -> frozenset[str]:
    """The tree paths a memory's links and supersession name."""
    found = {to_tree_path(link.href) for link in record.links}
    if record.superseded_by:
        found.add(to_tree_path(record.superseded_by))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class _Follow:
    moves: dict[str, dict[str, str]]
    """File -> {href as written or as a document path: the href of where it went}."""
    broken: tuple[str, ...]
    """``file -> target`` lines for links into a memory removed with nowhere to go."""


def _follow(changed: Iterable[str], own: HeadVersion, removed: frozenset[str],
            homes: Mapping[str, str]) -> _Follow:
    """Links in ``own``'s changed files into what the other side removed."""
    moves: dict[str, dict[str, str]] = {}
    broken: list[str] = []
    for path in sorted(changed):
        record = own.get(path)
        if record is None:
            continue
        for target in sorted(_targets(record) & removed):
            to = homes.get(target)
            if to is None:
                broken.append(f"{path} -> {target}")
                continue
            moved = moves.setdefault(path, {})
            moved[to_document_path(target)] = to_document_path(to)
            moved[target] = to_document_path(to)
    return _Follow(moves, tuple(broken))


def links_clash(sides: Sides, main: str) -> tuple[Clash | None, dict[str, dict[str, str]]]:
    """Links that would dangle once both sides stand: a conflict for a memory removed
    with no archive path and no new path; otherwise, per file, the hrefs to point at
    where it went."""
    run_removed = _removed(sides.base, sides.tip, sides.run_paths)
    main_removed = _removed(sides.base, sides.main, sides.main_paths)
    writers = _follow(sides.main_paths, sides.main, run_removed,
                      _homes(sides.base, sides.tip, sides.run_paths, run_removed))
    run = _follow(sides.run_paths, sides.tip, main_removed,
                  _homes(sides.base, sides.main, sides.main_paths, main_removed))
    broken = (*writers.broken, *run.broken)
    if broken:
        files = tuple(sorted({line.split(" -> ", 1)[0] for line in broken}))
        return Clash("conflict", f"{len(broken)} link(s) would point at a memory the other "
                     f"side removed with nowhere to follow it: {shown(broken)}; run sleep "
                     "again", files), {}
    return None, {**writers.moves, **run.moves}


def replay(sides: Sides, run_bytes: Mapping[str, TreeEntry | None],
           blobs: Mapping[str, bytes], held: Mapping[str, bytes],
           moves: Mapping[str, Mapping[str, str]]) -> Replay | Clash:
    """The merge commit's changes: every path the run changed, as the run's tip holds it
    (``run_bytes``: its entry there, None when the run removed it; ``blobs`` by id), and
    each file whose links follow an archive (``held``: its bytes on its own side). And
    the merged tree as a version, for the lost check and the gate."""
    changes: list[PathChange] = []
    contents: dict[str, bytes | None] = {}
    for path in sorted(sides.run_paths):
        entry = run_bytes.get(path)
        data = None if entry is None else blobs.get(entry.blob_id)
        if entry is not None and data is None:
            return Clash("conflict", f"{path}: the run's blob {entry.blob_id} cannot be read",
                         (path,))
        contents[path] = data
    followed: dict[str, MemoryRecord] = {}
    for path, moved in sorted(moves.items()):
        text = (contents.get(path) if path in contents else held.get(path))
        if text is None:
            continue
        rewritten = rewrite_hrefs(text.decode("utf-8", "replace"), moved)
        parsed = record_from(rewritten, path).value_or(None)
        if parsed is None or _targets(parsed) & {to_tree_path(k) for k in moved}:
            return Clash("conflict", f"{path}: its links into a memory archived or moved could not "
                         "be followed", (path,))
        contents[path] = rewritten.encode("utf-8")
        followed[path] = parsed
    for path in sorted(contents):
        entry = run_bytes.get(path) if path in sides.run_paths else None
        changes.append(PathChange(path, contents[path], None if entry is None else entry.mode))
    # The run's own files parse at its tip as they will on main: their records are
    # reused; only a file whose links were followed is parsed again.
    records = {p: followed.get(p) or sides.tip.get(p) for p in contents}
    return Replay(tuple(changes), tuple(sorted(followed)), merged_version(sides.main, records))


def merged_version(main: HeadVersion, records: Mapping[str, MemoryRecord | None]
                   ) -> HeadVersion:
    """``main`` with each path of ``records`` replaced by its record (None: none there,
    for a path removed, not a memory file, or not parsing), as ``advance_head`` folds a
    commit's changed paths."""
    touched = [p for p in records if is_candidate_path(p)]
    held = [r for p in touched if (r := records[p]) is not None]
    return HeadVersion(replace_paths(main.indexes, touched, held), None, main, ())
