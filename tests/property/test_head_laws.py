"""Laws of the head: delta equals full rebuild, sharing, overlays, the gate."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.contracts.ops import Archive, Label, LinkOp, Move, OverlayOp, Put, Unlabel, UnlinkOp
from memhtml.format import add_link, add_meta, remove_link, remove_meta, set_meta
from memhtml.head import (
    HeadVersion,
    SearchHeadInput,
    advance_head,
    blob_sha_of,
    gate_heads,
    load_head,
    search_head,
    with_overlay,
)
from tests.property.head_support import archived, commit, memory, new_repo, run

WORDS = ["deploy", "canary", "cache", "queue", "retry", "backoff", "schema", "index",
         "vector", "token", "budget", "latency", "region", "failover", "ledger", "audit"]
QUERIES = ["deploy canary", "cache latency", "retry backoff queue", "schema index", "audit",
           "region failover budget"]

sentence = st.lists(st.sampled_from(WORDS), min_size=2, max_size=7).map(" ".join)
names = st.sampled_from([f"areas/{a}/{b}.html" for a in ("ops", "data") for b in "abcdefgh"])


def _search_all(version: HeadVersion) -> list[list[tuple[str, float]]]:
    return [[(h.path, h.score) for h in search_head(version, SearchHeadInput(q, limit=20))]
            for q in QUERIES]


@st.composite
def chains(draw: st.DrawFn) -> list[list[tuple[str, str, str]]]:
    """Commits, each a list of (kind, path, text) steps."""
    steps = draw(st.lists(
        st.lists(st.tuples(
            st.sampled_from(["add", "edit", "touch", "rename", "archive", "delete", "invalid",
                             "other"]),
            names, sentence, sentence), min_size=1, max_size=3),
        min_size=1, max_size=6))
    return [[(k, p, f"{a}|{b}") for k, p, a, b in commit_steps] for commit_steps in steps]


def _apply(tree: dict[str, str], kind: str, path: str, text: str) -> None:
    claim, body = text.split("|")
    live = sorted(p for p in tree if p.endswith(".html") and not p.startswith("archive/"))
    target = live[hash(path) % len(live)] if live else None
    if kind == "add" or target is None:
        tree[path] = memory(claim.title(), claim + ".", body)
    elif kind == "edit":
        tree[target] = memory(claim.title(), claim + " changed.", body)
    elif kind == "touch":
        tree[target] = set_meta(tree[target], "memhtml-updated", "2026-12-01T00:00:00Z")
    elif kind == "rename":
        tree[path.replace(".html", "-moved.html")] = tree.pop(target)
    elif kind == "archive":
        tree["archive/2026/" + target] = archived(tree.pop(target))
    elif kind == "delete":
        del tree[target]
    elif kind == "invalid":
        tree[path] = "<!doctype html><html><head><title>x</title></head><body></body></html>"
    else:
        tree["areas/index.html"] = "<p>generated</p>"
        tree[".gitattributes"] = "index.html merge=ours\n"


@settings(max_examples=25)
@given(chains())
def test_advancing_a_chain_equals_loading_its_tip(chain: list[list[tuple[str, str, str]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        tree: dict[str, str] = {"areas/seed.html": memory("Seed", "deploy canary seed.")}
        sha = commit(git, None, dict(tree))
        version = run(load_head(git, sha))
        for steps in chain:
            before = dict(tree)
            for kind, path, text in steps:
                _apply(tree, kind, path, text)
            changes: dict[str, str | None] = {p: v for p, v in tree.items() if before.get(p) != v}
            changes.update({p: None for p in before if p not in tree})
            sha = commit(git, sha, changes)
            parent, version = version, run(advance_head(git, version, sha))
            for path in parent.indexes.records:
                if path not in changes:
                    assert version.get(path) is parent.get(path)
        loaded = run(load_head(git, sha))
        assert version.indexes == loaded.indexes
        assert version.skipped_files == loaded.skipped_files
        assert _search_all(version) == _search_all(loaded)


@given(st.text(max_size=200))
def test_blob_sha_matches_git(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert blob_sha_of(text) == str(pygit2.hash(data))


def _ops_to_tree(tree: dict[str, str], op: OverlayOp) -> None:
    """What committing an op does to a tree: the model the overlay must match."""
    match op:
        case Put(path=path, html=html):
            tree[path] = html
        case Archive(path=path, to=to, html=html):
            del tree[path]
            tree[to] = html
        case LinkOp(path=path, rel=rel, href=href):
            tree[path] = add_link(tree[path], rel, href)
        case UnlinkOp(path=path, rel=rel, href=href):
            tree[path] = remove_link(tree[path], rel, href)
        case Label(path=path, entity=entity):
            tree[path] = add_meta(tree[path], "memhtml-entity", entity)
        case Unlabel(path=path, entity=entity):
            tree[path] = remove_meta(tree[path], "memhtml-entity", entity)
        case Move(path=path, to=to):
            tree[to] = tree.pop(path)


@st.composite
def op_lists(draw: st.DrawFn) -> list[OverlayOp]:
    tree = {f"areas/m{i}.html" for i in range(3)}
    ops: list[OverlayOp] = []
    for i in range(draw(st.integers(1, 6))):
        live = sorted(p for p in tree if not p.startswith("archive/"))
        kind = draw(st.sampled_from(["put", "archive", "link", "label", "move", "unlink"]))
        if kind == "put" or not live:
            path = f"areas/new{i}.html"
            ops.append(Put(path, memory(f"New {i}", draw(sentence) + ".")))
            tree.add(path)
            continue
        path = draw(st.sampled_from(live))
        if kind == "archive":
            ops.append(Archive(path, "archive/2026/" + path, archived(memory("Gone", "gone."))))
            tree.discard(path)
            tree.add("archive/2026/" + path)
        elif kind == "link":
            ops.append(LinkOp(path, "relates_to", "/areas/m0.html"))
        elif kind == "unlink":
            ops.append(LinkOp(path, "supports", "/areas/x.html"))
            ops.append(UnlinkOp(path, "supports", "/areas/x.html"))
        elif kind == "label":
            ops.append(Label(path, "service:api"))
            if draw(st.booleans()):
                ops.append(Unlabel(path, "service:api"))
        else:
            to = path.replace(".html", f"-{i}.html")
            ops.append(Move(path, to))
            tree.discard(path)
            tree.add(to)
    return ops


@settings(max_examples=25)
@given(op_lists())
def test_overlay_equals_the_committed_tree(ops: list[OverlayOp]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        tree = {f"areas/m{i}.html": memory(f"M{i}", f"memory {WORDS[i]} number {i}.")
                for i in range(3)}
        sha = commit(git, None, dict(tree))
        base = run(load_head(git, sha))
        overlaid = with_overlay(base, ops)
        assert isinstance(overlaid, Success)
        after = dict(tree)
        for op in ops:
            _ops_to_tree(after, op)
        changes: dict[str, str | None] = {p: v for p, v in after.items() if tree.get(p) != v}
        changes.update({p: None for p in tree if p not in after})
        landed = run(load_head(git, commit(git, sha, changes)))
        assert overlaid.unwrap().indexes == landed.indexes


@settings(max_examples=10)
@given(st.lists(sentence, min_size=1, max_size=12))
def test_gate_of_a_version_with_itself_passes(claims: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        tree = {f"areas/n{i}.html": memory(c.title(), c + ".") for i, c in enumerate(claims)}
        version = run(load_head(git, commit(git, None, tree)))
        report = gate_heads(version, version)
        assert report.passed
        assert report.mrr == report.mrr_before
