"""PageRank, label propagation and bridge counts."""

from __future__ import annotations

import math

from memhtml.domain.graph import (
    Edge,
    analyze_graph,
    bridge_counts,
    canonical_graph,
    label_propagation,
    pagerank,
)


def test_canonical_graph_folds_parallel_edges_to_their_maximum() -> None:
    graph = canonical_graph(
        [Edge("b", "a", 0.3), Edge("a", "b", 0.9), Edge("a", "a", 1.0), Edge("a", "c", -1.0)],
        nodes=["z"],
    )
    assert graph.nodes == ("a", "b", "c", "z")
    assert graph.edge_count == 1
    assert graph.weight.tolist() == [0.9]


def test_pagerank_sums_to_one_and_favors_the_hub() -> None:
    ranks = pagerank([Edge("hub", leaf) for leaf in ("a", "b", "c", "d")], nodes=["lonely"])
    assert math.isclose(math.fsum(ranks.values()), 1.0)
    assert max(ranks, key=lambda p: ranks[p]) == "hub"
    assert list(ranks) == sorted(ranks)


def test_pagerank_of_nothing_is_empty() -> None:
    assert dict(pagerank([])) == {}


def test_two_triangles_joined_by_one_edge() -> None:
    edges = [
        Edge("a1", "a2"), Edge("a2", "a3"), Edge("a1", "a3"),
        Edge("b1", "b2"), Edge("b2", "b3"), Edge("b1", "b3"),
        Edge("a3", "b1", 0.5),
    ]  # fmt: skip
    communities = label_propagation(edges)
    assert {p: communities[p] for p in ("a1", "a2", "a3")} == dict.fromkeys(
        ("a1", "a2", "a3"), "a1"
    )
    assert {p: communities[p] for p in ("b1", "b2", "b3")} == dict.fromkeys(
        ("b1", "b2", "b3"), "b1"
    )
    bridges = bridge_counts(edges)
    assert bridges["a3"] == 1
    assert bridges["b1"] == 1
    assert bridges["a1"] == 0


def test_small_groups_are_no_community_and_count_no_bridges() -> None:
    edges = [Edge("p", "q"), Edge("q", "x1"), Edge("x1", "x2"), Edge("x2", "x3"), Edge("x1", "x3")]
    analysis = analyze_graph([*edges, Edge("r", "s")])
    assert analysis.communities["r"] is None
    assert analysis.communities["s"] is None
    assert analysis.bridges["r"] == 0
    assert analysis.max_pagerank == max(analysis.pagerank.values())
