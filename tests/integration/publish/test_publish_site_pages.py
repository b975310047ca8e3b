"""The pages beyond a directory's listing and a memory's page: one per tag and per
entity with an index of each, the root's recent memories and most used labels, the
task list, and a folder's "about" memory at the top of its listing."""

from __future__ import annotations

import re
from urllib.parse import unquote, urljoin, urlsplit

import lxml.html
from lxml import etree

from memhtml.contracts.vocabulary import TaskStatus
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.head import IndexedView, build_indexes
from memhtml.store.site import (
    CONTENT_SECURITY_POLICY,
    SITEMAP_NAMESPACE,
    SITEMAP_PATH,
    TASKS_PATH,
    render_site,
    view_path,
)
from memhtml.store.site_model import ENTITY_ROOT, TAG_ROOT
from memhtml.store.site_pages import LABEL_LIMIT, RECENT_LIMIT
from tests.integration.publish.site_support import (
    archived_file,
    memory_file,
    sample_files,
    tag_balance,
    view_of_files,
)

HOSTILE_LABELS = (".", "..", "a/b", "../../etc/passwd", "<script>window.__pwned=1</script>",
                  '" onmouseover="x', "日本語", "Ünïcødé tag", "x" * 1000, "index.html",
                  "%2e%2e", "a%2Fb", "Security", "security", "javascript:alert(1)", "-", "--")


def _labelled(title: str, at: str, tags: tuple[str, ...] = (),
              entities: tuple[str, ...] = ()) -> str:
    return render_template(NewMemoryInput(
        title=title, claim=f"{title} claims it.", memory_type="semantic", at=at,
        tags=tags, entities=entities, detect=lambda _code: None))


