"""PageRank, label-propagation communities and bridge counts over the memory graph.

These feed the ``pagerank`` and ``bridge_importance`` retention signals, so any
run-to-run wobble would change which memories are evicted from a corpus that
did not change. Determinism is therefore built in rather than hoped for: the
input is first reduced to a canonical graph (nodes sorted, each unordered pair
folded to its strongest edge, edges sorted), every loop walks that order, and
every tie breaks toward the smaller path. Nothing iterates a set or a hash map
whose order could follow ``PYTHONHASHSEED``, so any permutation of the input
edges gives bit-identical output.

The graph is undirected. A link is written into whichever file authored it,
so its direction records who wrote it rather than which memory depends on the
other, and centrality should not hinge on that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt

DAMPING: Final = 0.85
PAGERANK_MAX_ITERATIONS: Final = 100
PAGERANK_TOLERANCE: Final = 1e-10
"""L1 change between iterations below which PageRank has converged."""

PROPAGATION_MAX_SWEEPS: Final = 100
"""Bound on label-propagation sweeps; a sweep that changes no label ends it sooner."""

MIN_COMMUNITY_SIZE: Final = 3
"""Smaller groups are no community: a pair called a community would turn every edge
between two pairs into a bridge and inflate the bridge signal."""


@dataclass(frozen=True, slots=True)
class Edge:
    """An edge between two memory paths; ``strength`` is its weight, positive."""

    source: str
    target: str
    strength: float = 1.0


@dataclass(frozen=True, slots=True)
class CanonicalGraph:
    """The input reduced to one form that every ordering of it shares.

    ``left[k] < right[k]`` index into ``nodes``; edges are sorted by that pair.
    """

    nodes: tuple[str, ...]
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]

    @property
    def edge_count(self) -> int:
        return int(self.left.shape[0])


def canonical_graph(edges: Iterable[Edge], nodes: Iterable[str] = ()) -> CanonicalGraph:
    """Fold and sort the input. ``nodes`` adds isolated nodes.

    Self-loops say nothing about a memory's place among others, and a
    non-positive or non-finite strength is no edge; both are dropped.
    """
    folded: dict[tuple[str, str], float] = {}
    named: set[str] = set(nodes)
    for edge in edges:
        a, b, w = edge.source, edge.target, edge.strength
        # A dropped edge still names its paths: every memory it mentions is a node.
        named.add(a)
        named.add(b)
        if a == b or not (math.isfinite(w) and w > 0.0):
            continue
        key = (a, b) if a < b else (b, a)
        # Parallel edges fold to their maximum, an order-free choice (a sum
        # would be too, but would let a file linking twice count twice).
        previous = folded.get(key)
        if previous is None or w > previous:
            folded[key] = w
    names = sorted(named)
    index = {name: i for i, name in enumerate(names)}
    pairs = sorted((index[a], index[b], w) for (a, b), w in folded.items())
    return CanonicalGraph(
        nodes=tuple(names),
        left=np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs)),
        right=np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs)),
        weight=np.fromiter((p[2] for p in pairs), dtype=np.float64, count=len(pairs)),
    )


def _arcs(
    graph: CanonicalGraph,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Both directions of every edge, sorted by (source, target)."""
    src = np.concatenate([graph.left, graph.right])
    dst = np.concatenate([graph.right, graph.left])
    w = np.concatenate([graph.weight, graph.weight])
    order = np.lexsort((dst, src))
    return src[order], dst[order], w[order]


def pagerank_scores(
    graph: CanonicalGraph,
    damping: float = DAMPING,
    max_iterations: int = PAGERANK_MAX_ITERATIONS,
    tolerance: float = PAGERANK_TOLERANCE,
) -> npt.NDArray[np.float64]:
    """Weighted PageRank by power iteration, indexed like ``graph.nodes``; sums to 1.

    A node with no edges spreads its rank evenly, so rank is conserved. The
    sums run in the canonical arc order (``bincount`` adds sequentially), which
    is what fixes the floating-point result.
    """
    n = len(graph.nodes)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    src, dst, w = _arcs(graph)
    out_weight = np.bincount(src, weights=w, minlength=n)
    dangling = out_weight == 0.0
    share = w / out_weight[src] if w.size else w
    rank = np.full(n, 1.0 / n)
    for _ in range(max_iterations):
        inflow = np.bincount(dst, weights=rank[src] * share, minlength=n)
        leaked = float(rank[dangling].sum())
        updated = (1.0 - damping) / n + damping * (inflow + leaked / n)
        delta = float(np.abs(updated - rank).sum())
        rank = updated
        if delta < tolerance:
            break
    return rank


