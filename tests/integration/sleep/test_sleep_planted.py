"""The planted-defect corpus, curated with no model: a night must fold every duplicate
a hash, a frame key or a cosine above 0.92 can prove, fold nothing else, refuse every
flip by the predicate that sees it, merge entity spellings that are one name and leave
versioned names apart, and lose nothing.

The store is a real checkout; its vectors come from the scripted embedder served as an
OpenAI-compatible endpoint on loopback, read through the same adapter a person's store
would use. Each test works on its own copy of one prepared store.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from memhtml.compose import value_of
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import scripted_embedder
from memhtml.eval.planted_manifest import PlantConfig, PlantedCorpus
from memhtml.head import HeadVersion, SearchHeadInput, gate_heads, search_head
from memhtml.sleep.merge import lost_memories, merge_run
from memhtml.sleep.phase import PhaseRecord
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep, versions_at
from memhtml.store.layout import archive_path
from tests.integration.cli.cli_support import call
from tests.integration.sleep.planted_support import (
    RUN_AT,
    planted_deps,
    planted_env,
    run_planted_in_subprocess,
    serve_embeddings,
    write_planted_store,
)

pytestmark = pytest.mark.slow

YEAR = RUN_AT.year
_DETECTED = re.compile(r"areas/tasks/det-[0-9a-f]{12}-[^/]+\.html")


@dataclass(frozen=True)
class Planted:
    corpus: PlantedCorpus
    url: str
    prepared: Path


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planted]:
    corpus = plant_corpus(synthetic_docs()).unwrap()
    with serve_embeddings(scripted_embedder(corpus)) as url:
        root = tmp_path_factory.mktemp("planted") / "store"
        write_planted_store(root, corpus, url)
        yield Planted(corpus, url, root)


@pytest.fixture
def store(planted: Planted, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(planted.prepared, root, symlinks=True)
    return root


@dataclass(frozen=True)
class Night:
    report: RunReport
    base: HeadVersion
    tip: HeadVersion
    after: Mapping[str, HeadVersion]
    """The version at each phase's last commit (phases that committed)."""

    def phase(self, name: str) -> PhaseRecord:
        return next(r for r in self.report.phases if r.phase == name)


def night(planted: Planted, root: Path, options: RunOptions | None = None,
          days: int = 0) -> Night:
    deps = planted_deps(root, planted.url, RUN_AT + timedelta(days=days))
    report = value_of(run_sleep(deps, options))
    committed = {r.phase: r.commits[-1] for r in report.phases
                 if r.commits and r.status == "done"}
    shas = (report.base_sha, report.head_sha, *committed.values())
    versions = value_of(versions_at(deps, *shas))
    by_sha = dict(zip(shas, versions, strict=True))
    return Night(report, by_sha[report.base_sha], by_sha[report.head_sha],
                 {phase: by_sha[sha] for phase, sha in committed.items()})


def count(record: PhaseRecord, key: str) -> int:
    value = record.counts[key]
    assert isinstance(value, int), (key, value)
    return value


def _superseded_links(version: HeadVersion, path: str) -> set[str]:
    record = version.get(path)
    assert record is not None, path
    return {link.href.lstrip("/") for link in record.links if link.rel == "supersedes"}


# -- dedup-merge ------------------------------------------------------------------------


def test_every_provable_duplicate_folds_and_nothing_else(
        planted: Planted, store: Path) -> None:
    done = night(planted, store)
    assert done.report.ok, [(r.phase, r.status, r.reason) for r in done.report.phases]
    manifest = planted.corpus.manifest
    dedup = done.phase("dedup-merge")
    after = done.after["dedup-merge"]
    folds = [p for p in manifest.pairs if p.expect == "fold"]
    assert {p.kind for p in folds} == {"exact", "frame_key", "near"}
    for pair in folds:
        moved = archive_path(pair.newer, YEAR)
        assert after.get(pair.newer) is None, pair
        archived = after.get(moved)
        assert archived is not None and archived.superseded_by is not None, pair
        assert archived.superseded_by.lstrip("/") == pair.older, pair
        assert moved in _superseded_links(after, pair.older), pair
    # Zero false merges: the dedup commit archived exactly the planted newer copies.
    before = set(done.base.paths())
    gone = {path for path in before if after.get(path) is None}
    assert gone == {p.newer for p in folds}
    assert dedup.counts["folded"] == len(folds)
    for pair in manifest.pairs:
        if pair.expect != "fold":
            assert after.get(pair.older) is not None and after.get(pair.newer) is not None, pair


