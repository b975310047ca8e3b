"""A tree load pauses the cyclic garbage collector while it parses; these hold the
two facts that make that safe: the parse leaves no cycles behind, and the
collector comes back exactly as the caller had it."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

from memhtml.head.version import _parse_entries

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "format"


def test_parsing_valid_and_invalid_files_leaves_no_cyclic_garbage() -> None:
    # A fresh interpreter, so no other thread (a test runner's) allocates meanwhile.
    script = textwrap.dedent(f"""
        import gc
        from pathlib import Path
        from memhtml.contracts.services import TreeEntry
        from memhtml.head.version import _parse_entries

        files = sorted(Path({str(GOLDEN)!r}).rglob("*.html"))
        entries = [TreeEntry(f"m/{{i}}.html", f"b{{i}}") for i in range(len(files))]
        blobs = {{f"b{{i}}": f.read_bytes() for i, f in enumerate(files)}}
        blobs["b0"] = b"\\xff not utf-8"
        gc.collect()
        gc.disable()
        records, skipped = _parse_entries(entries, blobs)
        assert records and skipped, (len(records), len(skipped))
        print(gc.collect())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "0"


def test_the_collector_is_left_as_the_caller_had_it() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        _parse_entries([], {})
        assert gc.isenabled()
        gc.disable()
        _parse_entries([], {})
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
