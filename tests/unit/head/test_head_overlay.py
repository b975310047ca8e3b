"""with_overlay: every way an op is refused, and the ops that change nothing."""

from __future__ import annotations

from typing import cast

import pytest
from returns.result import Failure, Success
from tests.property.head_support import archived, memory, memory_with, record_at

from memhtml.contracts.errors import InvalidMemory, OverlayRefused
from memhtml.contracts.ops import (
    Archive,
    Label,
    LinkOp,
    Move,
    OverlayOp,
    Put,
    Unarchive,
    Unlabel,
    UnlinkOp,
)
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.head import HeadVersion, IndexedView, is_entity, version_from_records, with_overlay

LIVE = "areas/live.html"
GONE = "archive/2026/gone.html"
MISSING = "areas/missing.html"


def _base() -> HeadVersion:
    return version_from_records([
        record_at(LIVE, memory_with("Live", "A live claim.",
                                    links=(("supports", "/areas/other.html"),),
                                    entities=("team:sre",))),
        record_at(GONE, archived(memory("Gone", "A gone claim."))),
        record_at("areas/other.html", memory("Other", "Another claim.")),
    ], "base-sha")


def _refused(ops: list[OverlayOp]) -> OverlayRefused:
    result = with_overlay(_base(), ops)
    assert isinstance(result, Failure), result
    error = result.failure()
    assert isinstance(error, OverlayRefused), error
    return error


def _applied(ops: list[OverlayOp]) -> IndexedView:
    result = with_overlay(_base(), ops)
    assert not isinstance(result, Failure), result
    return result.unwrap()


@pytest.mark.parametrize(
    "op",
    [
        LinkOp(MISSING, "supports", "/areas/live.html"),
        UnlinkOp(MISSING, "supports", "/areas/other.html"),
        Label(MISSING, "team:sre"),
        Unlabel(MISSING, "team:sre"),
        Move(MISSING, "areas/elsewhere.html"),
        Archive(MISSING, "archive/2026/missing.html", archived(memory("M", "A claim."))),
    ],
    ids=lambda op: type(op).__name__,
)
def test_ops_on_a_path_not_held_are_refused(op: OverlayOp) -> None:
    assert _refused([op]).path == MISSING


@pytest.mark.parametrize("op_type", [LinkOp, UnlinkOp])
def test_a_rel_outside_the_vocabulary_is_refused(op_type: type[LinkOp] | type[UnlinkOp]) -> None:
    error = _refused([op_type(LIVE, cast(EdgeRel, "befriends"), "/areas/other.html")])
    assert "befriends" in error.reason


@pytest.mark.parametrize("entity", ["Team:sre", "nocolon", "team:", ":sre", "team: sre",
                                   "team:sre ", "team:a\nb", ""])
def test_a_malformed_entity_is_refused(entity: str) -> None:
    assert not is_entity(entity)
    _refused([Label(LIVE, entity)])


@pytest.mark.parametrize("entity", ["team:sre", "person:Ada Lovelace", "service:api-v2"])
def test_well_formed_entities(entity: str) -> None:
    assert is_entity(entity)


def test_unlink_of_an_edge_not_carried_is_refused() -> None:
    _refused([UnlinkOp(LIVE, "supports", "/areas/elsewhere.html")])
    _refused([UnlinkOp(LIVE, "contradicts", "/areas/other.html")])


def test_unlabel_of_an_entity_not_carried_is_refused() -> None:
    _refused([Unlabel(LIVE, "team:dba")])


def test_move_of_an_archived_record_is_refused() -> None:
    _refused([Move(GONE, "areas/back.html")])


@pytest.mark.parametrize(("path", "to", "words"), [
    (LIVE, "areas/back.html", "only an archived memory"),
    (GONE, "archive/2027/gone.html", "under archive/"),
    (GONE, "areas/other.html", "already holds a memory"),
    ("archive/2026/missing.html", "areas/missing.html", "no memory at this path"),
])
def test_unarchive_is_refused_unless_it_brings_an_archived_memory_to_a_free_live_path(
        path: str, to: str, words: str) -> None:
    assert words in _refused([Unarchive(path, to, memory("Back", "Back again."))]).reason


