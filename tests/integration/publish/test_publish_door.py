"""The publish door over a store holding refused files: one commit, nothing refused
linked, a stale site of an earlier release cleaned up, doctor satisfied."""

from __future__ import annotations

from memhtml.contracts.services import PathChange
from memhtml.store import doctor, publish
from memhtml.store.site import HEADERS_PATH, STYLESHEET_PATH, view_path
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
        "memhtml publish: 11 index pages, 9 memory pages, sitemap, stylesheet and headers")
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
