"""The planted-defect corpus, curated with a model that knows the answers: what a
language model adds to a night is judged where the truth is written down beforehand.

The model is ``ScriptedModel`` playing ``planted_oracle.Oracle``, which answers each
phase's tool from the manifest (dedup groups the paraphrases a cosine cannot prove,
edge-typing calls a planted pair a contradiction, compress absorbs the members it is
told to). So a test can say what a correct night writes and check the merged or
branch tree for exactly that: every paraphrase folded, every flip the model groups
still vetoed, an answer naming a key no batch offered changing nothing, a
contradiction a task before it is a link, compress leaving what it was not told to
absorb and every dated episode, one malformed batch costing one batch, a spent budget
skipping the rest of the night green, call counts following the phases' formulas,
two runs sending the same bytes, and no model giving part 2's night.

The store is the one part 2's acceptance curates (a real checkout, vectors from the
scripted embedder over loopback); each test works on its own copy of one prepared
store, and adds the files it plants on top of it.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from returns.io import IOResult
from returns.result import Success

from memhtml.compose import value_of
from memhtml.contracts.errors import StateError
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import CounterKey, LanguageModel, PathChange
from memhtml.contracts.vocabulary import MemoryType
from memhtml.domain.thresholds import (
    DEDUP_MEMBERS_PER_CALL,
    EDGE_TYPING_PAIRS_PER_CALL,
    TASK_DETECTION_BATCH,
    TASK_DETECTION_SCAN,
)
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import (
    PLANTED_DIMENSION,
    PLANTED_MODEL_ID,
    ScriptedEmbedder,
    at_cosine,
    scripted_embedder,
    seeded_unit_vector,
)
from memhtml.eval.planted_manifest import DefectKind, PlantedCorpus
from memhtml.format import NewMemoryInput, new_memory_doc, serialize_memory
from memhtml.head import HeadVersion, record_from, vector_text_of
from memhtml.sleep.batch import pack_groups
from memhtml.sleep.contract import SLEEP_PHASES, SleepPhase
from memhtml.sleep.merge import merge_run
from memhtml.sleep.phase import PhaseRecord
from memhtml.sleep.phases.entity_resolution import Cluster
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep, versions_at
from memhtml.store.errors import StoreError
from memhtml.store.landing import Draft, land
from memhtml.store.layout import archive_path
from tests.integration.sleep.planted_oracle import (
    Canon,
    EntityCluster,
    Oracle,
    collapsed,
    oracle_for,
)
from tests.integration.sleep.planted_support import (
    IMPORT_AT,
    RUN_AT,
    planted_deps,
    planted_services,
    serve_embeddings,
    write_planted_store,
)
from tests.unit.sleep.fake_model import ScriptedModel, offered

pytestmark = pytest.mark.slow

YEAR = RUN_AT.year
_DETECTED = re.compile(r"areas/tasks/det-[0-9a-f]{12}-[^/]+\.html")
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
MODEL_PHASES: tuple[SleepPhase, ...] = (
    "dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis", "compress",
    "task-detection")

# -- files a test plants on top of the corpus ---------------------------------------------

CONTRA_A = "areas/ops/tide-gauge-hourly.html"
CONTRA_B = "areas/ops/tide-gauge-daily.html"
CONTRA_ENTITY = "service:tide-gauge-sync"
CONTRA_COSINE = 0.83
"""Above edge-typing's shared-entity floor (0.80), below the mining cosine (0.85) and
dedup's recall floor (0.86): only the shared-entity arm offers the pair, and no other
phase reads it. The planted contradictions cannot serve: each already carries its
authored ``contradicts`` link, and a linked pair is never offered."""
EPISODE = "areas/field/2026-11-09.html"
EPISODE_DAY = "2026-11-09"
EPISODE_IMPORTANCE = 8
"""A day three weeks before the run, and an author who marked it above the default:
an episode's ten-day half-life would otherwise score it into the evict band, and
retention-triage would archive it before compress could be offered it."""
PERSON_ENTITY = "person:laith-al-saadoon"
"""The one person of the corpus: person-links ties every file naming him to his
profile, so a file naming him joins the one community the compress band holds."""
CHANGE = "areas/field/gauge-visit.html"
GAUGE_NOTE = "areas/field/gauge-sync-check.html"
NOTIFY_ENTITY = "service:notify-hub"


def memory_file(path: str, title: str, claim: str, body: Sequence[str], at: datetime, *,
                memory_type: MemoryType = "semantic", entities: Sequence[str] = (),
                article_html: str | None = None, importance: int | None = None) -> bytes:
    """A memory file as the template writes one, created and updated at ``at``."""
    doc = new_memory_doc(NewMemoryInput(
        title=title, claim=claim, memory_type=memory_type,
        at=at.strftime(_STAMP), body=tuple(body), entities=tuple(entities),
        article_html=article_html, importance=importance))
    data = serialize_memory(doc).encode("utf-8")
    assert isinstance(record_from(data.decode("utf-8"), path), Success), path
    return data


def contradiction_files() -> dict[str, bytes]:
    at = IMPORT_AT - timedelta(days=200)
    return {
        CONTRA_A: memory_file(CONTRA_A, "Tide gauge sync cadence",
                              "The tide gauge sync runs every hour.",
                              ("It pushes each gauge reading to the field archive.",), at,
                              entities=(CONTRA_ENTITY,)),
        CONTRA_B: memory_file(CONTRA_B, "Tide gauge sync schedule",
                              "The tide gauge sync runs once a day at dawn.",
                              ("The dawn window keeps the uplink free for the surveys.",),
                              at + timedelta(days=3), entities=(CONTRA_ENTITY,)),
    }


def episode_file() -> dict[str, bytes]:
    claim = "The field team walked the marsh transects with Laith."
    article = (f"<p><mark>{claim}</mark> Three transects were walked before the tide "
               f"turned.</p><dl><dt>day</dt><dd><time datetime=\"{EPISODE_DAY}\">9 November"
               "</time></dd></dl>")
    return {EPISODE: memory_file(EPISODE, "Marsh transect day", claim, (),
                                 IMPORT_AT - timedelta(days=20), memory_type="episodic",
                                 entities=(PERSON_ENTITY,), article_html=article,
                                 importance=EPISODE_IMPORTANCE)}


def change_file(entities: Sequence[str] = ()) -> dict[str, bytes]:
    """One more memory, written between two nights: the corpus has changed."""
    return {CHANGE: memory_file(CHANGE, "Gauge visit", "The east gauge was visited again.",
                                ("Its housing was cleaned and its battery changed.",),
                                RUN_AT + timedelta(hours=6), entities=tuple(entities))}


def gauge_note() -> dict[str, bytes]:
    """A note on the planted contradiction's subject (its entity), written between two
    nights: a write that reaches the pair's neighbourhood."""
    return {GAUGE_NOTE: memory_file(GAUGE_NOTE, "Gauge sync check",
                                    "The gauge sync was checked by hand.",
                                    ("Both cadences were looked at.",),
                                    RUN_AT + timedelta(hours=7), entities=(CONTRA_ENTITY,))}


