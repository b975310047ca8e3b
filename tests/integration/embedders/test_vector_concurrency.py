"""Two processes saving into one vector cache while a third loads it: no save fails, no
load fails or sees a part of a save, no key is lost, and what is left on disk is what
the last manifest lists (``vector_worker`` is the processes' code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from returns.unsafe import unsafe_perform_io
from tests.integration.embedders.vector_worker import SPACE, batch_keys, vector_of

from memhtml.adapters.vector_cache import VectorFiles
from memhtml.adapters.vector_files import space_dir
from memhtml.adapters.vector_layout import MANIFEST

ROOT = Path(__file__).resolve().parents[3]
SAVES = 30


def test_two_saving_processes_and_a_loading_one(tmp_path: Path) -> None:
    root, stop = tmp_path / "vectors", tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.integration.embedders.vector_worker", *args],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    loader = start("load", str(root), str(stop))
    try:
        writers = [start("save", str(root), "w1", str(SAVES), "1"),
                   start("save", str(root), "w2", str(SAVES), "0")]
        for writer in writers:
            _, err = writer.communicate(timeout=120)
            assert writer.returncode == 0, err
    finally:
        stop.touch()
        try:
            out, err = loader.communicate(timeout=120)
        finally:
            loader.kill()
    assert loader.returncode == 0, err
    seen = json.loads(out)
    assert seen["problems"] == []
    assert seen["loads"] >= 2

    cache = unsafe_perform_io(VectorFiles(root).load(SPACE).unwrap()).cache
    expected = {key for tag in ("w1", "w2") for step in range(SAVES)
                for key in batch_keys(tag, step)}
    assert set(cache.vectors) == expected, "the saves took turns: none lost another's rows"
    assert all(cache.vectors[key].tobytes() == vector_of(key).tobytes() for key in expected)
    manifest = json.loads((space_dir(root, SPACE) / MANIFEST).read_text())
    listed = {f"{kind}-{part['generation']}.{suffix}" for part in manifest["parts"]
              for kind, suffix in (("vectors", "npy"), ("hashes", "txt"))}
    assert {path.name for path in space_dir(root, SPACE).iterdir()} == {MANIFEST, *listed}
