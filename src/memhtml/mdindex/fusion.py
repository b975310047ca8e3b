"""Reciprocal-rank fusion across the channels a caller names, aggregated per file."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from returns.result import Failure, Result, Success

from memhtml.mdindex.bm25 import BM25_B, BM25_K1, BM25Channel
from memhtml.mdindex.channel import Channel
from memhtml.mdindex.corpus import Corpus
from memhtml.mdindex.errors import ChannelRefused
from memhtml.mdindex.text import truncate
from memhtml.mdindex.trigram import TrigramChannel

RRF_K: Final = 60
"""The usual reciprocal-rank-fusion constant.

Fusion reads ranks only: adding an unbounded BM25 score to a Jaccard fraction
would need a normalization that depends on the query, and would be brittle.
"""

FUSION_DEPTH_FACTOR: Final = 10
FUSION_MIN_DEPTH: Final = 50
"""Each channel is asked for ``max(k * 10, 50)`` chunks, not ``k``.

Hits are aggregated per file after fusion, so a channel asked for only ``k``
chunks could drop a file's best chunk before aggregation ever saw it.
"""

SNIPPET_BYTES: Final = 120

RANKING_VERSION: Final = (
    f"rrf-k{RRF_K}-depth{FUSION_DEPTH_FACTOR}x-min{FUSION_MIN_DEPTH}"
    f"/bm25-k1{BM25_K1}-b{BM25_B}/snippet{SNIPPET_BYTES}"
)
"""Every constant that shapes a ranking or a receipt, in one comparable string."""

CHANNELS: Final[Mapping[str, Callable[[Corpus], Channel]]] = {
    "bm25": BM25Channel,
    "trigram": TrigramChannel,
}
DEFAULT_CHANNELS: Final = ("bm25",)


@dataclass(frozen=True, slots=True)
class FileHit:
    """A receipt: the best chunk of one file, with what a reader needs to judge it.

    ``native`` is that chunk's score in ``native_channel``, the first channel in
    the caller's order that actually returned the chunk, which is not always
    the first channel named. A chunk can reach the fused top k through a later
    channel alone; crediting it with the first channel's score would print a
    zero, and a reader comparing that zero with the score an unrelated control
    sentence gets would wrongly judge the hit weaker than noise. Both are
    ``None`` only if no channel scored the chunk, which ``retrieve`` never
    produces.
    """

    file: str
    class_: str
    fm_name: str | None
    fm_type: str | None
    para: int
    line: int
    """1-based line where the chunk starts in the file."""
    snippet: str
    fused: float
    native: float | None
    native_channel: str | None


def make_channels(
    corpus: Corpus, names: Sequence[str]
) -> Result[tuple[Channel, ...], ChannelRefused]:
    """The channels named, in the order named; unknown, repeated or no names are refused.

    A repeated name would add the same ranking twice and double its weight in
    fusion without anyone having asked for that.
    """
    if not names:
        return Failure(ChannelRefused("", "no channel named; name at least one of " + _known()))
    seen: set[str] = set()
    for name in names:
        if name not in CHANNELS:
            return Failure(ChannelRefused(name, "unknown channel; known: " + _known()))
        if name in seen:
            return Failure(ChannelRefused(name, "channel named twice"))
        seen.add(name)
    return Success(tuple(CHANNELS[name](corpus) for name in names))


def _known() -> str:
    return ", ".join(CHANNELS)


def fusion_depth(k: int) -> int:
    """How many chunks each channel is asked for when ``k`` files are wanted."""
    return max(k * FUSION_DEPTH_FACTOR, FUSION_MIN_DEPTH)


def retrieve(corpus: Corpus, channels: Sequence[Channel], text: str, k: int) -> tuple[FileHit, ...]:
    """The best ``k`` files for the text, by reciprocal-rank fusion over ``channels``.

    A file is represented by its best fused chunk (the lower paragraph on a
    tie). Files order by fused score descending, then path, then paragraph.
    With one channel the order is that channel's own. A ``k`` below 1 returns
    nothing: a reading budget of zero is not an unlimited one.
    """
    if not channels or k <= 0:
        return ()
    depth = fusion_depth(k)
    fused: dict[int, float] = {}
    native: dict[int, tuple[float, str]] = {}
    for channel in channels:
        name = channel.name
        for scored in channel.query(text, depth):
            fused[scored.chunk] = fused.get(scored.chunk, 0.0) + 1.0 / (RRF_K + scored.rank)
            native.setdefault(scored.chunk, (scored.score, name))

    best: dict[str, tuple[float, int]] = {}
    for chunk_id in sorted(fused):
        score = fused[chunk_id]
        file = corpus.chunks[chunk_id].file
        held = best.get(file)
        # Ids ascend within a file as paragraphs do, so a strict comparison
        # keeps the lower paragraph on a tie.
        if held is None or score > held[0]:
            best[file] = (score, chunk_id)

    ranked = sorted(
        best.values(),
        key=lambda pair: (-pair[0], corpus.chunks[pair[1]].file, corpus.chunks[pair[1]].para),
    )
    hits: list[FileHit] = []
    for score, chunk_id in ranked[:k]:
        chunk = corpus.chunks[chunk_id]
        claimed = native.get(chunk_id)
        hits.append(
            FileHit(
                file=chunk.file,
                class_=chunk.class_,
                fm_name=chunk.fm_name,
                fm_type=chunk.fm_type,
                para=chunk.para,
                line=chunk.line,
                snippet=truncate(chunk.text, SNIPPET_BYTES),
                fused=score,
                native=None if claimed is None else claimed[0],
                native_channel=None if claimed is None else claimed[1],
            )
        )
    return tuple(hits)
