"""The planted-defect corpus: valid files, exact scripted cosines, a manifest that
tells the truth about what the veto, the hashes and the entity pass will see, and the
same bytes in every process."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.result import Failure, Success
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import QueryEmbedder, VectorSpace
from memhtml.domain.entities import name_similarity, normalize_entity_name
from memhtml.domain.merge import MergeText, merge_veto
from memhtml.domain.thresholds import (
    AUTO_MERGE_THRESHOLD,
    NEAR_DUPLICATE_THRESHOLD,
    REVIEW_THRESHOLD,
)
from memhtml.eval.planted import extra_files, plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import (
    PLANTED_DIMENSION,
    PLANTED_MODEL_ID,
    ScriptedEmbedder,
    at_cosine,
    scripted_embedder,
    seeded_unit_vector,
)
from memhtml.eval.planted_manifest import DEFAULT_CONFIG, DEFECT_KINDS, PlantConfig, PlantedCorpus
from memhtml.eval.planted_words import polar_clean, veto_tokens
from memhtml.format import check_memory
from memhtml.head import record_from, vector_text_of

REPO = Path(__file__).resolve().parents[3]


def planted(config: PlantConfig = DEFAULT_CONFIG) -> PlantedCorpus:
    result = plant_corpus(synthetic_docs(), config)
    assert is_successful(result), result
    corpus: PlantedCorpus = result.unwrap()
    return corpus


@pytest.fixture(scope="module")
def corpus() -> PlantedCorpus:
    return planted()


@pytest.fixture(scope="module")
def records(corpus: PlantedCorpus) -> dict[str, MemoryRecord]:
    return {path: record_from(data.decode("utf-8"), path).unwrap()
            for path, data in corpus.files.items()}


def as64(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    return vector.astype(np.float64)


def cosine(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def merge_text(record: MemoryRecord) -> MergeText:
    return MergeText(record.claim, record.body_text)


# --------------------------------------------------------------------------- files


def test_every_file_passes_the_format_check(corpus: PlantedCorpus) -> None:
    failing = {path: check_memory(data.decode("utf-8")).violations
               for path, data in corpus.files.items()
               if not check_memory(data.decode("utf-8")).ok}
    assert failing == {}
    assert list(corpus.files) == sorted(corpus.files)
    assert [c.path for c in corpus.changes()] == list(corpus.files)


def test_manifest_counts_equal_the_parameters(corpus: PlantedCorpus) -> None:
    counts = corpus.manifest.counts()
    assert {kind: counts[kind] for kind in DEFECT_KINDS} == dict(DEFAULT_CONFIG.pair_counts())
    assert counts["stale_tasks"] == DEFAULT_CONFIG.stale_tasks
    assert len(corpus.files) == len(corpus.manifest.base_paths) + extra_files()
    small = PlantConfig(exact=3, frame_key=2, near=4, paraphrase=1, negation=5, antonym=2,
                        number=1, variant=3, contradictions=2, stale_tasks=4, alias_sets=False)
    other = planted(small)
    got = other.manifest.counts()
    assert {kind: got[kind] for kind in DEFECT_KINDS} == dict(small.pair_counts())
    assert got["stale_tasks"] == 4 and got["alias_groups"] == 0
    assert len(other.files) == len(other.manifest.base_paths) + extra_files(small)


def test_every_path_in_the_manifest_is_a_file(corpus: PlantedCorpus) -> None:
    m = corpus.manifest
    named = [p for pair in m.pairs for p in (pair.older, pair.newer)]
    named += [*m.tasks, *m.person_files, *m.base_paths]
    named += [p for holders in m.entity_holders.values() for p in holders]
    assert set(named) <= set(corpus.files)
    members = [p for pair in m.pairs for p in (pair.older, pair.newer)]
    assert len(members) == len(set(members)), "no file plays two roles"


def test_the_newer_member_is_newer(corpus: PlantedCorpus,
                                   records: dict[str, MemoryRecord]) -> None:
    for pair in corpus.manifest.pairs:
        older, newer = records[pair.older], records[pair.newer]
        assert (older.created_at, older.path) < (newer.created_at, newer.path), pair
        assert newer.updated_at > older.updated_at, pair


def test_tasks_are_open_and_untouched_for_the_idle_days(
    corpus: PlantedCorpus, records: dict[str, MemoryRecord]
) -> None:
    m = corpus.manifest
    cutoff = (DEFAULT_CONFIG.now - timedelta(days=DEFAULT_CONFIG.task_idle_days))
    tasks = {p for p, r in records.items() if r.memory_type == "task"}
    assert tasks == set(m.tasks)
    for path in m.tasks:
        record = records[path]
        assert path.startswith("areas/tasks/")
        assert record.task_status in {"todo", "doing", "blocked"}
        assert datetime.fromisoformat(record.updated_at) <= cutoff
    first, second = (records[p] for p in m.twin_tasks)
    assert first.path != second.path and first.content_hash == second.content_hash
    assert first.task_status == second.task_status == "todo"
    assert all(records[p].entities for p in m.tasks_with_entities)


# --------------------------------------------------------------------------- hashes and keys


def test_only_planted_pairs_share_a_content_hash_or_a_frame_key(
    corpus: PlantedCorpus, records: dict[str, MemoryRecord]
) -> None:
    def groups(key: str) -> set[frozenset[str]]:
        by: dict[str, list[str]] = {}
        for path, record in records.items():
            if record.memory_type != "task":
                by.setdefault(getattr(record, key), []).append(path)
        return {frozenset(paths) for paths in by.values() if len(paths) > 1}

    m = corpus.manifest
    exact = {frozenset((p.older, p.newer)) for p in m.of_kind("exact")}
    twins = {frozenset((p.older, p.newer)) for p in m.of_kind("frame_key")}
    assert groups("content_hash") == exact
    assert groups("frame_key") == exact | twins
    for pair in m.of_kind("exact"):
        assert corpus.vector_texts[pair.older] == corpus.vector_texts[pair.newer]


# --------------------------------------------------------------------------- the veto


def test_the_veto_reads_what_the_manifest_says(
    corpus: PlantedCorpus, records: dict[str, MemoryRecord]
) -> None:
    for pair in corpus.manifest.pairs:
        if pair.kind == "contradiction":
            continue
        fired = merge_veto(merge_text(records[pair.older]), merge_text(records[pair.newer]))
        if pair.expect == "veto":
            assert fired == (pair.predicate,), (pair, fired)
        else:
            assert fired == (), (pair, fired)


def test_flips_differ_in_the_claim(corpus: PlantedCorpus,
                                   records: dict[str, MemoryRecord]) -> None:
    for pair in corpus.manifest.pairs:
        if pair.expect != "veto":
            continue
        older, newer = records[pair.older], records[pair.newer]
        assert older.claim != newer.claim
        assert older.body_text.removeprefix(older.claim) == \
            newer.body_text.removeprefix(newer.claim)
    numbers = corpus.manifest.of_kind("number")
    assert any("3.5" in records[p.older].claim and "35" in records[p.newer].claim
               for p in numbers)


def test_the_synthetic_texts_are_clean() -> None:
    assert all(polar_clean(veto_tokens(doc.text)) for doc in synthetic_docs())
    assert not polar_clean(veto_tokens("It is active, or inactive."))
    assert not polar_clean(veto_tokens("It isn't"))
    assert not polar_clean(veto_tokens("Switch it on, then off."))


# --------------------------------------------------------------------------- the embedder


def test_scripted_cosines_are_exact(corpus: PlantedCorpus) -> None:
    embedder = scripted_embedder(corpus)
    scripted = [p for p in corpus.manifest.pairs if p.cosine is not None]
    assert {p.kind for p in scripted} == {"exact", "near", "paraphrase", "negation",
                                          "antonym", "number", "variant"}
    for pair in scripted:
        a = as64(embedder.vector_of(corpus.vector_texts[pair.older]))
        b = as64(embedder.vector_of(corpus.vector_texts[pair.newer]))
        assert pair.cosine is not None
        assert abs(cosine(a, b) - pair.cosine) < 1e-6, pair
        assert abs(np.linalg.norm(b) - 1.0) < 1e-6
    for pair in corpus.manifest.of_kind("near"):
        assert pair.cosine is not None and pair.cosine > NEAR_DUPLICATE_THRESHOLD
    for pair in corpus.manifest.of_kind("paraphrase"):
        assert pair.cosine is not None and pair.cosine < NEAR_DUPLICATE_THRESHOLD


def test_unscripted_texts_are_nearly_orthogonal(
    corpus: PlantedCorpus, records: dict[str, MemoryRecord]
) -> None:
    embedder = scripted_embedder(corpus)
    newer = {p.newer for p in corpus.manifest.pairs}
    texts = sorted({vector_text_of(r) for p, r in records.items() if p not in newer})
    rows = np.stack([as64(embedder.vector_of(t)) for t in texts])
    sims = rows @ rows.T
    np.fill_diagonal(sims, 0.0)
    assert float(np.abs(sims).max()) < 0.5


def test_the_embedder_keeps_the_protocol() -> None:
    embedder: QueryEmbedder = ScriptedEmbedder({})
    assert embedder.space == VectorSpace(PLANTED_MODEL_ID, PLANTED_DIMENSION)
    vectors = unsafe_perform_io(embedder.embed(["one", "two", "one"]).unwrap())
    assert [v.shape for v in vectors] == [(PLANTED_DIMENSION,)] * 3
    assert all(v.dtype == np.float32 for v in vectors)
    assert np.array_equal(vectors[0], vectors[2])
    query = unsafe_perform_io(embedder.embed_query("one").unwrap())
    assert np.array_equal(query, vectors[0])
    with pytest.raises(ValueError, match="dimension"):
        ScriptedEmbedder({}, dimension=1)


@settings(max_examples=200)
@given(st.text(max_size=20), st.text(max_size=20),
       st.floats(min_value=-1.0, max_value=1.0, allow_nan=False))
def test_at_cosine_puts_the_vector_at_the_cosine(one: str, two: str, c: float) -> None:
    anchor = seeded_unit_vector(one, 64)
    lean = seeded_unit_vector(two, 64, salt="lean")
    got = at_cosine(anchor, c, lean)
    assert abs(float(got @ anchor) - c) < 1e-9 and abs(float(np.linalg.norm(got)) - 1) < 1e-9


# --------------------------------------------------------------------------- entities


def test_alias_groups_hold_what_the_entity_pass_will_see(
    corpus: PlantedCorpus, records: dict[str, MemoryRecord]
) -> None:
    m = corpus.manifest
    person = records[m.person_files[0]]
    declared = {normalize_entity_name(n) for n in person.aliases}
    declared |= {normalize_entity_name(e.split(":", 1)[1]) for e in person.entities}
    counts: dict[tuple[str, str], int] = {}
    for record in records.values():
        if record.memory_type == "task":
            continue
        for entity in record.entities:
            kind, name = entity.split(":", 1)
            key = (kind, normalize_entity_name(name))
            counts[key] = counts.get(key, 0) + 1
    review = {(r.entity_type, *sorted((r.left, r.right))) for r in m.review_pairs}
    merging: dict[tuple[str, str], int] = {}
    for number, group in enumerate(m.alias_groups):
        names = sorted({normalize_entity_name(n) for n in group.names})
        if group.merge:
            for name in names:
                merging[(group.entity_type, name)] = number
            linked = [(a, b) for a, b in itertools.combinations(names, 2)
                      if name_similarity(a, b) >= AUTO_MERGE_THRESHOLD
                      or {a, b} <= declared]
            assert _connected(names, linked), group
            best = min(names, key=lambda n: (-counts[(group.entity_type, n)], n))
            assert best == group.canonical, group
    for (kind_a, a), (kind_b, b) in itertools.combinations(sorted(counts), 2):
        if kind_a != kind_b:
            continue
        together = merging.get((kind_a, a), -1) == merging.get((kind_b, b), -2)
        if name_similarity(a, b) >= REVIEW_THRESHOLD and not together:
            assert (kind_a, *sorted((a, b))) in review, (a, b)
    for pair in m.review_pairs:
        similarity = name_similarity(pair.left, pair.right)
        if pair.reason == "band":
            assert REVIEW_THRESHOLD <= similarity < AUTO_MERGE_THRESHOLD
        else:
            assert similarity >= AUTO_MERGE_THRESHOLD, "a guard pair is one overlap alone merges"


def _connected(names: list[str], edges: list[tuple[str, str]]) -> bool:
    reached = {names[0]}
    for _ in names:
        reached |= {b for a, b in edges if a in reached} | {a for a, b in edges if b in reached}
    return reached == set(names)


# --------------------------------------------------------------------------- determinism

FINGERPRINT = """
import hashlib
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import scripted_embedder

