"""A version restored from a snapshot builds a record when it is read, and the
path-set maps when first used, so a search or a single read never builds the rest;
every answer is the one the loaded version gives, before and after the rest is built.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.adapters.git import PygitService
from memhtml.adapters.snapshot_files import Snapshot, read_snapshot, save_snapshot
from memhtml.contracts import PathChange, Signature
from memhtml.head import HeadVersion, SearchHeadInput, advance_head, load_head, search_head
from memhtml.head.lazy_map import LazyMap
from memhtml.store.reads import status_of
from tests.integration.store.store_support import ok
from tests.property.head_support import memory, memory_with

AT = datetime(2026, 3, 1, tzinfo=UTC)
WHO = Signature("Tester", "tester@example.invalid")
TOPICS = ("kettle", "ladder", "gate", "deploy", "window", "garden")


def _version(tmp_path: Path) -> tuple[PygitService, HeadVersion]:
    git: PygitService = ok(PygitService.init(tmp_path / "repo", bare=True))
    changes = [PathChange(f"areas/{t}.html", memory_with(
        t.title(), f"The {t} was checked on Tuesday.", f"Notes on the {t} and its upkeep.",
        links=(("relates_to", "/areas/kettle.html"),) if t != "kettle" else (),
        entities=(f"thing:{t}",)).encode())
        for t in TOPICS]
    sha: str = ok(git.commit("refs/heads/main", None, changes, "six", WHO, AT))
    return git, ok(load_head(git, sha))


def _restored(tmp_path: Path, version: HeadVersion) -> HeadVersion:
    path: Path = ok(save_snapshot(tmp_path / "state", version))
    snapshot: Snapshot = ok(read_snapshot(path))
    return snapshot.version()


def _lazy(version: HeadVersion) -> list[LazyMap[object, object]]:
    i = version.indexes
    maps = [i.records, i.by_frame_key, i.inbound, i.by_entity, i.by_content_hash]
    assert all(isinstance(m, LazyMap) for m in maps)
    return maps  # type: ignore[return-value]


def test_a_search_and_a_read_build_no_more_than_they_read(tmp_path: Path) -> None:
    _, version = _version(tmp_path)
    restored = _restored(tmp_path, version)
    records, *path_sets = _lazy(restored)
    hits = search_head(restored, SearchHeadInput("ladder upkeep", limit=2))
    assert [h.path for h in hits] == [h.path for h in search_head(
        version, SearchHeadInput("ladder upkeep", limit=2))]
    assert restored.get("areas/gate.html") == version.get("areas/gate.html")
    assert restored.size == version.size
    assert not records.built and not any(m.built for m in path_sets)


def test_every_answer_is_the_loaded_versions(tmp_path: Path) -> None:
    _, version = _version(tmp_path)
    restored = _restored(tmp_path, version)
    assert restored.inbound("/areas/kettle.html") == version.inbound("/areas/kettle.html")
    assert list(restored.records()) == list(version.records())
    assert restored.indexes == version.indexes
    assert all(m.built for m in _lazy(restored))


def test_advancing_a_restored_version_equals_advancing_the_loaded_one(
        tmp_path: Path) -> None:
    git, version = _version(tmp_path)
    restored = _restored(tmp_path, version)
    assert version.sha is not None
    edited = memory("Gate", "The gate was oiled in May.", "The latch sticks in winter.")
    sha: str = ok(git.commit("refs/heads/main", version.sha,
                             [PathChange("areas/gate.html", edited.encode()),
                              PathChange("areas/window.html", None)], "edit", WHO, AT))
    ahead, fresh = ok(advance_head(git, restored, sha)), ok(advance_head(git, version, sha))
    assert ahead.indexes == fresh.indexes
    assert ahead.indexes == ok(load_head(git, sha)).indexes


_TOPIC = st.sampled_from(TOPICS + ("kiln", "lathe"))
_CHANGE = st.tuples(_TOPIC, st.sampled_from(["edit", "delete", "archive", "relink"]))


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(commits=st.lists(st.lists(_CHANGE, min_size=1, max_size=3), min_size=1, max_size=4))
def test_a_restored_version_advances_without_building_and_equals_a_load(
        tmp_path_factory: pytest.TempPathFactory,
        commits: list[list[tuple[str, str]]]) -> None:
    """Commits of edits, deletions, archivals and new links and entities, advanced from
    a restored version one at a time: a search, a read and ``status`` in between build
    no record map and no path-set map, and every version equals a load of its commit."""
    tmp_path = tmp_path_factory.mktemp("advance")
    git, version = _version(tmp_path)
    ahead = _restored(tmp_path, version)
    sha = version.sha
    assert sha is not None
    for n, changes in enumerate(commits):
        files = []
        for topic, kind in changes:
            path = f"areas/{topic}.html"
            if kind == "delete":
                files.append(PathChange(path, None))
                continue
            text = memory_with(
                topic.title(), f"The {topic} was checked in week {n}.",
                f"Notes on the {topic}, round {n}.",
                links=(("relates_to", f"/areas/{TOPICS[n % len(TOPICS)]}.html"),)
                if kind == "relink" else (),
                entities=(f"thing:{topic}", f"round:{n}"))
            if kind == "archive":
                text = text.replace('content="active"', 'content="archived"', 1)
            files.append(PathChange(path, text.encode()))
        sha = ok(git.commit("refs/heads/main", sha, files, f"round {n}", WHO, AT))
        ahead = ok(advance_head(git, ahead, sha))
        search_head(ahead, SearchHeadInput("upkeep checked", limit=3))
        ahead.get("areas/gate.html")
        status_of(ahead, "2026-06-01T00:00:00Z")
        assert not any(getattr(m, "built", True) for m in _maps(ahead))
    loaded = ok(load_head(git, sha))
    assert status_of(ahead, "2026-06-01T00:00:00Z") == status_of(loaded, "2026-06-01T00:00:00Z")
    assert ahead.indexes == loaded.indexes
    assert [h.path for h in search_head(ahead, SearchHeadInput("upkeep checked"))] == \
        [h.path for h in search_head(loaded, SearchHeadInput("upkeep checked"))]


def _maps(version: HeadVersion) -> list[object]:
    i = version.indexes
    return [i.records, i.by_frame_key, i.inbound, i.by_entity, i.by_content_hash]
