"""A collection of long memories built from a BEIR split: sessions of whole documents.

An agent's memory of a conversation is long: a whole session of a few thousand
characters, of which a question asks about one part. SciFact's abstracts are short
(about 1,500 characters), so a collection of them says nothing about how search copes
with the second half of a memory. Here the corpus is shuffled once (a fixed seed) and
packed, in that order, into sessions of whole documents of about ``SESSION_CHARS``
characters; a session is relevant to a query as its most relevant document is, so a
query's document lands first in one session and third in another. ``depth_of`` says
where, so recall can be read by depth.

Pure: documents in, documents out.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memhtml.eval.beir import BeirDoc

SESSION_CHARS = 3000
"""A session is closed once it holds this many characters (titles and texts)."""
SESSION_MIN_DOCS = 2
SESSION_MAX_DOCS = 6
SESSION_SEED = 33
"""The shuffle's seed: every run builds the same sessions."""
SESSION_PREFIX = "s"
"""Session ids are ``s<number>``, zero-padded: no BEIR id of a number collides."""


@dataclass(frozen=True, slots=True)
class Session:
    """One long memory: its id, and its documents in the order they are written."""

    session_id: str
    docs: tuple[BeirDoc, ...]

    def as_doc(self) -> BeirDoc:
        """The session as one BEIR document: a neutral title (no document's title may
        stand in for the whole), each document's title and text as a sentence run."""
        text = " ".join(f"{doc.title.strip().rstrip('.')}. {' '.join(doc.text.split())}"
                        if doc.title.strip() else " ".join(doc.text.split())
                        for doc in self.docs)
        return BeirDoc(self.session_id, f"Session {self.session_id}", text)


def _length(doc: BeirDoc) -> int:
    return len(doc.title) + len(doc.text)


def build_sessions(docs: Iterable[BeirDoc], target: int = SESSION_CHARS,
                   seed: int = SESSION_SEED, min_docs: int = SESSION_MIN_DOCS,
                   max_docs: int = SESSION_MAX_DOCS) -> list[Session]:
    """The corpus, shuffled with ``seed`` and packed into sessions: a session takes
    documents until it holds ``target`` characters and ``min_docs`` documents, or
    ``max_docs``, and once it has ``min_docs`` it is closed before a document that
    would take it past ``target`` by more than a quarter. The last session may be
    shorter. A repeated document id keeps its first document.

    >>> docs = [BeirDoc(str(i), f"T{i}", "x" * 1000) for i in range(7)]
    >>> [len(s.docs) for s in build_sessions(docs, target=2500)]
    [3, 3, 1]
    """
    unique: dict[str, BeirDoc] = {}
    for doc in docs:
        unique.setdefault(doc.doc_id, doc)
    order = sorted(unique)
    random.Random(seed).shuffle(order)
    width = len(str(max(len(order), 1)))
    sessions: list[Session] = []
    current: list[BeirDoc] = []
    chars = 0
    for doc_id in order:
        doc = unique[doc_id]
        if len(current) >= min_docs and chars + _length(doc) > target + target // 4:
            # Closed before a document that would carry it far past the target.
            sessions.append(Session(f"{SESSION_PREFIX}{len(sessions):0{width}d}",
                                    tuple(current)))
            current, chars = [], 0
        current.append(doc)
        chars += _length(doc)
        if len(current) >= max_docs or (chars >= target and len(current) >= min_docs):
            sessions.append(Session(f"{SESSION_PREFIX}{len(sessions):0{width}d}",
                                    tuple(current)))
            current, chars = [], 0
    if current:
        sessions.append(Session(f"{SESSION_PREFIX}{len(sessions):0{width}d}", tuple(current)))
    return sessions


def session_qrels(sessions: Sequence[Session], qrels: Mapping[str, Mapping[str, int]]
                  ) -> dict[str, dict[str, int]]:
    """Query id -> {session id: relevance}: a session is as relevant as its most
    relevant document."""
    where = {doc.doc_id: session.session_id for session in sessions for doc in session.docs}
    out: dict[str, dict[str, int]] = {}
    for qid, rels in qrels.items():
        judged: dict[str, int] = {}
        for doc_id, rel in rels.items():
            session = where.get(doc_id)
            if session is not None:
                judged[session] = max(judged.get(session, rel), rel)
        out[qid] = judged
    return out


def depth_of(sessions: Sequence[Session], qrels: Mapping[str, Mapping[str, int]]
             ) -> dict[str, int]:
    """Query id -> the character offset, within its session's text, of the query's
    shallowest relevant document: how much a reader must get through before an
    answer starts."""
    offsets: dict[str, int] = {}
    for session in sessions:
        at = 0
        for doc in session.docs:
            offsets[doc.doc_id] = at
            at += _length(doc) + 2
    out: dict[str, int] = {}
    for qid, rels in qrels.items():
        found = [offsets[doc_id] for doc_id, rel in rels.items()
                 if rel > 0 and doc_id in offsets]
        if found:
            out[qid] = min(found)
    return out
