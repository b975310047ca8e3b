"""render_site and stale_artifacts: structure, escaping, links, refusals, memory pages,
the sitemap, the hosts' header file, and determinism."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import lxml.html
import pytest
from lxml import etree

from memhtml.format import check_memory
from memhtml.head import (
    HeadVersion,
    IndexedView,
    SkippedFile,
    build_indexes,
    is_candidate_path,
    load_head,
)
from memhtml.store.site import (
    CONTENT_SECURITY_POLICY,
    GENERATOR,
    HEADER_POLICY,
    HEADERS_PATH,
    SITEMAP_NAMESPACE,
    SITEMAP_PATH,
    STYLESHEET_PATH,
    TASKS_PATH,
    is_generated_path,
    render_site,
    stale_artifacts,
    view_path,
)
from tests.integration.publish.site_support import (
    DEPLOY_CLAIM,
    DEPLOY_PATH,
    HOSTILE_CLAIM,
    HOSTILE_ENTITY,
    HOSTILE_PATH,
    HOSTILE_TAG,
    HOSTILE_TITLE,
    REFUSED_SCRIPT,
    REFUSED_STYLESHEET,
    SCHEME_PATH,
    TAGGED_PATH,
    archived_file,
    hostile_store_files,
    memory_file,
    records_of,
    refused_files,
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
FIXED = {SITEMAP_PATH, STYLESHEET_PATH, HEADERS_PATH, TASKS_PATH}
LABEL_ROOTS = ("memhtml-site/tag/", "memhtml-site/entity/")


def _site(extra: dict[str, bytes] | None = None) -> tuple[dict[str, str], dict[str, bytes]]:
    files = sample_files()
    tree_paths = list(files) + list(extra or {})
    return files, render_site(view_of_files(files), tree_paths)


def _hostile_site() -> tuple[dict[str, str], dict[str, bytes]]:
    """The hostile store's passing files, rendered over a tree that also holds the
    refused files, a README and an image the site must not link."""
    files = hostile_store_files()
    tree = [*files, *refused_files(), "README.md", "areas/deploy/diagram.svg"]
    return files, render_site(view_of_files(files), tree)


def _page(site: dict[str, bytes], path: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(site[path])


def _texts(page: lxml.html.HtmlElement, xpath: str) -> list[str]:
    return [node.text_content() for node in page.xpath(xpath)]


def _pages(site: dict[str, bytes]) -> list[str]:
    return [path for path in site if path.endswith(".html")]


def _resolve(page: str, href: str) -> str:
    """The tree path an href on ``page`` points at."""
    resolved = urlsplit(urljoin("http://site.invalid/" + page, href))
    assert resolved.netloc == "site.invalid", (page, href)
    return unquote(resolved.path)[1:]


def _views(paths: Iterable[str]) -> set[str]:
    return {view_path(path) for path in paths}


def test_one_index_per_directory_a_page_per_memory_and_the_fixed_files() -> None:
    files, site = _site()
    assert set(site) == EXPECTED_INDEXES | _views(files) | FIXED
    assert list(site) == sorted(site)
    assert not set(site) & set(files), "the memory files are published as committed"
    assert all(is_generated_path(path) for path in site)
    assert not any(is_candidate_path(path) for path in site), "the head never reads a page"


def test_generated_paths() -> None:
    for path in (HEADERS_PATH, ".site/memhtml.css", STYLESHEET_PATH, SITEMAP_PATH,
                 view_path(DEPLOY_PATH), "areas/index.html"):
        assert is_generated_path(path), path
    for path in (DEPLOY_PATH, "memhtml-site/notes.txt", ".memhtml/cache/index.html",
                 "areas/_headers"):
        assert not is_generated_path(path), path


def test_generated_pages_are_balanced_html5_without_script_or_inline_style() -> None:
    _, site = _hostile_site()
    for path in _pages(site):
        text = site[path].decode("utf-8")
        assert text.startswith('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">')
        checked = tag_balance(text)
        assert checked.problems == [], (path, checked.problems)
        tags = [tag for tag, _ in checked.tags]
        assert {"script", "style", "iframe", "object", "embed", "img", "form", "base"
                }.isdisjoint(tags), path
        for tag, attrs in checked.tags:
            names = {name for name, _ in attrs}
            assert not any(name.startswith("on") for name in names), (path, tag, attrs)
            assert "style" not in names, (path, tag)
            for _, value in attrs:
                assert not (value or "").strip().lower().startswith(("javascript:", "data:")), (
                    path, tag, attrs)
        page = _page(site, path)
        assert page.xpath("//meta[@name='generator']/@content") == [GENERATOR]
        policy = page.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")
        assert policy == [CONTENT_SECURITY_POLICY], path
        # The policy must be in force before the first thing the page loads.
        assert tags.index("meta") < tags.index("link")
        assert len(page.xpath("//h1")) == 1
        assert len(page.xpath("//title")) == 1
        assert page.xpath("//link/@rel") == ["stylesheet"]


def test_the_policy_allows_no_script_and_loads_only_the_sites_stylesheet() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives == {"default-src": "'none'", "style-src": "'self'", "img-src": "'self'",
                          "base-uri": "'none'", "form-action": "'none'"}
    assert HEADER_POLICY == CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'"


def test_every_link_resolves_to_a_published_file() -> None:
    files, site = _site({"README.md": b"readme"})
    published = set(site) | set(files)
    for path in _pages(site):
        page = _page(site, path)
        hrefs = page.xpath("//a/@href") + page.xpath("//link/@href")
        assert hrefs, path
        for href in hrefs:
            assert urlsplit(href).scheme == "" and not href.startswith("/"), (path, href)
            assert _resolve(path, href) in published, (path, href)


def test_the_site_links_only_what_it_generated_and_what_the_check_passed() -> None:
    files, site = _hostile_site()
    linked: set[str] = set()
    for path in _pages(site):
        page = _page(site, path)
        linked.update(_resolve(path, href) for href in page.xpath("//@href"))
    assert linked <= set(site) | set(files)
    assert all(check_memory(files[p]).ok for p in linked if p in files)
    assert linked.isdisjoint(refused_files())
    assert linked.isdisjoint({"README.md", "areas/deploy/diagram.svg"})
    assert _views(files) <= linked, "every memory page is reachable"


def test_root_counts_memories_across_the_whole_tree() -> None:
    _, site = _site()
    root = _page(site, "index.html")
    assert root.xpath("string(//header/p)") == "/ · 8 memories (1 archived), 1 here, 3 directories"
    assert _page(site, "areas/index.html").xpath("string(//header/p)") == (
        "/areas/ · 5 memories, 3 directories")
    assert _page(site, "areas/deploy/index.html").xpath("string(//header/p)") == (
        "/areas/deploy/ · 2 memories")
    assert _texts(root, "//h1") == ["Memory store"]
    assert _texts(root, "//h2") == ["Directories", "Memories", "Recently updated", "Tasks"]
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
    assert [_resolve("areas/deploy/index.html", e.xpath("string(.//h3/a/@href)"))
            for e in entries] == [view_path(DEPLOY_PATH),
                                  view_path("areas/deploy/rollback-window.html")]
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
    assert "(2 archived)" in _page(site, "index.html").xpath("string(//header/p)")


def test_hostile_looking_title_and_claim_stay_text() -> None:
    _, site = _site()
    raw = site["areas/security/index.html"].decode("utf-8")
    assert "<script" not in raw and "<img" not in raw
    page = _page(site, "areas/security/index.html")
    entry = page.xpath("//ul[@class='memories']/li")[0]
    assert _resolve("areas/security/index.html", entry.xpath("string(.//h3/a/@href)")) == (
        view_path(HOSTILE_PATH))
    assert entry.xpath("string(.//h3)") == HOSTILE_TITLE
    assert entry.xpath("string(.//p[@class='claim'])") == HOSTILE_CLAIM
    assert page.xpath("//script | //img | //*[@onmouseover] | //*[@onerror]") == []

    view = site[view_path(HOSTILE_PATH)].decode("utf-8")
    assert "<script" not in view and "<img" not in view
    page = _page(site, view_path(HOSTILE_PATH))
    assert page.xpath("string(//h1)") == HOSTILE_TITLE
    assert page.xpath("string(//title)") == HOSTILE_TITLE + " · memhtml"
    assert page.xpath("string(//article//mark)") == HOSTILE_CLAIM
    assert page.xpath("//script | //img | //*[@onmouseover] | //*[@onerror]") == []


def test_a_file_named_like_a_url_scheme_stays_a_relative_path() -> None:
    _, site = _site()
    page = _page(site, "areas/security/index.html")
    hrefs = page.xpath("//ul[@class='memories']//h3/a/@href")
    encoded = "../../memhtml-site/view/areas/security/javascript%3Aalert%286%29.html/index.html"
    assert encoded in hrefs
    assert not any(href.lower().startswith("javascript:") for href in hrefs)
    assert _resolve("areas/security/index.html", encoded) == view_path(SCHEME_PATH)
    view = _page(site, view_path(SCHEME_PATH))
    source = view.xpath("//footer//a/@href")[0]
    assert source == "../../../../../areas/security/javascript%3Aalert%286%29.html"
    assert _resolve(view_path(SCHEME_PATH), source) == SCHEME_PATH


def test_other_files_are_listed_unlinked_and_hidden_or_generated_ones_are_not() -> None:
    extra = {
        "README.md": b"",
        "areas/deploy/broken.html": b"<p>not a memory</p>",
        ".gitattributes": b"",
        ".github/workflows/ci.yml": b"",
        ".memhtml/cache/index.html": b"",
        "areas/inbox/.gitkeep": b"",
        "resources/topics/.gitkeep": b"",
        "old/index.html": b"stale page of a directory that is gone",
        ".site/memhtml.css": b"the stylesheet of an earlier release",
    }
    files, site = _site(extra)
    assert set(site) == EXPECTED_INDEXES | _views(files) | FIXED
    root = _page(site, "index.html")
    assert _texts(root, "//ul[@class='files']/li") == ["README.md"]
    assert root.xpath("//ul[@class='files']//a") == []
    deploy = _page(site, "areas/deploy/index.html")
    assert _texts(deploy, "//h2") == ["Memories", "Skipped"]
    # Without a head to say why, a candidate the view lacks is still refused.
    assert _texts(deploy, "//ul[@class='skipped']/li/code") == ["broken.html"]
    assert deploy.xpath("//ul[@class='skipped']//a") == []


def _version(files: dict[str, str], refused: dict[str, str]) -> HeadVersion:
    skips = tuple(SkippedFile(path, "; ".join(check_memory(html).violations))
                  for path, html in sorted(refused.items()))
    return HeadVersion(build_indexes(records_of(files)), None, None, skips)


def test_refused_files_are_listed_as_skipped_with_the_heads_reason_and_never_linked() -> None:
    files, refused = hostile_store_files(), refused_files()
    version = _version(files, refused)
    site = render_site(version, [*files, *refused])
    labels = {path for path in site if path.startswith(LABEL_ROOTS)}
    assert len(labels) == 2 + 2 + 2, "a page per tag and per entity, and an index of each"
    assert set(site) - labels == EXPECTED_INDEXES | _views(files) | FIXED
    page = _page(site, "areas/security/index.html")
    assert "4 skipped" in page.xpath("string(//header/p)")
    assert _texts(page, "//h2") == ["Memories", "Skipped"]
    items = page.xpath("//ul[@class='skipped']/li")
    assert [(li.xpath("string(code)"), li.xpath("string(span[@class='reason'])"))
            for li in items] == [(p.rsplit("/", 1)[1], s.reason) for p, s in zip(
                sorted(refused), version.skipped_files, strict=True)]
    assert page.xpath("//ul[@class='skipped']//a") == []
    locs = [loc for loc, _ in _sitemap_entries(site[SITEMAP_PATH])]
    assert not any(loc and ("refused" in loc) for loc in locs)
    # The tagged memory's edge to a refused file is text, with the reason.
    tagged = _page(site, view_path(TAGGED_PATH))
    unlinked = tagged.xpath("//ul[contains(@class, 'outbound')]/li[.//span[@class='unlinked']]")
    assert [li.xpath("string(.//code)") for li in unlinked] == [
        "/" + REFUSED_SCRIPT, "/areas/nowhere/missing.html"]
    assert [li.xpath("string(.//span[@class='why'])") for li in unlinked] == [
        "skipped: the format check refused it", "no memory published there"]


def test_a_record_the_checker_now_refuses_is_skipped_like_a_file_the_head_skipped() -> None:
    # A version restored from a snapshot written under a looser checker can still hold
    # a record whose text the checker refuses today: the site re-checks every record.
    files = sample_files()
    stale = [dataclasses.replace(r, html=refused_files()[REFUSED_SCRIPT])
             if r.path == DEPLOY_PATH else r for r in records_of(files)]
    site = render_site(IndexedView(build_indexes(stale), None), files)
    assert view_path(DEPLOY_PATH) not in site
    deploy = _page(site, "areas/deploy/index.html")
    assert _texts(deploy, "//ul[@class='memories']//h3") == ["Rollback window is ten minutes"]
    assert _texts(deploy, "//ul[@class='skipped']/li/code") == ["canary-gate.html"]
    assert "<script>" in deploy.xpath("string(//ul[@class='skipped']//span[@class='reason'])")
    assert "7 memories" in _page(site, "index.html").xpath("string(//header/p)")
    for path in _pages(site):
        targets = {_resolve(path, href) for href in _page(site, path).xpath("//@href")}
        assert DEPLOY_PATH not in targets and view_path(DEPLOY_PATH) not in targets, path


def test_the_closed_head_has_no_room_for_a_stylesheet_link() -> None:
    # Why each memory's readable view is a generated page: a memory file cannot link
    # a stylesheet of its own without failing the check.
    violations = check_memory(refused_files()[REFUSED_STYLESHEET]).violations
    assert violations and all("stylesheet" in v for v in violations)


def _about(page: lxml.html.HtmlElement) -> dict[str, str]:
    rows = page.xpath("//dl[@class='about']/dt")
    return {dt.text_content(): dt.getnext().text_content() for dt in rows}


def test_a_memory_page_shows_the_memory_its_facts_and_its_edges() -> None:
    files, site = _hostile_site()
    path = view_path(TAGGED_PATH)
    page = _page(site, path)
    assert page.xpath("string(//h1)") == "Security runbook notes"
    assert [li.text_content() for li in page.xpath("//nav//li")] == [
        "store", "areas", "security", "runbook-notes.html"]
    about = _about(page)
    assert {k: about[k] for k in ("Type", "Status", "Created", "Updated")} == {
        "Type": "procedural", "Status": "active", "Created": "2026-08-03 10:00 UTC",
        "Updated": "2026-08-03 10:00 UTC"}
    assert page.xpath("//dl[@class='about']//time/@datetime") == ["2026-08-03T10:00:00Z"] * 2
    chips = [[li.text_content() for li in ul.xpath("li")]
             for ul in page.xpath("//dl[@class='about']//ul[@class='chips']")]
    assert chips == [[HOSTILE_ENTITY, "person:laura"], [HOSTILE_TAG, "security"]]
    assert _resolve(path, page.xpath("string(//dl[@class='about']//a[code]/@href)")) == (
        TAGGED_PATH)

    # Edges: a link to the target's page when the target is published, text otherwise.
    edges = [(li.xpath("string(span[@class='rel'])"),
              [_resolve(path, h) for h in li.xpath(".//a/@href")])
             for li in page.xpath("//ul[contains(@class, 'outbound')]/li")]
    assert edges == [("relates to", [view_path(DEPLOY_PATH)]), ("relates to", []),
                     ("supports", [view_path(SCHEME_PATH)]), ("leads to", [])]
    deploy = _page(site, view_path(DEPLOY_PATH))
    inbound = [(li.xpath("string(span[@class='rel'])"), li.xpath("string(.//a)"),
                _resolve(view_path(DEPLOY_PATH), li.xpath("string(.//a/@href)")))
               for li in deploy.xpath("//ul[contains(@class, 'inbound')]/li")]
    assert inbound == [("relates to", "Security runbook notes", path)]

    # The article keeps its structure as the site's own markup, and its words as text.
    article = page.xpath("//article")[0]
    assert article.xpath("string(.//mark)") == "The security runbook starts at the canary gate."
    first = article.xpath("p")[0]
    assert first.text_content() == (
        "The security runbook starts at the canary gate. See the canary gate and the "
        "runbook (https://example.org/runbook).")
    assert [_resolve(path, h) for h in first.xpath(".//a/@href")] == [view_path(DEPLOY_PATH)]
    assert _texts(article, "p[contains(@class, 'item')]") == [
        "First drain --vip", "Then wait", "1. one", "2. two"]
    assert _texts(article, "p[@class='term'] | p[@class='def']") == ["Owner", "Laura"]
    assert _texts(article, "pre") == [
        'echo "<script>window.__pwned=9</script>"\n  --indented']
    assert _texts(article, "p[@class='note']") == ["An aside with emphasis."]
    assert {el.tag for el in article.iter()} <= {
        "article", "p", "pre", "h3", "mark", "code", "strong", "em", "br", "a", "span"}
    assert {name for el in article.iter() for name in el.attrib} <= {"class", "href"}
    assert files[TAGGED_PATH].count("<a ") == 2


def test_an_article_without_structure_falls_back_to_its_text() -> None:
    from memhtml.store.site_article import article_blocks

    assert article_blocks("", lambda _h: None) == []
    assert article_blocks("<p>no article</p>", lambda _h: None) == []
    blocks = article_blocks("<article>loose <b>text</b><br>next<q>said</q></article>",
                            lambda _h: None)
    assert blocks == ["<p>loose <strong>text</strong><br>next\u201csaid\u201d</p>"]


def test_the_headers_file_gives_every_path_the_pages_policy() -> None:
    _, site = _site()
    lines = site[HEADERS_PATH].decode("utf-8").splitlines()
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules == [
        "/*",
        f"  Content-Security-Policy: {HEADER_POLICY}",
        "  X-Content-Type-Options: nosniff",
    ]


def test_an_empty_store_gets_a_root_page_and_a_sitemap() -> None:
    site = render_site(IndexedView(build_indexes([]), None), [])
    assert set(site) == {"index.html"} | FIXED
    assert "No memories yet." in site["index.html"].decode()
    locs = etree.fromstring(site[SITEMAP_PATH]).findall(f"{{{SITEMAP_NAMESPACE}}}url/"
                                                        f"{{{SITEMAP_NAMESPACE}}}loc")
    assert [loc.text for loc in locs] == ["/index.html", "/" + TASKS_PATH]
    assert "No open tasks." in site[TASKS_PATH].decode()


def _sitemap_entries(data: bytes) -> list[tuple[str | None, str | None]]:
    ns = {"s": SITEMAP_NAMESPACE}
    root = etree.fromstring(data)
    assert root.tag == f"{{{SITEMAP_NAMESPACE}}}urlset"
    return [(url.findtext("s:loc", namespaces=ns), url.findtext("s:lastmod", namespaces=ns))
            for url in root.findall("s:url", ns)]


def test_sitemap_lists_every_memory_its_page_and_every_index_page() -> None:
    files, site = _site()
    entries = _sitemap_entries(site[SITEMAP_PATH])
    updated = {r.path: r.updated_at for r in records_of(files)}

    def loc(path: str) -> str:
        return "/" + path.replace("javascript:alert(6)", "javascript%3Aalert%286%29")

    expected: set[tuple[str, str | None]] = {("/" + p, None)
                                             for p in EXPECTED_INDEXES | {TASKS_PATH}}
    expected |= {(loc(p), updated[p]) for p in files}
    expected |= {(loc(view_path(p)), updated[p]) for p in files}
    assert set(entries) == expected
    assert entries == sorted(entries, key=lambda e: e[0] or "")
    based = render_site(view_of_files(files), files, base_url="https://example.org/memory/")
    locs = [loc for loc, _ in _sitemap_entries(based[SITEMAP_PATH])]
    assert locs == ["https://example.org/memory" + loc for loc, _ in entries if loc]
    assert {p: d for p, d in based.items() if p != SITEMAP_PATH} == {
        p: d for p, d in site.items() if p != SITEMAP_PATH}


def test_same_view_same_bytes_whatever_the_insertion_or_path_order() -> None:
    files = hostile_store_files()
    tree_paths = [*files, *refused_files(), "README.md", "areas/deploy/broken.html"]
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
from tests.integration.publish.site_support import (
    hostile_store_files, refused_files, view_of_files)
from memhtml.store.site import render_site
files = hostile_store_files()
# A set iterates in hash order, so records go in and paths come out in a different
# order under each seed; only the output must not move.
order = list(set(files))
site = render_site(view_of_files(files, order=order),
                   set(files) | set(refused_files()) | {"README.md"})
digest = hashlib.sha256()
for path, data in site.items():
    digest.update(path.encode() + b"\\0" + data + b"\\0")
print(digest.hexdigest())
"""