corpus = plant_corpus(synthetic_docs()).unwrap()
digest = hashlib.sha256()
for path, data in corpus.files.items():
    digest.update(path.encode() + b"\\0" + data + b"\\0")
digest.update(repr(corpus.manifest).encode())
embedder = scripted_embedder(corpus)
for path, text in corpus.vector_texts.items():
    digest.update(path.encode() + embedder.vector_of(text).tobytes())
print(digest.hexdigest())
"""


def test_same_input_same_bytes(corpus: PlantedCorpus) -> None:
    again = planted()
    assert again == corpus
    assert repr(again.manifest) == repr(corpus.manifest)


def test_independent_of_the_hash_seed() -> None:
    seen = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", FINGERPRINT], check=True,
                              capture_output=True, text=True, env=env, cwd=REPO)
        seen.add(done.stdout.strip())
    assert len(seen) == 1


# --------------------------------------------------------------------------- sizes and refusals


def test_base_count_sets_the_corpus_size() -> None:
    base = 250
    result = plant_corpus(synthetic_docs(300), DEFAULT_CONFIG, base_count=base)
    assert isinstance(result, Success)
    assert len(result.unwrap().files) == base + extra_files()
    too_many = plant_corpus(synthetic_docs(300), DEFAULT_CONFIG, base_count=400)
    assert isinstance(too_many, Failure) and "400" in too_many.failure().reason


def test_too_few_documents_are_refused() -> None:
    result = plant_corpus(synthetic_docs(50))
    assert not is_successful(result)
    assert "too few" in result.failure().reason
    assert not is_successful(plant_corpus([]))


def test_repeated_documents_are_dropped() -> None:
    docs = synthetic_docs()
    result = plant_corpus([*docs, docs[3], replace(docs[5], doc_id="s99999")])
    assert isinstance(result, Success)
    assert result.unwrap().manifest.dropped_base == 2
