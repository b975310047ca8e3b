"""Laws of the head: delta equals full rebuild, sharing, overlays, the gate."""

from __future__ import annotations

import dataclasses
import os
import random
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import assert_never
from unittest.mock import patch

import pygit2
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.adapters.git import PygitService
from memhtml.contracts.ops import (
    Archive,
    Label,
    LinkOp,
    Move,
    OverlayOp,
    Put,
    Unarchive,
    Unlabel,
    UnlinkOp,
)
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import MemoryStatus
from memhtml.format import add_link, add_meta, remove_link, remove_meta, set_meta
from memhtml.head import (
    IndexedView,
    Indexes,
    SearchHeadInput,
    advance_head,
    blob_sha_of,
    build_indexes,
    gate_heads,
    insert_record,
    is_active,
    is_candidate_path,
    load_head,
    remove_record,
    search_head,
    view_of,
    with_overlay,
)
from memhtml.head import indexes as indexes_module
from memhtml.head.indexes import replace_paths
from tests.property.head_support import (
    archived,
    commit,
    fingerprint,
    holders_after_advance,
    least_active_twins,
    memory,
    new_repo,
    record_at,
    run,
    without_holders,
)

WORDS = ["deploy", "canary", "cache", "queue", "retry", "backoff", "schema", "index",
         "vector", "token", "budget", "latency", "region", "failover", "ledger", "audit"]
QUERIES = ["deploy canary", "cache latency", "retry backoff queue", "schema index", "audit",
           "region failover budget"]

sentence = st.lists(st.sampled_from(WORDS), min_size=2, max_size=7).map(" ".join)
_POOL_RANDOM = random.Random(20261206)
SENTENCES = [" ".join(_POOL_RANDOM.choices(WORDS, k=_POOL_RANDOM.randint(2, 7)))
             for _ in range(512)]
pooled_sentence = st.sampled_from(SENTENCES)
"""A sentence as one draw, for strategies that build dozens of records an example:
drawn word by word, their texts cost nine tenths of the bulk law's time."""
names = st.sampled_from([f"areas/{a}/{b}.html" for a in ("ops", "data") for b in "abcdefgh"])
picks = st.integers(min_value=0, max_value=2**16)
"""Which live file a step acts on, modulo their count: a derivation that does not
change with PYTHONHASHSEED, as ``hash()`` of a string does."""


def _examples(ci: int) -> int:
    """A repository-backed law runs ``ci`` examples in CI, where its time is the
    suite's; any other profile (``HYPOTHESIS_PROFILE=dev``) runs the profile's count."""
    profile = settings.default
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" or profile is None:
        return ci
    return profile.max_examples


def _search_all(version: IndexedView) -> list[list[tuple[str, float]]]:
    return [[(h.path, h.score) for h in search_head(version, SearchHeadInput(q, limit=20))]
            for q in QUERIES]


Step = tuple[str, str, str, int]
"""(kind, path, "claim|body", pick): ``pick`` chooses the live file a step acts on."""

KINDS = ["add", "copy", "edit", "touch", "rename", "archive", "delete", "invalid", "other"]


@st.composite
def chains(draw: st.DrawFn) -> list[list[Step]]:
    """Commits, each a list of steps."""
    steps = draw(st.lists(
        st.lists(st.tuples(st.sampled_from(KINDS), names, sentence, sentence, picks),
                 min_size=1, max_size=3),
        min_size=1, max_size=6))
    return [[(k, p, f"{a}|{b}", i) for k, p, a, b, i in commit_steps] for commit_steps in steps]


def _apply(tree: dict[str, str], kind: str, path: str, text: str, pick: int) -> None:
    claim, body = text.split("|")
    live = sorted(p for p in tree if p.endswith(".html") and not p.startswith("archive/"))
    target = live[pick % len(live)] if live else None
    if kind == "add" or target is None:
        tree[path] = memory(claim.title(), claim + ".", body)
    elif kind == "copy":
        tree[path] = tree[target]  # a byte-identical twin: same content hash, same blob
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


SEED = {"areas/seed.html": memory("Seed", "deploy canary seed.")}


def _commit_chain(
    git: PygitService, chain: list[list[Step]]
) -> tuple[str, list[tuple[str, set[str]]]]:
    """Commit the seed tree, then one commit per step list: the seed's sha, and each
    later commit's sha with the paths it changed."""
    tree = dict(SEED)
    sha = first = commit(git, None, dict(tree))
    commits: list[tuple[str, set[str]]] = []
    for steps in chain:
        before = dict(tree)
        for kind, path, text, pick in steps:
            _apply(tree, kind, path, text, pick)
        changes: dict[str, str | None] = {p: v for p, v in tree.items() if before.get(p) != v}
        changes.update({p: None for p in before if p not in tree})
        sha = commit(git, sha, changes)
        commits.append((sha, set(changes)))
    return first, commits


