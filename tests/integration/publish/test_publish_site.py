"""render_site and stale_artifacts: structure, escaping, links, sitemap, determinism."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import lxml.html
import pytest
from lxml import etree

from memhtml.head import IndexedView, build_indexes, is_candidate_path, load_head
from memhtml.store.site import (
    GENERATOR,
    SITEMAP_NAMESPACE,
    SITEMAP_PATH,
    STYLESHEET_PATH,
    is_generated_path,
    render_site,
    stale_artifacts,
)
from tests.integration.publish.site_support import (
    DEPLOY_CLAIM,
    DEPLOY_PATH,
    HOSTILE_CLAIM,
    HOSTILE_PATH,
    HOSTILE_TITLE,
    SCHEME_PATH,
    archived_file,
    memory_file,
    records_of,
    sample_files,
    tag_balance,
    view_of_files,
)
from tests.property.head_support import commit, new_repo, run

REPO_ROOT = Path(__file__).resolve().parents[3]

EXPECTED_INDEXES = {
    "index.html",
    "archive/index.html",
    "archive/2026/index.html",
    "archive/2026/areas/index.html",
    "archive/2026/areas/deploy/index.html",
    "areas/index.html",
    "areas/deploy/index.html",
    "areas/inbox/index.html",
    "areas/security/index.html",
    "resources/index.html",
    "resources/people/index.html",
}


def _site(extra: dict[str, bytes] | None = None) -> tuple[dict[str, str], dict[str, bytes]]:
    files = sample_files()
    tree_paths = list(files) + list(extra or {})
    return files, render_site(view_of_files(files), tree_paths)


def _page(site: dict[str, bytes], path: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(site[path])


def _texts(page: lxml.html.HtmlElement, xpath: str) -> list[str]:
    return [node.text_content() for node in page.xpath(xpath)]


def test_one_index_per_directory_plus_sitemap_and_stylesheet() -> None:
    files, site = _site()
    assert set(site) == EXPECTED_INDEXES | {SITEMAP_PATH, STYLESHEET_PATH}
    assert list(site) == sorted(site)
    assert not set(site) & set(files), "the memory files are published as committed"
    assert all(is_generated_path(path) for path in site)
    assert not any(is_candidate_path(path) for path in site), "the head never reads a page"


def test_index_pages_are_balanced_html5_without_script_or_inline_style() -> None:
    _, site = _site()
    for path in EXPECTED_INDEXES:
        text = site[path].decode("utf-8")
        assert text.startswith('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">')
        checked = tag_balance(text)
        assert checked.problems == [], (path, checked.problems)
        tags = [tag for tag, _ in checked.tags]
        assert {"script", "style", "iframe", "object", "embed", "img", "form"}.isdisjoint(tags)
        for tag, attrs in checked.tags:
            names = {name for name, _ in attrs}
            assert not any(name.startswith("on") for name in names), (path, tag, attrs)
            assert "style" not in names, (path, tag)
        page = _page(site, path)
        assert page.xpath("//meta[@name='generator']/@content") == [GENERATOR]
        assert len(page.xpath("//h1")) == 1
        assert len(page.xpath("//title")) == 1
        assert page.xpath("//link/@rel") == ["stylesheet"]


def test_every_link_resolves_to_a_published_file() -> None:
    files, site = _site({"README.md": b"readme"})
    published = set(site) | set(files) | {"README.md"}
    for path in EXPECTED_INDEXES:
        page = _page(site, path)
        hrefs = page.xpath("//a/@href") + page.xpath("//link/@href")
        assert hrefs, path
        for href in hrefs:
            assert urlsplit(href).scheme == "" and not href.startswith("/"), (path, href)
            resolved = urlsplit(urljoin("http://site.invalid/" + path, href))
            assert resolved.netloc == "site.invalid", (path, href)
            assert unquote(resolved.path)[1:] in published, (path, href)


def test_root_lists_its_directories_and_memories() -> None:
    _, site = _site()
    root = _page(site, "index.html")
    assert _texts(root, "//h1") == ["Memory store"]
    assert _texts(root, "//h2") == ["Directories", "Memories"]
    assert _texts(root, "//ul[@class='directories']/li/a") == ["archive/", "areas/", "resources/"]
    assert root.xpath("//ul[@class='directories']/li/a/@href") == [
        "archive/index.html", "areas/index.html", "resources/index.html"]
    assert _texts(root, "//ul[@class='memories']//h3") == ["A note at the root"]
    breadcrumb = _page(site, "areas/deploy/index.html").xpath("//nav//li")
    assert [li.text_content() for li in breadcrumb] == ["store", "areas", "deploy"]
    assert breadcrumb[-1].get("aria-current") == "page"


def test_a_memory_entry_shows_title_claim_type_and_status_in_path_order() -> None:
    _, site = _site()
    deploy = _page(site, "areas/deploy/index.html")
    entries = deploy.xpath("//ul[@class='memories']/li")
    assert [e.xpath("string(.//h3/a/@href)") for e in entries] == [
        "canary-gate.html", "rollback-window.html"]
    first = entries[0]
    assert first.xpath("string(.//h3)") == "Deploy step is safe after the canary"
    assert first.xpath("string(.//p[@class='claim'])") == DEPLOY_CLAIM
    assert _texts(first, ".//p[@class='facts']/span") == ["semantic", "active"]
    assert _texts(entries[1], ".//p[@class='facts']/span") == ["procedural", "active"]
    task = _page(site, "areas/inbox/index.html").xpath("//ul[@class='memories']/li")[0]
    assert _texts(task, ".//p[@class='facts']/span") == ["task", "active", "task doing",
                                                         "due 2026-12-01"]
    assert task.xpath("string(.//time/@datetime)") == "2026-12-01T00:00:00Z"


def test_archived_memories_are_marked() -> None:
    files = sample_files()
    # Archived by status while still outside archive/: marked all the same.
    files["areas/deploy/old-note.html"] = archived_file(memory_file("Old note", "Old claim."))
    site = render_site(view_of_files(files), files)
    deploy = _page(site, "areas/deploy/index.html")
    classes = deploy.xpath("//ul[@class='memories']/li/@class")
    assert classes == ["memory", "memory archived", "memory"]
    assert _texts(deploy, "//li[@class='memory archived']//strong") == ["archived"]
    assert "(1 archived)" in deploy.xpath("string(//header/p)")
    under_archive = _page(site, "archive/2026/areas/deploy/index.html")
    assert under_archive.xpath("//ul[@class='memories']/li/@class") == ["memory archived"]


def test_hostile_looking_title_and_claim_stay_text() -> None:
    _, site = _site()
    raw = site["areas/security/index.html"].decode("utf-8")
    assert "<script" not in raw and "<img" not in raw
    page = _page(site, "areas/security/index.html")
    entry = page.xpath(f"//a[@href='{HOSTILE_PATH.rsplit('/', 1)[1]}']/ancestor::li")[0]
    assert entry.xpath("string(.//h3)") == HOSTILE_TITLE
    assert entry.xpath("string(.//p[@class='claim'])") == HOSTILE_CLAIM
    assert page.xpath("//script | //img | //*[@onmouseover] | //*[@onerror]") == []


def test_a_file_named_like_a_url_scheme_stays_a_relative_path() -> None:
    _, site = _site()
    page = _page(site, "areas/security/index.html")
    hrefs = page.xpath("//ul[@class='memories']//h3/a/@href")
    assert "javascript%3Aalert%286%29.html" in hrefs
    assert not any(href.lower().startswith("javascript:") for href in hrefs)
    resolved = urljoin("http://site.invalid/areas/security/index.html",
                       "javascript%3Aalert%286%29.html")
    assert unquote(urlsplit(resolved).path) == "/" + SCHEME_PATH


def test_other_files_are_listed_and_hidden_or_generated_ones_are_not() -> None:
    extra = {
        "README.md": b"",
        "areas/deploy/broken.html": b"<p>not a memory</p>",
        ".gitattributes": b"",
        ".github/workflows/ci.yml": b"",
        ".memhtml/cache/index.html": b"",
        "areas/inbox/.gitkeep": b"",
        "resources/topics/.gitkeep": b"",
        "old/index.html": b"stale page of a directory that is gone",
    }
    _, site = _site(extra)
    assert set(site) == EXPECTED_INDEXES | {SITEMAP_PATH, STYLESHEET_PATH}
    assert _texts(_page(site, "index.html"), "//ul[@class='files']/li") == ["README.md"]
    deploy = _page(site, "areas/deploy/index.html")
    assert _texts(deploy, "//h2") == ["Memories", "Other files"]
    assert _texts(deploy, "//ul[@class='files']/li") == ["broken.html"]


def test_an_empty_store_gets_a_root_page_and_a_sitemap() -> None:
    site = render_site(IndexedView(build_indexes([]), None), [])
    assert set(site) == {"index.html", SITEMAP_PATH, STYLESHEET_PATH}
    assert "No memories yet." in site["index.html"].decode()
    locs = etree.fromstring(site[SITEMAP_PATH]).findall(f"{{{SITEMAP_NAMESPACE}}}url/"
                                                        f"{{{SITEMAP_NAMESPACE}}}loc")
    assert [loc.text for loc in locs] == ["/index.html"]


def _sitemap_entries(data: bytes) -> list[tuple[str | None, str | None]]:
    ns = {"s": SITEMAP_NAMESPACE}
    root = etree.fromstring(data)
    assert root.tag == f"{{{SITEMAP_NAMESPACE}}}urlset"
    return [(url.findtext("s:loc", namespaces=ns), url.findtext("s:lastmod", namespaces=ns))
            for url in root.findall("s:url", ns)]


def test_sitemap_lists_every_memory_and_index_page() -> None:
    files, site = _site()
    entries = _sitemap_entries(site[SITEMAP_PATH])
    updated = {"/" + r.path: r.updated_at for r in records_of(files)}
    expected: set[tuple[str, str | None]] = {("/" + p, None) for p in EXPECTED_INDEXES}
    expected |= {("/" + p.replace("javascript:alert(6)", "javascript%3Aalert%286%29"),
                  updated["/" + p]) for p in files}
    assert set(entries) == expected
    assert entries == sorted(entries, key=lambda e: e[0] or "")
    based = render_site(view_of_files(files), files, base_url="https://example.org/memory/")
    locs = [loc for loc, _ in _sitemap_entries(based[SITEMAP_PATH])]
    assert locs == ["https://example.org/memory" + loc for loc, _ in entries if loc]
    assert {p: d for p, d in based.items() if p != SITEMAP_PATH} == {
        p: d for p, d in site.items() if p != SITEMAP_PATH}


def test_same_view_same_bytes_whatever_the_insertion_or_path_order() -> None:
    files = sample_files()
    tree_paths = [*files, "README.md", "areas/deploy/broken.html"]
    first = render_site(view_of_files(files), tree_paths)
    again = render_site(view_of_files(files), tree_paths)
    reordered = render_site(
        view_of_files(files, order=sorted(files, reverse=True)),
        [*reversed(tree_paths), *tree_paths, "areas/index.html", SITEMAP_PATH],
    )
    assert first == again == reordered
    assert list(first) == list(reordered)


_DIGEST_SCRIPT = """
import hashlib
from tests.integration.publish.site_support import sample_files, view_of_files
from memhtml.store.site import render_site
files = sample_files()
# A set iterates in hash order, so records go in and paths come out in a different
# order under each seed; only the output must not move.
order = list(set(files))
site = render_site(view_of_files(files, order=order), set(files) | {"README.md"})
digest = hashlib.sha256()
for path, data in site.items():
    digest.update(path.encode() + b"\\0" + data + b"\\0")
