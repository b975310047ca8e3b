"""``doctor``: everything in the tree a reader or a curation pass would trip on.

The head skips a file it cannot parse and carries on; doctor is where those files,
and the subtler faults of files that do parse, are named one finding each. It also
looks at the checkout beside the tree: paths memhtml left behind its branch, a merge
or rebase waiting, conflicts, a clone without the merge driver, the person's edits
that are not committed yet (which search does not see and doors will not touch), a
marker naming another branch than the one this clone writes; git attributes that
give memory files a merge driver (a plain ``git pull`` would merge them with it
instead of git's text merge); and anything in this clone's local state that is not
what memhtml keeps there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from returns.io import IOResult, IOSuccess

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import GitService, TreeEntry
from memhtml.format import check_memory
from memhtml.head import HeadVersion
from memhtml.head.record import is_archived_path
from memhtml.store.carried import layout_link_problem
from memhtml.store.checkout import Behind, checkout_behind
from memhtml.store.deps import StoreDeps
from memhtml.store.edits import LocalEdit, local_edits, unmerged
from memhtml.store.errors import StoreError
from memhtml.store.layout import (
    GITATTRIBUTES,
    MARKER,
    legacy_attributes_at,
    marker_note,
)
from memhtml.store.merge_driver import DRIVER_KEY, MERGE_DRIVER, merge_driver_missing
from memhtml.store.session import Store
from memhtml.store.site import is_generated_path, stale_artifacts

FindingKind = Literal[
    "violation", "warning", "not-a-memory", "stale-hash", "dangling", "status-path", "artifact",
    "checkout", "uncommitted", "in-progress", "unmerged", "merge-driver", "merge-attribute",
    "local-state", "layout-link",
]
ADVICE_KINDS: frozenset[FindingKind] = frozenset({"warning", "uncommitted", "artifact"})
"""Findings that are advice, not faults: a file that parses with a warning, a
person's edit not yet committed (their work, named so they know search does not see
it and memhtml will not touch it), and a published page behind the memories (every
write after a ``publish`` leaves one; the next ``publish`` renders it). Every other
kind is an error and makes ``doctor`` exit 1."""

Severity = Literal["error", "advice"]


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    kind: FindingKind
    message: str
    severity: Severity = field(init=False)
    """``advice`` for the ``ADVICE_KINDS``, else ``error``: derived from the kind."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity",
                           "advice" if self.kind in ADVICE_KINDS else "error")


def stale_generated(git: GitService, version: HeadVersion
                    ) -> IOResult[list[str], StoreError]:
    """Generated pages (index.html, sitemap.xml) that no longer match the records.

    Checked only once the store has been published (some generated file is in the
    tree): on a store that never published, every page would read as missing, which
    is not a fault.
    """
    if version.sha is None:
        return IOSuccess([])

    def compare(entries: tuple[TreeEntry, ...]) -> IOResult[list[str], StoreError]:
        generated = {e.path: e.blob_id for e in entries if is_generated_path(e.path)}
        if not generated:
            return IOSuccess([])

        def check(blobs: Mapping[str, bytes]) -> list[str]:
            tree = {e.path: blobs.get(generated[e.path], b"") if e.path in generated else b""
                    for e in entries}
            # A symbolic link at a generated path is a person's file: publish leaves it.
            linked = {e.path for e in entries if e.is_symlink}
            return [path for path in stale_artifacts(version, tree) if path not in linked]

        return git.read_blobs(sorted(set(generated.values()))).map(check)

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.list_tree(version.sha)
    return listed.bind(compare)


def layout_link_findings(git: GitService, version: HeadVersion
                         ) -> IOResult[list[Finding], StoreError]:
    """Each committed symbolic link at a layout path (``store.carried``): the doors
    refuse to write through one, so ``task add``, ``archive`` or ``publish`` stop
    working there. A sync refuses to bring one in; a person's own commit may still."""
    if version.sha is None:
        return IOSuccess([])

    def judge(entries: tuple[TreeEntry, ...]) -> list[Finding]:
        return [Finding(e.path, "layout-link", reason + "; remove it (git rm) or make it "
                                                         "a plain directory or file")
                for e in entries if e.is_symlink
                and (reason := layout_link_problem(e.path)) is not None]

    listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.list_tree(version.sha)
    return listed.map(judge)