SEED_TWIN_BEFORE_IT: list[list[Step]] = [[("copy", "areas/data/a.html", "x|y", 0)]]
"""A twin of ``areas/seed.html`` at a path that sorts before it: advancing keeps the
seed as holder, a load of the same tree gives the slot to the twin."""


def _rebuilding(bulk: bool) -> AbstractContextManager[object]:
    """Every advance inside takes ``replace_paths``' bulk path when ``bulk``: the
    threshold set to zero changed paths, since these trees are far below it."""
    if not bulk:
        return nullcontext()
    return patch.multiple(indexes_module, REBUILD_MINIMUM=0, REBUILD_FRACTION=0.0)


@settings(max_examples=_examples(25))
@example(SEED_TWIN_BEFORE_IT, False)
@example(SEED_TWIN_BEFORE_IT, True)
@given(chains(), st.booleans())
def test_advancing_a_chain_equals_loading_its_tip_but_for_twin_holders(
    chain: list[list[Step]], bulk: bool,
) -> None:
    """advance* == load on records, every index but the content-hash slots, skips and
    ranking; a slot follows ``holders_after_advance`` at every step, the per-path fold
    and the bulk rebuild alike, and a load's holder is the least active twin."""
    with tempfile.TemporaryDirectory() as tmp, _rebuilding(bulk):
        git = new_repo(Path(tmp))
        first, commits = _commit_chain(git, chain)
        version = run(load_head(git, first))
        for sha, changed in commits:
            parent, version = version, run(advance_head(git, version, sha))
            for path in parent.indexes.records:
                if path not in changed:
                    assert version.get(path) is parent.get(path)
            assert dict(version.indexes.by_content_hash.items()) == holders_after_advance(
                parent.indexes, version.indexes, filter(is_candidate_path, changed))
        loaded = run(load_head(git, commits[-1][0]))
        assert without_holders(version.indexes) == without_holders(loaded.indexes)
        assert dict(loaded.indexes.by_content_hash.items()) == least_active_twins(loaded)
        if loaded.indexes.by_content_hash != version.indexes.by_content_hash:
            event("the twin holders differ from a load's")
        assert version.skipped_files == loaded.skipped_files
        assert _search_all(version) == _search_all(loaded)


TEMPLATE = record_at("areas/template.html", memory("Template", "template."))
UNIVERSE = [f"areas/{i:02d}.html" for i in range(72)] + ["archive/2026/a.html",
                                                          "archive/2026/b.html"]
HASHES = [f"sha256:{i}" for i in range(6)]
"""A few content hashes for many records, so twins (and their holder slots) abound."""
ENTITIES = ["team:sre", "service:api", "service:db"]
HREFS = ["/areas/00.html", "/areas/01.html", "/elsewhere.html"]
STATUSES: list[MemoryStatus] = ["active", "active", "archived"]


def _with_texts(draw: st.DrawFn, record: MemoryRecord) -> MemoryRecord:
    """``record`` with another title, claim and body: another lexical document."""
    return dataclasses.replace(record, title=draw(pooled_sentence).title(),
                               claim=draw(pooled_sentence),
                               body_text=draw(st.one_of(st.just(""), pooled_sentence)))


def _with_meta(draw: st.DrawFn, record: MemoryRecord) -> MemoryRecord:
    """``record`` with other metadata only: entities, links, confidence, blob."""
    return dataclasses.replace(
        record,
        entities=tuple(draw(st.lists(st.sampled_from(ENTITIES), max_size=2))),
        links=tuple(Link("relates_to", href)
                    for href in draw(st.lists(st.sampled_from(HREFS), max_size=2))),
        confidence=draw(st.sampled_from([None, 0.4, 0.9])),
        blob_sha=draw(st.sampled_from(["b0", "b1", "b2"])))


@st.composite
def index_records(draw: st.DrawFn, path: str) -> MemoryRecord:
    """A record as the indexes see it, built from its fields rather than parsed: only
    the path, texts, hash, frame key, state, entities and links matter to them."""
    record = dataclasses.replace(
        TEMPLATE, path=path, archived=path.startswith("archive/"),
        content_hash=draw(st.sampled_from(HASHES)),
        frame_key=draw(st.sampled_from(["f0", "f1", "f2"])),
        status=draw(st.sampled_from(STATUSES)))
    return _with_meta(draw, _with_texts(draw, record))


