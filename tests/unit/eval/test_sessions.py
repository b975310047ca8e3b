"""Long memories from a BEIR split: sessions of whole documents, judged as their best."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.eval.beir import BeirDoc, query_split
from memhtml.eval.sessions import (
    SESSION_MAX_DOCS,
    build_sessions,
    depth_of,
    session_qrels,
)


def _docs(count: int, length: int = 1000) -> list[BeirDoc]:
    return [BeirDoc(f"d{i}", f"Title {i}", f"Sentence {i}. " + "x" * length)
            for i in range(count)]


def test_sessions_pack_whole_documents_to_the_target() -> None:
    sessions = build_sessions(_docs(20), target=2500)
    assert [len(s.docs) for s in sessions[:-1]] == [3] * 6
    assert sorted(d.doc_id for s in sessions for d in s.docs) == sorted(
        d.doc_id for d in _docs(20))
    assert build_sessions(_docs(20), target=2500) == sessions, "a fixed seed"
    assert build_sessions(_docs(20), target=2500, seed=1) != sessions


def test_a_session_is_one_document_with_a_neutral_title() -> None:
    (session,) = build_sessions(_docs(2, 10), target=10)
    doc = session.as_doc()
    assert doc.doc_id == session.session_id and doc.title == f"Session {session.session_id}"
    for inner in session.docs:
        assert f"{inner.title}. {inner.text}" in doc.text


def test_qrels_and_depth_follow_the_documents() -> None:
    sessions = build_sessions(_docs(6), target=2000)
    first, second = sessions[0].docs[0], sessions[0].docs[1]
    other = sessions[1].docs[0]
    qrels = {"q1": {second.doc_id: 1}, "q2": {first.doc_id: 1, other.doc_id: 2},
             "q3": {"unknown": 1}}
    judged = session_qrels(sessions, qrels)
    assert judged == {"q1": {sessions[0].session_id: 1},
                      "q2": {sessions[0].session_id: 1, sessions[1].session_id: 2},
                      "q3": {}}
    depth = depth_of(sessions, qrels)
    assert depth["q1"] == len(first.title) + len(first.text) + 2
    assert depth["q2"] == 0
    assert "q3" not in depth


@given(st.integers(min_value=1, max_value=60),
       st.lists(st.integers(min_value=10, max_value=4000), min_size=1, max_size=60))
def test_every_document_lands_in_exactly_one_session(count: int, lengths: list[int]) -> None:
    """Law: sessions partition the corpus, each of at most SESSION_MAX_DOCS."""
    docs = [BeirDoc(f"d{i}", "", "y" * lengths[i % len(lengths)]) for i in range(count)]
    sessions = build_sessions(docs)
    ids = [d.doc_id for s in sessions for d in s.docs]
    assert sorted(ids) == sorted(d.doc_id for d in docs)
    assert all(1 <= len(s.docs) <= SESSION_MAX_DOCS for s in sessions)


def test_the_query_split_is_fixed_and_about_even() -> None:
    halves = [query_split(str(i)) for i in range(1000)]
    assert 400 < halves.count("dev") < 600
    assert halves == [query_split(str(i)) for i in range(1000)]