def test_every_flip_is_vetoed_by_its_predicate_and_ten_become_tasks(
        planted: Planted, store: Path) -> None:
    done = night(planted, store)
    manifest = planted.corpus.manifest
    counts = done.phase("dedup-merge").counts
    flips = [p for p in manifest.pairs if p.expect == "veto"]
    by_predicate: dict[str, int] = {}
    for pair in flips:
        assert pair.predicate is not None
        by_predicate[pair.predicate] = by_predicate.get(pair.predicate, 0) + 1
    for predicate, wanted in by_predicate.items():
        assert counts[f"vetoed_{predicate}"] == wanted, (predicate, counts)
    assert counts["vetoed"] == len(flips)
    assert counts["tasks_minted"] == 10
    assert counts["tasks_overflow"] == len(flips) - 10
    after = done.after["dedup-merge"]
    detected = [r for r in after.records() if _DETECTED.fullmatch(r.path)]
    assert len(detected) == 10
    for task in detected:
        assert task.memory_type == "task" and task.author == "agent:sleep"
        assert "detected" in task.tags and "dedup-merge" in task.tags
        assert any(name in task.body_text for name in by_predicate), task.path


def test_a_paraphrase_is_not_folded(planted: Planted, store: Path) -> None:
    done = night(planted, store, RunOptions(phases=frozenset({"dedup-merge"})))
    for pair in planted.corpus.manifest.of_kind("paraphrase"):
        assert done.tip.get(pair.older) is not None and done.tip.get(pair.newer) is not None


# -- entities ---------------------------------------------------------------------------


def _entity_spellings(version: HeadVersion, entity_type: str) -> set[str]:
    return {entity.split(":", 1)[1] for record in version.records()
            if record.memory_type != "task" for entity in record.entities
            if entity.startswith(entity_type + ":")}


def test_spelling_variants_and_declared_aliases_merge_versioned_names_do_not(
        planted: Planted, store: Path) -> None:
    done = night(planted, store, RunOptions(phases=frozenset({"entity-resolution"})))
    manifest = planted.corpus.manifest
    after = done.tip
    for group in manifest.alias_groups:
        spellings = _entity_spellings(after, group.entity_type)
        if group.merge:
            assert group.canonical in spellings, group
            others = set(group.names) - {group.canonical}
            assert not others & spellings, (group, spellings)
        else:
            assert len(set(group.names) & spellings) == len(group.names), group
    resolution = done.phase("entity-resolution")
    assert count(resolution, "review_candidates") >= len(manifest.review_pairs)
    assert count(resolution, "tasks_minted") >= min(10, len(manifest.review_pairs))


# -- what no phase may do ---------------------------------------------------------------


def test_nothing_is_lost_and_tasks_are_never_touched(planted: Planted, store: Path) -> None:
    done = night(planted, store)
    assert lost_memories(done.base, done.tip) == ()
    manifest = planted.corpus.manifest
    for path in manifest.tasks:
        assert done.tip.get(path) is not None, path
        before, after = done.base.get(path), done.tip.get(path)
        assert before is not None and after is not None
        assert after.blob_sha == before.blob_sha, f"{path} was rewritten"
    assert len(manifest.twin_tasks) == 2
    assert all(done.tip.get(path) is not None for path in manifest.twin_tasks)


