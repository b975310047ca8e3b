"""The console command ends with ``os._exit`` once its body returns: its output must
still arrive whole, its exit code must be the one ``sys.exit`` would have given, and
what it wrote must be on disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.integration.cli.cli_support import memhtml_process


def test_output_codes_and_writes_survive_the_fast_exit(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert memhtml_process(store, "init").returncode == 0
    paths = []
    for i in range(3):
        wrote = memhtml_process(store, "write", "--title", f"Note {i}",
                         "--claim", f"Deploys of service {i} happen on Tuesdays.", "--json")
        assert wrote.returncode == 0, wrote.stderr
        paths.append(json.loads(wrote.stdout)["path"])
    # What each write committed is there for the next process and for git.
    log = subprocess.run(["git", "-C", str(store), "log", "--format=%s"], capture_output=True,
                         text=True, check=True).stdout
    assert len(log.splitlines()) >= 4
    found = memhtml_process(store, "search", "deploys Tuesdays", "--json")
    assert found.returncode == 0
    assert sorted(hit["path"] for hit in json.loads(found.stdout)["hits"]) == sorted(paths)
    missing = memhtml_process(store, "read", "areas/none/missing.html")
    assert missing.returncode == 1 and "no memory at" in missing.stderr
    usage = memhtml_process(store, "search")
    assert usage.returncode == 2


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert memhtml_process(store, "init").returncode == 0
    # Thirty notes in one process (one import), so the search has enough to print.
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(30):
        (notes / f"long-note-{i}.md").write_text(
            f"# Long note {i}\n\nService {i} deploys on Tuesdays after the checks.\n",
            encoding="utf-8")
    imported = memhtml_process(store, "import", "markdown", str(notes))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    shell = (f"{sys.executable} -m memhtml search 'deploys Tuesdays' --limit 30 "
             f"--store {store} | head -c 10")
    piped = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True,
                           text=True, check=False, timeout=120)
    assert "Traceback" not in piped.stderr
    assert len(piped.stdout) == 10