print(digest.hexdigest())
"""


def _digest_in_process() -> str:
    site = render_site(view_of_files(sample_files()), [*sample_files(), "README.md"])
    digest = hashlib.sha256()
    for path, data in site.items():
        digest.update(path.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_bytes_do_not_depend_on_the_hash_seed(seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == _digest_in_process()


def _committed(files: dict[str, str]) -> dict[str, bytes]:
    tree = {path: text.encode() for path, text in files.items()}
    tree.update(render_site(view_of_files(files), tree))
    return tree


def test_a_fresh_site_has_no_stale_artifacts() -> None:
    files = sample_files()
    tree = _committed(files)
    tree[".memhtml/cache/index.html"] = b"state, not a page"
    assert stale_artifacts(view_of_files(files), tree) == []


def test_changed_missing_and_orphaned_artifacts_are_stale() -> None:
    files = sample_files()
    tree = _committed(files)
    view = view_of_files(files)
    tree["areas/deploy/index.html"] += b"<!-- hand edit -->"
    del tree[SITEMAP_PATH]
    del tree[STYLESHEET_PATH]
    assert stale_artifacts(view, tree) == [STYLESHEET_PATH, "areas/deploy/index.html",
                                           SITEMAP_PATH]

    tree = _committed(files)
    del files["resources/people/laura.html"]
    del tree["resources/people/laura.html"]
    assert stale_artifacts(view_of_files(files), tree) == [
        "index.html", "resources/index.html", "resources/people/index.html", SITEMAP_PATH]


def test_published_into_a_real_repository_the_head_ignores_the_pages() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        files = sample_files()
        first = commit(git, None, files)
        version = run(load_head(git, first))
        tree_paths = [entry.path for entry in run(git.list_tree(first))]
        site = render_site(version, tree_paths)
        assert site == render_site(view_of_files(files), files)
        published = commit(git, first, {p: d.decode() for p, d in site.items()})
        again = run(load_head(git, published))
        assert again.size == version.size == len(files)
        assert again.skipped_files == ()

        def committed_tree(sha: str) -> dict[str, bytes]:
            entries = run(git.list_tree(sha))
            blobs = run(git.read_blobs([e.blob_id for e in entries]))
            return {e.path: blobs[e.blob_id] for e in entries}

        assert stale_artifacts(again, committed_tree(published)) == []
        # A write touches its own directory's page and the sitemap, nothing else.
        added = commit(git, published, {
            "areas/deploy/canary-duration.html": memory_file(
                "Canary runs two minutes", "The canary stage runs for about two minutes."),
        })
        later = run(load_head(git, added))
        assert stale_artifacts(later, committed_tree(added)) == [
            "areas/deploy/index.html", SITEMAP_PATH]
        assert DEPLOY_PATH in set(later.paths())
