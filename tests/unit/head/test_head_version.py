"""load_head, advance_head and version_from_records over a real repository."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from returns.io import IOFailure
from tests.property.head_support import (
    AT,
    AUTHOR,
    commit,
    memory,
    new_repo,
    record_at,
    run,
    without_holders,
)

from memhtml.adapters.git import PygitService
from memhtml.contracts.services import PathChange
from memhtml.format import set_meta
from memhtml.head import (
    HeadVersion,
    SearchHeadInput,
    advance_head,
    empty_indexes,
    insert_record,
    is_candidate_path,
    load_head,
    record_from,
    search_head,
    version_from_records,
)
from memhtml.head import indexes as indexes_module
from memhtml.head.indexes import build_indexes

INVALID = "<!doctype html><html><head><title>x</title></head><body></body></html>"
LATIN1 = "<p>caf\xe9</p>".encode("latin-1")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.html", True),
        ("areas/deep/a.html", True),
        ("archive/2026/a.html", True),
        ("areas/.memhtml/a.html", True),
        ("areas/myindex.html", True),
        ("index.html", False),
        ("areas/index.html", False),
        (".memhtml/state.html", False),
        (".memhtml/deep/x.html", False),
        ("sitemap.xml", False),
        (".gitattributes", False),
        ("areas/a.htm", False),
        ("areas/a.html.bak", False),
    ],
)
def test_is_candidate_path(path: str, expected: bool) -> None:
    assert is_candidate_path(path) is expected


def _loaded(tmp_path: Path) -> tuple[PygitService, str, HeadVersion]:
    git = new_repo(tmp_path)
    sha = commit(git, None, {
        "areas/a.html": memory("Alpha", "An alpha claim."),
        "areas/b.html": memory("Beta", "A beta claim."),
        "archive/2026/c.html": memory("Gamma", "A gamma claim."),
        "areas/bad.html": INVALID,
        "areas/index.html": "<p>generated</p>",
        ".memhtml/x.html": "<p>state</p>",
        "sitemap.xml": "<urlset/>",
        ".gitattributes": "index.html merge=ours\n",
    })
    sha = run(git.commit("refs/heads/main", sha, [PathChange("areas/latin1.html", LATIN1)],
                         "latin-1", AUTHOR, AT))
    return git, sha, run(load_head(git, sha))


def test_load_head_records_and_skips(tmp_path: Path) -> None:
    _, sha, version = _loaded(tmp_path)
    assert version.sha == sha
    assert version.parent is None
    assert list(version.paths()) == ["archive/2026/c.html", "areas/a.html", "areas/b.html"]
    skipped = {s.path: s.reason for s in version.skipped_files}
    assert set(skipped) == {"areas/bad.html", "areas/latin1.html"}
    assert version.skipped == 2
    assert skipped["areas/bad.html"] == record_from(INVALID, "areas/bad.html").failure().reason
    assert skipped["areas/latin1.html"].startswith("not UTF-8")
    archived_record = version.get("archive/2026/c.html")
    assert archived_record is not None
    assert archived_record.archived


def test_advance_to_the_same_sha_returns_the_parent(tmp_path: Path) -> None:
    git, sha, version = _loaded(tmp_path)
    assert run(advance_head(git, version, sha)) is version


def test_advance_from_a_version_with_no_commit_fails(tmp_path: Path) -> None:
    git, sha, version = _loaded(tmp_path)
    detached = HeadVersion(version.indexes, None)
    assert isinstance(advance_head(git, detached, sha), IOFailure)


def test_advance_shares_untouched_records_and_tracks_skips(tmp_path: Path) -> None:
    git, sha, version = _loaded(tmp_path)
    fixed = memory("Fixed", "A fixed claim.")
    sha2 = commit(git, sha, {"areas/bad.html": fixed, "areas/b.html": INVALID})
    advanced = run(advance_head(git, version, sha2))
    assert advanced.parent is version
    assert advanced.get("areas/a.html") is version.get("areas/a.html")
    assert advanced.get("areas/b.html") is None
    assert {s.path for s in advanced.skipped_files} == {"areas/b.html", "areas/latin1.html"}
    loaded = run(load_head(git, sha2))
    assert advanced.indexes == loaded.indexes
    assert advanced.skipped_files == loaded.skipped_files


def test_version_from_records_equals_the_load(tmp_path: Path) -> None:
    _, sha, version = _loaded(tmp_path)
    snapshot = version_from_records(version.records(), sha)
    assert snapshot.indexes == version.indexes
    assert snapshot.skipped == 0
    assert snapshot.parent is None
    assert snapshot.sha == sha


def test_version_from_records_equals_the_fold_with_a_repeated_path() -> None:
    twin = memory("Twin", "The twin claim.")
    records = [record_at("areas/a.html", twin), record_at("areas/b.html", twin),
               record_at("areas/a.html", memory("New", "A different claim."))]
    folded = empty_indexes()
    for record in records:
        folded = insert_record(folded, record)
    assert version_from_records(records, "sha").indexes == folded
    assert build_indexes(records) == folded


def test_twin_holders_when_advancing_and_when_loading(tmp_path: Path) -> None:
    """The content-hash slot goes to the first active twin inserted while it is empty.
    A load inserts in path order; an advance keeps the holders its parent had, so the
    two agree on everything but which twin holds a slot."""
    git = new_repo(tmp_path)
    twin = memory("Twin", "The twin claim.", "Twin body.")
    sha1 = commit(git, None, {"areas/b.html": twin})
    v1 = run(load_head(git, sha1))
    h = v1.indexes.records["areas/b.html"].content_hash
    assert v1.by_content_hash(h) == "areas/b.html"

    def step(
        parent: HeadVersion, changes: dict[str, str | None]
    ) -> tuple[HeadVersion, HeadVersion]:
        sha = commit(git, parent.sha, changes)
        advanced, loaded = run(advance_head(git, parent, sha)), run(load_head(git, sha))
        assert without_holders(advanced.indexes) == without_holders(loaded.indexes)
        return advanced, loaded

    # A byte-identical twin at a path sorting first: the advance keeps the earlier
    # holder, a load hands the slot to the least path.
    v2, loaded2 = step(v1, {"areas/a.html": twin})
    assert v2.by_content_hash(h) == "areas/b.html"
    assert loaded2.by_content_hash(h) == "areas/a.html"

    # Editing the holder's head rewrites its path: it leaves and re-enters the slot it
    # emptied, since no other changed path inserts the hash first.
    touched = set_meta(twin, "memhtml-updated", "2026-12-01T00:00:00Z")
    v3, _ = step(v2, {"areas/b.html": touched})
    assert v3.by_content_hash(h) == "areas/b.html"

    # Removing the holder empties the slot, even though areas/a.html stays active with
    # the same content hash; the load of that tree gives it to areas/a.html.
    v4, loaded4 = step(v3, {"areas/b.html": None})
    assert v4.by_content_hash(h) is None
    assert v4.get("areas/a.html") is v3.get("areas/a.html")
    assert loaded4.by_content_hash(h) == "areas/a.html"

    # The next insertion of an active twin takes the empty slot: here the surviving
    # twin, re-inserted because its head changed. Advance and load agree again.
    v5, loaded5 = step(v4, {"areas/a.html": touched})
    assert v5.by_content_hash(h) == "areas/a.html"
    assert v5.indexes == loaded5.indexes


def _search(version: HeadVersion) -> list[list[tuple[str, float]]]:
    return [[(h.path, h.score) for h in search_head(version, SearchHeadInput(q, limit=20))]
            for q in ("cache latency", "twin claim", "rewritten memory 7")]


def test_advancing_over_most_files_rebuilds_in_bulk_by_the_folds_rules(tmp_path: Path) -> None:
    """Past ``REBUILD_FRACTION`` of the records an advance rebuilds the maps in bulk,
    keeps a meta-only commit's lexical index itself, and still hands the twin slots
    out by the fold's rule: an untouched holder keeps its hash."""
    git = new_repo(tmp_path)
    twin = memory("Twin", "The twin claim.", "Twin body.")
    files = {f"areas/m{i:03d}.html": memory(f"Memory {i}", f"Claim {i} on cache latency.")
             for i in range(80)}
    sha1 = commit(git, None, {**files, "areas/z.html": twin})
    # A byte-identical twin at a path sorting first, by a small advance: z keeps the slot.
    sha2 = commit(git, sha1, {"areas/a.html": twin})
    v2 = run(advance_head(git, run(load_head(git, sha1)), sha2))
    h = v2.indexes.records["areas/z.html"].content_hash
    assert v2.by_content_hash(h) == "areas/z.html"

    # Every file's confidence but the holder's: the bulk path, the lexical index kept.
    touched = {**files, "areas/a.html": twin}
    sha3 = commit(git, sha2, {p: set_meta(html, "memhtml-confidence", "0.8")
                              for p, html in touched.items()})
    with patch.object(indexes_module, "_rebuild_maps",
                      wraps=indexes_module._rebuild_maps) as bulk:
        v3 = run(advance_head(git, v2, sha3))
    assert bulk.call_count == 1
    assert v3.indexes.lexical is v2.indexes.lexical
    assert all(v3.get(p) is not v2.get(p) for p in touched)
    assert v3.get("areas/z.html") is v2.get("areas/z.html")
    loaded3 = run(load_head(git, sha3))
    assert without_holders(v3.indexes) == without_holders(loaded3.indexes)
    assert v3.by_content_hash(h) == "areas/z.html"
    assert loaded3.by_content_hash(h) == "areas/a.html"
    assert _search(v3) == _search(loaded3)

    # Every file's text: more changed documents than the delta holds, so the lexical
    # index is built afresh, and it scores exactly as the load's does.
    sha4 = commit(git, sha3, {p: memory(f"Rewritten memory {i}", f"Claim {i} on cache.")
                              for i, p in enumerate(sorted(files))})
    v4 = run(advance_head(git, v3, sha4))
    loaded4 = run(load_head(git, sha4))
    assert without_holders(v4.indexes) == without_holders(loaded4.indexes)
    assert v4.indexes.lexical.delta_size == 0
    assert _search(v4) == _search(loaded4)
