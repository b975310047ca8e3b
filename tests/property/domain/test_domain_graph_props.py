"""Graph analysis is a function of the edge set: input order and hash seed do not matter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.graph import Edge, analyze_graph, canonical_graph, pagerank_scores

NODES = [f"areas/n{i:02d}.html" for i in range(14)]
edges_strategy = st.lists(
    st.builds(
        Edge,
        st.sampled_from(NODES),
        st.sampled_from(NODES),
        st.sampled_from([0.25, 0.5, 0.8, 0.9, 1.0]),
    ),
    max_size=60,
)


def _flipped(edges: list[Edge]) -> list[Edge]:
    return [Edge(e.target, e.source, e.strength) for e in edges]


@settings(max_examples=150, deadline=None)
@given(st.data(), edges_strategy)
def test_any_edge_permutation_gives_identical_results(
    data: st.DataObject, edges: list[Edge]
) -> None:
    expected = analyze_graph(edges)
    shuffled = data.draw(st.permutations(edges))
    flips = data.draw(st.lists(st.booleans(), min_size=len(edges), max_size=len(edges)))
    reordered = [
        Edge(e.target, e.source, e.strength) if f else e
        for e, f in zip(shuffled, flips, strict=True)
    ]
    actual = analyze_graph(reordered)
    # Exact equality, floats included: the canonical order fixes the summation.
    assert dict(actual.pagerank) == dict(expected.pagerank)
    assert dict(actual.communities) == dict(expected.communities)
    assert dict(actual.bridges) == dict(expected.bridges)
    assert dict(analyze_graph(_flipped(edges)).pagerank) == dict(expected.pagerank)


@settings(max_examples=100, deadline=None)
@given(edges_strategy)
def test_community_labels_are_smallest_members_and_bridges_need_two_communities(
    edges: list[Edge],
) -> None:
    analysis = analyze_graph(edges)
    members: dict[str, list[str]] = {}
    for path, label in analysis.communities.items():
        if label is None:
            assert analysis.bridges[path] == 0
        else:
            members.setdefault(label, []).append(path)
    for label, group in members.items():
        assert label == min(group)
        assert len(group) >= 3
    graph = canonical_graph(edges)
    assert abs(sum(pagerank_scores(graph).tolist()) - 1.0) < 1e-9 or not graph.nodes


_SCRIPT = """
import json, random
from memhtml.domain.graph import Edge, analyze_graph
rng = random.Random(11)
nodes = [f"areas/t{i % 7}/m{i:03d}.html" for i in range(300)]
edges = set()
while len(edges) < 1200:
    a = rng.randrange(300)
    b = (a // 30) * 30 + rng.randrange(30) if rng.random() < 0.85 else rng.randrange(300)
    edges.add(Edge(nodes[a], nodes[b], rng.choice([0.5, 0.86, 0.9, 1.0])))
result = analyze_graph(edges)  # a set: iteration order follows the hash seed
print(json.dumps([list(result.pagerank.items()), list(result.communities.items()),
                  list(result.bridges.items())]))
"""


def _run(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    src = str(Path(__file__).resolve().parents[3] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_results_do_not_depend_on_the_hash_seed() -> None:
    first, second = _run("1"), _run("4242")
    assert first == second
    pagerank, communities, _ = json.loads(first)
    assert len(pagerank) == 300
    assert any(label is not None for _, label in communities)