def extra_files() -> dict[str, bytes]:
    return {**contradiction_files(), **episode_file(), **change_file((NOTIFY_ENTITY,))}


def _vector_text(path: str, data: bytes) -> str:
    record = record_from(data.decode("utf-8"), path)
    assert isinstance(record, Success), path
    return vector_text_of(record.unwrap())


def embedder_with_pair(corpus: PlantedCorpus) -> ScriptedEmbedder:
    """The corpus's scripted embedder, with the planted contradiction's second file at
    ``CONTRA_COSINE`` to the first (every other new text gets its own seeded vector)."""
    base = scripted_embedder(corpus)
    vectors = {text: base.vector_of(text) for text in corpus.vector_texts.values()}
    files = contradiction_files()
    first, second = (_vector_text(p, files[p]) for p in (CONTRA_A, CONTRA_B))
    anchor = seeded_unit_vector(first, PLANTED_DIMENSION, corpus.seed)
    lean = seeded_unit_vector(second, PLANTED_DIMENSION, corpus.seed, salt="lean")
    vectors[second] = at_cosine(anchor, CONTRA_COSINE, lean).astype(np.float32)
    return ScriptedEmbedder(vectors, PLANTED_DIMENSION, corpus.seed, PLANTED_MODEL_ID)


# -- the prepared store and a night over it ---------------------------------------------


