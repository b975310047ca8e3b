"""``merge_trees``: the fact-by-fact three-way merge that replaces git's textual one.

A store's files are facts, one per file, so a merge decides per path what the fact
is, never per line: a conflict marker inside a memory would make it a file the
format refuses, and two clones must never lose a version either of them wrote.

The function is pure and its cost follows the changed paths: the trees are lazy
mappings over git trees, asked only ``path in tree`` and ``tree.get(path)`` for the
paths that changed (and for the names a second copy might take). Anything that looks
like a time comes out of the files (their ``memhtml-updated`` and
``memhtml-created``), and every tie breaks on the bytes, so the result depends on
the three trees only, and swapping the two sides gives the same result.

The passes, in order:

1. **Collisions.** Both sides added a different memory file at one new path: the one
   created later keeps it, the other gets the next free name, and the links to the
   old name inside the files *its* side changed or added follow it there. This is
   laid over that side before anything else is merged, so the rest of the merge sees
   two trees that no longer collide.
2. **Per path.** One side changed it: that side. Both the same: that. Otherwise by
   kind: generated files are picked (``publish`` rebuilds them), memories are joined
   or kept both, other files get a clean line merge or one version.
   Then **rival corrections**: a memory two clones corrected differently arrives
   with two live corrections superseding it; the latest stays live, the others are
   archived beside it, and a task names every claim (``rivals``).
3. **Edit against delete.** A memory deleted on one side and edited on the other is
   kept; when the deleting side moved it (an archive), the edit is carried to the
   new path. This runs last because it may rewrite a path the second pass set; then
   the one-memory-at-two-paths check (``twins``) runs again over what it kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memhtml.contracts.paths import to_document_path
from memhtml.format import (
    add_link,
    check_memory,
    escape_attribute,
    read_links,
    read_meta,
    remove_link,
    set_meta,
)
from memhtml.head import is_candidate_path
from memhtml.store.layout import free_archive_path, original_of_archived
from memhtml.store.site_model import is_generated_path
from memhtml.sync.lines import merge_lines
from memhtml.sync.memories import Version, join_heads, read_version
from memhtml.sync.model import (
    BOTH_KEPT,
    EDIT_KEPT,
    FILE_CONFLICT,
    GENERATED,
    LINES_MERGED,
    MERGE_KINDS,
    METADATA_UNION,
    PATH_COLLISION,
    RIVAL_CORRECTIONS,
    MergeEvent,
    TreeMerge,
)
from memhtml.sync.review import (
    KEPT_REL,
    Names,
    describe,
    review_task,
    rival_corrections_task,
    task_path_for,
)

__all__ = ["MERGE_KINDS", "MergeEvent", "TreeMerge", "merge_trees"]

Blob = bytes | None


def is_memory_path(path: str) -> bool:
    """A path whose file the merge treats as a memory when it parses as one."""
    return is_candidate_path(path) and not is_generated_path(path)


def _greater(one: Blob, two: Blob) -> Blob:
    """The symmetric pick: a present file over a deletion, then the greater bytes."""
    return max(one, two, key=lambda blob: (blob is not None, blob or b""))


def rewrite_hrefs(text: str, moves: Mapping[str, str]) -> str:
    """Every memory edge and ``memhtml-superseded-by`` naming an old document path
    (a key of ``moves``) pointed at its new one, with the surgical editors."""
    if not any(old in text or escape_attribute(old) in text for old in moves):
        return text
    for link in read_links(text):
        if link.href in moves:
            text = add_link(remove_link(text, link.rel, link.href), link.rel, moves[link.href])
    superseded = read_meta(text, "memhtml-superseded-by")
    if superseded is not None and superseded in moves:
        text = set_meta(text, "memhtml-superseded-by", moves[superseded])
    return text


@dataclass(slots=True)
class _Side:
    """One side's tree with the merge's own renames and rewrites laid over it."""

    tree: Mapping[str, bytes]
    over: dict[str, Blob] = field(default_factory=dict)

    def get(self, path: str) -> Blob:
        return self.over[path] if path in self.over else self.tree.get(path)


@dataclass(slots=True)
class _Merge:
    base: Mapping[str, bytes]
    one: _Side
    two: _Side
    paths: set[str]
    names: Names
    merged: dict[str, Blob] = field(default_factory=dict)
    events: list[MergeEvent] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)
    versions: dict[bytes, Version] = field(default_factory=dict)
    followed: list[str] = field(default_factory=list)
    """Paths whose memory one side moved away (and put another article at the path)
    while the other side edited only its head: settled after pass 2 (``follow``)."""

    def version(self, raw: bytes) -> Version:
        found = self.versions.get(raw)
        if found is None:
            found = self.versions[raw] = read_version(raw)
        return found

    def note(self, kind: str, path: str, detail: str, other: str | None = None) -> None:
        self.events.append(MergeEvent(kind, path, detail, other))

    # -- pass 1: both sides added a different memory at one path ---------------------

    def collisions(self) -> None:
        moves: dict[int, dict[str, str]] = {1: {}, 2: {}}
        for path in sorted(self.paths):
            one, two = self.one.get(path), self.two.get(path)
            if (self.base.get(path) is not None or one is None or two is None or one == two
                    or not is_memory_path(path)):
                continue
            first, second = self.version(one), self.version(two)
            if (first.doc is not None and second.doc is not None
                    and first.article_hash == second.article_hash):
                continue  # one memory added twice: its heads are joined in pass 2
            keeper, loser = sorted((first, second), key=lambda v: (v.created, v.raw))[::-1]
            side_no = 1 if loser is first else 2
            side = self.one if side_no == 1 else self.two
            renamed = self.names.free(path)
            side.over[path] = keeper.raw
            side.over[renamed] = loser.raw
            moves[side_no][to_document_path(path)] = to_document_path(renamed)
            self.note(PATH_COLLISION, path,
                      f"Both sides added a different file at {path}: the one created "
                      f"{keeper.created or 'with no readable stamp'} keeps it, the other "
                      f"moved to {renamed} and the links to it from its side followed.",
                      renamed)
        for side_no, side in ((1, self.one), (2, self.two)):
            if moves[side_no]:
                self._rewrite_side(side, moves[side_no])
        self.paths.update(self.names.placed)

    def _rewrite_side(self, side: _Side, moves: Mapping[str, str]) -> None:
        """The links to renamed paths inside the files this side wrote."""
        renamed_from = {path[1:] for path in moves}
        for path in sorted(self.paths | set(side.over)):
            blob = side.get(path)
            if (path in renamed_from or blob is None or blob == self.base.get(path)
                    or not is_memory_path(path)):
                continue
            text = self.version(blob).text
            if text is None:
                continue
            rewritten = rewrite_hrefs(text, moves)
            if rewritten != text:
                side.over[path] = rewritten.encode("utf-8")

    # -- pass 2: every path --------------------------------------------------------

    def decide(self, path: str) -> None:
        base, one, two = self.base.get(path), self.one.get(path), self.two.get(path)
        if two in (one, base):
            self.merged[path] = one
        elif one == base:
            self.merged[path] = two
        elif is_generated_path(path):
            self.merged[path] = _greater(one, two)
            self.note(GENERATED, path, f"{path} is generated and both sides rewrote it; "
                      "one copy is kept and the next publish regenerates it.")
        elif not is_memory_path(path):
            self._plain(path, base, one, two)
        elif one is None or two is None:
            self.pending.append(path)
        else:
            self._memory(path, base, self.version(one), self.version(two))

    def _plain(self, path: str, base: Blob, one: Blob, two: Blob) -> None:
        if base is not None and one is not None and two is not None:
            joined = merge_lines(base, one, two)
            if joined is not None:
                self.merged[path] = joined
                self.note(LINES_MERGED, path, f"{path} changed on both sides in separate "
                          "lines; both changes were applied.")
                return
        self.merged[path] = _greater(one, two)
        if one is None or two is None:
            detail = (f"{path} was deleted on one side and changed on the other; the "
                      "changed version is kept.")
        else:
            detail = (f"{path} changed differently on both sides and the changes overlap; "
                      "one version is kept (the greater bytes) and the other stays in "
                      "the history of the side that wrote it.")
        self.note(FILE_CONFLICT, path, detail)

    def _memory(self, path: str, base: Blob, one: Version, two: Version) -> None:
        if self._head_edit_of_moved(path, base, one, two):
            self.followed.append(path)
            return
        if (one.doc is not None and two.doc is not None
                and one.article_hash == two.article_hash):
            ancestor = self._ancestor(path, base)
            joined = join_heads(ancestor, one, two)
            if joined is not None:
                self.merged[path] = joined.encode("utf-8")
                self.note(METADATA_UNION, path, f"{path} kept one article; the head "
                          "changes of both sides were joined.")
                return
        self._keep_both(path, one, two)

    def _ancestor(self, path: str, base: Blob) -> Version | None:
        """The version both sides started from: the base file, or, for a file both
        sides added under ``archive/``, the live file both archived."""
        if base is not None:
            return self.version(base)
        original = original_of_archived(path)
        source = None if original is None else self.base.get(original)
        return None if source is None else self.version(source)

    def _linked(self, version: Version, target: str) -> bytes:
        """``version`` with an edge to the other kept copy, when it can hold one."""
        if version.text is None:
            return version.raw
        linked = add_link(version.text, KEPT_REL, to_document_path(target))
        if version.doc is not None and check_memory(linked).violations:
            return version.raw
        return linked.encode("utf-8")

    def _keep_both(self, path: str, one: Version, two: Version) -> None:
        kept, moved = (one, two) if one.later_key() >= two.later_key() else (two, one)
        second = self.names.free(path)
        task = self.names.fresh(task_path_for(path))
        self.merged[path] = self._linked(kept, second)
        self.merged[second] = self._linked(moved, path)
        self.merged[task] = review_task(path, kept, second, moved)
        if kept.doc is not None and moved.doc is not None:
            why = f"{path} was changed to two different articles"
        else:
            why = f"{path} changed on both sides and is not a valid memory file on both"
        self.note(BOTH_KEPT, path, f"{why}: {describe(kept)} keeps the path; "
                  f"{describe(moved)} is at {second}; {task} asks a person to review "
                  "them.", second)

    def _head_edit_of_moved(self, path: str, base: Blob, one: Version, two: Version
                            ) -> bool:
        """One side kept the base article at ``path`` and changed only its head, while
        the other put a different article there and holds the base memory at a path of
        its own (an earlier merge kept two versions, or a move then a new write at the
        name). Keeping both would place the base memory twice; instead the head edit
        follows the memory to where the other side keeps it."""
        if base is None:
            return False
        ancestor = self.version(base)
        if ancestor.doc is None:
            return False
        same = [v.doc is not None and v.article_hash == ancestor.article_hash
                for v in (one, two)]
        if same[0] == same[1]:
            return False
        mover = self.two if same[0] else self.one
        return self._move_target(path, base, mover) is not None

    def follow(self, path: str) -> None:
        """Settle a ``followed`` path: the other article keeps ``path``; the head edit
        is joined into the base memory where the moving side keeps it."""
        base = self.base.get(path)
        assert base is not None
        ancestor = self.version(base)
        one, two = self.one.get(path), self.two.get(path)
        assert one is not None and two is not None
        one_kept = self.version(one).article_hash == ancestor.article_hash
        header, mover, other = ((one, self.two, two) if one_kept else (two, self.one, one))
        target = self._move_target(path, base, mover)
        moved = None if target is None else mover.get(target)
        joined = None
        if target is not None and moved is not None:
            joined = join_heads(ancestor, self.version(header), self.version(moved))
        if target is None or joined is None:
            self._keep_both(path, self.version(one), self.version(two))
            return
        self.claimed.add(target)
        self.merged[path] = other
        self.merged[target] = joined.encode("utf-8")
        self.note(EDIT_KEPT, target, f"{path} holds another article on one side, which "
                  f"keeps the earlier memory at {target}; the head edits the other side "
                  f"made at {path} were merged into {target}.", path)

    # -- pass 2b: one memory at two paths -------------------------------------

    def _identity(self, blob: Blob) -> tuple[str, str] | None:
        """A memory's identity across paths: its created stamp and article hash (a
        move, an archive and a head edit keep both)."""
        if blob is None:
            return None
        found = self.version(blob)
        if found.doc is None or found.article_hash is None:
            return None
        return (found.doc.metas.created_at, found.article_hash)

    def twins(self) -> None:
        """One memory the merge would place at two paths though neither side holds it
        twice. Merges made on different clones can rename one memory apart (a path
        collision settled against different neighbours puts it at ``x-2`` on one clone
        and ``x-3`` on another), and two clones can move it to two places; passed on,
        the copy would be a duplicate from then on. So one path keeps it (the least, a
        choice that does not depend on the side), the heads are joined there, the other
        path is emptied and links to it follow. Paths one under ``archive/`` and one
        not are two intents (retire, keep live) and are left alone."""
        holders: dict[tuple[str, str], list[str]] = {}
        for path in sorted(self.merged):
            if not is_memory_path(path):
                continue
            key = self._identity(self.merged[path])
            if key is not None:
                holders.setdefault(key, []).append(path)
        for key, paths in sorted(holders.items()):
            # What each side held, not what the collision pass laid over it: a collision's
            # keeper is laid over the loser's side, which then seems to hold the keeper
            # twice when it also held that memory elsewhere, and the twin was kept (the
            # bench.team run that held team-note-3-6-3.html and team-note-3-6-5.html).
            if len(paths) < 2 or any(
                    sum(self._identity(side.tree.get(p)) == key for p in paths) > 1
                    for side in (self.one, self.two)):
                continue
            archived = {original_of_archived(p) is not None for p in paths}
            if len(archived) > 1:
                continue
            keep, *drops = paths
            joined: bytes | None = self.merged[keep]
            for drop in drops:
                dropped = self.merged[drop]
                if joined is None or dropped is None:
                    break
                text = join_heads(None, self.version(joined), self.version(dropped))
                joined = None if text is None else text.encode("utf-8")
            if joined is None:
                continue
            self.merged[keep] = joined
            for drop in drops:
                self.merged[drop] = None
                self._follow(to_document_path(drop), to_document_path(keep))
                self.note(METADATA_UNION, keep, f"One memory reached this merge at {keep} "
                          f"and at {drop}; it is kept once, at {keep}, with both heads "
                          "joined, and links to the other path follow it.", drop)

    # -- pass 2c: one memory corrected differently on two clones -----------------

    def _corrections(self) -> dict[str, list[str]]:
        """Live memories this merge adds that supersede exactly one memory, one the
        ancestor held, grouped by that memory's original path. A memory superseding
        several is a canonical (a compress or a fold of a sleep run) and is never a
        rival: archiving it would take its other members out of search. One clone's doors
        cannot make two (``correct`` archives what it corrects, and a correction of an
        archived memory is refused), so two in a group are two clones' corrections."""
        groups: dict[str, list[str]] = {}
        for path in sorted(self.merged):
            blob = self.merged[path]
            if (blob is None or self.base.get(path) is not None or not is_memory_path(path)
                    or original_of_archived(path) is not None):
                continue
            found = self.version(blob)
            if found.doc is None or found.doc.metas.status != "active":
                continue
            replaced = [link.href[1:] for link in found.doc.links if link.rel == "supersedes"]
            if len(replaced) != 1:
                continue  # a canonical of several (compress, a fold) is not a correction
            original = original_of_archived(replaced[0]) or replaced[0]
            if self.base.get(original) is not None:
                groups.setdefault(original, []).append(path)
        return {original: paths for original, paths in groups.items() if len(paths) > 1}

    def rivals(self) -> None:
        """Two clones corrected one memory differently: both corrections arrive live
        and both supersede it. The latest correction (created last, ties on the bytes,
        the collision pass's order) stays live; every other is archived beside it,
        superseded by the live one, links to it following; and one task names every
        claim with the commands that swap them. Nothing is lost: an archived correction
        is one ``restore`` away, and the task says so."""
        for original, paths in sorted(self._corrections().items()):
            ranked = sorted(paths, key=lambda p: (self.version(self.merged[p] or b"").created,
                                                  self.merged[p] or b""), reverse=True)
            keeper, *losers = ranked
            kept = self.version(self.merged[keeper] or b"")
            stamp = kept.created
            archived: list[tuple[str, Version]] = []
            for loser in losers:
                version = self.version(self.merged[loser] or b"")
                assert version.text is not None
                to = free_archive_path(loser, stamp[:4], self.names.taken)
                self.names.placed.add(to)
                text = version.text
                for name, value in (("memhtml-status", "archived"), ("memhtml-archived", stamp),
                                    ("memhtml-superseded-by", to_document_path(keeper))):
                    text = set_meta(text, name, value)
                self.merged[loser] = None
                self.merged[to] = text.encode("utf-8")
                self._follow(to_document_path(loser), to_document_path(keeper))
                archived.append((to, version))
            task = self.names.fresh(task_path_for(original))
            self.merged[task] = rival_corrections_task(task, original, (keeper, kept),
                                                       tuple(archived))
            for to, version in archived:
                self.note(RIVAL_CORRECTIONS, keeper,
                          f"{original} was corrected on two clones: {describe(kept)} stays "
                          f"live at {keeper}; {describe(version)} is archived at {to}; "
                          f"{task} says how to swap them.", to)

    # -- pass 3: edit against delete ---------------------------------------------

    def resolve(self, path: str) -> None:
        base = self.base.get(path)
        assert base is not None
        one = self.one.get(path)
        edited, deleter = (one, self.two) if one is not None else (self.two.get(path), self.one)
        assert edited is not None
        target = self._move_target(path, base, deleter)
        if target is None:
            self.merged[path] = edited
            self.note(EDIT_KEPT, path, f"{path} was deleted on one side and edited on the "
                      f"other; the edited version is kept at {path}.")
            return
        # Pass 2 may have joined the other side's copy there too (see ``fits``): the
        # edit is joined into what the merge holds at the target, so neither is lost.
        held = self.merged.get(target)
        moved_to = (held if held is not None and self._identity(held) == self._identity(base)
                    else deleter.get(target))
        assert moved_to is not None
        self.claimed.add(target)
        mine, theirs = self.version(edited), self.version(moved_to)
        joined = None
        if mine.doc is not None and mine.article_hash == theirs.article_hash:
            joined = join_heads(self.version(base), mine, theirs)
        if joined is None:
            # The article changed: the edit is a live fact, and a file under archive/
            # is archived by its path, so the edit stays where it was.
            self.merged[path] = edited
            self.note(EDIT_KEPT, path, f"{path} was moved to {target} on one side and its "
                      f"article edited on the other; the edited version stays live at "
                      f"{path} and the earlier one at {target}.", target)
            return
        self.merged[path] = None
        self.merged[target] = joined.encode("utf-8")
        self._follow(to_document_path(path), to_document_path(target))
        self.note(EDIT_KEPT, target, f"{path} was moved to {target} on one side and its "
                  f"head edited on the other; the edits were merged into {target}.", path)

    def _move_target(self, path: str, base: bytes, mover: _Side) -> str | None:
        """Where the deleting side moved the base memory: a path only that side added,
        holding a memory with the base's created stamp and article hash; an archive
        path of the original name first, then the least path.

        The other side may hold the same memory at that path as well: the collision
        pass lays a collision's keeper over the loser's side, so when the moved memory
        kept a path both sides added, both now hold it there. That path is still where
        the memory went; refusing it left the edit live at the old path beside it, one
        memory at two paths (the shape of the crowd test's rare ``fact-17-3-2.html``
        and ``fact-17-5.html``)."""
        ancestor = self.version(base)
        if ancestor.doc is None:
            return None
        other = self.two if mover is self.one else self.one
        wanted = (ancestor.doc.metas.created_at, ancestor.article_hash)

        def fits(candidate: str) -> bool:
            blob = mover.get(candidate)
            held = other.get(candidate)
            if (candidate == path or candidate in self.claimed or blob is None
                    or self.base.get(candidate) is not None
                    or (held is not None and self._identity(held) != wanted)
                    or not is_memory_path(candidate)):
                return False
            found = self.version(blob)
            return (found.doc is not None
                    and (found.doc.metas.created_at, found.article_hash) == wanted)

        ordered = sorted(self.paths, key=lambda p: (original_of_archived(p) != path, p))
        return next((candidate for candidate in ordered if fits(candidate)), None)

    def _follow(self, old: str, new: str) -> None:
        """Links to a path the merge emptied point where its memory went."""
        for path in sorted(self.merged):
            blob = self.merged[path]
            if blob is None or not is_memory_path(path):
                continue
            text = self.version(blob).text
            if text is not None:
                rewritten = rewrite_hrefs(text, {old: new})
                if rewritten != text:
                    self.merged[path] = rewritten.encode("utf-8")

    def run(self) -> TreeMerge:
        self.collisions()
        for path in sorted(self.paths):
            self.decide(path)
        for path in sorted(self.followed):
            self.follow(path)
        self.rivals()
        self.twins()
        for path in sorted(self.pending):
            self.resolve(path)
        # An edit kept at a path the other side deleted can be a memory that side
        # moved onto a path the base held something else at (a path ``_move_target``
        # does not take): the edit is then a second copy, and only now visible.
        self.twins()
        events = sorted(self.events, key=lambda e: (e.path, e.kind, e.other or "", e.detail))
        return TreeMerge(dict(sorted(self.merged.items())), tuple(events))


def _changed(base: Mapping[str, bytes], ours: Mapping[str, bytes],
             theirs: Mapping[str, bytes]) -> set[str]:
    """Every path that differs between the base and either side (tests; the caller
    hands in git's diff)."""
    return {path for tree in (ours, theirs) for path in {*base, *tree}
            if base.get(path) != tree.get(path)}


def merge_trees(base: Mapping[str, bytes], ours: Mapping[str, bytes],
                theirs: Mapping[str, bytes], changed: Iterable[str] | None = None
                ) -> TreeMerge:
    """Merge two descendants of ``base`` path by path, fact by fact.

    ``changed`` is every path that differs between ``base`` and either side; given, the
    trees are only looked up, never listed, so the cost follows the change. Without it
    (tests) it is computed from the mappings. Symmetric: swapping ``ours`` and
    ``theirs`` gives the same ``TreeMerge``.
    """
    paths = set(changed) if changed is not None else _changed(base, ours, theirs)
    return _Merge(base, _Side(ours), _Side(theirs), paths,
                  Names((base, ours, theirs))).run()