def pagerank(
    edges: Iterable[Edge], nodes: Iterable[str] = (), damping: float = DAMPING
) -> Mapping[str, float]:
    """PageRank per path, in path order."""
    graph = canonical_graph(edges, nodes)
    scores = pagerank_scores(graph, damping)
    return MappingProxyType(dict(zip(graph.nodes, scores.tolist(), strict=True)))


def propagate_labels(
    graph: CanonicalGraph, max_sweeps: int = PROPAGATION_MAX_SWEEPS
) -> tuple[int, ...]:
    """Asynchronous label propagation; returns each node's final label index.

    Each node starts as its own label. Sweeps visit nodes in sorted order and
    move each to the label with the greatest incident strength among its
    neighbors, the smallest label on a tie (labels are node indices, and
    indices follow path order, so smallest index is lexicographically smallest
    path). No random visiting order and no random tie-break: two runs agree.
    """
    n = len(graph.nodes)
    src, dst, w = _arcs(graph)
    starts = np.searchsorted(src, np.arange(n + 1)).tolist()
    neighbors = dst.tolist()
    weights = w.tolist()
    adjacency = [
        tuple(
            zip(
                neighbors[starts[i] : starts[i + 1]],
                weights[starts[i] : starts[i + 1]],
                strict=True,
            )
        )
        for i in range(n)
    ]
    labels = list(range(n))
    for _ in range(max_sweeps):
        changed = False
        for node, incident in enumerate(adjacency):
            if not incident:
                continue
            tally: dict[int, float] = {}
            for neighbor, strength in incident:
                label = labels[neighbor]
                tally[label] = tally.get(label, 0.0) + strength
            best = max(tally.values())
            chosen = min(label for label, total in tally.items() if total == best)
            if chosen != labels[node]:
                labels[node] = chosen
                changed = True
        if not changed:
            break
    return tuple(labels)


def communities_of(graph: CanonicalGraph, labels: tuple[int, ...]) -> tuple[str | None, ...]:
    """Each node's community named by its smallest member path, or ``None`` below the floor.

    Naming a community by its smallest member makes the labels themselves, not
    only the grouping, identical between runs.
    """
    sizes: dict[int, int] = {}
    smallest: dict[int, int] = {}
    for node, label in enumerate(labels):
        sizes[label] = sizes.get(label, 0) + 1
        smallest.setdefault(label, node)  # nodes ascend, so the first seen is smallest
    return tuple(
        graph.nodes[smallest[label]] if sizes[label] >= MIN_COMMUNITY_SIZE else None
        for label in labels
    )


def label_propagation(edges: Iterable[Edge], nodes: Iterable[str] = ()) -> Mapping[str, str | None]:
    """Community per path, in path order: its smallest member path, or ``None``."""
    graph = canonical_graph(edges, nodes)
    named = communities_of(graph, propagate_labels(graph))
    return MappingProxyType(dict(zip(graph.nodes, named, strict=True)))


def bridge_counts_of(graph: CanonicalGraph, communities: tuple[str | None, ...]) -> tuple[int, ...]:
    """Edges from each node into a different community, indexed like ``graph.nodes``.

    A bridge joins two communities, so both ends must have one: a node in no
    community counts 0 (not its whole degree), and an edge to such a node is
    not a bridge either.
    """
    counts = [0] * len(graph.nodes)
    for a, b in zip(graph.left.tolist(), graph.right.tolist(), strict=True):
        ca, cb = communities[a], communities[b]
        if ca is not None and cb is not None and ca != cb:
            counts[a] += 1
            counts[b] += 1
    return tuple(counts)


@dataclass(frozen=True, slots=True)
class GraphAnalysis:
    """Everything retention reads from the graph, each mapping in path order."""

    pagerank: Mapping[str, float]
    communities: Mapping[str, str | None]
    bridges: Mapping[str, int]

    @property
    def max_pagerank(self) -> float:
        return max(self.pagerank.values(), default=0.0)


def analyze_graph(edges: Iterable[Edge], nodes: Iterable[str] = ()) -> GraphAnalysis:
    """PageRank, communities and bridge counts from one canonical graph."""
    graph = canonical_graph(edges, nodes)
    ranks = pagerank_scores(graph).tolist()
    named = communities_of(graph, propagate_labels(graph))
    bridges = bridge_counts_of(graph, named)
    return GraphAnalysis(
        pagerank=MappingProxyType(dict(zip(graph.nodes, ranks, strict=True))),
        communities=MappingProxyType(dict(zip(graph.nodes, named, strict=True))),
        bridges=MappingProxyType(dict(zip(graph.nodes, bridges, strict=True))),
    )


def bridge_counts(edges: Iterable[Edge], nodes: Iterable[str] = ()) -> Mapping[str, int]:
    """Bridge count per path, communities found by ``label_propagation``."""
    return analyze_graph(edges, nodes).bridges
