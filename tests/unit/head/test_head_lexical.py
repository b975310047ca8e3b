"""The lexical arm: tokenize, the stop list, and BM25 against a case worked by hand."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest
from tests.property.head_support import memory_with, record_at

from memhtml.head import STOP_WORDS, empty_indexes, insert_record, tokenize
from memhtml.head.indexes import build_indexes
from memhtml.head.lexical import BM25_B, BM25_K1, LexicalIndex
from memhtml.head.search import bm25_scores


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Café au lait", ["café", "au", "lait"]),
        ("The deploy-step is NOT safe", ["deploy", "step", "not", "safe"]),
        ("feature_flag and feature__x", ["feature_flag", "feature__x"]),
        ("Ünïcödé ΣΟΦΙΑ 東京 ٣٤", ["ünïcödé", "σοφια", "東京", "٣٤"]),
        ("node 20.11, v2.1!", ["node", "20", "11", "v2", "1"]),
        ("  ...  ", []),
        ("", []),
        ("the of and a to", []),
        ("no system time", ["no", "system", "time"]),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_stop_words_are_the_short_closed_list() -> None:
    assert len(STOP_WORDS) == 57
    assert all(word == word.lower() for word in STOP_WORDS)
    # Negations separate a claim from its contradiction; system and time are searched by.
    assert not {"no", "not", "system", "time", "never"} & STOP_WORDS
    assert {"the", "of", "and", "is", "you"} <= STOP_WORDS


# Three documents whose indexed text (title, claim, then the article text, which opens
# with the claim) is spelled out token by token below.
DOCS = {
    "a.html": ("Alpha", "Alpha beta."),  # alpha alpha beta | alpha beta
    "b.html": ("Gamma", "Beta gamma gamma."),  # gamma beta gamma gamma | beta gamma gamma
    "c.html": ("Delta", "Delta only."),  # delta delta only | delta only
}
LENGTHS = {"a.html": 5, "b.html": 7, "c.html": 5}
TF = {"a.html": {"alpha": 3, "beta": 2}, "b.html": {"beta": 2, "gamma": 5}}


def _hand_bm25() -> dict[str, float]:
    n = 3
    average = (5 + 7 + 5) / 3
    df = {"alpha": 1, "beta": 2}
    out: dict[str, float] = {}
    for path, tfs in TF.items():
        total = 0.0
        for token in ("alpha", "beta"):
            tf = tfs.get(token, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[token] + 0.5) / (df[token] + 0.5))
            norm = 1.2 * (1 - 0.75 + 0.75 * LENGTHS[path] / average)
            total += idf * tf * (1.2 + 1) / (tf + norm)
        out[path] = total
    return out


def test_the_constants() -> None:
    assert (BM25_K1, BM25_B) == (1.2, 0.75)


def test_bm25_matches_the_hand_computed_case() -> None:
    records = [record_at(path, memory_with(title, claim)) for path, (title, claim) in DOCS.items()]
    indexes = build_indexes(records)
    for path, length in LENGTHS.items():
        assert indexes.lexical.length_of(path) == length
    expected = _hand_bm25()
    # Each distinct query token counts once, so the repeat and the stop word change nothing.
    scores = bm25_scores(indexes, "beta the Alpha beta")
    assert set(scores) == set(expected)
    for path, score in expected.items():
        assert scores[path] == pytest.approx(score, rel=1e-12)
    assert scores["a.html"] > scores["b.html"]
    assert bm25_scores(indexes, "beta alpha") == scores


def test_bm25_is_the_same_from_the_base_segment_and_from_the_delta() -> None:
    records = [record_at(path, memory_with(title, claim)) for path, (title, claim) in DOCS.items()]
    bulk = build_indexes(records)
    folded = empty_indexes()
    for record in records:
        folded = insert_record(folded, record)
    assert folded.lexical == bulk.lexical
    assert bm25_scores(folded, "alpha beta gamma") == bm25_scores(bulk, "alpha beta gamma")


def test_bm25_of_an_empty_index_or_unknown_words_is_empty() -> None:
    assert bm25_scores(empty_indexes(), "alpha") == {}
    records = [record_at(path, memory_with(title, claim)) for path, (title, claim) in DOCS.items()]
    assert bm25_scores(build_indexes(records), "zeta the") == {}


def test_a_base_document_scores_the_same_at_the_segments_average_and_at_another() -> None:
    # A version whose documents are its segment's may read the segment's impacts;
    # one with a delta normalizes per query. The floats
    # must not depend on which path a document took.
    records = [record_at(path, memory_with(title, claim)) for path, (title, claim) in DOCS.items()]
    extra = record_at("d.html", memory_with("Epsilon", "Alpha epsilon epsilon epsilon."))
    advanced = insert_record(build_indexes(records), extra)
    assert advanced.lexical.average_length != build_indexes(records).lexical.average_length
    assert bm25_scores(advanced, "alpha beta gamma") == bm25_scores(
        build_indexes([*records, extra]), "alpha beta gamma")


def test_a_lexical_index_is_a_plain_value() -> None:
    # Nothing is computed into an index on read: its fields are its contents, and the
    # segment's arrays are read-only.
    names = [f.name for f in dataclasses.fields(LexicalIndex)]
    assert names == ["base", "removed", "added", "documents", "total_length"]
    records = [record_at(path, memory_with(title, claim)) for path, (title, claim) in DOCS.items()]
    indexes = build_indexes(records)
    before = pickle.dumps(indexes.lexical)
    bm25_scores(indexes, "alpha beta")
    assert pickle.dumps(indexes.lexical) == before
    base = indexes.lexical.base
    for array in (base.lengths, base.doc_ids, base.tfs):
        assert not array.flags.writeable
