"""insert_record and remove_record: which index an archived record enters, who holds a
content hash, and that no-op writes return the very same value."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest
from tests.property.head_support import archived, memory, memory_with, record_at

from memhtml.contracts.record import MemoryRecord, record_rows, records_from_rows
from memhtml.format import add_link, add_meta, set_meta
from memhtml.head import (
    IndexedView,
    Indexes,
    SearchHeadInput,
    empty_indexes,
    indexes_of,
    insert_record,
    remove_record,
    search_head,
    view_of,
    with_overlay,
)
from memhtml.head.indexes import build_indexes, replace_paths

TWIN = memory("Twin", "The twin claim.", "Twin body.")
TWIN_LATER = memory("Twin", "The twin claim.", "Twin body.", at="2026-06-01T00:00:00Z")


def _fold(*records: MemoryRecord) -> Indexes:
    indexes = empty_indexes()
    for record in records:
        indexes = insert_record(indexes, record)
    return indexes


def _linked(path: str) -> MemoryRecord:
    return record_at(path, memory_with("Linked", "A linked claim.",
                                       links=(("relates_to", "/areas/target.html"),),
                                       entities=("team:sre",)))


def test_archived_records_enter_records_inbound_and_entities_only() -> None:
    linked = memory_with("Linked", "A linked claim.",
                         links=(("relates_to", "/areas/target.html"),), entities=("team:sre",))
    # Under archive/, and archived by status at a live path: both count as archived.
    for record in (record_at("archive/2026/x.html", archived(linked)),
                   record_at("areas/x.html", archived(linked))):
        view = view_of(insert_record(empty_indexes(), record), None)
        assert view.get(record.path) is record
        assert view.inbound("/areas/target.html") == (record.path,)
        assert view.by_entity("team:sre") == (record.path,)
        assert view.by_content_hash(record.content_hash) is None
        assert view.by_frame_key(record.frame_key) == ()
        assert view.lexical.documents == 0
        assert view.lexical.length_of(record.path) is None


def test_active_record_enters_every_index() -> None:
    record = _linked("areas/x.html")
    view = view_of(insert_record(empty_indexes(), record), "sha")
    assert view.by_content_hash(record.content_hash) == "areas/x.html"
    assert view.by_frame_key(record.frame_key) == ("areas/x.html",)
    assert view.lexical.documents == 1
    assert view.size == 1


def test_content_hash_goes_to_the_first_active_record_inserted() -> None:
    old_archived = record_at("archive/a.html", archived(TWIN))
    first = record_at("areas/z.html", TWIN)
    second = record_at("areas/a.html", TWIN_LATER)
    assert first.content_hash == second.content_hash == old_archived.content_hash
    indexes = _fold(old_archived, first, second)
    assert indexes.by_content_hash[first.content_hash] == "areas/z.html"
    # The frame key lists both, sorted.
    assert view_of(indexes, None).by_frame_key(first.frame_key) == ("areas/a.html",
                                                                      "areas/z.html")


def test_removing_a_non_holder_twin_leaves_the_hash_held() -> None:
    first = record_at("areas/z.html", TWIN)
    second = record_at("areas/a.html", TWIN_LATER)
    indexes = remove_record(_fold(first, second), "areas/a.html")
    assert indexes.by_content_hash[first.content_hash] == "areas/z.html"


def test_removing_the_holder_leaves_the_hash_unmapped_while_a_twin_stays() -> None:
    first = record_at("areas/z.html", TWIN)
    second = record_at("areas/a.html", TWIN_LATER)
    indexes = remove_record(_fold(first, second), "areas/z.html")
    assert first.content_hash not in indexes.by_content_hash
    assert "areas/a.html" in indexes.records
    assert view_of(indexes, None).by_frame_key(second.frame_key) == ("areas/a.html",)
    # A later insert while nothing holds it takes the hash.
    again = insert_record(indexes, record_at("areas/m.html", TWIN))
    assert again.by_content_hash[first.content_hash] == "areas/m.html"


def test_replacing_a_record_moves_its_hash_and_postings() -> None:
    before = record_at("areas/x.html", memory("Old", "Old words here."))
    after = record_at("areas/x.html", memory("New", "New words there."))
    indexes = _fold(before, after)
    assert before.content_hash not in indexes.by_content_hash
    assert indexes.by_content_hash[after.content_hash] == "areas/x.html"
    assert indexes == build_indexes([after])


META = memory_with("Meta", "A meta claim.", "Body words.", entities=("team:sre",))


@pytest.mark.parametrize(
    "edit",
    [
        lambda html: set_meta(html, "memhtml-confidence", "0.4"),
        lambda html: add_meta(html, "memhtml-entity", "service:api"),
        lambda html: add_link(html, "relates_to", "/areas/target.html"),
        lambda html: set_meta(html, "memhtml-updated", "2026-12-01T00:00:00Z"),
    ],
    ids=["confidence", "entity", "link", "updated"],
)
def test_a_meta_only_replacement_keeps_the_very_lexical_index(
    edit: Callable[[str], str],
) -> None:
    other = _linked("areas/a.html")
    before = record_at("areas/x.html", META)
    after = record_at("areas/x.html", edit(META))
    assert after != before
    indexes = _fold(other, before)
    replaced = insert_record(indexes, after)
    assert replaced.lexical is indexes.lexical
    assert replaced.records["areas/x.html"] is after
    assert replaced == build_indexes([other, after])
    assert replaced.by_content_hash == _fold(other, before, after).by_content_hash


def test_a_replacement_that_changes_the_text_or_the_active_state_relexes() -> None:
    """Status, archival and any of title, claim and body move the lexical document,
    exactly as a removal followed by an insertion does."""
    other = _linked("areas/a.html")
    before = record_at("areas/x.html", META)
    indexes = _fold(other, before)
    for html in (archived(META),
                 memory_with("Meta", "A changed claim.", "Body words.", entities=("team:sre",)),
                 memory_with("Meta renamed", "A meta claim.", "Body words.",
                             entities=("team:sre",)),
                 memory_with("Meta", "A meta claim.", "Other body words.",
                             entities=("team:sre",))):
        after = record_at("areas/x.html", html)
        replaced = insert_record(indexes, after)
        assert replaced.lexical is not indexes.lexical
        assert replaced == build_indexes([other, after])
        # And back again: an inactive record turning active re-enters the index.
        restored = insert_record(replaced, before)
        assert restored == indexes
        assert restored.lexical.length_of("areas/x.html") == indexes.lexical.length_of(
            "areas/x.html")


def test_replace_paths_outside_its_contract_is_the_plain_fold() -> None:
    """A record at a path not listed as changed, or a path given twice, is what the
    fold of removals then path-ordered insertions makes of it, both ways."""
    a, b = record_at("areas/a.html", TWIN), _linked("areas/b.html")
    parent = _fold(a, b)
    later = record_at("areas/a.html", memory("New", "A different claim."))
    for changed, records in (([], [later]), (["areas/a.html"], [later, a])):
        folded = parent
        for path in changed:
            folded = remove_record(folded, path)
        for record in sorted(records, key=lambda r: r.path):
            folded = insert_record(folded, record)
        for bulk in (False, True):
            assert replace_paths(parent, changed, records, bulk=bulk) == folded
    assert replace_paths(parent, [], []) is parent
    assert replace_paths(parent, ["areas/absent.html"], [], bulk=False) is parent


def test_inserting_the_held_record_returns_the_same_value() -> None:
    record = _linked("areas/x.html")
    indexes = insert_record(empty_indexes(), record)
    assert insert_record(indexes, record) is indexes
    assert remove_record(indexes, "areas/absent.html") is indexes
    assert remove_record(empty_indexes(), "x.html") is empty_indexes()


def test_remove_undoes_insert() -> None:
    base = _fold(record_at("areas/a.html", TWIN), _linked("areas/b.html"))
    extra = _linked("areas/c.html")
    assert remove_record(insert_record(base, extra), "areas/c.html") == base


def test_view_lists_come_back_sorted() -> None:
    indexes = _fold(*(_linked(f"areas/{name}.html") for name in ("q", "b", "x", "a")))
    view = view_of(indexes, "sha")
    expected = ("areas/a.html", "areas/b.html", "areas/q.html", "areas/x.html")
    assert tuple(view.paths()) == expected
    assert tuple(r.path for r in view.records()) == expected
    assert view.inbound("/areas/target.html") == expected
    assert view.by_entity("team:sre") == expected
    assert view.inbound("/nowhere.html") == ()


class _MapView:
    """A caller's own HeadView over a plain dict, as a test or a tool might hold."""

    def __init__(self, records: list[MemoryRecord]) -> None:
        self._records = {r.path: r for r in records}

    @property
    def sha(self) -> str | None:
        return None

    @property
    def size(self) -> int:
        return len(self._records)

    def get(self, path: str) -> MemoryRecord | None:
        return self._records.get(path)

    def paths(self) -> Iterator[str]:
        return iter(self._records)

    def records(self) -> Iterator[MemoryRecord]:
        return iter(self._records.values())

    def by_content_hash(self, content_hash: str) -> str | None:
        return None

    def by_frame_key(self, key: str) -> tuple[str, ...]:
        return ()

    def inbound(self, href: str) -> tuple[str, ...]:
        return ()

    def by_entity(self, entity: str) -> tuple[str, ...]:
        return ()