@dataclass(frozen=True)
class Planted:
    corpus: PlantedCorpus
    url: str
    prepared: Path
    extra: Mapping[str, bytes]

    def oracle(self, *, fold: Sequence[DefectKind] = ("paraphrase",),
               contradictions: Sequence[tuple[str, str]] = (),
               clusters: Sequence[EntityCluster] = (), canonicals: Sequence[Canon] = (),
               detect_first: bool = False, stranger: str | None = None) -> Oracle:
        """The corpus's oracle, reading the files tests plant as well."""
        return oracle_for(self.corpus, extra=self.extra, fold=fold,
                          contradictions=contradictions, clusters=clusters,
                          canonicals=canonicals, detect_first=detect_first,
                          stranger=stranger)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planted]:
    corpus = plant_corpus(synthetic_docs()).unwrap()
    with serve_embeddings(embedder_with_pair(corpus)) as url:
        root = tmp_path_factory.mktemp("planted-model") / "store"
        write_planted_store(root, corpus, url)
        yield Planted(corpus, url, root, extra_files())


def fresh(planted: Planted, tmp_path: Path, name: str = "store") -> Path:
    root = tmp_path / name
    shutil.copytree(planted.prepared, root, symlinks=True)
    return root


@pytest.fixture
def store(planted: Planted, tmp_path: Path) -> Path:
    return fresh(planted, tmp_path)


@pytest.fixture(scope="module")
def settled(planted: Planted, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The prepared store after one night with no model, merged. A first night's
    entity-resolution and person-links decide on the person's files (relabelled,
    linked), and compress never folds a memory another phase decided on that night;
    on the next night they have nothing left to decide, and compress is offered the
    person's community."""
    root = tmp_path_factory.mktemp("settled") / "store"
    shutil.copytree(planted.prepared, root, symlinks=True)
    merged(planted, root, night(planted, root, None))
    return root


def settled_copy(settled: Path, tmp_path: Path, name: str = "settled") -> Path:
    root = tmp_path / name
    shutil.copytree(settled, root, symlinks=True)
    return root


def add_files(planted: Planted, root: Path, files: Mapping[str, bytes],
              at: datetime = IMPORT_AT) -> str:
    """Commit ``files`` (new paths) on main through the store's landing path, byte for
    byte, the checkout following; the commit's sha."""
    store = planted_services(root, planted.url, at).store()
    changes = tuple(PathChange(path, data) for path, data in sorted(files.items()))

    def derive() -> IOResult[Draft, StoreError]:
        return store.deps.tip().map(lambda tip: Draft(
            parent=tip, changes=changes, ops=("write",),
            subject=f"plant {len(changes)} more file(s)", body="Planted for one test.",
            before={c.path: None for c in changes}, label="import"))

    return value_of(land(store.deps, derive)).commit


@dataclass(frozen=True)
class Night:
    report: RunReport
    base: HeadVersion
    tip: HeadVersion
    after: Mapping[str, HeadVersion]
    """The version at each phase's last commit (phases that committed)."""

    def phase(self, name: SleepPhase) -> PhaseRecord:
        return next(r for r in self.report.phases if r.phase == name)

    def count(self, phase: SleepPhase, key: str) -> int:
        value = self.phase(phase).counts[key]
        assert isinstance(value, int) and not isinstance(value, bool), (phase, key, value)
        return value

    def before(self, phase: SleepPhase) -> HeadVersion:
        """The version ``phase`` ran on: the last commit of a phase before it, or the
        base."""
        earlier = SLEEP_PHASES[:SLEEP_PHASES.index(phase)]
        landed = [self.after[p] for p in earlier if p in self.after]
        return landed[-1] if landed else self.base


