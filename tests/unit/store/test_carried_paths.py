"""What a remote's tree may bring (``store.carried``): the doors' rules, applied to
the paths a sync would take in, the new ones judged as new names and the ones this
clone has judged only as what a checkout can hold; and ``Checkout.file_kind`` gives
an answer, never an ``OSError``, for any name a tree can spell."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.git import PygitService
from memhtml.contracts.services import FILE_MODE_BLOB, FILE_MODE_LINK, TreeEntry
from memhtml.store.carried import (
    TRAVELLING,
    Around,
    carried_refusals,
    directories_around,
    layout_link_problem,
)

BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
HERE = frozenset({"areas/inbox/coffee.html", "areas/inbox/.gitkeep", ".gitignore",
                  "projects/a:b/brief.html", ".memhtml/store.toml"})


def _file(path: str) -> TreeEntry:
    return TreeEntry(path, BLOB, FILE_MODE_BLOB)


def _link(path: str) -> TreeEntry:
    return TreeEntry(path, BLOB, FILE_MODE_LINK)


def _listing(paths: Iterable[str], directories: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """What ``GitService.names_in`` answers for a tree of ``paths``."""
    wanted = set(directories)
    found: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/")
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            if directory in wanted:
                rest = parts[depth:]
                found.setdefault(directory, set()).add(rest[0] + ("/" if rest[1:] else ""))
    return {directory: tuple(sorted(names)) for directory, names in found.items()}


def _refused(*entries: TreeEntry, here: frozenset[str] = HERE,
             removed: frozenset[str] = frozenset()) -> list[str]:
    """The paths refused when ``entries`` arrive over a tree of ``here`` (a
    fast-forward: the remote's tree is this one with them laid over it)."""
    theirs = (here - removed) | {e.path for e in entries}
    fresh = [e.path for e in entries if e.path not in here]
    around = directories_around(fresh)
    context = Around(_listing(here, around), _listing(theirs, around), removed)
    held = frozenset(e.path for e in entries) & here
    return [r.path for r in carried_refusals(entries, held, context)]


def test_the_state_entries_that_travel_are_the_ones_gitignore_lets_through() -> None:
    assert frozenset({"config.toml", "store.toml", "sleep", "state"}) == TRAVELLING


@pytest.mark.parametrize("path", [
    "areas", "areas/inbox", "areas/tasks", "areas/deploy", "resources", "resources/people",
    "archive", "archive/2026", "archive/2026/areas/inbox/x.html", "memhtml-site",
    "memhtml-site/view/x/index.html", ".memhtml", ".memhtml/sleep", ".memhtml/config.toml",
    ".gitattributes", ".gitignore", "index.html", "areas/inbox/index.html", "sitemap.xml",
    "_headers",
])
def test_a_link_at_a_layout_path_is_refused(path: str) -> None:
    assert layout_link_problem(path) is not None
    assert _refused(_link(path)) == [path]


@pytest.mark.parametrize("path", ["areas/inbox/link.html", "notes/x", "README.md",
                                  "areas/deploy/runbook/link", "projects/x"])
def test_a_link_elsewhere_may_come(path: str) -> None:
    assert layout_link_problem(path) is None
    assert _refused(_link(path)) == []


def test_only_new_names_are_held_to_the_portable_rules() -> None:
    # An edit of a name this clone has (from before the rules) is not judged as new.
    assert _refused(_file("projects/a:b/brief.html")) == []
    # A new file in that directory keeps the directory's name; its own is judged.
    assert _refused(_file("projects/a:b/more.html"), _file("projects/a:b/c?.html")) == [
        "projects/a:b/c?.html"]
    # Every brought path is held to what a checkout can hold, old or new.
    long = "areas/inbox/" + "x" * 256 + ".html"
    assert _refused(_file(long), here=HERE | {long}) == [long]


def test_twins_are_judged_against_the_tree_the_sync_makes() -> None:
    assert _refused(_file("areas/inbox/Coffee.html")) == ["areas/inbox/Coffee.html"]
    # Both new: neither keeps its name.
    nfc = unicodedata.normalize("NFC", "areas/x/caf\u00e9.html")
    nfd = unicodedata.normalize("NFD", nfc)
    assert _refused(_file(nfc), _file(nfd)) == sorted([nfc, nfd])
    # A rename by case: the old spelling leaves the tree the sync makes.
    assert _refused(_file("areas/inbox/Coffee.html"),
                    removed=frozenset({"areas/inbox/coffee.html"})) == []
    # A new directory twinning an existing one: the new spelling is at fault, not
    # the paths under the one this clone has.
    assert _refused(_file("Areas/x.html"), _file("areas/inbox/new.html")) == ["Areas/x.html"]


def test_a_merge_keeps_this_sides_own_names_and_drops_what_the_remote_removed() -> None:
    base = frozenset({"areas/inbox/coffee.html", "areas/old/tea.html"})
    here = base | {"areas/mine/lunch.html"}
    theirs = base - {"areas/old/tea.html"}
    brought = [_file("areas/Mine/x.html"), _file("areas/OLD/y.html"),
               _file("areas/inbox/Lunch.html")]
    fresh = [e.path for e in brought]
    around = directories_around(fresh)
    context = Around(_listing(here, around), _listing(theirs | set(fresh), around),
                     frozenset({"areas/old/tea.html"}), frozenset({"areas/mine/lunch.html"}))
    # areas/mine holds this side's addition, so the merge keeps it: Mine twins it.
    # areas/old was emptied by the remote: OLD takes its place without a twin.
    assert [r.path for r in carried_refusals(brought, frozenset(), context)] == [
        "areas/Mine/x.html"]
    # With no shared history every name here is this side's, and stays.
    unrelated = Around(context.here, context.theirs, frozenset(), None)
    assert [r.path for r in carried_refusals(brought, frozenset(), unrelated)] == [
        "areas/Mine/x.html", "areas/OLD/y.html"]


def test_what_travels_under_the_state_directory_is_a_name_like_any_other() -> None:
    assert _refused(_file(".memhtml/sleep/2026-01-01.html"), _file(".memhtml/config.toml"),
                    _file(".memhtml/state/access.jsonl")) == []
    assert _refused(_file(".memhtml/snapshots/x"), _file(".memhtml/sleep/con.html"),
                    _file(".MEMHTML/config.toml")) == [
        ".MEMHTML/config.toml", ".memhtml/sleep/con.html", ".memhtml/snapshots/x"]


# -- the checkout walk -------------------------------------------------------------------


def test_plain_file_answers_for_any_name_a_tree_can_spell(tmp_path: Path) -> None:
    (tmp_path / "areas").mkdir()
    (tmp_path / "areas" / "x.html").write_bytes(b"fact\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "y.html").write_bytes(b"elsewhere\n")
    (tmp_path / "linked").symlink_to(tmp_path / "outside")
    os.mkfifo(tmp_path / "areas" / "pipe.html")
    git = unsafe_perform_io(PygitService.init(tmp_path).unwrap())

    assert git.file_kind("areas/x.html") is True
    assert git.file_kind("areas/" + "x" * 300 + ".html") is None
    assert git.file_kind("y" * 300 + "/x.html") is None
    assert git.file_kind("/".join(["d" * 200] * 30)) is None
    assert git.file_kind("areas/missing.html") is None
    assert git.file_kind("areas/x.html/under") is None
    assert git.file_kind("linked/y.html") is False
    assert git.file_kind("areas") is False
    assert git.file_kind("areas/pipe.html") is False
