"""The publish door over a store holding refused files: one commit, nothing refused
linked, a stale site of an earlier release cleaned up, doctor satisfied."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memhtml.contracts.services import PathChange
from memhtml.store import doctor, publish
from memhtml.store.site import HEADERS_PATH, STYLESHEET_PATH, view_path
from tests.integration.cli.cli_support import call
from tests.integration.publish.site_support import (
    REFUSED_SCRIPT,
    TAGGED_PATH,
    hostile_store_files,
    publish_store,
    refused_files,
)
from tests.integration.store.store_support import AUTHOR, CLOCK, make_memory_store, ok


def test_publish_is_one_commit_and_serves_nothing_refused() -> None:
    files, refused = hostile_store_files(), refused_files()
    published = publish_store({**files, **refused})
    assert published.commits == 1
    assert published.landed.message.startswith(
        "memhtml publish: 18 index pages, 9 memory pages, sitemap, stylesheet and headers")
    tree = published.tree
    assert {HEADERS_PATH, STYLESHEET_PATH, view_path(TAGGED_PATH)} <= set(tree)
    assert {view_path(path) for path in files} <= set(tree)
    assert not any(view_path(path) in tree for path in refused)
    assert {s.path for s in published.version.skipped_files} == set(refused)
    security = tree["areas/security/index.html"].decode("utf-8")
    for path, reason in ((s.path, s.reason) for s in published.version.skipped_files):
        name = path.rsplit("/", 1)[1]
        assert f"<li><code>{name}</code> " in security
        assert f'href="{name}"' not in security
        assert reason.replace("<", "&lt;").replace(">", "&gt;")[:40] in security
    assert REFUSED_SCRIPT.rsplit("/", 1)[1] not in tree["sitemap.xml"].decode()


def test_republishing_commits_nothing_and_an_earlier_releases_stylesheet_goes() -> None:
    store, git = make_memory_store()
    files = {**hostile_store_files(), **refused_files(),
             ".site/memhtml.css": "the stylesheet an earlier release generated"}
    changes = [PathChange(p, t.encode()) for p, t in sorted(files.items())]
    ok(git.commit(store.deps.ref, ok(store.tip()), changes, "files", AUTHOR, CLOCK.now()))
    first = ok(publish(store))
    assert ".site/memhtml.css" in first.paths
    assert ".site/memhtml.css" not in {e.path for e in ok(git.list_tree(first.commit))}
    again = ok(publish(store))
    assert again.paths == () and again.commit == first.commit
    assert [f for f in ok(doctor(store)) if f.kind == "artifact"] == []


def test_a_corrected_memorys_page_lists_its_history_and_stays_current(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the CLI: write, correct twice, publish; the live memory's page lists
    every earlier claim, each linked to its own page, and each archived page says
    what superseded it. A correction then a republish keeps doctor quiet."""
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    code, wrote = call(capsys, "write", "--title", "Team standup", "--claim",
                       "Standup is at 9:30.",
                       "--store", str(store), "--json")
    assert code == 0, wrote
    first = str(wrote["new"][0])
    code, fixed = call(capsys, "correct", first, "--claim", "Standup is at 10:00.",
                       "--store", str(store), "--json")
    assert code == 0, fixed
    second = str(fixed["new"][0])
    code, fixed = call(capsys, "correct", second, "--claim", "Standup is at 10:30.",
                       "--store", str(store), "--json")
    assert code == 0, fixed
    live = str(fixed["new"][0])
    assert call(capsys, "publish", "--store", str(store), "--json")[0] == 0
    page = (store / view_path(live)).read_text(encoding="utf-8")
    history = page[page.index('<h2 id="history">'):]
    assert "\u201cStandup is at 10:00.\u201d" in history
    assert "\u201cStandup is at 9:30.\u201d" in history
    assert history.index("10:00.") < history.index("9:30."), "newest first"
    assert f"memhtml log {live}" in history
    archived = [p for p in tree_paths(store) if p.startswith("archive/") and
                p.endswith(first)]
    assert archived, tree_paths(store)
    old_page = (store / view_path(archived[0])).read_text(encoding="utf-8")
    old_history = old_page[old_page.index('<h2 id="history">'):]
    assert "archived, superseded by" in old_history and " written" in old_history
    code, report = call(capsys, "doctor", "--store", str(store), "--json")
    assert code == 0, report
    assert not [f for f in report["findings"] if f["kind"] == "artifact"], report


def tree_paths(store: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(store), "ls-tree", "-r", "--name-only", "HEAD"],
                         check=True, capture_output=True, text=True).stdout
    return out.splitlines()