def night(planted: Planted, root: Path, model: LanguageModel | None,
          options: RunOptions | None = None, days: int = 0) -> Night:
    deps = replace(planted_deps(root, planted.url, RUN_AT + timedelta(days=days)),
                   model=model)
    report = value_of(run_sleep(deps, options))
    assert report.ok, [(r.phase, r.status, r.reason) for r in report.phases]
    committed = {r.phase: r.commits[-1] for r in report.phases
                 if r.commits and r.status == "done"}
    shas = (report.base_sha, report.head_sha, *committed.values())
    versions = value_of(versions_at(deps, *shas))
    by_sha = dict(zip(shas, versions, strict=True))
    return Night(report, by_sha[report.base_sha], by_sha[report.head_sha],
                 {phase: by_sha[sha] for phase, sha in committed.items()})


def merged(planted: Planted, root: Path, done: Night, days: int = 0) -> None:
    deps = planted_deps(root, planted.url, RUN_AT + timedelta(days=days))
    outcome = value_of(merge_run(deps, done.report.run_id))
    assert outcome.merged, (outcome.refusal, outcome.reason, outcome.gate)


def only(*phases: SleepPhase) -> RunOptions:
    return RunOptions(phases=frozenset(phases))


def held(version: HeadVersion, path: str) -> MemoryRecord:
    record = version.get(path)
    assert record is not None, path
    return record


def gone(before: HeadVersion, after: HeadVersion) -> frozenset[str]:
    """Paths ``before`` held that ``after`` does not (archived away, in this corpus)."""
    return frozenset(p for p in before.paths() if after.get(p) is None)


def blobs(version: HeadVersion) -> dict[str, str]:
    return {record.path: record.blob_sha for record in version.records()}


def links(record: MemoryRecord, rel: str) -> frozenset[str]:
    return frozenset(link.href.lstrip("/") for link in record.links if link.rel == rel)


def detected(version: HeadVersion, detector: str) -> list[MemoryRecord]:
    return [r for r in version.records()
            if _DETECTED.fullmatch(r.path) and detector in r.tags]


def scripted(oracle: Oracle, malformed_calls: frozenset[int] = frozenset()) -> ScriptedModel:
    """The oracle as a model; one told to name a stranger breaks the port's schema check
    on purpose (a stranger is outside every batch's key enum), so its answers are handed
    over unchecked, for the readers' own second line."""
    return ScriptedModel(respond=oracle, name="planted-oracle",
                         malformed_calls=malformed_calls, checked=oracle.stranger is None)


# -- 1. paraphrases ---------------------------------------------------------------------


def test_every_paraphrase_folds_with_the_model(planted: Planted, store: Path) -> None:
    model = scripted(planted.oracle())
    done = night(planted, store, model)
    manifest = planted.corpus.manifest
    after = done.after["dedup-merge"]
    paraphrases = manifest.of_kind("paraphrase")
    assert len(paraphrases) == 20
    for pair in paraphrases:
        assert after.get(pair.newer) is None, pair
        archived = held(after, archive_path(pair.newer, YEAR))
        assert archived.superseded_by is not None
        assert archived.superseded_by.lstrip("/") == pair.older, pair
        assert archive_path(pair.newer, YEAR) in links(held(after, pair.older), "supersedes")
    provable = [p for p in manifest.pairs if p.expect == "fold"]
    assert gone(done.base, after) == {p.newer for p in (*provable, *paraphrases)}
    assert done.count("dedup-merge", "folded") == len(provable) + len(paraphrases)
    assert done.count("dedup-merge", "model_pairs") == len(paraphrases)
    assert model.unscripted == []


# -- 2. the veto over the model's groups ------------------------------------------------


