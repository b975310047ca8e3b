"""Vectors of the local model for a fixed set of texts, as golden data.

The shipped int8 model must keep the vectors of the space ``all-MiniLM-L6-v2/
onnx-int8-v2`` that caches already hold; this file pins them. The texts cover the
cases the runner treats apart: an empty text, one word, punctuation and accents,
a text past the model's 256-token cut, and texts of the lengths memories have.
Run this module to rewrite ``expected.json`` (it embeds with ``LocalEmbedder()``);
review the diff before committing it, since a change means the space moved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from returns.unsafe import unsafe_perform_io

EXPECTED = Path(__file__).with_name("expected.json")

_LONG = " ".join(
    f"Step {n}: the nightly job compacts the write-ahead log, checks every page's "
    f"checksum and ships the segment to cold storage before noon."
    for n in range(1, 30))

TEXTS = (
    "",
    "x",
    "Deploys to the checkout service happen on Tuesday mornings.",
    "The office kettle is descaled every Monday.",
    "Vitamin D supplementation was associated with higher bone mineral density in older "
    "adults across several randomized trials.",
    "Does vitamin D make bones stronger in older adults?",
    "Café crème, naïve résumé — 東京 and Zürich; emoji 🚀 and symbols ±≤≥.",
    "ERROR 503 at /api/v2/orders?id=42&retry=true (timeout after 30s)",
    "A failed checkout deploy is rolled back within ten minutes, and the on-call engineer "
    "writes a short note in the incident channel saying what broke, what was rolled back "
    "and which dashboard showed it first.",
    "sleep improves memory consolidation",
    _LONG,
    "def retry(fn, attempts=3):\n    for _ in range(attempts):\n        try:\n"
    "            return fn()\n        except TimeoutError:\n            pass\n",
)


def build() -> dict[str, object]:
    from memhtml.adapters.embedders import LocalEmbedder

    embedder = LocalEmbedder()
    vectors = unsafe_perform_io(embedder.embed(list(TEXTS)).unwrap())
    return {
        "space": {"model_id": embedder.space.model_id,
                  "dimension": embedder.space.dimension},
        # float32 values written as the float64 numbers they are: JSON reads them
        # back to the same float32 bit for bit.
        "vectors": [{"text": text, "vector": [float(x) for x in vector]}
                    for text, vector in zip(TEXTS, vectors, strict=True)],
    }


def dump(data: dict[str, object]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    EXPECTED.write_text(dump(build()), encoding="utf-8")
    sys.stdout.write(f"wrote {EXPECTED}\n")
