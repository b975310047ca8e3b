"""The ``SnapshotCache`` contract, run on ``SnapshotFiles`` (disk) and ``MemorySnapshots``
alike: a version saved is loaded back as it was, the newest first and only the newest
``SNAPSHOTS_KEPT`` kept; what will not load (nothing there, a damaged snapshot,
something else under a commit's name) is a miss naming why, never an exception; a
save that dies part way leaves what was there; a discard is idempotent. And the store
over either: a cold handle advances a snapshot, drops one that misses and rebuilds
from git, and answers the same version every way."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from returns.pipeline import is_successful

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_snapshots import MemorySnapshots
from memhtml.adapters.snapshot_files import SnapshotFiles, snapshot_dir, snapshot_path
from memhtml.compose.services import blob_reader
from memhtml.contracts.record import record_rows
from memhtml.contracts.services import PathChange
from memhtml.head import HeadVersion, SearchHeadInput, load_head, search_head
from memhtml.store import Store, StoreDeps, WriteInput, write
from memhtml.store.snapshot import SNAPSHOTS_KEPT, SnapshotCache, SnapshotMiss
from tests.contract.git_backends import AT, err, ok
from tests.contract.git_backends import AUTHOR as WHO
from tests.property.head_support import fingerprint, memory

KINDS = ["disk", "memory"]
QUERIES = ("deploy", "tuesday", "alpha", "gamma")
_CLOCK = FixedClock(AT)


@dataclass(frozen=True)
class Cache:
    """One implementation under test, with what the disk can do to it that no save
    does: damage a snapshot, plant something else under a commit's name, and leave a
    save killed part way."""

    cache: SnapshotCache
    damage: Callable[[str], None]
    plant: Callable[[str], None]
    killed_save: Callable[[str], None]


def _disk(root: Path, git: InMemoryGit) -> Cache:
    files = SnapshotFiles(root / "state", blob_reader(git))

    def damage(sha: str) -> None:
        path = snapshot_path(files.state_dir, sha)
        data = bytearray(path.read_bytes())
        data[len(data) // 3] ^= 0xFF
        path.write_bytes(bytes(data))

    def plant(sha: str) -> None:
        snapshot_dir(files.state_dir).mkdir(parents=True, exist_ok=True)
        snapshot_path(files.state_dir, sha).write_bytes(b"not a snapshot at all")

    def killed_save(sha: str) -> None:
        # What a writer killed before its rename leaves: a temporary, never the name.
        folder = snapshot_dir(files.state_dir)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f".{sha}.{os.getpid()}.dead.tmp").write_bytes(b"\x93NUMPY half")

    return Cache(files, damage, plant, killed_save)


def _memory() -> Cache:
    twin = MemorySnapshots()
    return Cache(twin, twin.damage, lambda sha: twin.plant(sha, "not a memhtml snapshot"),
                 lambda _: None)


@pytest.fixture
def history() -> tuple[InMemoryGit, tuple[HeadVersion, ...]]:
    """Three commits of a small store and the version at each."""
    git = InMemoryGit(bare=True)
    versions: list[HeadVersion] = []
    parent: str | None = None
    for i, title in enumerate(("Alpha", "Beta", "Gamma")):
        html = memory(title, f"{title} deploys on Tuesday.", f"The {title} service, note {i}.")
        parent = ok(git.commit("refs/heads/main", parent,
                               [PathChange(f"areas/{title.lower()}.html", html.encode())],
                               f"add {title}", WHO, AT))
        versions.append(ok(load_head(git, parent)))
    return git, tuple(versions)


@pytest.fixture(params=KINDS)
def cache(request: pytest.FixtureRequest, tmp_path: Path,
          history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> Cache:
    git, _ = history
    return _disk(tmp_path, git) if request.param == "disk" else _memory()


def _seen(version: HeadVersion) -> tuple[object, ...]:
    """What a reader of the store sees: the commit, every record, every ranking (not
    how the lexical index is segmented, which differs between a version advanced
    from a snapshot and one parsed whole)."""
    rankings = [[(hit.path, round(hit.score, 9)) for hit in
                 search_head(version, SearchHeadInput(query, limit=20))] for query in QUERIES]
    return version.sha, record_rows(version.records()), rankings


def _sha(version: HeadVersion) -> str:
    assert version.sha is not None
    return version.sha


def test_a_saved_version_loads_back_as_it_was(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    ok(cache.cache.save(versions[0]))
    loaded = ok(cache.cache.load(_sha(versions[0])))
    assert loaded.sha == versions[0].sha
    assert fingerprint(loaded, QUERIES) == fingerprint(versions[0], QUERIES)


def test_the_newest_is_first_and_only_the_newest_are_kept(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    for version in versions:
        ok(cache.cache.save(version))
    newest_first = tuple(_sha(v) for v in reversed(versions))
    assert cache.cache.saved() == newest_first[:SNAPSHOTS_KEPT]
    assert not is_successful(cache.cache.load(_sha(versions[0])))


def test_saving_a_commit_again_makes_it_the_newest(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    for version in (versions[0], versions[1], versions[0]):
        ok(cache.cache.save(version))
    assert cache.cache.saved() == (_sha(versions[0]), _sha(versions[1]))


def test_a_version_with_no_commit_is_refused(cache: Cache) -> None:
    from memhtml.store.session import empty_version

    miss = err(cache.cache.save(empty_version()))
    assert isinstance(miss, SnapshotMiss) and "no commit" in miss.reason
    assert cache.cache.saved() == ()


def test_what_will_not_load_is_a_miss_naming_why(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    absent = err(cache.cache.load(_sha(versions[2])))
    assert absent.key == _sha(versions[2]) and absent.reason
    ok(cache.cache.save(versions[0]))
    cache.damage(_sha(versions[0]))
    damaged = err(cache.cache.load(_sha(versions[0])))
    assert damaged.key == _sha(versions[0]) and damaged.reason
    cache.plant(_sha(versions[1]))
    assert cache.cache.saved()[0] == _sha(versions[1])
    planted = err(cache.cache.load(_sha(versions[1])))
    assert planted.key == _sha(versions[1]) and planted.reason


def test_a_save_killed_part_way_leaves_what_was_there(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    ok(cache.cache.save(versions[0]))
    cache.killed_save(_sha(versions[1]))
    assert cache.cache.saved() == (_sha(versions[0]),)
    assert ok(cache.cache.load(_sha(versions[0]))).sha == versions[0].sha
    ok(cache.cache.save(versions[1]))  # the next save is not in the dead one's way
    assert cache.cache.saved()[0] == _sha(versions[1])


def test_a_discard_is_idempotent(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    _, versions = history
    ok(cache.cache.save(versions[0]))
    cache.cache.discard(_sha(versions[0]))
    cache.cache.discard(_sha(versions[0]))
    cache.cache.discard("no-such-snapshot")
    assert cache.cache.saved() == ()


# -- the store over the port -------------------------------------------------------------


def _store(git: InMemoryGit, cache: SnapshotCache) -> Store:
    return Store(StoreDeps(git=git, clock=_CLOCK, author=WHO, snapshots=cache))


def test_a_cold_store_advances_a_snapshot_and_drops_one_that_misses(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    git, versions = history
    ok(cache.cache.save(versions[1]))
    store = _store(git, cache.cache)
    assert _seen(ok(store.head())) == _seen(versions[2])
    # A damaged newest snapshot is dropped, and the tip is read from git again.
    cache.damage(_sha(versions[1]))
    cold = _store(git, cache.cache)
    assert _seen(ok(cold.head())) == _seen(versions[2])
    assert _sha(versions[1]) not in cache.cache.saved()
    assert cache.cache.saved()[0] == _sha(versions[2])  # the full load left one


def test_a_store_writes_the_same_with_or_without_a_cache(
        cache: Cache, history: tuple[InMemoryGit, tuple[HeadVersion, ...]]) -> None:
    git, versions = history
    ok(cache.cache.save(versions[2]))
    with_cache = _store(git, cache.cache)
    ok(write(with_cache, WriteInput(title="Delta", claim="Delta deploys on Friday.")))
    again = _store(git, cache.cache)
    bare = Store(StoreDeps(git=git, clock=_CLOCK, author=WHO))
    assert _seen(ok(again.head())) == _seen(ok(bare.head()))