@st.composite
def replacements(
    draw: st.DrawFn,
) -> tuple[Indexes, set[str], list[MemoryRecord]]:
    """A parent (a bulk build, then single inserts and removals, so holders are not
    always the least twin and the lexical index may carry a delta), the paths a commit
    changes, and the records at those paths afterwards."""
    every = st.just(set(UNIVERSE))
    initial = [draw(index_records(p))
               for p in sorted(draw(st.one_of(st.sets(st.sampled_from(UNIVERSE)), every)))]
    parent = build_indexes(initial)
    for path in draw(st.lists(st.sampled_from(UNIVERSE), max_size=4)):
        if draw(st.booleans()):
            parent = insert_record(parent, draw(index_records(path)))
        else:
            parent = remove_record(parent, path)
    changed = draw(st.one_of(st.sets(st.sampled_from(UNIVERSE), max_size=12), every))
    new: list[MemoryRecord] = []
    for path in sorted(changed):
        old = parent.records.get(path)
        kind = draw(st.sampled_from(["meta", "meta", "state", "text", "fresh", "gone"]))
        if old is None or kind == "fresh":
            new.append(draw(index_records(path)))
        elif kind == "meta":
            new.append(_with_meta(draw, old))
        elif kind == "state":
            flipped: MemoryStatus = "archived" if old.status == "active" else "active"
            new.append(dataclasses.replace(old, status=flipped))
        elif kind == "text":
            new.append(_with_texts(draw, old))
    return parent, changed, new


def _document(indexes: Indexes, path: str) -> tuple[str, str, str] | None:
    """What the lexical index holds for ``path``: nothing unless its record is active."""
    record = indexes.records.get(path)
    if record is None or not is_active(record):
        return None
    return record.title, record.claim, record.body_text


def _search_indexes(indexes: Indexes) -> list[list[tuple[str, float]]]:
    return _search_all(view_of(indexes, None))


@settings(max_examples=_examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(replacements())
def test_replacing_paths_in_bulk_equals_the_per_path_fold(
    case: tuple[Indexes, set[str], list[MemoryRecord]],
) -> None:
    """replace_paths(p, changed, new, bulk=b) == fold(p, changed, new) for b in both,
    holders included: the bulk rebuild hands each slot out by the fold's rule
    (``holders_after_advance``), and every search scores the same floats."""
    parent, changed, new = case
    folded = parent
    for path in changed:
        folded = remove_record(folded, path)
    for record in sorted(new, key=lambda r: r.path):
        folded = insert_record(folded, record)
    expected = _search_indexes(folded)
    relexed = any(_document(parent, path) != _document(folded, path) for path in changed)
    for bulk in (False, True):
        replaced = replace_paths(parent, changed, new, bulk=bulk)
        assert replaced == folded
        assert dict(replaced.by_content_hash.items()) == holders_after_advance(
            parent, replaced, changed)
        assert _search_indexes(replaced) == expected
        assert (replaced.lexical is parent.lexical) is not relexed
    event(f"{len(changed) // 20 * 20}+ paths changed")
    if relexed and replaced.lexical.delta_size == 0:
        event("the lexical index was built afresh")


@settings(max_examples=_examples(25))
@given(chains(), st.booleans())
def test_advancing_leaves_the_parent_unchanged(chain: list[list[Step]], bulk: bool) -> None:
    """fingerprint(parent) before advance_head(git, parent, sha) == fingerprint(parent) after,
    by the per-path fold and by the bulk rebuild."""
    with tempfile.TemporaryDirectory() as tmp, _rebuilding(bulk):
        git = new_repo(Path(tmp))
        first, commits = _commit_chain(git, chain)
        version = run(load_head(git, first))
        _search_all(version)  # searched first: reading a version must leave nothing behind
        for sha, _changed in commits:
            seen = fingerprint(version, QUERIES)
            child = run(advance_head(git, version, sha))
            _search_all(child)
            assert fingerprint(version, QUERIES) == seen
            version = child


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
        case Unarchive(path=path, to=to, html=html):
            del tree[path]
            tree[to] = html
        case _ as never:
            assert_never(never)


@st.composite
def op_lists(draw: st.DrawFn) -> list[OverlayOp]:
    tree = {f"areas/m{i}.html" for i in range(3)}
    ops: list[OverlayOp] = []
    for i in range(draw(st.integers(1, 6))):
        live = sorted(p for p in tree if not p.startswith("archive/"))
        gone = sorted(p for p in tree if p.startswith("archive/"))
        kind = draw(st.sampled_from(["put", "archive", "link", "label", "move", "unlink",
                                     "unarchive"]))
        if kind == "unarchive" and gone:
            path = draw(st.sampled_from(gone))
            back = path.removeprefix("archive/2026/")
            if back not in tree:
                ops.append(Unarchive(path, back, memory("Back", "back again.")))
                tree.discard(path)
                tree.add(back)
                continue
            kind = "put"
        if kind in ("put", "unarchive") or not live:
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


@settings(max_examples=_examples(25))
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


@settings(max_examples=_examples(10))
@given(st.lists(sentence, min_size=1, max_size=12))
def test_gate_of_a_version_with_itself_passes(claims: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = new_repo(Path(tmp))
        tree = {f"areas/n{i}.html": memory(c.title(), c + ".") for i, c in enumerate(claims)}
        version = run(load_head(git, commit(git, None, tree)))
        report = gate_heads(version, version)
        assert report.passed
        assert report.mrr == report.mrr_before
