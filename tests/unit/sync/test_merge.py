"""One test per rule of ``merge_trees``, over small readable stores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Never

import pytest

from memhtml.contracts.record import Link
from memhtml.format import (
    NewMemoryInput,
    add_link,
    add_meta,
    check_memory,
    content_hash,
    parse_memory,
    read_links,
    read_meta,
    remove_meta,
    render_template,
    set_meta,
)
from memhtml.sync import (
    BOTH_KEPT,
    EDIT_KEPT,
    FILE_CONFLICT,
    GENERATED,
    LINES_MERGED,
    METADATA_UNION,
    PATH_COLLISION,
    RIVAL_CORRECTIONS,
    TreeMerge,
    merge_trees,
)
from memhtml.sync.lines import merge_lines

T0 = "2026-01-05T09:00:00Z"
T1 = "2026-02-01T10:00:00Z"
T2 = "2026-03-01T10:00:00Z"


def memory(claim: str, *, at: str = T0, tags: tuple[str, ...] = (),
           links: tuple[Link, ...] = (), title: str = "Deploys") -> str:
    return render_template(NewMemoryInput(title=title, claim=claim, memory_type="semantic",
                                          at=at, tags=tags, links=links))


def blob(text: str) -> bytes:
    return text.encode("utf-8")


def text_of(merge: TreeMerge, path: str) -> str:
    data = merge.merged[path]
    assert data is not None
    return data.decode("utf-8")



def kinds(merge: TreeMerge) -> list[tuple[str, str]]:
    return [(event.kind, event.path) for event in merge.events]


def both_ways(base: dict[str, bytes], ours: dict[str, bytes], theirs: dict[str, bytes]
              ) -> TreeMerge:
    """The merge, checked to be the same with the sides swapped."""
    merge = merge_trees(base, ours, theirs)
    assert merge_trees(base, theirs, ours) == merge
    assert merge.applied_to(ours) == merge.applied_to(theirs)
    return merge


DEPLOY = "areas/ops/deploy.html"
BASE_DEPLOY = memory("Deploys run from the main branch.")


def test_a_change_on_one_side_is_taken() -> None:
    edited = blob(set_meta(BASE_DEPLOY, "memhtml-confidence", "0.90"))
    base = {DEPLOY: blob(BASE_DEPLOY), "areas/ops/old.html": blob(memory("Old."))}
    ours = {DEPLOY: edited, "areas/ops/old.html": blob(memory("Old."))}
    theirs = {DEPLOY: blob(BASE_DEPLOY)}
    merge = both_ways(base, ours, theirs)
    assert merge.merged == {DEPLOY: edited, "areas/ops/old.html": None}
    assert merge.events == ()


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    edited = blob(set_meta(BASE_DEPLOY, "memhtml-importance", "7"))
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, {DEPLOY: edited}, {DEPLOY: edited})
    assert merge.merged == {DEPLOY: edited}
    assert merge.events == ()


def test_a_generated_file_is_picked_and_left_to_publish() -> None:
    base = {"areas/index.html": b"<p>old</p>", "sitemap.xml": b"<urlset/>"}
    ours = {"areas/index.html": b"<p>ours</p>", "sitemap.xml": b"<urlset>a</urlset>"}
    theirs = {"areas/index.html": b"<p>theirs</p>", "sitemap.xml": b"<urlset>b</urlset>"}
    merge = both_ways(base, ours, theirs)
    assert merge.merged == {"areas/index.html": b"<p>theirs</p>",
                            "sitemap.xml": b"<urlset>b</urlset>"}
    assert kinds(merge) == [(GENERATED, "areas/index.html"), (GENERATED, "sitemap.xml")]
    assert "publish" in merge.events[0].detail


def test_head_edits_to_one_article_are_joined() -> None:
    base_text = add_meta(BASE_DEPLOY, "memhtml-tag", "ops")
    base_text = add_link(base_text, "relates_to", "/areas/ops/ci.html")
    # One side tags and drops the tag "ops"; the other links, and decides confidence later.
    ours_text = add_meta(set_meta(base_text, "memhtml-updated", T1), "memhtml-tag", "deploy")
    ours_text = set_meta(ours_text, "memhtml-confidence", "0.60")
    theirs_text = add_link(base_text, "supports", "/areas/ops/release.html")
    theirs_text = set_meta(set_meta(theirs_text, "memhtml-updated", T2),
                           "memhtml-confidence", "0.80")
    theirs_text = set_meta(theirs_text, "memhtml-importance", "4")
    theirs_text = remove_meta(theirs_text, "memhtml-tag", "ops")
    merge = both_ways({DEPLOY: blob(base_text)}, {DEPLOY: blob(ours_text)},
                      {DEPLOY: blob(theirs_text)})
    assert kinds(merge) == [(METADATA_UNION, DEPLOY)]
    joined = text_of(merge, DEPLOY)
    assert check_memory(joined).violations == ()
    assert content_hash(joined) == content_hash(BASE_DEPLOY)
    doc = parse_memory(joined).unwrap()
    assert doc.tags == ("deploy",)                        # "ops" was dropped by one side
    assert set(doc.links) == {Link("relates_to", "/areas/ops/ci.html"),
                              Link("supports", "/areas/ops/release.html")}
    assert doc.metas.updated_at == T2                     # the later version's stamp
    assert doc.metas.confidence == 0.8                    # both set it: the later wins
    assert doc.metas.importance == 4                      # only one side set it


def test_a_title_changed_on_the_earlier_side_is_kept() -> None:
    base_text = add_meta(BASE_DEPLOY, "memhtml-tag", "ops")
    renamed = BASE_DEPLOY.replace("<title>Deploys</title>", "<title>Deploy source</title>")
    ours_text = set_meta(add_meta(renamed, "memhtml-tag", "ops"), "memhtml-updated", T1)
    ours_text = add_meta(ours_text, "memhtml-tag", "mine")
    theirs_text = set_meta(add_meta(base_text, "memhtml-tag", "yours"), "memhtml-updated", T2)
    merge = both_ways({DEPLOY: blob(base_text)}, {DEPLOY: blob(ours_text)},
                      {DEPLOY: blob(theirs_text)})
    doc = parse_memory(text_of(merge, DEPLOY)).unwrap()
    assert doc.title == "Deploy source"
    assert set(doc.tags) == {"ops", "mine", "yours"}
    assert doc.metas.updated_at == T2
    assert kinds(merge) == [(METADATA_UNION, DEPLOY)]


def test_a_tie_on_updated_is_broken_by_the_bytes() -> None:
    ours = set_meta(BASE_DEPLOY, "memhtml-confidence", "0.30")
    theirs = set_meta(BASE_DEPLOY, "memhtml-confidence", "0.70")
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, {DEPLOY: blob(ours)},
                      {DEPLOY: blob(theirs)})
    expected = max(blob(ours), blob(theirs))
    assert read_meta(text_of(merge, DEPLOY), "memhtml-confidence") == read_meta(
        expected.decode(), "memhtml-confidence")


def test_two_articles_are_both_kept_linked_and_reviewed() -> None:
    ours = memory("Deploys run from the release branch.", at=T1)
    theirs = memory("Deploys run from tags only.", at=T2)
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, {DEPLOY: blob(ours)},
                      {DEPLOY: blob(theirs)})
    second, task = "areas/ops/deploy-2.html", "areas/tasks/sync-deploy.html"
    assert set(merge.merged) == {DEPLOY, second, task}
    assert content_hash(text_of(merge, DEPLOY)) == content_hash(theirs)   # the later one
    assert content_hash(text_of(merge, second)) == content_hash(ours)
    assert Link("relates_to", f"/{second}") in read_links(text_of(merge, DEPLOY))
    assert Link("relates_to", f"/{DEPLOY}") in read_links(text_of(merge, second))
    review = parse_memory(text_of(merge, task)).unwrap()
    assert review.metas.memory_type == "task"
    assert review.metas.task_status == "todo"
    assert review.metas.updated_at == T2
    assert DEPLOY in review.article.body_text and second in review.article.body_text
    body = review.article.body_text
    assert f"At {DEPLOY}: \u201cDeploys run from tags only.\u201d" in body
    assert f"At {second}: \u201cDeploys run from the release branch.\u201d" in body
    assert f"updated {T2}" in body and f"updated {T1}" in body
    assert [(e.kind, e.path, e.other) for e in merge.events] == [(BOTH_KEPT, DEPLOY, second)]
    for path in merge.merged:
        assert check_memory(text_of(merge, path)).violations == ()
    assert all(read_meta(text_of(merge, p), "memhtml-superseded-by") is None
               for p in merge.merged)


def test_a_second_copy_takes_a_name_free_everywhere() -> None:
    taken = {"areas/ops/deploy-2.html": blob(memory("Other.", title="Other")),
             "areas/tasks/sync-deploy.html": blob(memory("A task's place.", title="T"))}
    ours = memory("Deploys run from the release branch.", at=T1)
    theirs = memory("Deploys run from tags only.", at=T2)
    base = {DEPLOY: blob(BASE_DEPLOY), **taken}
    merge = both_ways(base, {DEPLOY: blob(ours), **taken},
                      {DEPLOY: blob(theirs), "areas/ops/deploy-3.html": blob(memory("3"))})
    assert "areas/ops/deploy-4.html" in merge.merged
    assert "areas/tasks/sync-deploy-2.html" in merge.merged


def test_an_edit_survives_a_delete() -> None:
    edited = blob(add_meta(BASE_DEPLOY, "memhtml-tag", "kept"))
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, {DEPLOY: edited}, {})
    assert merge.merged == {DEPLOY: edited}
    assert kinds(merge) == [(EDIT_KEPT, DEPLOY)]


ARCHIVED = "archive/2026/areas/ops/deploy.html"
NOTE = "areas/ops/note.html"


def archived(text: str) -> str:
    text = set_meta(text, "memhtml-status", "archived")
    text = set_meta(text, "memhtml-archived", T2)
    return set_meta(text, "memhtml-updated", T2)


def test_a_head_edit_follows_an_archive_move() -> None:
    note = memory("See the deploy note.", title="Note",
                  links=(Link("relates_to", f"/{DEPLOY}"),))
    base = {DEPLOY: blob(BASE_DEPLOY), NOTE: blob(note)}
    ours = {DEPLOY: blob(set_meta(add_meta(BASE_DEPLOY, "memhtml-tag", "ci"),
                                  "memhtml-updated", T1))}
    ours[NOTE] = blob(add_link(note, "supports", f"/{DEPLOY}"))
    relinked = add_link(note.replace(f'href="/{DEPLOY}"', f'href="/{ARCHIVED}"'),
                        "relates_to", f"/{ARCHIVED}")
    theirs = {ARCHIVED: blob(archived(BASE_DEPLOY)), NOTE: blob(relinked)}
    merge = both_ways(base, ours, theirs)
    assert merge.merged[DEPLOY] is None
    moved = parse_memory(text_of(merge, ARCHIVED)).unwrap()
    assert moved.tags == ("ci",)
    assert moved.metas.status == "archived" and moved.metas.archived_at == T2
    assert (EDIT_KEPT, ARCHIVED) in kinds(merge)
    # The link the editing side added to the old path now names where it went.
    assert {link.href for link in read_links(text_of(merge, NOTE))} == {f"/{ARCHIVED}"}


def test_an_article_edit_stays_live_beside_its_archived_copy() -> None:
    rewritten = memory("Deploys run from the main branch, after review.", at=T1)
    base = {DEPLOY: blob(BASE_DEPLOY)}
    merge = both_ways(base, {DEPLOY: blob(rewritten)},
                      {ARCHIVED: blob(archived(BASE_DEPLOY))})
    assert merge.merged[DEPLOY] == blob(rewritten)
    assert merge.merged[ARCHIVED] == blob(archived(BASE_DEPLOY))
    assert [(e.kind, e.path, e.other) for e in merge.events] == [(EDIT_KEPT, DEPLOY, ARCHIVED)]


def test_unreadable_memory_files_are_both_kept() -> None:
    ours, theirs = b"<p>not a memory</p>", b"\xff\xfe broken"
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, {DEPLOY: ours}, {DEPLOY: theirs})
    assert {merge.merged[DEPLOY], merge.merged["areas/ops/deploy-2.html"]} == {ours, theirs}
    assert kinds(merge) == [(BOTH_KEPT, DEPLOY)]
    assert check_memory(text_of(merge, "areas/tasks/sync-deploy.html")).violations == ()


def test_two_new_files_at_one_path_are_renamed_with_their_links() -> None:
    new = "areas/inbox/idea.html"
    first = memory("Cache the build.", at=T1, title="Idea")
    second = memory("Shard the tests.", at=T2, title="Idea")
    pointer = memory("Follow the idea.", at=T1, title="Pointer",
                     links=(Link("relates_to", f"/{new}"),))
    ours = {new: blob(first), "areas/inbox/pointer.html": blob(pointer)}
    theirs = {new: blob(second)}
    merge = both_ways({}, ours, theirs)
    renamed = "areas/inbox/idea-2.html"
    assert merge.merged[new] == blob(second)                       # created later
    assert merge.merged[renamed] == blob(first)
    assert read_links(text_of(merge, "areas/inbox/pointer.html")) == (
        Link("relates_to", f"/{renamed}"),)
    assert [(e.kind, e.path, e.other) for e in merge.events] == [
        (PATH_COLLISION, new, renamed)]


def test_one_memory_added_twice_is_joined() -> None:
    new = "areas/inbox/idea.html"
    one = memory("Cache the build.", at=T1, tags=("ci",), title="Idea")
    two = memory("Cache the build.", at=T2, tags=("speed",), title="Idea")
    merge = both_ways({}, {new: blob(one)}, {new: blob(two)})
    doc = parse_memory(text_of(merge, new)).unwrap()
    assert set(doc.tags) == {"ci", "speed"}
    assert kinds(merge) == [(METADATA_UNION, new)]


CONFIG = ".memhtml/config.toml"


def test_separate_lines_of_a_plain_file_both_apply() -> None:
    base = b"[search]\nlimit = 10\n\n[sleep]\nbudget = 5\n"
    ours = b"[search]\nlimit = 20\n\n[sleep]\nbudget = 5\n"
    theirs = b"[search]\nlimit = 10\n\n[sleep]\nbudget = 9\n"
    merge = both_ways({CONFIG: base}, {CONFIG: ours}, {CONFIG: theirs})
    assert merge.merged[CONFIG] == b"[search]\nlimit = 20\n\n[sleep]\nbudget = 9\n"
    assert kinds(merge) == [(LINES_MERGED, CONFIG)]


def test_two_insertions_at_one_line_are_not_ordered_by_side() -> None:
    base = b"a\nb\n"
    assert merge_lines(base, b"a\nx\nb\n", b"a\ny\nb\n") is None
    assert merge_lines(base, b"a\nx\nb\n", b"a\nx\nb\nc\n") == b"a\nx\nb\nc\n"


@pytest.mark.parametrize(("ours", "theirs"), [
    (b"limit = 20\n", b"limit = 30\n"),
    (b"limit = 20\n", None),
])
def test_overlapping_plain_changes_keep_one_whole_version(ours: bytes,
                                                          theirs: bytes | None) -> None:
    one = {CONFIG: ours}
    two = {} if theirs is None else {CONFIG: theirs}
    merge = both_ways({CONFIG: b"limit = 10\n"}, one, two)
    kept = merge.merged[CONFIG]
    assert kept == max(b for b in (ours, theirs) if b is not None)
    assert b"<<<<" not in (kept or b"")
    assert kinds(merge) == [(FILE_CONFLICT, CONFIG)]


class Unlisted(dict[str, bytes]):
    """A tree that may be looked up but never listed, as a lazy git tree is."""

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the merge listed a whole tree")

    def keys(self) -> Never:
        raise AssertionError("the merge listed a whole tree")


def test_a_given_change_list_is_all_the_merge_reads() -> None:
    filler = {f"areas/bulk/m{i}.html": blob(memory(f"Fact {i}.")) for i in range(30)}
    ours = set_meta(BASE_DEPLOY, "memhtml-confidence", "0.40")
    theirs = set_meta(BASE_DEPLOY, "memhtml-importance", "3")
    merge = merge_trees(Unlisted({DEPLOY: blob(BASE_DEPLOY), **filler}),
                        Unlisted({DEPLOY: blob(ours), **filler}),
                        Unlisted({DEPLOY: blob(theirs), **filler}), changed=[DEPLOY])
    assert kinds(merge) == [(METADATA_UNION, DEPLOY)]


def test_one_memory_renamed_apart_on_two_clones_is_kept_once() -> None:
    """Merges on two clones settled a collision against different neighbours: one
    memory reached this merge at x-2 on one side and x-3 on the other. Passed on as
    two files it would be a duplicate for good; it is kept once, heads joined."""
    shared = memory("Fact thirty.", title="Fact", at=T0)
    other = memory("Another fact.", title="Fact", at=T1)
    base = {"areas/inbox/x.html": blob(shared)}
    ours = {"areas/inbox/x.html": blob(other),
            "areas/inbox/x-2.html": blob(add_meta(shared, "memhtml-tag", "ours"))}
    theirs = {"areas/inbox/x.html": blob(other),
              "areas/inbox/x-3.html": blob(add_meta(shared, "memhtml-tag", "theirs"))}
    merge = both_ways(base, ours, theirs)
    tree = merge.applied_to(ours)
    assert sorted(tree) == ["areas/inbox/x-2.html", "areas/inbox/x.html"]
    kept = text_of(merge, "areas/inbox/x-2.html")
    assert 'content="ours"' in kept and 'content="theirs"' in kept
    assert ("metadata-union", "areas/inbox/x-2.html") in kinds(merge)


def test_a_memory_arriving_at_a_changed_path_and_a_new_one_is_kept_once() -> None:
    """The crowd's case: one side moved the memory onto a path it changed, the other
    onto a path it added."""
    moved = memory("Clone three's fact.", title="Fact", at=T0)
    second = memory("Clone two's fact.", title="Fact", at=T1)
    base = {"a/x.html": blob(moved), "a/x-2.html": blob(second)}
    ours = {"a/x.html": blob(memory("Clone zero's.", title="Fact", at=T2)),
            "a/x-2.html": blob(second), "a/x-3.html": blob(moved)}
    theirs = {"a/x.html": blob(memory("Clone one's.", title="Fact", at=T2)),
              "a/x-2.html": blob(moved), "a/x-2-2.html": blob(second)}
    tree = both_ways(base, ours, theirs).applied_to(ours)
    bodies = [data for data in tree.values() if b"Clone three" in data]
    assert len(bodies) == 1, sorted(tree)
    assert sum(b"Clone two" in data for data in tree.values()) == 1, sorted(tree)


def test_a_head_edit_follows_the_memory_the_other_side_moved_aside() -> None:
    """One side labelled X at P; the other holds another article at P and X at P-2
    (an earlier merge kept two versions). X is not copied a third time: the label
    joins X where it is."""
    x = memory("Deploys happen on Tuesdays.", at=T0)
    y = memory("Deploys happen on Fridays.", at=T1)
    base = {"p.html": blob(x)}
    ours = {"p.html": blob(add_meta(x, "memhtml-entity", "team:ops"))}
    theirs = {"p.html": blob(y), "p-2.html": blob(x)}
    merge = both_ways(base, ours, theirs)
    tree = merge.applied_to(ours)
    assert sorted(tree) == ["p-2.html", "p.html"]
    assert b"Fridays" in tree["p.html"]
    assert b"team:ops" in tree["p-2.html"] and b"Tuesdays" in tree["p-2.html"]
    assert ("edit-kept", "p-2.html") in kinds(merge)


def _corrected(claim: str, at: str, new_path: str) -> dict[str, bytes]:
    """One clone's tree after ``correct`` of DEPLOY: the correction at ``new_path``
    stating ``supersedes`` of the archived original, which names it back."""
    archived = "archive/2026/" + DEPLOY
    old = BASE_DEPLOY
    for name, value in (("memhtml-status", "archived"), ("memhtml-archived", at),
                        ("memhtml-superseded-by", f"/{new_path}")):
        old = set_meta(old, name, value)
    return {archived: blob(old),
            new_path: blob(memory(claim, at=at, links=(Link("supersedes", f"/{archived}"),)))}


@pytest.mark.parametrize("paths", [("areas/ops/deploy-2.html", "areas/ops/deploy-2.html"),
                                   ("areas/ops/deploy-2.html", "areas/ops/deploy-on.html")],
                         ids=["same-name", "two-names"])
def test_two_corrections_of_one_memory_leave_the_later_live(
        paths: tuple[str, str]) -> None:
    ours = _corrected("Deploys run from the release branch.", T1, paths[0])
    theirs = _corrected("Deploys run from tags only.", T2, paths[1])
    merge = both_ways({DEPLOY: blob(BASE_DEPLOY)}, ours, theirs)
    tree = merge.applied_to(ours)
    live = {p: parse_memory(t.decode()).unwrap() for p, t in tree.items()
            if not p.startswith("archive/")}
    corrections = [p for p, doc in live.items() if doc.metas.memory_type != "task"]
    assert [live[p].article.gist for p in corrections] == ["Deploys run from tags only."]
    (keeper,) = corrections
    rivals = [e for e in merge.events if e.kind == RIVAL_CORRECTIONS]
    assert [(e.path) for e in rivals] == [keeper]
    archived_at = rivals[0].other
    assert archived_at is not None and archived_at.startswith("archive/2026/")
    loser = parse_memory(tree[archived_at].decode()).unwrap()
    assert loser.article.gist == "Deploys run from the release branch."
    assert loser.metas.status == "archived"
    assert read_meta(tree[archived_at].decode(), "memhtml-superseded-by") == f"/{keeper}"
    original = tree["archive/2026/" + DEPLOY].decode()
    assert read_meta(original, "memhtml-superseded-by") == f"/{keeper}"
    (task,) = [p for p, doc in live.items() if doc.metas.memory_type == "task"]
    body = live[task].article.body_text
    assert "Deploys run from tags only." in body and "Deploys run from the release" in body
    assert f"memhtml restore {archived_at}" in body
    for path in tree:
        assert check_memory(tree[path].decode()).violations == (), path


def test_two_canonicals_sharing_a_member_are_not_rival_corrections() -> None:
    """Two clones' sleep runs compressed overlapping members into two canonicals:
    each supersedes several memories, so neither is a correction of the shared one
    and both stay live (archiving one would take its other member out of search)."""
    other_a, other_b = "areas/ops/a.html", "areas/ops/b.html"
    base = {DEPLOY: blob(BASE_DEPLOY), other_a: blob(memory("A.", title="A")),
            other_b: blob(memory("B.", title="B"))}

    def canonical(claim: str, at: str, member: str, path: str) -> dict[str, bytes]:
        links = (Link("supersedes", "/archive/2026/" + DEPLOY),
                 Link("supersedes", "/archive/2026/" + member))
        return {path: blob(memory(claim, at=at, links=links, title=claim[:-1]))}

    ours = canonical("Deploys and A.", T1, other_a, "areas/ops/deploys-and-a.html")
    theirs = canonical("Deploys and B.", T2, other_b, "areas/ops/deploys-and-b.html")
    merge = both_ways(base, ours, theirs)
    assert not [e for e in merge.events if e.kind == RIVAL_CORRECTIONS]
    tree = merge.applied_to(ours)
    assert "areas/ops/deploys-and-a.html" in tree and "areas/ops/deploys-and-b.html" in tree


def test_an_edit_follows_its_memory_to_a_path_a_collision_gave_both_sides() -> None:
    """A shape of the crowd test's flake, made deterministic: one memory (five) was moved by one
    side from x-5 to x-3-2 (an earlier merge kept it once, at the least path), while
    the other side labelled it at x-5 and holds another memory (two) at x-3-2. The
    collision at x-3-2 keeps five there (created later) on both sides, and the label
    must join it there: left live at x-5 as well, five would be held twice for good
    (``fact-17-3-2.html`` and ``fact-17-5.html``)."""
    five = memory("Clone five's fact.", title="Fact", at=T1)
    two = memory("Clone two's fact.", title="Fact", at=T0)
    base = {"a/x-5.html": blob(five)}
    ours = {"a/x-3-2.html": blob(five)}
    theirs = {"a/x-5.html": blob(add_meta(five, "memhtml-entity", "team:ops")),
              "a/x-3-2.html": blob(two)}
    merge = both_ways(base, ours, theirs)
    tree = merge.applied_to(ours)
    assert sorted(tree) == ["a/x-3-2-2.html", "a/x-3-2.html"], sorted(tree)
    assert b"Clone five" in tree["a/x-3-2.html"] and b"team:ops" in tree["a/x-3-2.html"]
    assert b"Clone two" in tree["a/x-3-2-2.html"]
    assert (EDIT_KEPT, "a/x-3-2.html") in kinds(merge)


def test_a_memory_a_collision_kept_is_not_left_twice_beside_its_other_copy() -> None:
    """Found by ``bench.team``: six was at x in the base; one side holds it (labelled)
    at x-5 and another memory (two) at x-3; the other side holds six at x-3. The
    collision at x-3 keeps six (created later) and lays it over the first side too,
    which then seemed to hold six twice (x-3 and x-5), so ``twins`` left both. What
    each side held decides: six is kept once, with the label."""
    six = memory("Clone six's fact.", title="Note", at=T1)
    two = memory("Clone two's fact.", title="Note", at=T0)
    zero = memory("Clone zero's fact.", title="Note", at=T2)
    one = memory("Clone one's fact.", title="Note", at="2026-04-01T10:00:00Z")
    base = {"a/x.html": blob(six), "a/x-4.html": blob(two)}
    ours = {"a/x.html": blob(zero), "a/x-3.html": blob(two),
            "a/x-5.html": blob(add_meta(six, "memhtml-entity", "team:ops"))}
    theirs = {"a/x.html": blob(one), "a/x-3.html": blob(six), "a/x-4.html": blob(two)}
    merge = both_ways(base, ours, theirs)
    tree = merge.applied_to(ours)
    memories = {path: data for path, data in tree.items() if path.startswith("a/")}
    holding = sorted(path for path, data in memories.items() if b"Clone six" in data)
    assert holding == ["a/x-3.html"], sorted(tree)
    assert b"team:ops" in tree["a/x-3.html"]
    for claim in (b"Clone two", b"Clone zero", b"Clone one"):
        assert sum(claim in data for data in memories.values()) == 1, (claim, sorted(tree))


def test_an_edit_of_a_memory_moved_onto_a_path_the_base_held_is_kept_once() -> None:
    """Found by ``bench.team``: one side (after merges of its own) holds seven at x-2,
    where the base held six, and six at x-2-2; the other side labelled both where the
    base had them (six at x-2, seven at x-3). The label of six follows it to x-2-2.
    Seven's edit, against its deletion at x-3, found no path the moving side alone
    added (x-2 was the base's) and stayed at x-3 beside x-2: now it joins seven at
    x-2, and every memory is held once with both labels."""
    seven = memory("Clone seven's fact.", title="Note", at=T1)
    six = memory("Clone six's fact.", title="Note", at=T0)
    base = {"a/x-2.html": blob(six), "a/x-3.html": blob(seven)}
    ours = {"a/x-2.html": blob(seven), "a/x-2-2.html": blob(six)}
    theirs = {"a/x-2.html": blob(add_meta(six, "memhtml-entity", "team:six")),
              "a/x-3.html": blob(add_meta(seven, "memhtml-entity", "team:seven"))}
    merge = both_ways(base, ours, theirs)
    tree = merge.applied_to(ours)
    assert sorted(tree) == ["a/x-2-2.html", "a/x-2.html"], sorted(tree)
    assert b"seven's" in tree["a/x-2.html"] and b"team:seven" in tree["a/x-2.html"]
    assert b"six's" in tree["a/x-2-2.html"] and b"team:six" in tree["a/x-2-2.html"]