def test_unarchive_moves_the_record_back_live() -> None:
    view = _applied([Unarchive(GONE, "gone.html", memory("Gone", "A gone claim."))])
    assert view.get(GONE) is None
    back = view.get("gone.html")
    assert back is not None and not back.archived and back.status == "active"


def test_put_of_an_invalid_file_fails_with_its_violations() -> None:
    result = with_overlay(_base(), [Put("areas/bad.html", "<p>no memory here</p>")])
    assert isinstance(result, Failure)
    error = result.failure()
    assert isinstance(error, InvalidMemory)
    assert error.path == "areas/bad.html"
    assert error.violations


def test_a_link_to_a_href_that_does_not_parse_fails_as_invalid() -> None:
    result = with_overlay(_base(), [LinkOp(LIVE, "supports", "https://example.com/x")])
    assert isinstance(result, Failure)
    assert isinstance(result.failure(), InvalidMemory)


@pytest.mark.parametrize(
    "op",
    [
        Put("../outside.html", memory("X", "A claim.")),
        Put("/abs.html", memory("X", "A claim.")),
        Put(".git/hooks/x.html", memory("X", "A claim.")),
        Put("areas//x.html", memory("X", "A claim.")),
        Put("areas\\x.html", memory("X", "A claim.")),
        Move(LIVE, "../outside.html"),
        Archive(LIVE, "archive/../../x.html", archived(memory("X", "A claim."))),
    ],
)
def test_paths_outside_the_store_are_refused(op: OverlayOp) -> None:
    _refused([op])


def test_the_first_failing_op_is_the_one_reported() -> None:
    error = _refused([
        Put("areas/new.html", memory("New", "A new claim.")),
        Label(MISSING, "team:sre"),
        Put("areas/bad.html", "<p>not a memory</p>"),
    ])
    assert error.path == MISSING


def test_a_link_or_label_already_carried_changes_nothing() -> None:
    base = _base()
    for op in (LinkOp(LIVE, "supports", "/areas/other.html"), Label(LIVE, "team:sre")):
        result = with_overlay(base, [op])
        assert isinstance(result, Success)
        assert result.unwrap().indexes is base.indexes


def test_no_ops_keep_the_base_indexes_and_sha() -> None:
    base = _base()
    view = _applied([])
    assert view.indexes == base.indexes
    assert view.sha == "base-sha"


def test_applied_ops_keep_the_base_sha_and_edit_the_file() -> None:
    view = _applied([
        LinkOp(LIVE, "relates_to", "/areas/other.html"),
        Label(LIVE, "team:dba"),
        Unlabel(LIVE, "team:sre"),
        UnlinkOp(LIVE, "supports", "/areas/other.html"),
    ])
    assert view.sha == "base-sha"
    record = view.get(LIVE)
    assert record is not None
    assert record.entities == ("team:dba",)
    assert [(link.rel, link.href) for link in record.links] == [
        ("relates_to", "/areas/other.html")]
    assert view.inbound("/areas/other.html") == (LIVE,)
    assert view.by_entity("team:sre") == ()


def test_move_carries_earlier_head_edits() -> None:
    view = _applied([Label(LIVE, "team:dba"), Move(LIVE, "areas/moved.html")])
    assert view.get(LIVE) is None
    moved = view.get("areas/moved.html")
    assert moved is not None
    assert "team:dba" in moved.entities
    assert view.by_entity("team:dba") == ("areas/moved.html",)


def test_archive_inserts_an_archived_record_at_the_destination() -> None:
    base = _base()
    live = base.get(LIVE)
    assert live is not None
    view = _applied([Archive(LIVE, "archive/2026/live.html", archived(live.html))])
    assert view.get(LIVE) is None
    record = view.get("archive/2026/live.html")
    assert record is not None
    assert record.archived
    assert view.by_content_hash(live.content_hash) is None