def _digest_in_process() -> str:
    files = hostile_store_files()
    site = render_site(view_of_files(files), [*files, *refused_files(), "README.md"])
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
    tree[".site/memhtml.css"] = b"the stylesheet of an earlier release"
    assert stale_artifacts(view, tree) == [".site/memhtml.css", "areas/deploy/index.html",
                                           STYLESHEET_PATH, SITEMAP_PATH]

    tree = _committed(files)
    del files["resources/people/laura.html"]
    del tree["resources/people/laura.html"]
    assert stale_artifacts(view_of_files(files), tree) == [
        "index.html", view_path("resources/people/laura.html"), "resources/index.html",
        "resources/people/index.html", SITEMAP_PATH]


def test_published_into_a_real_repository_the_head_ignores_the_pages() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        files = sample_files()
        first = commit(git, None, {**files, **refused_files()})
        version = run(load_head(git, first))
        assert {s.path for s in version.skipped_files} == set(refused_files())
        tree_paths = [entry.path for entry in run(git.list_tree(first))]
        site = render_site(version, tree_paths)
        published = commit(git, first, {p: d.decode() for p, d in site.items()})
        again = run(load_head(git, published))
        assert again.size == version.size == len(files)
        assert again.skipped_files == version.skipped_files, "the head never reads a page"

        def committed_tree(sha: str) -> dict[str, bytes]:
            entries = run(git.list_tree(sha))
            blobs = run(git.read_blobs([e.blob_id for e in entries]))
            return {e.path: blobs[e.blob_id] for e in entries}

        assert stale_artifacts(again, committed_tree(published)) == []
        # A write touches its own page, its directory's page and its ancestors' (they
        # count their subtree), and the sitemap; nothing else.
        added = commit(git, published, {
            "areas/deploy/canary-duration.html": memory_file(
                "Canary runs two minutes", "The canary stage runs for about two minutes."),
        })
        later = run(load_head(git, added))
        assert stale_artifacts(later, committed_tree(added)) == [
            "areas/deploy/index.html", "areas/index.html", "index.html",
            view_path("areas/deploy/canary-duration.html"), SITEMAP_PATH]
        assert DEPLOY_PATH in set(later.paths())
