"""bench/format: parse plus content hash over SciFact rendered as memory files.

Target: at least 2,000 files/s on one core. The baselines in the same run are the
two parsers' own parses of the same bytes: lxml's, the floor any lxml-based parser
pays, and lexbor's, the HTML5 tree the checker also builds. Times are CPU seconds of
this (single-threaded) process, best of three, so other work on a shared machine
does not count against the parser.
"""

from __future__ import annotations

import time

from lxml import html as lxml_html
from selectolax.lexbor import LexborHTMLParser

from bench.common import scifact_dir
from memhtml.eval.beir import read_corpus, render_doc
from memhtml.format import parse_memory, parse_memory_hashed


def main() -> None:
    docs = [render_doc(d) for d in read_corpus(scifact_dir() / "corpus.jsonl")]
    total_bytes = sum(len(d.encode()) for d in docs)

    def lxml_only() -> None:
        for text in docs:
            lxml_html.document_fromstring(text.encode())

    def lexbor_only() -> None:
        for text in docs:
            LexborHTMLParser(text.encode(), scripting=True)

    def memhtml_parse_and_hash() -> None:
        for text in docs:
            parse_memory_hashed(text).unwrap()

    def memhtml_parse() -> None:
        for text in docs:
            parse_memory(text).unwrap()

    results = {}
    for name, fn in (("lxml parse", lxml_only), ("lexbor parse", lexbor_only),
                     ("parse_memory", memhtml_parse),
                     ("parse_memory + content_hash", memhtml_parse_and_hash)):
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        results[name] = best
    print(f"SciFact as memory files: {len(docs)} files, {total_bytes / 1e6:.1f} MB")
    base = results["lxml parse"]
    for name, seconds in results.items():
        print(f"{name:30s} {len(docs) / seconds:8.0f} files/s  {seconds:6.2f} s CPU  "
              f"x{seconds / base:5.2f} of lxml")


if __name__ == "__main__":
    main()