def test_a_model_group_of_a_claim_and_its_flip_is_vetoed(
        planted: Planted, store: Path) -> None:
    manifest = planted.corpus.manifest
    flips = (*manifest.of_kind("negation"), *manifest.of_kind("number"))
    model = scripted(planted.oracle(fold=("paraphrase", "negation", "number")))
    done = night(planted, store, model)
    after = done.after["dedup-merge"]
    for pair in flips:
        for path in (pair.older, pair.newer):
            record = held(after, path)
            assert not record.archived and record.superseded_by is None, pair
            assert after.get(archive_path(path, YEAR)) is None, pair
    counts = done.phase("dedup-merge").counts
    # The model grouped every paraphrase and every negation and number flip; the veto
    # refused each flip (by the predicate that sees it) and only the paraphrases fold.
    assert counts["model_pairs"] == len(manifest.of_kind("paraphrase")) + len(flips)
    negations = len(manifest.of_kind("negation")) + len(manifest.of_kind("antonym"))
    assert counts["vetoed_negation"] == negations
    assert counts["vetoed_numeric"] == len(manifest.of_kind("number"))
    assert counts["vetoed"] == len([p for p in manifest.pairs if p.expect == "veto"])
    provable = [p for p in manifest.pairs if p.expect == "fold"]
    assert counts["folded"] == len(provable) + len(manifest.of_kind("paraphrase"))


# -- 3. keys no batch offered -----------------------------------------------------------


def _laith_pair(planted: Planted) -> tuple[str, str]:
    """Two survey files naming the person (so in the compress band's one community)."""
    holders = planted.corpus.manifest.entity_holders["person:laith"]
    return holders[0], holders[1]


def _canon(planted: Planted, absorbs: Sequence[str]) -> Canon:
    """A canonical as the prompt asks for one: titled as its oldest member, its claim
    and paragraphs the members' own claims (so it is drawn from them and carries each,
    ``sleep.grounded``)."""
    files = {**planted.corpus.files, **planted.extra}
    records = [record_from(files[path].decode("utf-8"), path).unwrap() for path in absorbs]
    claims = tuple(r.claim for r in records)
    return Canon(min(records, key=lambda r: (r.created_at, r.path)).title, " ".join(claims),
                 claims, tuple(absorbs))


@pytest.mark.parametrize("stranger", ["m99", "areas/x.html"])
def test_an_answer_naming_a_key_no_batch_offered_changes_nothing(
        planted: Planted, settled: Path, tmp_path: Path, stranger: str) -> None:
    canon = _canon(planted, _laith_pair(planted))
    quiet = night(planted, settled_copy(settled, tmp_path, "quiet"),
                  scripted(planted.oracle(fold=())), days=1)
    poisoned = night(planted, settled_copy(settled, tmp_path, "poisoned"),
                     scripted(planted.oracle(canonicals=(canon,), stranger=stranger)),
                     days=1)
    # Every memory file is byte for byte what a night of empty answers leaves.
    assert blobs(poisoned.tip) == blobs(quiet.tip)
    paraphrases = planted.corpus.manifest.of_kind("paraphrase")
    # dedup: each group's second key named nobody, so no group of two was left.
    assert poisoned.count("dedup-merge", "unknown_keys") == len(paraphrases)
    assert poisoned.count("dedup-merge", "model_groups") == 0
    assert poisoned.count("dedup-merge", "folded") == quiet.count("dedup-merge", "folded")
    # edge-typing and compress refuse an answer naming a stranger whole: skipped, counted.
    for phase in ("edge-typing", "compress"):
        assert poisoned.count(phase, "failed_batches") == poisoned.count(phase, "batches") > 0
        assert poisoned.count(phase, "unknown_keys") >= poisoned.count(phase, "batches")
    assert poisoned.count("compress", "canonicals") == 0


# -- 4. a contradiction, and a promotion's second detection ----------------------------