_SHOWN_PATHS = 5
"""Memory files a merge-attribute finding names before it counts the rest."""


def _attribute_finding(driver: str, paths: list[str]) -> Finding:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    more = f" and {len(paths) - _SHOWN_PATHS} more" if len(paths) > _SHOWN_PATHS else ""
    effect = {
        "ours": "with merge.ours.driver = true (the usual definition) the other side's "
                "edits are dropped without a conflict",
        "binary": "every change made on both sides is a conflict, with no markers",
        "union": "both sides' lines are kept, unmarked, in one file",
        MERGE_DRIVER: "memhtml's driver merges memory files as text anyway, but no line of "
                      "memhtml's names it for them",
    }.get(driver, "a program git's configuration names decides the result")
    label = "-merge (binary)" if driver == "binary" else f"merge={driver}"
    return Finding(paths[0], "merge-attribute",
                   f"git's attributes give {len(paths)} memory file(s) {label} "
                   f"({shown}{more}), so a plain git pull merges them with that driver, not "
                   f"git's text merge: {effect}. Remove the line that names it (a "
                   ".gitattributes in the tree, .git/info/attributes, or your own "
                   "attributes file)")


def merge_findings(git: GitService, version: HeadVersion
                   ) -> IOResult[list[Finding], StoreError]:
    """Memory files git's attributes give a merge driver (one finding per driver, on
    the first such file), and an earlier release's ``merge=ours`` lines for generated
    pages (on ``.gitattributes``). Nothing on an unborn branch."""
    sha = version.sha
    if sha is None:
        return IOSuccess([])
    paths = sorted({record.path for record in version.records()}
                   | {skipped.path for skipped in version.skipped_files})

    def attributes(found: Mapping[str, str]) -> list[Finding]:
        by_driver: dict[str, list[str]] = {}
        for path in sorted(found):
            by_driver.setdefault(found[path], []).append(path)
        return [_attribute_finding(driver, listed)
                for driver, listed in sorted(by_driver.items())]

    def legacy(lines: tuple[str, ...]) -> list[Finding]:
        if not lines:
            return []
        return [Finding(GITATTRIBUTES, "merge-driver",
                        f"marks generated pages with an earlier memhtml's lines "
                        f"({', '.join(lines)}), naming git's ours driver, which memhtml no "
                        "longer defines: a pull of another clone's published pages "
                        "conflicts. Run memhtml init (or memhtml doctor --fix) to mark them "
                        f"merge={MERGE_DRIVER}")]

    given: IOResult[Mapping[str, str], StoreError] = git.merge_attributes(sha, paths)
    return given.map(attributes).bind(
        lambda found: legacy_attributes_at(git, sha).map(lambda old: found + legacy(old)))


def record_findings(version: HeadVersion, record: MemoryRecord) -> list[Finding]:
    """What is wrong with a file that parses."""
    path = record.path
    out = [Finding(path, "warning", w) for w in record.warnings]
    stated = record.stated_content_hash
    if stated is not None and stated != record.content_hash:
        out.append(Finding(path, "stale-hash",
                           f"memhtml-content-hash says {stated[:19]}..., but the article "
                           f"hashes to {record.content_hash[:19]}...: the article was "
                           "edited and committed without memhtml (which stamps the hash "
                           "when it writes). Search reads the file as it is; run doctor "
                           "--fix to stamp the hash it has (one commit)"))
    for link in record.links:
        if version.get(to_tree_path(link.href)) is None:
            out.append(Finding(path, "dangling", f"{link.rel} link to {link.href}: no memory "
                                                 "there"))
    if record.superseded_by is not None and version.get(to_tree_path(record.superseded_by)) \
            is None:
        out.append(Finding(path, "dangling",
                           f"memhtml-superseded-by {record.superseded_by}: no memory there"))
    archived_status = record.status == "archived"
    if archived_status and not is_archived_path(path):
        out.append(Finding(path, "status-path", "status archived but not under archive/"))
    if not archived_status and is_archived_path(path):
        out.append(Finding(path, "status-path", "under archive/ but status active"))
    return out


