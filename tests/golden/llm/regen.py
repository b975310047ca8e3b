"""Regenerate the golden request bodies (``anthropic_body.json``, ``openai_body.json``).

Run from the repository root: ``python tests/golden/llm/regen.py``. The output is what
the code does today: read the diff by eye before keeping it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.golden.llm.llm_golden import GOLDEN, body  # noqa: E402


def main() -> int:
    for dialect, path in GOLDEN.items():
        # One trailing newline, so the file reads well in a diff; the test strips it.
        path.write_bytes(body(dialect) + b"\n")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
