"""The ``vector_weight`` store setting: a number 0 or more, else the spec's plain
fusion and a note saying why (a store's config is untrusted, so it never fails a
search)."""

from __future__ import annotations

import pytest

from memhtml.compose.search import vector_weight_of


@pytest.mark.parametrize(("text", "weight"), [("1", 1.0), ("0", 0.0), ("0.35", 0.35),
                                              ("2", 2.0)])
def test_a_usable_weight(text: str, weight: float) -> None:
    assert vector_weight_of(text) == (weight, None)


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "heavy", ""])
def test_an_unusable_weight_fuses_plainly_and_says_so(text: str) -> None:
    weight, note = vector_weight_of(text)
    assert weight == 1.0 and note is not None and "vector_weight" in note