def _skipped_findings(entries: tuple[TreeEntry, ...], blobs: dict[str, bytes],
                      version: HeadVersion) -> list[Finding]:
    by_path = {e.path: e for e in entries}
    out: list[Finding] = []
    for skipped in version.skipped_files:
        entry = by_path.get(skipped.path)
        data = None if entry is None else blobs.get(entry.blob_id)
        if entry is None or entry.is_symlink or data is None:
            out.append(Finding(skipped.path, "not-a-memory", skipped.reason))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out.append(Finding(skipped.path, "not-a-memory", skipped.reason))
            continue
        checked = check_memory(text)
        if not checked.violations:
            out.append(Finding(skipped.path, "not-a-memory", skipped.reason))
        out += [Finding(skipped.path, "violation", v) for v in checked.violations]
        out += [Finding(skipped.path, "warning", w) for w in checked.warnings]
    return out


def checkout_findings(deps: StoreDeps) -> IOResult[list[Finding], StoreError]:
    """The checkout's paths a person's ``git commit`` would revert: held as they were
    before a memhtml commit, in the index, the working tree, or both."""

    def findings(behind: tuple[Behind, ...]) -> list[Finding]:
        out: list[Finding] = []
        for b in behind:
            where = " and ".join(w for w, held in (("index", b.index), ("working tree", b.file))
                                 if held)
            out.append(Finding(b.path, "checkout",
                               f"the {where} still holds this path as it was before commit "
                               f"{b.commit[:10]}; a plain git commit would revert it (run "
                               "memhtml doctor --fix)"))
        return out

    return checkout_behind(deps).map(findings)


def _where(deps: StoreDeps, name: str) -> str:
    """A file in the git directory, named as a person would find it from the checkout."""
    git_dir = deps.checkout_git_dir
    return name if git_dir is None else _shown(deps, git_dir / name)


def local_state_findings(deps: StoreDeps) -> list[Finding]:
    """Every entry in this clone's local state (``<git-dir>/memhtml/``) that is not what
    memhtml keeps there (``LocalState.odd_entries``). memhtml never opens such an
    entry (a cache there is rebuilt, a mark skipped, the state database refused by
    name), so nothing hangs on it; this names it so a person can remove it."""
    local = deps.local
    if local is None:
        return []
    return [Finding(_shown(deps, odd.path), "local-state",
                    f"{odd.what} in this clone's local state, where memhtml keeps only "
                    "its own files and directories; memhtml never opens it (a cache "
                    "there is rebuilt, a write mark skipped, the state database "
                    "refused): remove it") for odd in local.odd_entries()]


def _shown(deps: StoreDeps, path: Path) -> str:
    """``path`` as a person finds it from the checkout (relative to it when inside)."""
    worktree = deps.worktree
    if worktree is not None and path.is_relative_to(worktree):
        return path.relative_to(worktree).as_posix()
    return path.as_posix()


def _edit_finding(edit: LocalEdit) -> Finding:
    what = edit.describe().removeprefix(f"{edit.path}: ")
    return Finding(edit.path, "uncommitted",
                   f"{what}. Search and read see the committed version, and memhtml will "
                   "not change this file until the edit is committed or discarded")


