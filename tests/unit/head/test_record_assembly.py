"""How ``record_of`` builds a record, and the frame key's word rule, held to the
plain forms they replace."""

from __future__ import annotations

import hashlib
import re
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success
from tests.property.head_support import memory_with

from memhtml.contracts.record import RECORD_FIELDS, MemoryRecord
from memhtml.head import frame_key_of, record_from

_BREAKS = re.compile(r"[^\w]+|_+")


def _frame_key_by_splitting(claim: str) -> str:
    """The frame key as first written: break at non-word runs and underscore runs,
    then split on whitespace."""
    words = _BREAKS.sub(" ", claim.casefold()).split()
    return "fk:" + hashlib.sha1(" ".join(words).encode("utf-8"), usedforsecurity=False).hexdigest()


def _a_record() -> MemoryRecord:
    html = memory_with("Deploy", "The deploy step is safe.", "It ran twice.",
                       event_at="2026-01-02", entities=("ops",))
    match record_from(html, "ops/deploy.html"):
        case Success(record):
            assert isinstance(record, MemoryRecord)
            return record
        case other:
            raise AssertionError(f"the memory did not parse: {other}")


def test_record_dict_holds_every_field_in_field_order() -> None:
    record = _a_record()
    assert tuple(vars(record)) == RECORD_FIELDS


def test_record_equals_one_built_through_the_constructor() -> None:
    record = _a_record()
    rebuilt = MemoryRecord(**vars(record))
    assert rebuilt == record
    assert repr(rebuilt) == repr(record)
    assert hash(rebuilt) == hash(record)


def test_record_is_still_frozen() -> None:
    record = _a_record()
    with pytest.raises(FrozenInstanceError):
        record.title = "changed"  # type: ignore[misc]
    assert record.title == "Deploy"


@given(st.text())
def test_frame_key_words_match_break_then_split(claim: str) -> None:
    assert frame_key_of(claim) == _frame_key_by_splitting(claim)


@given(st.lists(st.sampled_from(["a", "B", "_", "__", " ", "\u00a0", "\u2003", "-", "3.5",
                                 "\u0663", "\u00df", "\u0130", "\t", "é", "\u200b", "x_y"]),
                max_size=12))
def test_frame_key_words_match_on_spaces_and_underscores(parts: list[str]) -> None:
    claim = "".join(parts)
    assert frame_key_of(claim) == _frame_key_by_splitting(claim)
