"""A writer beside a sleep run: its own process, committing through ``memhtml write`` (a
process of its own each time, as an agent's hook would run it) about once a second
until told to stop, and recording each write memhtml acknowledged.

``python -m tests.integration.sleep.writer_support STORE ACKS STOP`` appends one JSON
line to ``ACKS`` per write (``{"n", "claim", "path", "commit"}`` when acknowledged,
``{"n", "failed"}`` when not) and exits once the file ``STOP`` exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PAUSE_SECONDS = 1.0
"""Between the end of one write and the start of the next."""


def claim_of(n: int, token: str) -> str:
    """The claim of write ``n``: unique in the store, so it can be counted."""
    return f"Writer note {n} of {token} was written beside the run."


def write_once(store: Path, n: int, token: str) -> dict[str, object]:
    claim = claim_of(n, token)
    done = subprocess.run(
        [sys.executable, "-m", "memhtml", "write", "--title", f"Writer note {n} {token}",
         "--claim", claim, "--store", str(store), "--json"],
        capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        return {"n": n, "failed": (done.stdout + done.stderr)[-2000:]}
    answer = json.loads(done.stdout)
    return {"n": n, "claim": claim, "path": answer["path"], "commit": answer["commit"]}


def main(store: Path, acks: Path, stop: Path) -> None:
    token = f"w{os.getpid()}"
    n = 0
    while not stop.exists():
        line = json.dumps(write_once(store, n, token), sort_keys=True)
        with acks.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
        n += 1
        time.sleep(PAUSE_SECONDS)


def read_acks(acks: Path) -> list[dict[str, object]]:
    if not acks.exists():
        return []
    return [json.loads(line) for line in acks.read_text(encoding="utf-8").splitlines()
            if line.strip()]


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