def test_a_contradiction_is_a_task_first_and_lands_in_both_files_over_a_changed_corpus(
        planted: Planted, store: Path) -> None:
    add_files(planted, store, contradiction_files())
    oracle = planted.oracle(contradictions=((CONTRA_A, CONTRA_B),))
    phases = only("relationship-mining", "edge-typing")
    first = night(planted, store, scripted(oracle), phases)
    assert first.count("edge-typing", "shared_entity") == 1  # the planted pair, by its entity
    assert first.count("edge-typing", "contradicts_detected") == 1
    assert first.count("edge-typing", "contradicts_promoted") == 0
    (task,) = detected(first.tip, "edge-typing")
    assert task.memory_type == "task"
    assert to_document_path(CONTRA_A) in task.body_text
    assert to_document_path(CONTRA_B) in task.body_text
    for path in (CONTRA_A, CONTRA_B):
        assert not links(held(first.tip, path), "contradicts"), path
    # A second night over the same base (night one not merged) rereads an unchanged
    # corpus: no second detection, nothing promoted.
    again = night(planted, store, scripted(oracle), phases, days=1)
    assert again.report.base_sha == first.report.base_sha
    assert again.count("edge-typing", "contradicts_detected") == 1
    assert again.count("edge-typing", "contradicts_promoted") == 0
    merged(planted, store, first)
    # A write far from the pair moves main, and is still no second reading of it.
    add_files(planted, store, change_file(), RUN_AT + timedelta(hours=6))
    unmoved = night(planted, store, scripted(oracle), phases, days=1)
    assert unmoved.report.base_sha != first.report.base_sha
    assert unmoved.count("edge-typing", "contradicts_promoted") == 0
    assert unmoved.count("edge-typing", "readings_unchanged") == 1
    assert unmoved.count("edge-typing", "tasks_closed") == 0
    # A write naming the pair's subject is.
    add_files(planted, store, gauge_note(), RUN_AT + timedelta(hours=7))

    second = night(planted, store, scripted(oracle), phases, days=1)
    assert second.count("edge-typing", "contradicts_promoted") == 1
    a, b = held(second.tip, CONTRA_A), held(second.tip, CONTRA_B)
    assert links(a, "contradicts") == {CONTRA_B}
    assert links(b, "contradicts") == {CONTRA_A}
    # It asserts the conflict and nothing else: nothing closed, superseded or archived.
    for record in (a, b):
        before = held(second.base, record.path)
        assert record.valid_until == before.valid_until is None
        assert record.status == before.status and not record.archived
        assert record.superseded_by is None
    # The one file that left is night one's task, closed now that the pair is linked.
    assert gone(second.base, second.tip) == {task.path}
    assert second.count("edge-typing", "tasks_closed") == 1


def test_an_entity_cluster_promotes_on_a_changed_corpus_and_not_on_an_unchanged_one(
        planted: Planted, store: Path) -> None:
    """The detection that promotes a model-only entity merge must come from a new
    reading: one over an unchanged corpus (the same base tree) repeats the first and
    counts nothing (edge-typing's contradiction counter follows the same rule: see the
    contradiction test)."""
    cluster = EntityCluster("service", ("notifier-hub", "notify-hub"))
    key = CounterKey("entity", Cluster("service", cluster.names, cluster.confidence).key)
    oracle = planted.oracle(clusters=(cluster,))
    phases = only("entity-resolution")

    def detections() -> int:
        state = planted_deps(store, planted.url).state
        got: IOResult[int, StateError] = state.detections(key)
        return value_of(got)

    def spellings(version: HeadVersion) -> set[str]:
        return {entity for record in version.records() if record.memory_type != "task"
                for entity in record.entities if entity.startswith("service:notif")}

    first = night(planted, store, scripted(oracle), phases)
    assert first.count("entity-resolution", "model_merges_waiting") == 1
    assert first.count("entity-resolution", "model_merges_applied") == 0
    assert detections() == 1
    again = night(planted, store, scripted(oracle), phases, days=1)
    assert again.report.base_sha == first.report.base_sha
    assert again.count("entity-resolution", "model_merges_waiting") == 1
    assert again.count("entity-resolution", "model_merges_applied") == 0
    assert detections() == 1
    assert spellings(again.tip) == {"service:notifier-hub", "service:notify-hub"}

    merged(planted, store, first)
    add_files(planted, store, change_file((NOTIFY_ENTITY,)), RUN_AT + timedelta(days=1))
    changed = night(planted, store, scripted(oracle), phases, days=2)
    assert changed.count("entity-resolution", "model_merges_applied") == 1
    assert detections() == 2
    assert spellings(changed.tip) == {NOTIFY_ENTITY}


# -- 5. compress ------------------------------------------------------------------------


