"""Passages: a memory cut into pieces the model reads whole, each carrying title and claim."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from tests.property.head_support import memory, record_at

from memhtml.head.passages import (
    PASSAGE_GROUP_PREFIX,
    PASSAGE_HEAD_CHARS,
    PASSAGE_MAX_CHARS,
    chunks_of,
    group_sizes,
    is_passage_key,
    passage_group,
    passage_key,
    passage_texts,
    passages_of,
    split_passage_key,
    stored_passages,
)

SENTENCE = "The rollout paused while the canary reported errors from the east region."


def test_a_short_memory_is_one_passage_of_title_claim_and_body() -> None:
    record = record_at("areas/a.html", memory("Deploy window", "Deploys happen on Tuesdays.",
                                              "Fridays are frozen."))
    (passage,) = passages_of(record)
    assert passage.text == "Deploy window\nDeploys happen on Tuesdays.\nFridays are frozen."
    assert passage.key == passage_key(passage_group(record), 0)
    assert passage.key.startswith(PASSAGE_GROUP_PREFIX)


def test_a_claim_alone_is_one_passage() -> None:
    record = record_at("areas/a.html", memory("Deploy window", "Deploys happen on Tuesdays."))
    assert passage_texts(record) == ("Deploy window\nDeploys happen on Tuesdays.",)


def test_no_article_text_no_passage() -> None:
    record = dataclasses.replace(record_at("areas/a.html", memory("T", "C.")), body_text="  ")
    assert passages_of(record) == ()


def test_a_long_memory_is_cut_into_passages_that_each_carry_title_and_claim() -> None:
    body = " ".join(f"{SENTENCE} Item {i}." for i in range(60))
    record = record_at("areas/a.html", memory("Rollout log", "The rollout paused twice.", body))
    texts = passage_texts(record)
    assert len(texts) >= 4
    for text in texts:
        assert len(text) <= PASSAGE_MAX_CHARS
        assert text.startswith("Rollout log\nThe rollout paused twice.\n")
    # The last item is in the last passage: nothing at the end is left unread.
    assert "Item 59." in texts[-1]
    # Whole sentences where they fit.
    assert all(text.rstrip().endswith(".") for text in texts)


def test_a_long_claim_overflows_into_the_body_not_out_of_the_memory() -> None:
    claim = " ".join(["overflowing"] * 60) + "."
    record = record_at("areas/a.html", memory("T", claim, "Tail sentence here."))
    texts = passage_texts(record)
    head = texts[0].split("\n")[0:2]
    assert len("\n".join(head)) <= PASSAGE_HEAD_CHARS
    joined = " ".join(texts)
    assert joined.count("overflowing") >= 60
    assert "Tail sentence here." in joined


def test_the_group_follows_title_and_content_not_the_path() -> None:
    one = record_at("areas/a.html", memory("Title", "Claim.", "Body."))
    moved = record_at("areas/b/c.html", memory("Title", "Claim.", "Body."))
    retitled = record_at("areas/a.html", memory("Other title", "Claim.", "Body."))
    edited = record_at("areas/a.html", memory("Title", "Claim.", "Body changed."))
    assert passage_group(one) == passage_group(moved)
    assert passage_group(one) != passage_group(retitled)
    assert passage_group(one) != passage_group(edited)
    assert passage_group(one, "p2") != passage_group(one)


def test_stored_passages_walk_the_rows_up_to_the_first_gap() -> None:
    record = record_at("areas/a.html", memory("T", "C.", "B."))
    group = passage_group(record)
    rows = {passage_key(group, i): np.full(2, i, dtype=np.float32) for i in range(3)}
    assert [float(v[0]) for v in stored_passages(record, rows)] == [0.0, 1.0, 2.0]  # type: ignore[index]
    assert stored_passages(record, {}) == []


def test_passage_keys_and_groups() -> None:
    group = PASSAGE_GROUP_PREFIX + "a" * 40
    assert is_passage_key(f"{group}.0") and is_passage_key(f"{group}.12")
    assert split_passage_key(f"{group}.12") == (group, 12)
    for key in (f"{group}.01", f"{group}.", group, "sha256:" + "a" * 64, f"{group}.x",
                PASSAGE_GROUP_PREFIX + "A" * 40 + ".0"):
        assert not is_passage_key(key), key
    assert group_sizes([f"{group}.0", f"{group}.1", "sha256:ab"]) == {group: 2}
    gap = group_sizes([f"{group}.0", f"{group}.2"])
    assert isinstance(gap, str) and group in gap


def test_chunks_cut_a_sentence_longer_than_the_budget_between_words() -> None:
    assert chunks_of("aaaa bbbb cccc. dd.", 9) == ["aaaa bbbb", "cccc. dd."]
    assert chunks_of("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert chunks_of("   ", 10) == []


WORDS = st.text(alphabet="abcdefghij", min_size=1, max_size=30)
SENTENCES = st.lists(WORDS, min_size=1, max_size=25).map(lambda ws: " ".join(ws) + ".")


@given(title=st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
       claim=SENTENCES, body=st.lists(SENTENCES, max_size=40).map(" ".join))
def test_every_word_of_a_memory_is_in_one_of_its_passages(title: str, claim: str,
                                                           body: str) -> None:
    """Law: the passages lose no word of the title or the article, and each one that
    carries a short head fits the model's window."""
    record = record_at("areas/a.html", memory(title.title(), claim.capitalize(), body))
    texts = passage_texts(record)
    words = {word for text in texts for word in text.split()}
    assert set(record.body_text.split()) <= words
    assert set(record.title.split()) <= words
    assert passage_texts(record) == texts  # deterministic
    for text in texts:
        assert len(text) <= PASSAGE_MAX_CHARS
