"""Benchmark the markdown indexer on a generated corpus shaped like the original's.

Run from the repository root: ``python -m bench.mdindex``.

The corpus is generated deterministically into a temporary directory: about
550 files and 11.5 MB in about 12,000 indexable paragraphs, with frontmatter,
headings, hard-wrapped blockquotes, emphasis and wikilinks, over a Zipfian
vocabulary. Figures are printed, never asserted. Baselines measured in the
same run: the original's published build time (830 ms on 548 files) and a
scan-everything BM25 in plain Python over the same corpus, which is what the
posting lists exist to avoid.
"""

from __future__ import annotations

import math
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from memhtml.adapters.mdfs import DirectoryReader
from memhtml.compose import value_of
from memhtml.mdindex import (
    BM25Channel,
    Corpus,
    TrigramChannel,
    build,
    index_documents,
    retrieve,
    tokenize,
)

SEED = 20260810
FILES = 550
PARAGRAPHS_PER_FILE = 22
WORDS_PER_PARAGRAPH = (110, 190)
VOCABULARY = 30_000
QUERIES = 200
SCAN_QUERIES = 20
BUILD_RUNS = 5
GO_BUILD_MS = 830.0
CLASSES = ("notes", "log", "people", "projects", "reference", "lessons", "drafts", "archive")
_FUNCTION_WORDS_TEXT = """
the of and to a in is that it for on as with was at by be this from or an are not but
have had which when what about into than only its one all so can there their
"""
FUNCTION_WORDS = tuple(_FUNCTION_WORDS_TEXT.split())
SYLLABLES = tuple(c + v for c in "bcdfghklmnprstvwz" for v in "aeiou") + ("str", "tra", "pla")


