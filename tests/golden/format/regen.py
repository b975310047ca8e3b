"""Regenerate the expected JSON next to every golden memory file.

Run from the repository root: ``python tests/golden/format/regen.py``.

For ``valid/<name>.html`` it writes ``valid/<name>.json``: the parsed ``MemoryDoc`` as
``dataclasses.asdict``, plus ``content_hash`` (of the file) and ``serialized_sha256``
(of ``serialize_memory(doc)``). For ``invalid/<name>.html`` it writes the list
``check_memory(text).violations``.

The output is what the code does today, not what it should do: review every diff by
eye before committing it. Where the code is known to be wrong, ``EXPECTED_FIXES``
states the correct expectation, so the golden test keeps failing until the bug is
fixed instead of blessing it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from returns.result import Failure, Success

from memhtml.format import (
    MemoryDoc,
    check_memory,
    content_hash,
    parse_memory,
    serialize_memory,
)

HERE = Path(__file__).resolve().parent
VALID = HERE / "valid"
INVALID = HERE / "invalid"


EXPECTED_FIXES: dict[str, Callable[[str, MemoryDoc], MemoryDoc]] = {}
"""Files whose expectation deliberately differs from the current parse (a known bug):
a function from (text, parsed doc) to the correct doc. Empty while no bug is known."""


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def expected_valid(path: Path) -> dict[str, object]:
    """The expected extraction of one valid file, as a JSON-ready dict."""
    text = path.read_text(encoding="utf-8")
    match parse_memory(text, path.name):
        case Success(doc):
            pass
        case Failure(err):
            raise SystemExit(f"{path.name} is not a valid memory: {err.violations}")
        case _:
            raise AssertionError("unreachable")
    fix = EXPECTED_FIXES.get(path.name)
    if fix is not None:
        doc = fix(text, doc)
    out: dict[str, object] = dataclasses.asdict(doc)
    out["content_hash"] = content_hash(doc.article) if fix is not None else content_hash(text)
    out["serialized_sha256"] = sha256_hex(serialize_memory(doc))
    return out


def expected_invalid(path: Path) -> list[str]:
    """The expected violation list of one invalid file."""
    return list(check_memory(path.read_text(encoding="utf-8")).violations)


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def main() -> int:
    for path in sorted(VALID.glob("*.html")):
        path.with_suffix(".json").write_text(dump(expected_valid(path)), encoding="utf-8")
    for path in sorted(INVALID.glob("*.html")):
        path.with_suffix(".json").write_text(dump(expected_invalid(path)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