def _page(site: dict[str, bytes], path: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(site[path])


def _resolve(page: str, href: str) -> str:
    resolved = urlsplit(urljoin("http://site.invalid/" + page, href))
    assert resolved.netloc == "site.invalid", (page, href)
    return unquote(resolved.path)[1:]


def _links(site: dict[str, bytes], page: str, xpath: str) -> list[tuple[str, str]]:
    """(text, resolved tree path) of each link ``xpath`` finds on ``page``."""
    return [(a.text_content(), _resolve(page, a.get("href")))
            for a in _page(site, page).xpath(xpath)]


def _assert_sound(site: dict[str, bytes], files: dict[str, str]) -> None:
    """Every page balanced, policed and script-free; every link to a file the site has."""
    published = set(site) | set(files)
    for path, data in site.items():
        if not path.endswith(".html"):
            continue
        text = data.decode("utf-8")
        assert tag_balance(text).problems == [], path
        page = lxml.html.document_fromstring(data)
        assert page.xpath("//meta[@http-equiv='Content-Security-Policy']/@content") == [
            CONTENT_SECURITY_POLICY], path
        assert page.xpath("//script | //*[@style] | //style | //img") == [], path
        for href in page.xpath("//@href"):
            assert urlsplit(href).scheme == "" and not href.startswith("/"), (path, href)
            assert _resolve(path, href) in published, (path, href)


def _label_store() -> dict[str, str]:
    files = sample_files()
    files["areas/labels/every.html"] = _labelled(
        "Every hostile label", "2026-08-05T00:00:00Z", tags=HOSTILE_LABELS,
        entities=HOSTILE_LABELS)
    files["areas/labels/some.html"] = _labelled(
        "Some labels", "2026-08-04T00:00:00Z", tags=("security", ".."), entities=("..",))
    files["archive/2026/areas/labels/old.html"] = archived_file(_labelled(
        "An archived labelled memory", "2026-08-01T00:00:00Z", tags=("security",)))
    return files


def _label_pages(site: dict[str, bytes], root: str) -> dict[str, str]:
    """The h1 of each label page under ``root`` -> its path (the index left out)."""
    pages = {}
    for path in site:
        if path.startswith(root + "/") and path != f"{root}/index.html":
            pages[_page(site, path).xpath("string(//h1)")] = path
    return pages


def test_every_tag_and_entity_has_its_own_page_with_a_safe_single_segment() -> None:
    files = _label_store()
    site = render_site(view_of_files(files), files)
    for root in (TAG_ROOT, ENTITY_ROOT):
        pages = _label_pages(site, root)
        assert set(pages) == set(HOSTILE_LABELS)
        assert len(set(pages.values())) == len(pages), "no two labels share a page"
        for path in pages.values():
            segments = path.split("/")
            assert len(segments) == 4 and segments[:2] == root.split("/"), path
            assert segments[3] == "index.html"
            assert re.fullmatch(r"[a-z0-9-]{16,60}", segments[2]), path
            assert segments[2] not in (".", "..")
    _assert_sound(site, files)


def test_a_label_page_lists_the_memories_carrying_it_by_path() -> None:
    files = _label_store()
    site = render_site(view_of_files(files), files)
    path = _label_pages(site, TAG_ROOT)["security"]
    page = _page(site, path)
    assert page.xpath("string(//header/p)") == "Tag · 3 memories (1 archived)"
    items = page.xpath("//ul[@class='memories']/li")
    assert [_resolve(path, li.xpath("string(.//h3/a/@href)")) for li in items] == [
        view_path(p) for p in ("archive/2026/areas/labels/old.html", "areas/labels/every.html",
                               "areas/labels/some.html")]
    assert [li.xpath("string(.//p[@class='claim'])") for li in items] == [
        "An archived labelled memory claims it.", "Every hostile label claims it.",
        "Some labels claims it."]
    assert [li.get("class") for li in items] == ["memory archived", "memory", "memory"]
    assert items[1].xpath("string(.//code)") == "areas/labels/every.html"
    # "Security" is another tag, on another page.
    other = _label_pages(site, TAG_ROOT)["Security"]
    assert other != path and len(_page(site, other).xpath("//ul[@class='memories']/li")) == 1
    crumbs = _links(site, path, "//nav//a")
    assert crumbs == [("store", "index.html"), ("tags", f"{TAG_ROOT}/index.html")]
    hostile = _label_pages(site, ENTITY_ROOT)["<script>window.__pwned=1</script>"]
    raw = site[hostile].decode("utf-8")
    assert "<script>" not in raw and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in raw


def test_a_memory_pages_chips_link_its_tags_and_entities() -> None:
    files = _label_store()
    site = render_site(view_of_files(files), files)
    page = view_path("areas/labels/some.html")
    tags, entities = _label_pages(site, TAG_ROOT), _label_pages(site, ENTITY_ROOT)
    chips = _links(site, page, "//dl[@class='about']//ul[@class='chips']//a")
    assert chips == [("..", entities[".."]), ("security", tags["security"]),
                     ("..", tags[".."])]
    # Aliases stay text.
    untagged = view_path("areas/deploy/canary-gate.html")
    assert _page(site, untagged).xpath("//ul[@class='chips']//a") == []


def test_the_sitemap_lists_the_label_pages_their_indexes_and_the_task_list() -> None:
    files = _label_store()
    site = render_site(view_of_files(files), files)
    ns = {"s": SITEMAP_NAMESPACE}
    locs = {unquote(loc.text or "")[1:] for loc in etree.fromstring(
        site[SITEMAP_PATH]).findall("s:url/s:loc", ns)}
    generated = {path for path in site if path.endswith("index.html")}
    assert generated <= locs
    assert {f"{TAG_ROOT}/index.html", f"{ENTITY_ROOT}/index.html", TASKS_PATH} <= locs
    assert len([p for p in locs if p.startswith(TAG_ROOT + "/")]) == len(HOSTILE_LABELS) + 1


def test_the_label_indexes_list_every_label_with_its_count() -> None:
    files = _label_store()
    site = render_site(view_of_files(files), files)
    index = f"{TAG_ROOT}/index.html"
    page = _page(site, index)
    entries = [(li.xpath("string(a)"), li.xpath("string(span[@class='count'])"))
               for li in page.xpath("//ul[contains(@class, 'labels')]/li")]
    assert [value for value, _ in entries] == sorted(HOSTILE_LABELS)
    assert dict(entries)["security"] == "3" and dict(entries)[".."] == "2"
    assert dict(entries)["Security"] == "1"
    assert page.xpath("string(//h1)") == "Tags"


def test_same_labels_same_pages_whatever_the_insertion_order() -> None:
    files = _label_store()
    first = render_site(view_of_files(files), files)
    again = render_site(view_of_files(files, order=sorted(files, reverse=True)),
                        list(reversed(list(files))))
    assert first == again


def _many_labels_store() -> dict[str, str]:
    """60 tags, tag-N on N memories for N up to 12, and 12 memories a day apart."""
    files: dict[str, str] = {}
    for i in range(30):
        tags = tuple(f"tag-{n:02d}" for n in range(1, 13) if i < n)
        tags += (f"solo-{i:02d}a", f"solo-{i:02d}b") if i < 24 else ()
        files[f"areas/many/m{i:02d}.html"] = _labelled(
            f"Memory {i:02d}", f"2026-08-{1 + i % 28:02d}T00:00:00Z", tags=tags,
            entities=(f"person:p{i % 3}",))
    return files


def test_the_root_lists_the_recent_memories_newest_first() -> None:
    files = _many_labels_store()
    files["archive/2026/areas/many/gone.html"] = archived_file(
        _labelled("Archived, and newest", "2026-09-30T00:00:00Z"))
    site = render_site(view_of_files(files), files)
    root = _page(site, "index.html")
    items = root.xpath("//ol[@class='recent']/li")
    assert len(items) == RECENT_LIMIT == 20
    # The archived memory is the newest, and left out: the list is of active memories.
    assert [li.xpath("string(a)") for li in items] == [
        f"Memory {i:02d}" for i in range(27, 7, -1)]
    assert [li.xpath("string(time/@datetime)") for li in items][:2] == [
        "2026-08-28T00:00:00Z", "2026-08-27T00:00:00Z"]
    assert _resolve("index.html", items[0].xpath("string(a/@href)")) == (
        view_path("areas/many/m27.html"))


def test_recent_memories_with_equal_stamps_go_in_path_order() -> None:
    files = sample_files()
    site = render_site(view_of_files(files), files)
    items = _page(site, "index.html").xpath("//ol[@class='recent']/li")
    assert [li.xpath("string(code)") for li in items] == [
        "areas/deploy/rollback-window.html", "areas/deploy/canary-gate.html",
        "areas/inbox/review-alerts.html", "areas/security/hostile-looking.html",
        "areas/security/javascript:alert(6).html", "notes.html", "resources/people/laura.html"]


def test_the_root_lists_the_most_used_labels_with_counts_and_how_many_more() -> None:
    files = _many_labels_store()
    site = render_site(view_of_files(files), files)
    root = _page(site, "index.html")
    assert [h.text_content() for h in root.xpath("//h2")] == [
        "Directories", "Recently updated", "Tasks", "Tags", "Entities"]
    tags = root.xpath("//section[@aria-labelledby='tags']//li")
    assert len(tags) == LABEL_LIMIT == 50
    shown = [(li.xpath("string(a)"), li.xpath("string(span)")) for li in tags]
    # The most used first, ties in code point order: "solo-..." before "tag-01".
    assert shown[:11] == [(f"tag-{n:02d}", str(n)) for n in range(12, 1, -1)]
    assert shown[11:] == [(f"solo-{i // 2:02d}{'ab'[i % 2]}", "1") for i in range(39)]
    more = root.xpath("string(//section[@aria-labelledby='tags']/p)")
    assert more == f"The {LABEL_LIMIT} most used; 10 more: all 60 tags."
    assert _links(site, "index.html", "//section[@aria-labelledby='tags']/p/a") == [
        ("all 60 tags", f"{TAG_ROOT}/index.html")]
    entities = root.xpath("//section[@aria-labelledby='entities']//li")
    assert [(li.xpath("string(a)"), li.xpath("string(span)")) for li in entities] == [
        ("person:p0", "10"), ("person:p1", "10"), ("person:p2", "10")]
    assert root.xpath("string(//section[@aria-labelledby='entities']/p)") == (
        "Most used first: all 3 entities.")
    _assert_sound(site, files)


def _task(title: str, status: TaskStatus | None, due: str | None) -> str:
    return memory_file(title, f"{title}.", memory_type="task", task_status=status, due_at=due,
                       at="2026-08-01T00:00:00Z")


def _task_store() -> dict[str, str]:
    return {
        "areas/tasks/b-late.html": _task("Late", "todo", "2026-08-01"),
        "areas/tasks/a-late-instant.html": _task("Late instant", "doing",
                                                 "2026-08-09T23:00:00Z"),
        "areas/tasks/today.html": _task("Due the newest day", "blocked", "2026-08-10"),
        "areas/tasks/later.html": _task("Later", "todo", "2026-09-01"),
        "areas/tasks/a-undated.html": _task("Undated a", "todo", None),
        "areas/tasks/b-undated.html": _task("Undated b", None, None),
        "areas/tasks/same-day-z.html": _task("Same day z", "todo", "2026-09-01"),
        "areas/tasks/done.html": _task("Done", "done", "2026-07-01"),
        "archive/2026/areas/tasks/dropped.html": archived_file(
            _task("Dropped", "todo", "2026-07-02")),
        # Not a task: its stamp is the store's newest, which "overdue" is judged by.
        "areas/notes/newest.html": memory_file("Newest", "Newest.", at="2026-08-10T12:00:00Z"),
    }


def test_the_tasks_page_sorts_by_due_date_with_overdue_marked() -> None:
    files = _task_store()
    site = render_site(view_of_files(files), files)
    page = _page(site, TASKS_PATH)
    open_ = page.xpath("//section[@aria-labelledby='open']//li")
    assert [li.xpath("string(h3)") for li in open_] == [
        "Late", "Late instant", "Due the newest day", "Later", "Same day z", "Undated a",
        "Undated b"]
    assert [li.get("class") for li in open_] == [
        "memory task overdue", "memory task overdue", "memory task", "memory task",
        "memory task", "memory task", "memory task"]
    facts = [li.xpath("string(p[@class='facts'])") for li in open_]
    assert facts[0] == "overdue · todo · due 2026-08-01 · areas/tasks/b-late.html"
    assert facts[2] == "blocked · due 2026-08-10 · areas/tasks/today.html"
    assert facts[6] == "todo · no due date · areas/tasks/b-undated.html"
    assert _resolve(TASKS_PATH, open_[0].xpath("string(h3/a/@href)")) == (
        view_path("areas/tasks/b-late.html"))
    explain = page.xpath("string(//main/p[@class='explain'])")
    assert explain == ("Overdue as of 2026-08-10, the newest memory's date (the site reads "
                       "no clock).")
    assert page.xpath("string(//main/p[@class='explain']/time/@datetime)") == (
        "2026-08-10T12:00:00Z")
    closed = page.xpath("//section[@aria-labelledby='closed']//li")
    assert [li.xpath("string(h3)") for li in closed] == ["Dropped", "Done"]
    assert "overdue" not in " ".join(li.xpath("string(.)") for li in closed)
    assert page.xpath("string(//header/p)") == "7 open tasks (2 overdue), 2 done or archived"
    root = _page(site, "index.html")
    assert root.xpath("string(//section[@aria-labelledby='tasks']/p)") == (
        "7 open tasks (2 overdue), 2 done or archived: the task list, by due date.")
    assert _links(site, "index.html", "//section[@aria-labelledby='tasks']//a") == [
        ("the task list", TASKS_PATH)]
    _assert_sound(site, files)


def test_the_task_list_moves_only_with_the_tasks_or_the_newest_stamp() -> None:
    files = _task_store()
    before = render_site(view_of_files(files), files)[TASKS_PATH]
    files["areas/notes/older.html"] = memory_file("Older", "Older.", at="2026-08-02T00:00:00Z")
    assert render_site(view_of_files(files), files)[TASKS_PATH] == before
    files["areas/notes/newer.html"] = memory_file("Newer", "Newer.", at="2026-09-05T00:00:00Z")
    after = _page(render_site(view_of_files(files), files), TASKS_PATH)
    assert [li.xpath("string(h3)") for li in after.xpath("//li[contains(@class, 'overdue')]")
            ] == ["Late", "Late instant", "Due the newest day", "Later", "Same day z"]


def test_an_empty_task_list_says_so() -> None:
    site = render_site(IndexedView(build_indexes([]), None), [])
    page = _page(site, TASKS_PATH)
    assert page.xpath("string(//section[@aria-labelledby='open']/p)") == "No open tasks."
    assert page.xpath("//p[@class='explain']/time") == []


def test_a_folders_imported_index_is_linked_at_the_top_of_its_listing() -> None:
    files = sample_files()
    note = memory_file("How the deploy notes are laid out", "The deploy notes, by stage.")
    files["areas/deploy/readme.html"] = set_meta(note, "memhtml-source", "deploy/README.md")
    files["areas/deploy/stages/index-memory.html"] = set_meta(
        memory_file("Stages", "One note per stage."), "memhtml-source", "deploy/stages/index.md")
    # A note named like a folder's index in another folder is that folder's, not this one's;
    # a memory that only looks like a readme, with no source, is no folder note.
    files["areas/inbox/readme.html"] = memory_file("Readme", "Not imported.")
    files["archive/2026/areas/deploy/old-readme.html"] = archived_file(set_meta(
        memory_file("Old readme", "Archived."), "memhtml-source", "deploy/README.md"))
    site = render_site(view_of_files(files), files)
    assert _links(site, "areas/deploy/index.html", "//main/p[@class='folder-note']/a") == [
        ("How the deploy notes are laid out", view_path("areas/deploy/readme.html"))]
    deploy = _page(site, "areas/deploy/index.html")
    assert deploy.xpath("string(//main/*[1])") == (
        "About this folder: How the deploy notes are laid out")
    assert _links(site, "areas/deploy/stages/index.html", "//p[@class='folder-note']/a") == [
        ("Stages", view_path("areas/deploy/stages/index-memory.html"))]
    for listing in ("index.html", "areas/index.html", "areas/inbox/index.html",
                    "archive/2026/areas/deploy/index.html"):
        assert _page(site, listing).xpath("//p[@class='folder-note']") == [], listing
    # The memory is still listed with the others.
    assert "How the deploy notes are laid out" in [
        h.text_content() for h in deploy.xpath("//ul[@class='memories']//h3")]
    _assert_sound(site, files)