def _vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _wrap(words: Sequence[str], width: int = 72, prefix: str = "") -> str:
    lines: list[str] = []
    line = ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(prefix + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(prefix + line)
    return "\n".join(lines)


def generate(root: Path) -> tuple[int, list[str]]:
    """Write the corpus under root; return its size in bytes and the paragraphs' words."""
    rng = random.Random(SEED)
    vocab = _vocabulary(rng)
    cumulative: list[float] = []
    total = 0.0
    for rank in range(len(vocab)):
        total += 1.0 / (rank + 1) ** 1.07
        cumulative.append(total)
    stems = [f"{rng.choice(vocab)}-{i:03d}" for i in range(FILES)]
    size = 0
    samples: list[str] = []
    for i, stem in enumerate(stems):
        klass = CLASSES[i % len(CLASSES)] if i % 11 else ""
        parts: list[str] = []
        if i % 5:
            parts.append(f"---\nname: {stem}\ntype: {rng.choice(CLASSES)}\n---")
        parts.append(f"# {stem.replace('-', ' ')}")
        for p in range(PARAGRAPHS_PER_FILE):
            count = rng.randint(*WORDS_PER_PARAGRAPH)
            words = rng.choices(vocab, cum_weights=cumulative, k=count)
            for j in range(0, count, 3):
                words[j] = rng.choice(FUNCTION_WORDS)
            if p % 7 == 3:
                start = rng.randrange(count - 3)
                words[start] = "**" + words[start]
                words[start + 2] += "**"
            if p % 9 == 4:
                words.append(f"[[{rng.choice(stems)}]]")
            samples.append(" ".join(words))
            if p % 6 == 5:
                parts.append(_wrap(words, prefix="> "))
            else:
                parts.append(_wrap(words))
            if p % 8 == 7:
                parts.append(f"## {rng.choice(vocab)}")
        path = root / klass / f"{stem}.md" if klass else root / f"{stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "\n\n".join(parts).encode("utf-8") + b"\n"
        path.write_bytes(data)
        size += len(data)
    return size, samples


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def _timed(action: Callable[[], object], repeat: int) -> list[float]:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def _p(times: Sequence[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _scan_bm25(
    corpus: Corpus, terms_of: Sequence[Mapping[str, int]], text: str, k: int
) -> list[tuple[float, int]]:
    """BM25 that visits every chunk: the baseline the posting lists replace."""
    total = len(corpus.chunks)
    terms = list(dict.fromkeys(tokenize(text)))
    idf = {
        t: math.log(1 + (total - corpus.df.get(t, 0) + 0.5) / (corpus.df.get(t, 0) + 0.5))
        for t in terms
    }
    scored: list[tuple[float, int]] = []
    for chunk_id, chunk in enumerate(corpus.chunks):
        score = 0.0
        chunk_terms = terms_of[chunk_id]
        for t in terms:
            tf = chunk_terms.get(t, 0)
            if tf:
                norm = 1.2 * (0.25 + 0.75 * chunk.length / corpus.avg_len)
                score += idf[t] * tf * 2.2 / (tf + norm)
        if score:
            scored.append((-score, chunk_id))
    return sorted(scored)[:k]


def _queries(rng: random.Random, samples: Sequence[str], words: int) -> list[str]:
    out: list[str] = []
    for _ in range(QUERIES):
        parts = rng.choice(samples).split()
        start = rng.randrange(max(1, len(parts) - words))
        out.append(" ".join(parts[start : start + words]))
    return out


def _per_query(action: Callable[[str], object], queries: Sequence[str]) -> list[float]:
    times: list[float] = []
    for query in queries:
        start = time.perf_counter()
        action(query)
        times.append(time.perf_counter() - start)
    return times


def _line(label: str, times: Sequence[float], note: str = "") -> None:
    print(
        f"{label}: p50 {_ms(_p(times, 0.5)):.2f} ms, p95 {_ms(_p(times, 0.95)):.2f} ms"
        f" ({len(times)} queries){note}"
    )


def main() -> None:
    rng = random.Random(SEED + 1)
    with tempfile.TemporaryDirectory(prefix="mdindex-bench-") as tmp:
        root = Path(tmp)
        size, samples = generate(root)
        reader = DirectoryReader(root)
        corpora: list[Corpus] = []

        def full_build() -> None:
            corpora.clear()
            corpora.append(value_of(build(reader)))

        build_times = _timed(full_build, BUILD_RUNS)
        corpus = corpora[-1]
        blobs = [(f, (root / f).read_bytes()) for f in corpus.files]
        corpora.clear()
        index_times = _timed(lambda: index_documents(blobs), BUILD_RUNS)
        corpus = value_of(build(reader))

        print(
            f"corpus: files={len(corpus.files)} bytes={size} ({size / 1e6:.1f} MB)"
            f" chunks={len(corpus.chunks)} vocab={len(corpus.df)}"
            f" avg-terms={corpus.avg_len:.1f}"
        )
        build_ms = _ms(statistics.median(build_times))
        print(
            f"build (read + index), {BUILD_RUNS} runs: median {build_ms:.0f} ms,"
            f" min {_ms(min(build_times)):.0f} ms  [target <= 2000 ms; original"
            f" {GO_BUILD_MS:.0f} ms, median/original {build_ms / GO_BUILD_MS:.2f}x]"
        )
        print(
            f"index only (bytes in memory), {BUILD_RUNS} runs: median"
            f" {_ms(statistics.median(index_times)):.0f} ms, min {_ms(min(index_times)):.0f} ms"
        )

        start = time.perf_counter()
        bm25 = BM25Channel(corpus)
        print(f"bm25 channel setup: {_ms(time.perf_counter() - start):.1f} ms")
        short = _queries(rng, samples, 8)
        long = _queries(rng, samples, 60)
        target = "  [target p50 <= 5 ms]"
        _line("bm25 query, 8 words, k=50", _per_query(lambda q: bm25.query(q, 50), short), target)
        _line("bm25 query, 60 words, k=50", _per_query(lambda q: bm25.query(q, 50), long), target)
        _line(
            "retrieve bm25, 8 words, k=5",
            _per_query(lambda q: retrieve(corpus, [bm25], q, 5), short),
        )

        terms_of = [c.terms for c in corpus.chunks]
        scan = _per_query(lambda q: _scan_bm25(corpus, terms_of, q, 50), short[:SCAN_QUERIES])
        lookup = _per_query(lambda q: bm25.query(q, 50), short[:SCAN_QUERIES])
        _line(
            "baseline: bm25 scanning every chunk, 8 words",
            scan,
            f"; posting lists {_p(scan, 0.5) / _p(lookup, 0.5):.0f}x faster at p50",
        )

        start = time.perf_counter()
        trigram = TrigramChannel(corpus)
        print(f"trigram channel setup: {_ms(time.perf_counter() - start):.0f} ms")
        _line("trigram query, 8 words, k=50", _per_query(lambda q: trigram.query(q, 50), short))
        _line("trigram query, 60 words, k=50", _per_query(lambda q: trigram.query(q, 50), long))
        _line(
            "retrieve bm25+trigram, 8 words, k=5",
            _per_query(lambda q: retrieve(corpus, [bm25, trigram], q, 5), short),
        )


if __name__ == "__main__":
    main()
