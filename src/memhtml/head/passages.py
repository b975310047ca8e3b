"""A memory as passages the embedding model can read whole.

The local model reads 256 word pieces, about 1,000 characters of English prose, so one
vector per memory saw only the opening of a long one: on sessions of about 3,000
characters, a question about the second half found nothing (docs/benchmarks.md). A
memory is therefore split into passages, each small enough to be read whole, and each
carrying the memory's title and claim, so a passage from the middle still says what the
memory is about. The vector arm scores a memory by its best passage
(``head.search.vector_scores``).

Keys. A memory's passages form one group in the vector cache, named by a digest of
the scheme, the title and the content hash: the only inputs of ``passage_texts``
besides the article, which the content hash covers. A title edit gives new passages a
new group (the old vectors read the old title), while a move or a head-only edit keeps
them. Row ``i`` of a group is keyed ``<group>.<i>``; a group is saved whole, so a
reader walks ``.0``, ``.1``, ... until the first gap, and knows a memory's passages
without reading its text (the text is a deferred read on a cold command). A write can
embed just its own memory's passages and save them beside the rest.

Pure and total: no I/O, no container.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memhtml.contracts.record import MemoryRecord

PASSAGE_SCHEME = "p1"
"""The version of the split below. Any change to how passages are cut or what they
carry takes a new scheme, so a passage of one cut is never read as one of another."""
PASSAGE_MAX_CHARS = 1000
"""The longest passage: title, claim and body chunk together. all-MiniLM-L6-v2 reads
256 word pieces, which SciFact's prose fills at about 1,060 characters; a passage that
fits is read to its end, so no part of a memory is invisible to the vector arm."""
PASSAGE_HEAD_CHARS = 300
"""At most this much of the title and claim rides in every passage; a longer claim's
remainder is body text like the rest, so nothing is left out and every passage keeps
room for its own chunk."""
PASSAGE_MIN_BODY_CHARS = 400
"""A chunk's budget never falls below this, whatever the head takes."""
PASSAGE_GROUP_PREFIX = "P1-"
"""Passage keys start so (``sha256:`` starts a memory's own vector key)."""

