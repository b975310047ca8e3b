"""Regenerate ``expected.json``, the head's golden rankings and gate reports.

Run from the repository root: ``python tests/golden/head/regen.py``.

The output is what the code does today, not what it should do: read the diff by eye
before keeping it (the module docstring of ``head_corpus.py`` says what each group of
files is there to show).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.golden.head.head_corpus import EXPECTED, build_golden, dump  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        EXPECTED.write_text(dump(build_golden(Path(tmp))), encoding="utf-8")
    print(f"wrote {EXPECTED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
