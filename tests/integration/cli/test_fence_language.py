"""An unlabeled fence gets its language through the real CLI: ``memhtml import
markdown`` of a folder and ``memhtml write --body``, on the content classifier of
the ``local`` extra; a log in a fence stays unlabeled, an info string wins. A command
that labels no fence never imports ONNX Runtime, and without the extra the import
still lands, the lexer race deciding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.detect import detect_lang
from tests.integration.cli.cli_support import call

pytest.importorskip("magika", reason="needs the 'local' extra")

PYTHON = ("import json\nfrom pathlib import Path\n\n\ndef load_settings(path: Path) -> dict:\n"
          "    with path.open(encoding='utf-8') as handle:\n"
          "        settings = json.load(handle)\n"
          "    if 'retries' not in settings:\n        settings['retries'] = 3\n"
          "    return settings\n")
LOG = ("2024-05-01T10:15:02Z INFO  worker-3 picked job 8812 (queue=emails)\n"
       "2024-05-01T10:15:03Z WARN  worker-3 smtp latency 2300ms over budget\n"
       "2024-05-01T10:15:09Z ERROR worker-3 job 8812 failed: connection reset\n")
SHELL = "systemctl restart worker\njournalctl -u worker --since today\n"
NOTE = (f"# Settings loader\n\nThe worker reads its settings once at start.\n\n"
        f"```\n{PYTHON}```\n\nWhat it logged when the mail server dropped:\n\n"
        f"```\n{LOG}```\n\nRestart it with:\n\n```sh\n{SHELL}```\n")


def _codes(html: str) -> list[str]:
    """Each ``<code>`` opening tag of the file, in order."""
    return [part.split(">", 1)[0] for part in html.split("<code")[1:]]


def _file(capsys: pytest.CaptureFixture[str], store: Path, path: str) -> str:
    code, answer = call(capsys, "read", path, "--tier", "all", "--store", str(store), "--json")
    assert code == 0, answer
    text: str = answer["text"]
    return text


def test_import_labels_an_unlabeled_code_fence_and_leaves_a_log_alone(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "settings.md").write_text(NOTE, encoding="utf-8")
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    path = {c["file"]: c["path"] for c in answer["converted"]}["settings.md"]
    html = _file(capsys, store, path)
    assert _codes(html) == [' data-lang="python"', "", ' data-lang="sh"'], \
        "the python fence stamped, the log unlabeled, the written info string kept"
    assert "def load_settings(path: Path) -&gt; dict:" in html, "the code itself unchanged"


def test_write_labels_an_unlabeled_fence_in_a_body(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "write", "--title", "Loader", "--claim",
                        "The worker reads its settings once.", "--body",
                        f"```\n{PYTHON}```", "--body", f"```\n{LOG}```",
                        "--store", str(store), "--json")
    assert code == 0, answer
    html = _file(capsys, store, answer["path"])
    assert _codes(html) == [' data-lang="python"', ""]


_PROBE = """
import sys
from memhtml.cli.app import app
store, body = sys.argv[1], sys.argv[2]
code = app(["write", "--title", "Probe", "--claim", f"Probe {len(body)} was written.",
            *(["--body", body] if body else []), "--store", store, "--json"],
           result_action="return_value")
assert code == 0, code
code = app(["search", "probe", "--store", store, "--json"], result_action="return_value")
assert code == 0, code
print("onnxruntime" in sys.modules, "magika" in sys.modules)
"""


def _probe(store: Path, body: str) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(store), body], check=True,
                          capture_output=True, text=True, timeout=300)
    return done.stdout.strip().splitlines()[-1]


def test_only_a_command_that_meets_an_unlabeled_fence_loads_the_model(store: Path) -> None:
    assert _probe(store, "") == "False False", "no fence: no model, no runtime"
    assert _probe(store, "```text\nsome output\n```") == "False False", \
        "a fence with its language: nothing to guess"
    assert _probe(store, f"```\n{PYTHON}```") == "True True"
    help_run = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom memhtml.cli.app import app\n"
         "app(['--help'], result_action='return_value')\n"
         "print('onnxruntime' in sys.modules, 'magika' in sys.modules)"],
        check=True, capture_output=True, text=True, timeout=300)
    assert help_run.stdout.strip().splitlines()[-1] == "False False"


def test_without_the_local_extra_the_import_lands_and_the_lexers_decide(
        store: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nfor name in ('magika', 'onnxruntime'):\n    sys.modules[name] = None\n",
        encoding="utf-8")
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("MEMHTML_") or name in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER")}
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), *filter(None, [env.get("PYTHONPATH")])])
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "settings.md").write_text(NOTE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "memhtml", "import", "markdown", str(notes),
                           "--store", str(store), "--json"], env=env, check=False,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    path = json.loads(done.stdout)["converted"][0]["path"]
    html = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=store, check=True,
                          capture_output=True, text=True).stdout
    expected = [detect_lang(PYTHON), detect_lang(LOG)]
    assert _codes(html) == [*(f' data-lang="{lang}"' if lang else "" for lang in expected),
                            ' data-lang="sh"']
