"""A crowd of clones syncing through one remote, at the level of ``merge_trees``.

The real crowd test (tests/integration/sync/test_sync_many.py) runs eight processes
over git daemon and, now and then, found one fact at two paths. Its schedules are
the machine's, so a failure could not be replayed. Here the same shape is a
hypothesis state machine over in-memory commits: clones write facts whose titles
repeat across clones (so file names collide), sync in any order (fetch, merge fact
by fact against a merge base, push only a descendant of the remote), and after every
sync each fact a clone has seen is held by exactly one live memory of its tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from returns.result import Success

from memhtml.format import NewMemoryInput, new_memory_doc, parse_memory_hashed, serialize_memory
from memhtml.sync import merge_trees

Tree = dict[str, bytes]
CLONES = 4
TITLES = 3
"""Few titles, so most writes land on a name another clone also wrote."""


@dataclass
class Graph:
    """Commits by id: their trees and parents. Ids grow, so ``max`` is the newest."""

    trees: dict[int, Tree] = field(default_factory=dict)
    parents: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def add(self, tree: Tree, parents: tuple[int, ...]) -> int:
        sha = len(self.trees)
        self.trees[sha], self.parents[sha] = dict(tree), parents
        return sha

    def ancestors(self, sha: int) -> set[int]:
        seen, todo = set(), [sha]
        while todo:
            at = todo.pop()
            if at not in seen:
                seen.add(at)
                todo.extend(self.parents[at])
        return seen

    def merge_base(self, a: int, b: int) -> int:
        """A best common ancestor (none of the others descends from it), the newest
        when several are: git picks one of them too."""
        common = self.ancestors(a) & self.ancestors(b)
        best = [c for c in common
                if not any(c != o and c in self.ancestors(o) for o in common)]
        return max(best)


def fact(clone: int, number: int, title: int, at: str) -> bytes:
    doc = new_memory_doc(NewMemoryInput(
        title=f"Fact {title}", claim=f"Clone {clone} recorded fact {number}.",
        memory_type="semantic", at=at))
    return serialize_memory(doc).encode("utf-8")


def free_name(tree: Mapping[str, bytes], title: int) -> str:
    """The write door's rule: the title's slug, then -2, -3... while taken."""
    stem = f"areas/inbox/fact-{title}"
    if f"{stem}.html" not in tree:
        return f"{stem}.html"
    n = 2
    while f"{stem}-{n}.html" in tree:
        n += 1
    return f"{stem}-{n}.html"


def claims_of(tree: Mapping[str, bytes]) -> dict[str, list[str]]:
    held: dict[str, list[str]] = {}
    for path, blob in tree.items():
        match parse_memory_hashed(blob.decode("utf-8")):
            case Success((doc, _)):
                if doc.metas.status == "active" and "sync-conflict" not in doc.tags:
                    held.setdefault(doc.article.gist, []).append(path)
            case _:
                pass
    return held


class CrowdMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.graph = Graph()
        root = self.graph.add({}, ())
        self.remote = root
        self.local = [root] * CLONES
        self.written = [0] * CLONES
        self.clock = 0

    def stamp(self) -> str:
        """The write clock's second, as an instant (writes may share one)."""
        return (f"2026-01-01T{self.clock // 3600 % 24:02d}:{self.clock // 60 % 60:02d}:"
                f"{self.clock % 60:02d}Z")

    @rule(clone=st.integers(0, CLONES - 1), title=st.integers(0, TITLES - 1),
          same_second=st.booleans())
    def write(self, clone: int, title: int, same_second: bool) -> None:
        tree = dict(self.graph.trees[self.local[clone]])
        if not same_second:
            self.clock += 1
        tree[free_name(tree, title)] = fact(clone, self.written[clone], title, self.stamp())
        self.written[clone] += 1
        self.local[clone] = self.graph.add(tree, (self.local[clone],))

    @rule(clone=st.integers(0, CLONES - 1), push_lost=st.booleans())
    def sync(self, clone: int, push_lost: bool) -> None:
        """``push_lost``: another clone pushed first, so this merge stays local and a
        later sync merges again from it, as a lost push race leaves a clone."""
        mine, theirs = self.local[clone], self.remote
        if theirs in self.graph.ancestors(mine):
            self.remote = mine
            return
        if mine in self.graph.ancestors(theirs):
            self.local[clone] = theirs
            return
        base = self.graph.merge_base(mine, theirs)
        trees = self.graph.trees
        merged = merge_trees(trees[base], trees[mine], trees[theirs])
        tree = merged.applied_to(trees[mine])
        self.local[clone] = self.graph.add(tree, (mine, theirs))
        if not push_lost:
            self.remote = self.local[clone]

    @invariant()
    def every_fact_is_held_once(self) -> None:
        for clone in range(CLONES):
            tree = self.graph.trees[self.local[clone]]
            twice = {c: p for c, p in claims_of(tree).items() if len(p) != 1}
            assert not twice, (clone, twice)


CrowdMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=30)
TestCrowdMachine = CrowdMachine.TestCase
