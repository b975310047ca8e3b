"""BEIR-format corpora (corpus.jsonl, queries.jsonl, qrels.tsv) as memory files.

A BEIR document becomes one memory: its title is the title, the first sentence of
its text is the claim and the rest is one body paragraph, so every word of the
document is indexed and the claim is a sentence a person could read back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memhtml.format import NewMemoryInput, render_template

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_SLUG = re.compile(r"[^a-z0-9]+")
CORPUS_AT = "2026-01-01T00:00:00Z"
"""The write stamp every imported document gets, so imports are reproducible."""


@dataclass(frozen=True, slots=True)
class BeirDoc:
    doc_id: str
    title: str
    text: str


def read_corpus(path: Path) -> Iterator[BeirDoc]:
    """Documents of a corpus.jsonl, in file order."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                yield BeirDoc(str(row["_id"]), str(row.get("title") or ""), str(row["text"]))


def read_queries(path: Path) -> dict[str, str]:
    """Query id -> query text."""
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                out[str(row["_id"])] = str(row["text"])
    return out


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Query id -> {doc id: relevance}; a header line is skipped."""
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (i == 0 and not parts[2].lstrip("-").isdigit()):
                continue
            out.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return out


def split_claim(text: str) -> tuple[str, str]:
    """The first sentence, and the rest."""
    text = " ".join(text.split())
    parts = _SENTENCE_END.split(text, maxsplit=1)
    if len(parts) == 1:
        return text, ""
    return parts[0], parts[1]


SHARDS = 100


def memory_path(doc: BeirDoc) -> str:
    """A stable tree path for a document: its id keeps it unique.

    Files are spread over ``SHARDS`` directories by a digest of the id, the way a real
    store spreads memories over topic directories. One directory of 5,000 files
    would make every commit's tree diff walk all 5,000 entries.
    """
    slug = _SLUG.sub("-", doc.title.lower()).strip("-")[:48].strip("-") or "doc"
    shard = int(hashlib.sha1(doc.doc_id.encode(), usedforsecurity=False).hexdigest(), 16) % SHARDS
    return f"resources/beir/{shard:02d}/{doc.doc_id}-{slug}.html"


def render_doc(doc: BeirDoc) -> str:
    """The memory file for one document."""
    claim, rest = split_claim(doc.text)
    title = " ".join(doc.title.split()) or claim[:80] or doc.doc_id
    return render_template(
        NewMemoryInput(
            title=title,
            claim=claim or title,
            memory_type="semantic",
            at=CORPUS_AT,
            body=(rest,) if rest else (),
            tags=("beir",),
            detect=lambda _code: None,
        )
    )


def doc_id_of_path(path: str) -> str:
    """Invert ``memory_path``: the document id is the file name up to its first dash."""
    return path.rsplit("/", 1)[-1].split("-", 1)[0]


def query_split(query_id: str) -> Literal["dev", "held-out"]:
    """Which half of a split's queries ``query_id`` belongs to: ``dev``, on which rules
    and constants are chosen, or ``held-out``, only ever reported. Decided by a digest
    of the id alone, so the halves were fixed before any figure was seen.

    >>> query_split("1"), query_split("2")
    ('held-out', 'dev')
    """
    return "dev" if hashlib.sha256(query_id.encode("utf-8")).digest()[0] % 2 == 0 \
        else "held-out"
