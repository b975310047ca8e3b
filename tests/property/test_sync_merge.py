"""Laws of ``merge_trees`` over generated divergent histories.

A base store of a few memories, then each side applies random ops (add, edit the
article, edit the head, archive-move, delete, create at a path the other side may
also create at), the way two clones drift apart between syncs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.contracts.record import Link
from memhtml.format import (
    NewMemoryInput,
    add_link,
    add_meta,
    check_memory,
    new_memory_doc,
    parse_memory_hashed,
    read_links,
    remove_link,
    serialize_memory,
    set_meta,
)
from memhtml.head import is_candidate_path
from memhtml.sync import merge_trees

Tree = dict[str, bytes]
STAMPS = ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z")
CLAIMS = ("Deploys run from main.", "Deploys run from tags.", "Caches expire hourly.",
          "Backups run nightly.", "Tests shard by file.")
TAGS = ("ops", "ci", "speed")
SLOTS = tuple(f"areas/inbox/m{i}.html" for i in range(3))
"""Few paths, so the two sides keep meeting on one: the base fills one or two."""


def memory(claim: str, at: str, title: str = "Fact") -> bytes:
    doc = new_memory_doc(NewMemoryInput(title=title, claim=claim, memory_type="semantic",
                                        at=at))
    return serialize_memory(doc).encode("utf-8")


@dataclass(frozen=True)
class Op:
    kind: str
    slot: int
    claim: str
    at: str
    tag: str


KINDS = ("add", "add", "article", "head", "head", "archive", "delete")
"""Weighted towards the ops that make two sides disagree about one path."""


def ops(focus: int) -> st.SearchStrategy[Op]:
    """Ops that mostly land on one slot both sides share, so they meet there."""
    slot = st.one_of(st.just(focus), st.integers(0, len(SLOTS) - 1))
    return st.builds(Op, st.sampled_from(KINDS), slot, st.sampled_from(CLAIMS),
                     st.sampled_from(STAMPS), st.sampled_from(TAGS))


def _rewrite_links(tree: Tree, old: str, new: str) -> None:
    for path, data in sorted(tree.items()):
        text = data.decode("utf-8")
        for link in read_links(text):
            if link.href == old:
                text = add_link(remove_link(text, link.rel, old), link.rel, new)
        tree[path] = text.encode("utf-8")


def apply(tree: Tree, op: Op) -> Tree:
    out = dict(tree)
    path = SLOTS[op.slot]
    held = out.get(path)
    if op.kind == "add" and held is None:
        out[path] = memory(op.claim, op.at)
    elif held is None:
        return out
    elif op.kind == "article":
        created = STAMPS[0]
        text = memory(op.claim, op.at).decode()
        out[path] = set_meta(text, "memhtml-created", created).encode()
    elif op.kind == "head":
        text = add_meta(held.decode(), "memhtml-tag", op.tag)
        other = SLOTS[(op.slot + 1) % len(SLOTS)]
        text = add_link(text, "relates_to", f"/{other}")
        out[path] = set_meta(text, "memhtml-updated", op.at).encode()
    elif op.kind == "archive":
        moved = f"archive/{op.at[:4]}/{path}"
        if moved in out:
            return out
        text = set_meta(held.decode(), "memhtml-status", "archived")
        text = set_meta(text, "memhtml-archived", op.at)
        text = set_meta(text, "memhtml-updated", op.at)
        del out[path]
        out[moved] = text.encode()
        _rewrite_links(out, f"/{path}", f"/{moved}")
    elif op.kind == "delete":
        del out[path]
    return out


@st.composite
def histories(draw: st.DrawFn) -> tuple[Tree, Tree, Tree]:
    base: Tree = {}
    for slot in draw(st.sets(st.integers(0, len(SLOTS) - 1), min_size=1, max_size=2)):
        base[SLOTS[slot]] = memory(draw(st.sampled_from(CLAIMS)), STAMPS[0])
    sides = []
    focus = draw(st.integers(0, len(SLOTS) - 1))
    for _ in range(2):
        tree = base
        for op in draw(st.lists(ops(focus), min_size=1, max_size=5)):
            tree = apply(tree, op)
        sides.append(tree)
    return base, sides[0], sides[1]



def hashes(tree: Mapping[str, bytes], paths: list[str]) -> set[str]:
    found = set()
    for path in paths:
        if is_candidate_path(path):
            match parse_memory_hashed(tree[path].decode("utf-8")):
                case Success((_, str() as article_hash)):
                    found.add(article_hash)
                case _:
                    pass
    return found


class Unlisted(dict[str, bytes]):
    """A tree that may be looked up but never listed, as a lazy git tree is."""

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the merge listed a whole tree")


def changed_paths(base: Tree, one: Tree, two: Tree) -> set[str]:
    return {p for side in (one, two) for p in {*base, *side} if base.get(p) != side.get(p)}


@settings(max_examples=60)
@given(histories())
def test_merge_laws(history: tuple[Tree, Tree, Tree]) -> None:
    base, ours, theirs = history
    merge = merge_trees(base, ours, theirs)
    result = merge.applied_to(ours)
    # 2. deterministic; 3. symmetric, and either side reaches the same tree.
    assert merge_trees(base, ours, theirs) == merge
    assert merge_trees(base, theirs, ours) == merge
    assert merge.applied_to(theirs) == result
    # 1. every memory version a side wrote is somewhere in the result.
    kept = hashes(result, sorted(result))
    for side in (ours, theirs):
        assert hashes(side, sorted(p for p in side if side[p] != base.get(p))) <= kept
    # 5. every memory file in the result passes the checker.
    for path in sorted(result):
        if is_candidate_path(path):
            assert check_memory(result[path].decode("utf-8")).violations == ()
    # 6. given the change list, the trees are looked up, never listed.
    changed = changed_paths(base, ours, theirs)
    assert merge_trees(Unlisted(base), Unlisted(ours), Unlisted(theirs), changed) == merge
    assert sorted(merge.events, key=lambda e: (e.path, e.kind)) == list(merge.events)


@settings(max_examples=30)
@given(histories())
def test_merge_identities(history: tuple[Tree, Tree, Tree]) -> None:
    base, ours, theirs = history
    # 4. a side merged with itself is itself; a side merged onto its own base is it.
    assert merge_trees(base, ours, ours).applied_to(ours) == ours
    assert merge_trees(ours, ours, theirs).applied_to(ours) == theirs
    assert merge_trees(ours, ours, theirs).events == ()


def test_links_in_generated_histories_are_root_relative() -> None:
    tree = apply({SLOTS[0]: memory(CLAIMS[0], STAMPS[0])},
                 Op("head", 0, CLAIMS[0], STAMPS[1], "ops"))
    assert read_links(tree[SLOTS[0]].decode()) == (Link("relates_to", f"/{SLOTS[1]}"),)
