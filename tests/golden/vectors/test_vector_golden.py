"""The vector arm's ranking with the hashing embedder matches its golden file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.golden.vectors.hashing_golden import EXPECTED, build, dump


def test_vector_arm_ranking_with_the_hashing_embedder(tmp_path: Path) -> None:
    actual = json.loads(dump(build(tmp_path)))
    assert actual == json.loads(EXPECTED.read_text(encoding="utf-8"))


def test_the_golden_exercises_both_arms() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    arms = {arm for q in expected["queries"].values() for hit in q["hybrid"] for arm in hit["arms"]}
    assert {"lexical", "vector"} <= arms
    assert expected["fill"]["embedded"] > 0
