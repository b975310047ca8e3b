"""Golden cases: the veto's motivating pairs, the measured name pairs, a community fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memhtml.domain.entities import name_similarity
from memhtml.domain.graph import Edge, analyze_graph
from memhtml.domain.merge import MergeText, merge_veto, merge_vetoed
from memhtml.domain.retention import RetentionInput, score_retention
from memhtml.domain.thresholds import AUTO_MERGE_THRESHOLD, REVIEW_THRESHOLD

FIXTURE = Path(__file__).with_name("label_propagation_fixture.json")


def test_polarity_flip_is_vetoed() -> None:
    assert merge_veto(
        MergeText("the deploy step is safe"), MergeText("the deploy step is NOT safe")
    ) == ("negation",)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("the freeze starts on 2026-03-01", "the freeze starts on 2026-03-08"),
        ("billing runs on node 20.11", "billing runs on node 22.3"),
        ("pin the client to v2.1", "pin the client to v2.10"),
    ],
)
def test_claims_differing_only_in_a_date_or_version_are_vetoed(a: str, b: str) -> None:
    assert merge_veto(MergeText(a), MergeText(b)) == ("numeric",)


def test_restatements_are_not_vetoed() -> None:
    a = MergeText("the deploy step is safe to rerun", "Verified in INC-2231 on 2026-01-04.")
    b = MergeText("rerunning the deploy step is safe", "Seen again during the March freeze.")
    assert not merge_vetoed(a, b)


@pytest.mark.parametrize(
    ("short", "full", "expected"),
    [("laith", "laith al-saadoon", 0.476), ("sanju", "sanju kumar", 0.625)],
)
def test_measured_name_pairs(short: str, full: str, expected: float) -> None:
    similarity = name_similarity(short, full)
    assert round(similarity, 3) == expected
    assert similarity < REVIEW_THRESHOLD < AUTO_MERGE_THRESHOLD


@pytest.mark.parametrize(
    ("importance", "expected"),
    [
        # 0.05*0.5 + 0.15*0.5 + 0.2*0.8 + 0.2*1 + 0 + 0 + 0.1*(10/10) + 0.05*1
        (10, 0.61),
        # the same with no stated importance: the default 5 reads as 0.5
        (None, 0.56),
        # the same at the bottom of the ordinal: 0.1*(1/10)
        (1, 0.52),
    ],
)
def test_a_hand_computed_retention_score(importance: int | None, expected: float) -> None:
    scored = score_retention(
        RetentionInput(
            memory_type="semantic",
            age_days=90.0,
            access_count=5,
            confidence=0.8,
            graph_rank=0.02,
            max_graph_rank=0.02,
            bridge_count=0,
            reinforcement_count=0,
            importance=importance,
            contradiction_count=0,
        )
    )
    assert scored.score == expected
    assert scored.band == "compress"


def test_label_propagation_fixture() -> None:
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    edges = [Edge(e["source"], e["target"], e["strength"]) for e in fixture["edges"]]
    analysis = analyze_graph(edges, fixture["nodes"])
    assert dict(analysis.communities) == fixture["expected_communities"]
    assert dict(analysis.bridges) == fixture["expected_bridges"]
    order = sorted(analysis.pagerank, key=lambda p: (-analysis.pagerank[p], p))
    assert order == fixture["expected_pagerank_order"]