def test_indexes_of_reuses_a_view_built_here_and_refuses_any_other() -> None:
    records = [record_at("areas/a.html", TWIN), _linked("areas/b.html")]
    indexes = _fold(*records)
    view: IndexedView = view_of(indexes, "sha")
    assert indexes_of(view) is indexes
    # A caller's own view is refused by name, not silently rebuilt on every call.
    with pytest.raises(TypeError, match=r"test_head_indexes\._MapView"):
        indexes_of(_MapView(records))
    with pytest.raises(TypeError, match="_MapView"):
        search_head(_MapView(records), SearchHeadInput("twin"))
    with pytest.raises(TypeError, match="_MapView"):
        with_overlay(_MapView(records), [])
    assert indexes_of(view_of(build_indexes(records), None)) == indexes


def test_record_rows_round_trip_equals_the_constructor() -> None:
    records = [record_at("areas/a.html", TWIN), _linked("areas/b.html"),
               record_at("archive/2026/c.html", archived(TWIN_LATER))]
    rows = record_rows(records)
    restored = records_from_rows(rows)
    assert restored == records == [MemoryRecord(*row) for row in rows]  # type: ignore[arg-type]
    # The fast restore skips __init__, which is sound only while __init__ just assigns.
    assert "__post_init__" not in vars(MemoryRecord)
    with pytest.raises(dataclasses.FrozenInstanceError):
        restored[0].path = "elsewhere.html"  # type: ignore[misc]
    with pytest.raises(ValueError, match="zip"):
        records_from_rows([rows[0][:-1]])
