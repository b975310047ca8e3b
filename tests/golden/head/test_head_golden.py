"""Golden rankings and gate reports over a fixed corpus committed to a real repository.

``expected.json`` is written by ``regen.py`` and was read by eye. Beside the whole-file
comparison, the rules each query exists for are asserted outright, so a regenerated
file that quietly blessed a regression would still fail here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.golden.head.head_corpus import EXPECTED, QUERIES, build_golden

from memhtml.head import RRF_K


@pytest.fixture(scope="module")
def actual(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    built: dict[str, Any] = json.loads(json.dumps(build_golden(tmp_path_factory.mktemp("g"))))
    return built


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return loaded


def _rrf(*ranks: int) -> float:
    return round(sum(1.0 / (RRF_K + r) for r in ranks), 12)


def _hits(actual: dict[str, Any], name: str) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(h["path"], h["score"], tuple(h["arms"])) for h in actual["searches"][name]["hits"]]


def test_records_and_skips_match(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    assert actual["records"] == expected["records"]
    assert actual["skipped"] == expected["skipped"]


@pytest.mark.parametrize("name", [q.name for q in QUERIES])
def test_search_matches_golden(actual: dict[str, Any], expected: dict[str, Any],
                               name: str) -> None:
    assert actual["searches"][name] == expected["searches"][name]


@pytest.mark.parametrize("name", ["archive-near-duplicate", "decoys-bury-titles",
                                  "superseded-outranks", "fold-into-keeper",
                                  "rewritten-titles"])
def test_gate_matches_golden(actual: dict[str, Any], expected: dict[str, Any],
                             name: str) -> None:
    assert actual["gates"][name] == expected["gates"][name]


def test_golden_file_has_no_other_sections(expected: dict[str, Any]) -> None:
    assert set(expected) == {"records", "skipped", "searches", "gates"}
    assert set(expected["searches"]) == {q.name for q in QUERIES}


def test_non_candidates_are_neither_records_nor_skips(actual: dict[str, Any]) -> None:
    named = set(actual["records"]) | {s["path"] for s in actual["skipped"]}
    assert not named & {"areas/index.html", ".memhtml/state.html", "sitemap.xml"}
    assert {s["path"] for s in actual["skipped"]} == {
        "areas/broken/latin1.html", "areas/broken/no-claim.html"}


def test_twins_share_a_rank_and_the_newer_wins(actual: dict[str, Any]) -> None:
    assert _hits(actual, "shared-rank-and-newer-twin") == [
        ("areas/deploy/canary-copy.html", _rrf(1), ("lexical", "recency")),
        ("areas/deploy/canary.html", _rrf(1), ("lexical", "recency")),
        ("areas/deploy/rollback.html", _rrf(3), ("lexical",)),
    ]


def test_older_better_match_stays_above_newer_weaker(actual: dict[str, Any]) -> None:
    assert [p for p, _, _ in _hits(actual, "older-better-match-stays-above")] == [
        "areas/ci/flaky-tests.html", "areas/ci/test-budget.html"]


def test_now_clamps_future_event_times(actual: dict[str, Any]) -> None:
    unclamped = [p for p, _, _ in _hits(actual, "future-events-unclamped")]
    clamped = [p for p, _, _ in _hits(actual, "future-events-clamped-by-now")]
    assert unclamped[:3] == ["areas/events/freeze-b.html", "areas/events/freeze-a.html",
                             "areas/events/freeze-c.html"]
    # Both future times clamp to now and tie, so the path decides; the past one stays last.
    assert clamped[:3] == ["areas/events/freeze-a.html", "areas/events/freeze-b.html",
                           "areas/events/freeze-c.html"]


def test_repeated_query_tokens_count_once(actual: dict[str, Any]) -> None:
    assert (actual["searches"]["stop-words-and-repeats-count-once"]["hits"]
            == actual["searches"]["future-events-unclamped"]["hits"])


def test_admit_narrows_without_changing_statistics(actual: dict[str, Any]) -> None:
    without = {p: s for p, s, _ in _hits(actual, "reconciliation-without-admit")}
    admitted = _hits(actual, "reconciliation-admit-finance")
    assert [p for p, _, _ in admitted] == ["areas/finance/ledger.html",
                                           "areas/finance/reconciliation.html"]
    for path, score, _ in admitted:
        assert score == without[path]
    # Scored over the two records alone, the rare and the common word weigh the same.
    alone = _hits(actual, "reconciliation-finance-only-version")
    assert alone[0][1] == alone[1][1] == _rrf(1)


def test_archived_records_never_come_back(actual: dict[str, Any]) -> None:
    for search in actual["searches"].values():
        for hit in search["hits"]:
            assert not hit["path"].startswith("archive/")
            assert hit["path"] != "areas/deploy/blue-green.html"


def test_limit_and_empty_results(actual: dict[str, Any]) -> None:
    assert _hits(actual, "percent-limit-two") == _hits(actual, "percent-unlimited")[:2]
    assert _hits(actual, "limit-one") == _hits(actual, "shared-rank-and-newer-twin")[:1]
    assert actual["searches"]["nothing-matches"]["hits"] == []
    assert actual["searches"]["only-stop-words"]["hits"] == []


def _order(actual: dict[str, Any], name: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(path, arms) for path, _, arms in _hits(actual, name)]


def test_vector_arm_finds_by_meaning_alone(actual: dict[str, Any]) -> None:
    assert _hits(actual, "vector-lexical-only") == [
        ("areas/deploy/rollback.html", _rrf(1), ("lexical",))]
    assert _order(actual, "vector-arm") == [
        ("areas/deploy/rollback.html", ("lexical", "vector")),
        ("areas/deploy/revert-playbook.html", ("vector",)),
        ("areas/deploy/canary-copy.html", ("vector", "recency")),
        ("areas/deploy/canary.html", ("vector", "recency")),
        ("areas/ci/flaky-tests.html", ("vector",)),
    ]
    scores = [score for _, score, _ in _hits(actual, "vector-arm")]
    # Two arms fuse by min-max normalized scores: the lexical arm's only hit and the
    # vector arm's best each bring their whole weight, the vector arm's worst nothing.
    assert scores[1] == 1.0 and scores[-1] == 0.0
    assert scores == sorted(scores, reverse=True)
    assert _hits(actual, "vector-arm-admit")[0] == (
        "areas/deploy/rollback.html", 2.0, ("lexical", "vector"))


def test_gate_outcomes(actual: dict[str, Any]) -> None:
    gates = actual["gates"]
    fold = gates["archive-near-duplicate"]
    assert fold["passed"]
    assert fold["removed"] == 1
    assert fold["line"].endswith("; passed")
    decoys = gates["decoys-bury-titles"]
    assert not decoys["passed"]
    assert decoys["mrr"] < decoys["floor"]
    assert "fell-out areas/data/retention.html" in decoys["line"]
    sup = gates["superseded-outranks"]
    assert not sup["passed"]
    assert sup["mrr"] >= sup["floor"]
    assert [i["kind"] for i in sup["inversions"]] == ["superseded-outranks"]
    assert "MRR" not in sup["line"]


def test_the_gate_probes_the_base_and_follows_keepers(actual: dict[str, Any]) -> None:
    gates = actual["gates"]
    # Archived with nothing standing for it: forgotten, and not probed.
    fold = gates["archive-near-duplicate"]
    assert fold["forgotten"] == 1 and fold["unfound"] == []
    assert "areas/infra/cache-policy.html" not in {r["path"] for r in fold["results"]}
    # Folded into a keeper: both its probes find the keeper where it used to be found.
    kept = gates["fold-into-keeper"]
    assert kept["passed"] and kept["followed"] == 1 and kept["forgotten"] == 0
    folded = [r for r in kept["results"] if r["path"] == "areas/infra/cache-policy.html"]
    assert [r["found_as"] for r in folded] == ["areas/infra/cache.html"] * 2
    assert all(r["after"] is not None for r in folded)
    # Rewritten to one word: probed by what the base said, so each is lost by name.
    qqq = gates["rewritten-titles"]
    assert not qqq["passed"] and len(qqq["unfound"]) == 5
    assert "found no more" in qqq["line"]
    assert {r["query"] for r in qqq["results"]}.isdisjoint({"qqq", "qqq."})


def test_expected_file_is_where_regen_writes_it() -> None:
    assert Path(__file__).with_name("expected.json") == EXPECTED