def test_the_gate_passes_and_a_second_night_folds_nothing_new(
        planted: Planted, store: Path) -> None:
    first = night(planted, store)
    outcome = value_of(merge_run(planted_deps(store, planted.url), first.report.run_id))
    assert outcome.merged, (outcome.refusal, outcome.reason, outcome.gate)
    second = night(planted, store, days=1)
    dedup = second.phase("dedup-merge").counts
    assert dedup["folded"] == 0
    assert dedup["tasks_minted"] == 0
    entities = second.phase("entity-resolution").counts
    assert entities["merged"] == 0 and entities["tasks_minted"] == 0


def test_review_tasks_take_no_place_in_the_gate_and_the_first_night_merges(
        planted: Planted, store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The night opens review tasks that quote the memories they are about, and in a
    plain search some of them rank above those memories. The gate probes memories
    only and ranks them among memories only: a probe's rank at the tip is not pushed
    down by any task, and ``sleep run`` then ``sleep merge`` land the night."""
    for name, value in planted_env(planted.url).items():
        monkeypatch.setenv(name, value)
    s = ("--store", str(store), "--json")
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    deps = planted_deps(store, planted.url)
    base, tip = value_of(versions_at(deps, report["base_sha"], report["head_sha"]))
    opened = {r.path for r in tip.records() if r.memory_type == "task"} - {
        r.path for r in base.records() if r.memory_type == "task"}
    assert opened, "the night opened no review task"
    gate = gate_heads(base, tip)
    assert gate.results and not any(r.path in opened or r.path in planted.corpus.manifest.tasks
                                    for r in gate.results)
    crowded = 0
    for result in gate.results:
        plain = [h.path for h in search_head(tip, SearchHeadInput(result.query, limit=10))]
        target = result.found_as or result.path
        above = plain[: plain.index(target)] if target in plain else plain
        if not any(path in opened for path in above):
            continue
        crowded += 1
        held = [h.path for h in search_head(tip, SearchHeadInput(
            result.query, limit=10, admit=lambda r: r.memory_type != "task"))]
        assert result.rank_after == (held.index(target) + 1 if target in held else None)
        assert result.rank_after is not None and (
            result.rank_before is None or result.rank_after <= result.rank_before), result
    assert crowded, "no task outranked a memory in plain search: the test shows nothing"
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"], merged
    assert merged["gate"]["passed"], merged["gate"]


def test_night_one_on_a_freshly_written_copy_archives_nothing_by_retention(
        tmp_path: Path) -> None:
    """The same corpus written a day before the run instead of months: the night folds
    every provable duplicate as before, and retention archives none of it (the evict
    band is inside the grace period)."""
    config = PlantConfig(base_at=RUN_AT - timedelta(days=1),
                         planted_at=RUN_AT - timedelta(hours=12), now=RUN_AT)
    corpus = plant_corpus(synthetic_docs(), config).unwrap()
    with serve_embeddings(scripted_embedder(corpus)) as url:
        root = tmp_path / "store"
        write_planted_store(root, corpus, url)
        done = night(Planted(corpus, url, root), root)
    assert done.report.ok, [(r.phase, r.status, r.reason) for r in done.report.phases]
    retention = done.phase("retention-triage")
    assert count(retention, "archived") == 0
    assert count(retention, "graced") == count(retention, "evict")
    assert "retention-triage" not in done.after
    folds = [p for p in corpus.manifest.pairs if p.expect == "fold"]
    assert count(done.phase("dedup-merge"), "folded") == len(folds)
    assert lost_memories(done.base, done.tip) == ()


def test_two_hash_seeds_cut_the_same_branch(planted: Planted, tmp_path: Path) -> None:
    tips = []
    for seed in ("0", "4242"):
        root = tmp_path / f"seed-{seed}"
        shutil.copytree(planted.prepared, root, symlinks=True)
        tips.append(run_planted_in_subprocess(root, planted.url, seed))
    assert tips[0] == tips[1]