def test_compress_never_archives_an_unnamed_member_or_a_dated_episode(
        planted: Planted, settled: Path, tmp_path: Path) -> None:
    store = settled_copy(settled, tmp_path)
    add_files(planted, store, episode_file(), RUN_AT + timedelta(hours=1))
    # The episode's person is linked on a night of its own: a file person-links links
    # tonight is one compress leaves alone tonight.
    merged(planted, store, night(planted, store, None, only("entity-resolution",
                                                           "person-links")), days=1)
    first, second = _laith_pair(planted)
    canon = _canon(planted, (EPISODE, first, second))
    model = scripted(planted.oracle(canonicals=(canon,)))
    done = night(planted, store, model, days=1)
    asked = [r for r in model.requests if r.tool_name == "write_canonicals"]
    assert len(asked) == 1
    oracle = planted.oracle()
    offered_paths = {oracle.path_of[collapsed(text.split("\nclaim: ", 1)[1].split("\n")[0])]
                     for text in offered(asked[0]).values()}
    assert {EPISODE, first, second} < offered_paths
    counts = done.phase("compress").counts
    assert (counts["canonicals"], counts["archived"], counts["episodes_kept"]) == (1, 2, 1)

    before, after = done.before("compress"), done.after["compress"]
    (made,) = [r for r in after.records() if before.get(r.path) is None
               and not r.archived and r.title == canon.title]
    for path in (first, second):
        assert after.get(path) is None
        archived = held(after, archive_path(path, YEAR))
        assert archived.superseded_by == to_document_path(made.path)
    episode = held(after, EPISODE)
    assert not episode.archived and episode.status == "active"
    assert episode.superseded_by is None
    assert Link("part_of", to_document_path(made.path)) in episode.links
    assert after.get(archive_path(EPISODE, YEAR)) is None
    # What the answer did not name is active and unsuperseded; its text is as it was
    # but for an href following an absorbed member into the archive.
    absorbed = {to_document_path(p): to_document_path(archive_path(p, YEAR))
                for p in (first, second)}
    for path in offered_paths - {EPISODE, first, second}:
        was, now = held(before, path), held(after, path)
        assert not now.archived and now.superseded_by is None, path
        expected = was.html
        for old, new in absorbed.items():
            expected = expected.replace(f'href="{old}"', f'href="{new}"')
        assert now.html == expected, path
    assert gone(before, after) == {first, second}


# -- 6. a malformed batch ---------------------------------------------------------------


def test_one_malformed_batch_in_ten_leaves_nine_applied(planted: Planted, store: Path) -> None:
    model = scripted(planted.oracle(detect_first=True), malformed_calls=frozenset({4}))
    done = night(planted, store, model, only("task-detection"))
    counts = done.phase("task-detection").counts
    assert (counts["batches"], counts["calls"], counts["failed_batches"]) == (10, 10, 1)
    assert (counts["findings"], counts["kept"], counts["tasks_minted"]) == (9, 9, 9)
    tasks = detected(done.tip, "task-detection")
    assert len(tasks) == 9
    firsts = [offered(request)["m1"].split("\n", 1)[0] for request in model.requests]
    titles = {task.title for task in tasks}
    assert titles == {f"Follow up: {title}" for n, title in enumerate(firsts) if n != 3}


# -- 7. a spent budget ------------------------------------------------------------------


def test_a_five_call_budget_skips_the_rest_and_the_run_stays_green(
        planted: Planted, store: Path) -> None:
    model = scripted(planted.oracle())
    done = night(planted, store, model, RunOptions(max_llm_calls=5))
    assert model.calls == 5
    skipped = {phase: done.count(phase, "budget_skipped")
               for phase in ("dedup-merge", "entity-resolution", "edge-typing", "compress",
                             "task-detection")}
    skipped["arc-synthesis"] = done.count("arc-synthesis", "triage_budget_skipped")
    assert sum(skipped.values()) > 0
    assert skipped["task-detection"] == done.count("task-detection", "batches") == 10
    assert all(done.phase(phase).status == "done" for phase in MODEL_PHASES)
    calls = sum(done.count(phase, "calls") for phase in MODEL_PHASES
                if phase != "arc-synthesis") + done.count("arc-synthesis", "triage_calls")
    assert calls == 5