def worktree_findings(deps: StoreDeps, behind: frozenset[str] = frozenset()
                      ) -> IOResult[list[Finding], StoreError]:
    """The person's side of the checkout: a merge or rebase left waiting, paths left in
    conflict, the merge driver missing, and every memory file or generated page edited
    and not committed (but those ``behind`` names, which are memhtml's to bring up to
    date, not the person's edits). Nothing without a checkout."""
    git_dir = deps.checkout_git_dir
    if git_dir is None or deps.worktree is None:
        return IOSuccess([])
    out: list[Finding] = []
    busy = deps.git.operation_in_progress()
    if busy is not None:
        operation, fix = busy
        marker = {"merge": "MERGE_HEAD", "cherry-pick": "CHERRY_PICK_HEAD",
                  "revert": "REVERT_HEAD"}.get(operation, "rebase-merge")
        out.append(Finding(_where(deps, marker), "in-progress",
                           f"a git {operation} is in progress; memhtml refuses to write "
                           f"until it is finished ({fix})"))

    def conflicts(paths: tuple[str, ...]) -> list[Finding]:
        return [Finding(path, "unmerged", "left in conflict; resolve it, git add it and "
                                          "finish the merge") for path in paths]

    def driver(missing: bool) -> list[Finding]:
        if not missing:
            return []
        return [Finding(_where(deps, "config"), "merge-driver",
                        f"{DRIVER_KEY} is not memhtml's (missing here, or another "
                        "command), so a pull of another clone's published pages conflicts; "
                        "run memhtml doctor --fix")]

    def edits(found: tuple[LocalEdit, ...]) -> list[Finding]:
        return [_edit_finding(e) for e in found if e.path not in behind]

    return unmerged(deps).bind(lambda paths: merge_driver_missing(deps.git).bind(
        lambda missing: local_edits(deps).map(
            lambda found: out + conflicts(paths) + driver(missing) + edits(found))))


def doctor(store: Store) -> IOResult[list[Finding], StoreError]:
    """Every finding at the tip, sorted by path, kind and message."""

    def examine(version: HeadVersion) -> IOResult[list[Finding], StoreError]:
        findings: list[Finding] = []
        for record in version.records():
            findings += record_findings(version, record)
        git = store.deps.git

        def finish(more: list[Finding]) -> list[Finding]:
            everything = findings + more + local_state_findings(store.deps)
            return sorted(everything, key=lambda f: (f.path, f.kind, f.message))

        def skipped_files() -> IOResult[list[Finding], StoreError]:
            if not version.skipped_files or version.sha is None:
                return IOSuccess([])
            paths = [s.path for s in version.skipped_files]
            return git.entries_at(version.sha, paths).bind(
                lambda entries: git.read_blobs(
                    sorted({e.blob_id for e in entries if not e.is_symlink})
                ).map(lambda blobs: _skipped_findings(entries, dict(blobs), version)))

        def artifacts(stale: list[str]) -> IOResult[list[Finding], StoreError]:
            pages = [Finding(p, "artifact", "generated page is behind the memories (a write "
                                            "since the last publish); run publish to "
                                            "render it again")
                     for p in stale]

            def checkout(more: list[Finding]) -> IOResult[list[Finding], StoreError]:
                return checkout_findings(store.deps).bind(lambda behind: worktree_findings(
                    store.deps, frozenset(f.path for f in behind)).map(
                    lambda theirs: finish(pages + more + behind + theirs)))

            return skipped_files().bind(lambda skipped: marker_finding().bind(
                lambda marker: layout_link_findings(git, version).map(
                    lambda links: skipped + links + marker))).bind(checkout)

        def marker_finding() -> IOResult[list[Finding], StoreError]:
            # A notice, not a fault: the clone keeps writing its own branch.
            return marker_note(git, version.sha, store.deps.branch).map(
                lambda note: [] if note is None else [Finding(MARKER, "warning", note)])

        return stale_generated(git, version).bind(artifacts).bind(
            lambda found: merge_findings(git, version).map(
                lambda merges: sorted(found + merges,
                                      key=lambda f: (f.path, f.kind, f.message))))

    return store.head().bind(examine)
