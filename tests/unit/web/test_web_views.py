"""The app's page values: what the columns answer equals what the records say."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.integration.publish.site_support import (
    archived_file,
    memory_file,
    tagged_file,
    view_of_files,
)

from memhtml.web.pictures import overview
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