# -- 8. call counts ---------------------------------------------------------------------


def test_call_counts_match_the_formulas(planted: Planted, store: Path) -> None:
    model = scripted(planted.oracle())
    done = night(planted, store, model)
    by_tool = Counter(request.tool_name for request in model.requests)
    # edge-typing: ceil(pairs / 30).
    pairs = done.count("edge-typing", "candidates")
    assert pairs > EDGE_TYPING_PAIRS_PER_CALL
    assert done.count("edge-typing", "calls") == by_tool["type_edges"] == math.ceil(
        pairs / EDGE_TYPING_PAIRS_PER_CALL)
    # task-detection: ceil(min(200, eligible) / 20).
    eligible = done.count("task-detection", "eligible")
    assert eligible > TASK_DETECTION_SCAN
    assert done.count("task-detection", "calls") == by_tool["report_open_commitments"] == (
        math.ceil(min(TASK_DETECTION_SCAN, eligible) / TASK_DETECTION_BATCH))
    # dedup-merge: whole components packed 40 members a call; the components are read
    # back from the prompts (each member names its set).
    sizes: Counter[str] = Counter()
    for request in model.requests:
        if request.tool_name == "group_duplicate_memories":
            sizes.update(text.split(":", 1)[0] for text in offered(request).values())
    assert len(sizes) == done.count("dedup-merge", "components")
    ordered = sorted(sizes, key=lambda label: int(label.removeprefix("set ")))
    packed = pack_groups([[label] * sizes[label] for label in ordered],
                         DEDUP_MEMBERS_PER_CALL)
    assert done.count("dedup-merge", "calls") == by_tool["group_duplicate_memories"] == (
        len(packed))
    if max(sizes.values()) == 2:  # pairs only: packing wastes no room in an even batch
        assert len(packed) == math.ceil(sum(sizes.values()) / DEDUP_MEMBERS_PER_CALL)
    # Every call is one some phase counted.
    counted = sum(done.count(phase, "calls") for phase in MODEL_PHASES
                  if phase != "arc-synthesis")
    counted += done.count("arc-synthesis", "triage_calls")
    counted += done.count("arc-synthesis", "write_calls")
    assert counted == model.calls


# -- 9. the same bytes twice ------------------------------------------------------------


def test_two_runs_over_one_store_send_the_same_request_bytes(
        planted: Planted, store: Path) -> None:
    oracle = planted.oracle()
    first, second = scripted(oracle), scripted(oracle)
    night(planted, store, first)
    night(planted, store, second)
    assert first.calls > 0
    assert first.sent == second.sent


# -- 10. no model -----------------------------------------------------------------------


def _tree(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "main^{tree}"],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_with_no_model_the_night_is_part_twos_and_the_model_only_adds_folds(
        planted: Planted, tmp_path: Path) -> None:
    manifest = planted.corpus.manifest
    trees: list[str] = []
    nights: list[Night] = []
    for name in ("none-1", "none-2"):
        root = fresh(planted, tmp_path, name)
        done = night(planted, root, None)
        merged(planted, root, done)
        trees.append(_tree(root))
        nights.append(done)
    assert trees[0] == trees[1]
    plain = nights[0]
    for phase in MODEL_PHASES[2:]:
        assert plain.phase(phase).counts == {"skipped": "no model"}, phase
    # Part 2's outcome: the provable duplicates fold, the paraphrases do not.
    provable = {p.newer for p in manifest.pairs if p.expect == "fold"}
    none_gone = gone(plain.base, plain.tip)
    assert none_gone == provable
    assert "model_pairs" not in plain.phase("dedup-merge").counts

    with_model = night(planted, fresh(planted, tmp_path, "oracle"), scripted(planted.oracle()))
    model_gone = gone(with_model.base, with_model.tip)
    assert none_gone <= model_gone
    assert model_gone - none_gone == {p.newer for p in manifest.of_kind("paraphrase")}
