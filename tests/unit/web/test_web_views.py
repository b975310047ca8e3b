"""The app's page values: what the columns answer equals what the records say."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.integration.publish.site_support import (
    archived_file,
    memory_file,
    records_of,
    tagged_file,
    view_of_files,
)

from memhtml.contracts.record import Link
from memhtml.head.version import version_from_records
from memhtml.web.pictures import neighbourhood, overview
from memhtml.web.views import labelled, recent_records

stamps = st.integers(0, 500).map(
    lambda n: f"2026-{1 + n // 50 % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:00:00Z")
notes = st.lists(st.tuples(stamps, st.booleans(), st.sampled_from(("ops", "db", "x"))),
                 min_size=0, max_size=25)


def _files(drawn: list[tuple[str, bool, str]]) -> dict[str, str]:
    out = {}
    for i, (at, gone, _tag) in enumerate(drawn):
        text = memory_file(f"Note {i}", f"Claim number {i} holds.", at=at)
        out[f"areas/n/note-{i:02d}.html"] = archived_file(text) if gone else text
    return out


@settings(max_examples=60, deadline=None)
@given(notes, st.integers(1, 30))
def test_recent_from_the_columns_is_the_sort_of_the_live_records(
        drawn: list[tuple[str, bool, str]], count: int) -> None:
    view = view_of_files(_files(drawn))
    live = [r for r in view.records() if r.status == "active" and not r.archived]
    expected = sorted(live, key=lambda r: (r.updated_at, r.path), reverse=True)[:count]
    assert [r.path for r in recent_records(view, count)] == [r.path for r in expected]


@settings(max_examples=40, deadline=None)
@given(notes)
def test_the_overview_counts_every_record_once(drawn: list[tuple[str, bool, str]]) -> None:
    view = view_of_files(_files(drawn))
    by_type, _written, archived, confidence = overview(view, "2026-12-07T00:00:00Z")
    live = sum(1 for r in view.records() if r.status == "active" and not r.archived)
    assert by_type.total == live
    assert archived.total == sum(1 for r in view.records()
                                 if r.archived_at is not None
                                 and r.archived_at[:7] >= "2026-01")
    assert confidence.total == sum(1 for r in view.records() if r.status == "active"
                                   and not r.archived and r.confidence is not None)


def test_a_tag_page_lists_the_live_memories_carrying_it() -> None:
    view = view_of_files({"areas/a.html": memory_file("A", "Alpha holds."),
                          "areas/t.html": tagged_file(),
                          "archive/2026/areas/u.html": archived_file(tagged_file())})
    now = "2026-12-07T00:00:00Z"
    assert [m.path for m in labelled(view, "tag", "security", now)["memories"]] == [
        "areas/t.html"]
    assert labelled(view, "tag", "nothing", now)["memories"] == []


links_drawn = st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                        .filter(lambda ab: ab[0] != ab[1]), max_size=12)))


@settings(max_examples=60, deadline=None)
@given(links_drawn)
def test_the_neighbourhood_draws_every_edge_between_the_memories_two_hops_out(
        drawn: tuple[int, set[tuple[int, int]]]) -> None:
    """Rings by hop count over the links either way, an edge line for every link
    joining two drawn memories (at their very places), nothing beyond two hops, and
    every node on the canvas."""
    n, pairs = drawn
    path = [f"areas/g/node-{i}.html" for i in range(n)]
    files = {path[i]: memory_file(f"Node {i}", f"Node number {i} holds.", links=tuple(
        Link("relates_to", "/" + path[b]) for a, b in sorted(pairs) if a == i))
        for i in range(n)}
    version = version_from_records(records_of(files), "0" * 40)
    picture = neighbourhood(version, path[0], "2026-12-07T00:00:00Z")

    hops = {0: 0}
    frontier = [0]
    for depth in (1, 2):
        frontier = [b for a in frontier for x, y in pairs for b in ((y,) if x == a else
                    (x,) if y == a else ()) if b not in hops]
        hops.update((b, depth) for b in frontier)
    placed = {node.path: node for node in picture.nodes}
    assert {p: node.depth for p, node in placed.items()} == {path[i]: d for i, d in hops.items()}
    centre = placed[path[0]]
    assert (centre.x, centre.y) == (picture.width / 2, picture.height / 2)
    assert all(0 <= node.x <= picture.width and 0 <= node.y <= picture.height
               for node in picture.nodes)
    drawn_lines = {frozenset({(line.x1, line.y1), (line.x2, line.y2)})
                   for line in picture.lines if line.kind == "edge"}
    expected = {frozenset({(placed[path[a]].x, placed[path[a]].y),
                           (placed[path[b]].x, placed[path[b]].y)})
                for a, b in pairs if path[a] in placed and path[b] in placed}
    assert drawn_lines == expected
    assert all(line.label == "relates to" for line in picture.lines if line.kind == "edge")
