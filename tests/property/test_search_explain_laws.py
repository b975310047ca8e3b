"""Laws of a search's account of itself, and of the one-line edit of a config file.

A hit's per-arm shares must be the whole story of its fused score, and each arm's
raw score must be the one that arm ranked by (BM25, cosine), ordered as the ranks
and shares are. Recording a setting must change that one key and leave every other key, and
every other line, as the person wrote it.
"""

from __future__ import annotations

import json
import tomllib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.head import RRF_K, SearchHeadInput, indexes_of, search_head, version_from_records
from memhtml.head.search import bm25_scores
from memhtml.store.settings_file import with_setting
from tests.property.head_support import memory, record_at

WORDS = ["deploy", "canary", "cache", "queue", "retry", "backoff", "schema", "index",
         "ledger", "audit", "region", "budget"]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
vector = st.lists(st.integers(min_value=-3, max_value=3), min_size=3, max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(sentence, st.one_of(st.none(), vector)), min_size=1, max_size=12),
       sentence, st.one_of(st.none(), vector))
def test_ranks_account_for_every_fused_score(
        corpus: list[tuple[str, list[int] | None]], query: str,
        query_vector: list[int] | None) -> None:
    records = [record_at(f"areas/n{i}.html", memory(f"Note {i}", f"{text}."))
               for i, (text, _) in enumerate(corpus)]
    version = version_from_records(records, "s")
    vectors = {record.content_hash: np.array(v, dtype=np.float32)
               for record, (_, v) in zip(records, corpus, strict=True) if v is not None}
    hits = search_head(version, SearchHeadInput(
        query, limit=50, vectors=vectors if query_vector is not None else None,
        query_vector=None if query_vector is None else np.array(query_vector, np.float32)))
    bm25 = bm25_scores(indexes_of(version), query)
    by_path = {record.path: record for record in records}
    for hit in hits:
        assert [r.arm for r in hit.ranks] == [a for a in hit.arms if a != "recency"]
        fused = 0.0
        for r in hit.ranks:
            fused += r.share
        assert hit.score == fused
        for r in hit.ranks:
            if query_vector is None:
                assert r.share == 1.0 / (RRF_K + r.rank), "one arm: reciprocal rank"
            else:
                assert 0.0 <= r.share <= 1.0, "two arms: a normalized score, weight 1"
        for r in hit.ranks:
            if r.arm == "lexical":
                assert r.score == bm25[hit.path]
            else:
                assert query_vector is not None
                a = np.asarray(vectors[by_path[hit.path].content_hash], dtype=np.float64)
                b = np.asarray(query_vector, dtype=np.float64)
                cosine = float(a @ b) / ((float(np.linalg.norm(a)) or 1.0) * float(
                    np.linalg.norm(b)))
                assert abs(r.score - cosine) < 1e-5
    # Within one arm a better raw score never has a worse rank, and equal scores share one.
    for arm in ("lexical", "vector"):
        placed = [r for hit in hits for r in hit.ranks if r.arm == arm]
        for first in placed:
            for second in placed:
                if first.score > second.score:
                    assert first.rank < second.rank
                    assert first.share >= second.share
                elif first.score == second.score:
                    assert first.rank == second.rank
                    assert first.share == second.share


keys = st.sampled_from(["embedder", "branch", "embed_model", "vector_coverage_floor",
                        "other_key"])
values = st.text(st.characters(codec="utf-8"), max_size=12)


def _quoted(value: str) -> str:
    """A TOML basic string, written here independently of the code under test."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


@st.composite
def config_files(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    """A flat TOML file of string keys with comments and blank lines between them,
    sometimes a table after them, and what it reads as."""
    flat: dict[str, str] = draw(st.dictionaries(keys, values, max_size=4))
    table: dict[str, object] = dict(flat)
    lines: list[str] = []
    for key, value in flat.items():
        gaps: list[str] = draw(st.lists(st.sampled_from(["", "# a comment", "  # indented"]),
                                        max_size=2))
        lines.extend(gaps)
        spacing = draw(st.sampled_from([" = ", "=", "  =  "]))
        comment = draw(st.sampled_from(["", "  # why"]))
        lines.append(f"{key}{spacing}{_quoted(value)}{comment}")
    if draw(st.booleans()):
        lines += ["[extra]", 'embedder = "not-top-level"']
        table["extra"] = {"embedder": "not-top-level"}
    newline_at_end: bool = draw(st.booleans())
    text = "\n".join(lines) + ("\n" if lines and newline_at_end else "")
    assert tomllib.loads(text) == table
    return text, table


@settings(max_examples=200, deadline=None)
@given(config_files(), keys, values)
def test_recording_a_setting_changes_that_key_alone(
        config: tuple[str, dict[str, object]], key: str, value: str) -> None:
    text, table = config
    edited = with_setting(text, key, value).unwrap()
    assert tomllib.loads(edited) == {**table, key: value}
    if table.get(key) == value:
        assert edited == text
    kept = [line for line in text.split("\n")
            if line and not line.replace(" ", "").startswith(f"{key}=")]
    after = edited.split("\n")
    # Every other line survives, in order.
    position = 0
    for line in kept:
        position = after.index(line, position) + 1


def test_a_file_that_is_not_toml_is_refused() -> None:
    assert "not valid TOML" in with_setting("embedder = \n", "embedder", "hashing").failure()