_SENTENCE = re.compile(r"(?<=[.!?;:])\s+")
_GROUP = re.compile(r"P1-[0-9a-f]{40}")


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage: its cache key and the text the embedder reads."""

    key: str
    text: str


class PassageVectors(Protocol):
    """Vectors by key; a ``VectorCache`` or a dict fits."""

    def get(self, key: str, /) -> object | None: ...


def passage_group(record: MemoryRecord, scheme: str = PASSAGE_SCHEME) -> str:
    """The group key of a record's passages: a digest of the scheme, the title and the
    content hash (what ``passage_texts`` reads besides the article)."""
    return _group_key(scheme, record.title, record.content_hash)


@functools.lru_cache(maxsize=1 << 17)
def _group_key(scheme: str, title: str, content_hash: str) -> str:
    """Remembered per process: search and every write ask it of each record to learn
    what the cache covers, and a long-lived server asks it of the same records on
    every call (5,000 digests were about 15 ms of each)."""
    digest = hashlib.sha256(f"{scheme}\0{title}\0{content_hash}".encode())
    return PASSAGE_GROUP_PREFIX + digest.hexdigest()[:40]


def passage_key(group: str, index: int) -> str:
    return f"{group}.{index}"


def is_passage_key(key: str) -> bool:
    """Whether ``key`` names a passage row (``<group>.<index>``)."""
    group, dot, index = key.rpartition(".")
    return bool(dot) and _GROUP.fullmatch(group) is not None and index.isdigit() \
        and (index == "0" or not index.startswith("0"))


def split_passage_key(key: str) -> tuple[str, int] | None:
    """``(group, index)`` of a passage key, None for any other key."""
    if not is_passage_key(key):
        return None
    group, _, index = key.rpartition(".")
    return group, int(index)


def _cut_words(text: str, budget: int) -> list[str]:
    """``text`` in pieces of at most ``budget`` characters, cut between words (a word
    longer than the budget is cut inside)."""
    return _packed((word[start:start + budget] for word in text.split()
                    for start in range(0, len(word), budget)), budget)


def _packed(pieces: Iterable[str], budget: int) -> list[str]:
    """``pieces`` (each at most ``budget`` long) joined by single spaces, greedily,
    into runs of at most ``budget`` characters."""
    runs: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > budget:
            runs.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    if current:
        runs.append(current)
    return runs


def chunks_of(text: str, budget: int) -> list[str]:
    """``text`` packed into chunks of at most ``budget`` characters, whole sentences
    where they fit, words where a sentence does not; whitespace runs become one space.

    >>> chunks_of("One two. Three four five. Six.", 12)
    ['One two.', 'Three four', 'five. Six.']
    """
    budget = max(budget, 1)
    return _packed((piece for sentence in _SENTENCE.split(" ".join(text.split()))
                    if sentence
                    for piece in ([sentence] if len(sentence) <= budget
                                  else _cut_words(sentence, budget))), budget)


def _head_and_rest(record: MemoryRecord) -> tuple[str, str]:
    """The head every passage carries (title, then claim, within
    ``PASSAGE_HEAD_CHARS``) and the body text left to chunk."""
    body = " ".join(record.body_text.split())
    claim = " ".join(record.claim.split())
    title = " ".join(record.title.split())
    rest = body
    if claim:
        at = body.find(claim)
        rest = (body[:at] + " " + body[at + len(claim):]).strip() if at >= 0 else body
    if claim == title:
        claim = ""
    # What does not fit the head is not dropped: it leads the body instead.
    title_kept = _cut_words(title, PASSAGE_HEAD_CHARS)[0] if title else ""
    room = PASSAGE_HEAD_CHARS - len(title_kept) - (1 if title_kept else 0)
    claim_kept = _cut_words(claim, room)[0] if claim and room > 0 else ""
    overflow = f"{title[len(title_kept):].strip()} {claim[len(claim_kept):].strip()}".strip()
    if overflow:
        rest = f"{overflow} {rest}".strip()
    head = "\n".join(part for part in (title_kept, claim_kept) if part)
    return head, rest


def passage_texts(record: MemoryRecord) -> tuple[str, ...]:
    """The texts a record's passages embed; none for a record with no article text.

    Every passage is the head (title and claim) and one chunk of the rest of the
    article; a memory whose article is its claim alone has one passage, the head.
    """
    if not record.body_text.strip():
        return ()
    head, rest = _head_and_rest(record)
    budget = max(PASSAGE_MAX_CHARS - len(head) - 1, PASSAGE_MIN_BODY_CHARS)
    chunks = chunks_of(rest, budget) if rest else []
    if not chunks:
        return (head,) if head else ()
    return tuple(f"{head}\n{chunk}" if head else chunk for chunk in chunks)


def passages_of(record: MemoryRecord) -> tuple[Passage, ...]:
    """A record's passages with their keys, in order.

    >>> from memhtml.format import NewMemoryInput, render_template
    >>> from memhtml.head import record_from
    >>> html = render_template(NewMemoryInput(
    ...     title="Deploy window", claim="Deploys happen on Tuesdays.",
    ...     memory_type="semantic", at="2026-01-06T09:00:00Z",
    ...     body=("Fridays are frozen. " * 80,)))
    >>> passages = passages_of(record_from(html, "areas/deploys.html").unwrap())
    >>> len(passages), [len(p.text) <= PASSAGE_MAX_CHARS for p in passages]
    (2, [True, True])
    >>> passages[1].text.splitlines()[:2]
    ['Deploy window', 'Deploys happen on Tuesdays.']
    """
    group = passage_group(record)
    return tuple(Passage(passage_key(group, i), text)
                 for i, text in enumerate(passage_texts(record)))


def stored_passages(record: MemoryRecord, vectors: PassageVectors) -> list[object]:
    """The vectors ``vectors`` holds for the record's passages, in order, read without
    the record's text: rows ``.0``, ``.1``, ... up to the first gap (a group is saved
    whole). Empty when none is held."""
    group = passage_group(record)
    found: list[object] = []
    while True:
        vector = vectors.get(passage_key(group, len(found)))
        if vector is None:
            return found
        found.append(vector)


def group_sizes(keys: Sequence[str]) -> dict[str, int] | str:
    """Each passage group's row count among ``keys``, or why the rows do not form whole
    groups (a gap: row ``i`` present without some row below it). Other keys are
    ignored. What a cache's format check reads."""
    rows: dict[str, set[int]] = {}
    for key in keys:
        split = split_passage_key(key)
        if split is not None:
            rows.setdefault(split[0], set()).add(split[1])
    sizes: dict[str, int] = {}
    for group, indexes in rows.items():
        if max(indexes) + 1 != len(indexes):
            return f"passage group {group} has rows {sorted(indexes)[:5]}..., not 0 to " \
                   f"{len(indexes) - 1}"
        sizes[group] = len(indexes)
    return sizes
