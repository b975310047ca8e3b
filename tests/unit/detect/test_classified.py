"""Fence languages from the content classifier (Magika, the ``local`` extra): the label
map, the threshold's rule, stamps on clear code, abstention on prose, logs and
configs, and the composed detector's choice between the classifier and the lexers.

Held-out figures are the bench's (``python -m bench.langdetect``); what is pinned here
is the model's behaviour on examples and on the design set the threshold was chosen
on, so a Magika release that answers differently fails here before it stamps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.io import IOFailure, IOResult
from returns.unsafe import unsafe_perform_io
from tests.unit.detect.prose import prose

from memhtml.adapters.magika_classifier import MagikaClassifier
from memhtml.compose.detection import FenceDetector, fence_detector
from memhtml.contracts.classifier import ContentGuess
from memhtml.contracts.errors import ClassifyFailure
from memhtml.detect import CANONICAL_LANGS, detect_lang
from memhtml.detect.classified import (
    CLASSIFIER_LANGS,
    CLASSIFIER_MODEL,
    CLASSIFIER_THRESHOLD,
    classify_lang,
)

pytest.importorskip("magika", reason="needs the 'local' extra")

SNIPPETS = Path(__file__).resolve().parents[2] / "data" / "langdetect" / "snippets.jsonl"

CODE = {
    "python": "import json\nfrom pathlib import Path\n\n\ndef load_settings(path: Path) -> dict:\n"
              "    with path.open(encoding='utf-8') as handle:\n"
              "        settings = json.load(handle)\n"
              "    if 'retries' not in settings:\n        settings['retries'] = 3\n"
              "    return settings\n",
    "go": "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n"
          "func health(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintln(w, \"ok\")\n}\n\n"
          "func main() {\n\thttp.HandleFunc(\"/health\", health)\n"
          "\tif err := http.ListenAndServe(\":8080\", nil); err != nil {\n\t\tpanic(err)\n\t}\n}\n",
    "rust": "use std::collections::HashMap;\n\n#[derive(Debug, Clone)]\npub struct Cache {\n"
            "    entries: HashMap<String, Vec<u8>>,\n}\n\nimpl Cache {\n"
            "    pub fn get(&self, key: &str) -> Option<&Vec<u8>> {\n"
            "        self.entries.get(key)\n    }\n}\n",
    "sql": "SELECT c.id, c.name, COUNT(o.id) AS orders\nFROM customers c\n"
           "LEFT JOIN orders o ON o.customer_id = c.id\nWHERE o.created_at >= '2024-01-01'\n"
           "GROUP BY c.id, c.name\nHAVING COUNT(o.id) > 5\nORDER BY orders DESC;\n",
    "json": '{\n  "name": "checkout-api",\n  "version": "2.3.1",\n  "private": true,\n'
            '  "scripts": {\n    "build": "tsc -p .",\n    "test": "vitest run"\n  },\n'
            '  "dependencies": {\n    "express": "^4.19.2"\n  }\n}\n',
    "yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: checkout-api\n"
            "spec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n"
            "        - name: api\n          image: registry.example.com/checkout:2.3.1\n"
            "          ports:\n            - containerPort: 8080\n",
    "toml": '[package]\nname = "ledger"\nversion = "0.4.0"\nedition = "2021"\n\n'
            '[dependencies]\nserde = { version = "1.0", features = ["derive"] }\n'
            'tokio = { version = "1", features = ["full"] }\n',
    "css": ":root {\n  --accent: #0b5fff;\n  --radius: 8px;\n}\n\nbody {\n  margin: 0;\n"
           "  font-family: system-ui, sans-serif;\n  color: #1a1a1a;\n}\n\n.button {\n"
           "  padding: 0.5rem 1rem;\n  border: 1px solid var(--accent);\n"
           "  border-radius: var(--radius);\n  background-color: var(--accent);\n}\n\n"
           ".button:hover {\n  background-color: #0848c2;\n}\n",
    "typescript": "export interface Invoice {\n  id: string;\n  total: number;\n"
                  "  paidAt?: Date;\n}\n\n"
                  "export async function fetchInvoice(id: string): Promise<Invoice> {\n"
                  "  const response = await fetch(`/api/invoices/${id}`);\n"
                  "  return (await response.json()) as Invoice;\n}\n",
    "javascript": "const express = require('express');\nconst app = express();\n\n"
                  "app.get('/health', (req, res) => {\n  res.json({ ok: true });\n});\n\n"
                  "module.exports = function start(port) {\n"
                  "  return app.listen(port, () => console.log(`listening on ${port}`));\n};\n",
    "bash": '#!/usr/bin/env bash\nset -euo pipefail\n\nfor file in "$@"; do\n'
            '  if [[ -f "$file" ]]; then\n    gzip -9 "$file"\n  else\n'
            '    echo "skipping $file" >&2\n  fi\ndone\n',
    "html": '<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n'
            '  <title>Status</title>\n  <link rel="stylesheet" href="style.css">\n</head>\n'
            '<body>\n  <main>\n    <h1>All systems normal</h1>\n'
            '    <p>Last checked <time datetime="2024-05-01">May 1</time>.</p>\n'
            '  </main>\n</body>\n</html>\n',
}

NOT_CODE = {
    "prose": "We moved the weekly sync to Thursday because half the team is out on Mondays.\n"
             "Priya will send the agenda the day before; leave notes in the shared doc.\n",
    "app log": "2024-05-01T10:15:02Z INFO  worker-3 picked job 8812 (queue=emails)\n"
               "2024-05-01T10:15:03Z WARN  worker-3 smtp latency 2300ms over budget\n"
               "2024-05-01T10:15:09Z ERROR worker-3 job 8812 failed: connection reset\n",
    "access log": '203.0.113.7 - - [01/May/2024:10:15:02 +0000] "GET /api/orders?page=2 '
                  'HTTP/1.1" 200 5123 "-" "Mozilla/5.0"\n198.51.100.23 - - '
                  '[01/May/2024:10:15:03 +0000] "POST /api/login HTTP/1.1" 401 87 "-" '
                  '"curl/8.4.0"\n',
    "env file": "DATABASE_URL=postgres://app:secret@db.internal:5432/app\n"
                "REDIS_URL=redis://cache.internal:6379/0\nLOG_LEVEL=info\n"
                "FEATURE_NEW_CHECKOUT=true\n",
    "ini": "[server]\nhost = 0.0.0.0\nport = 8080\n\n[database]\nuser = app\n"
           "pool_size = 10\ntimeout = 30\n",
    "csv": "date,region,orders,revenue\n2024-04-01,eu-west,1203,48211.50\n"
           "2024-04-01,us-east,2210,91022.10\n2024-04-02,eu-west,1188,47002.00\n",
    "nginx": "server {\n    listen 80;\n    server_name example.com;\n\n    location / {\n"
             "        proxy_pass http://127.0.0.1:8080;\n        proxy_set_header Host $host;\n"
             "    }\n}\n",
    "markdown": "## Release checklist\n\n- [ ] Bump the version in `pyproject.toml`\n"
                "- [ ] Update the changelog\n- [x] Tag the release\n\n"
                "See the *runbook* for details.\n",
    "diff": "--- a/app/config.py\n+++ b/app/config.py\n@@ -10,7 +10,7 @@ class Settings:\n"
            '     host: str = "0.0.0.0"\n-    port: int = 8000\n+    port: int = 8080\n'
            "     debug: bool = False\n",
}

# The design set's kinds of text no stamp fits that are not a programming language.
_TEXT_KINDS = ("prose", "log", "ini", "nginx", "csv", "markdown", "diff")


@cache
def _classifier() -> MagikaClassifier:
    return MagikaClassifier()


def _stamp(code: str) -> str | None:
    return unsafe_perform_io(classify_lang(_classifier(), code).unwrap())


@cache
def _design() -> list[tuple[str, str | None, str]]:
    rows = []
    for line in SNIPPETS.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        rows.append((raw["id"], raw["label"], raw["code"]))
    return rows


def test_the_classifier_is_the_release_measured() -> None:
    assert _classifier().model_id == CLASSIFIER_MODEL


def test_the_label_map_names_labels_the_model_answers_and_reaches_every_language() -> None:
    from magika import Magika

    answers = {str(label) for label in Magika().get_output_content_types()}
    assert set(CLASSIFIER_LANGS) <= answers
    assert set(CLASSIFIER_LANGS.values()) == set(CANONICAL_LANGS)
    assert {"txt", "markdown", "ini", "csv", "diff", "scss", "xml"} <= answers - set(
        CLASSIFIER_LANGS), "the labels for text, configs and near-misses stamp nothing"


@pytest.mark.parametrize("lang", sorted(CODE))
def test_clear_code_is_stamped_its_language(lang: str) -> None:
    assert _stamp(CODE[lang]) == lang


@pytest.mark.parametrize("what", sorted(NOT_CODE))
def test_prose_logs_and_configs_are_not_stamped(what: str) -> None:
    assert _stamp(NOT_CODE[what]) is None


def test_the_design_sets_text_logs_and_configs_are_never_stamped() -> None:
    rows = [(i, code) for i, label, code in _design()
            if label is not None and label.removeprefix("other:") in _TEXT_KINDS]
    assert len(rows) >= 20
    assert [i for i, code in rows if _stamp(code) is not None] == []


@pytest.mark.slow
def test_the_threshold_is_what_its_rule_gives_on_the_design_set() -> None:
    """CLASSIFIER_THRESHOLD is the lowest two-decimal threshold whose design-set
    precision has a 95% Wilson lower bound of at least 95%, for the pinned model."""
    from bench.langdetect import Snippet
    from bench.langdetect_candidates import magika_guesser, pick_threshold

    design = [Snippet(i, label, code) for i, label, code in _design()]
    guess = magika_guesser(gate=True)
    assert pick_threshold(design, [guess(s.code) for s in design], "wilson") == \
        CLASSIFIER_THRESHOLD


def test_a_blank_fence_and_prose_never_reach_the_model(tmp_path: Path) -> None:
    broken = MagikaClassifier(model_dir=tmp_path)  # no model: any call would fail
    assert unsafe_perform_io(classify_lang(broken, "  \n\t\n").unwrap()) is None
    sentence = "The deploy moved to Thursday because the team is out on Monday.\n"
    assert unsafe_perform_io(classify_lang(broken, sentence).unwrap()) is None
    assert isinstance(classify_lang(broken, CODE["python"]), IOFailure)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gets_a_canonical_language_or_none(text: str) -> None:
    assert _stamp(text) in (None, *CANONICAL_LANGS)


@settings(max_examples=60, deadline=None)
@given(prose())
def test_generated_prose_is_not_stamped(text: str) -> None:
    assert _stamp(text) is None
    assert fence_detector()(text) is None


# -- the composed detector's choice ---------------------------------------------------


@dataclass(frozen=True)
class _Renamed:
    """A real classifier reporting another model id (as another release would)."""

    inner: MagikaClassifier
    model_id: str

    def classify(self, content: bytes) -> IOResult[ContentGuess, ClassifyFailure]:
        return self.inner.classify(content)


def test_the_composed_detector_uses_the_measured_classifier() -> None:
    detect = fence_detector()
    assert detect(CODE["go"]) == "go"
    assert detect.model_id == CLASSIFIER_MODEL


def test_without_the_classifier_the_lexer_race_decides() -> None:
    detect = FenceDetector(lambda: None)
    for code in (*CODE.values(), *NOT_CODE.values()):
        assert detect(code) == detect_lang(code)
    assert detect.model_id is None


def test_an_unmeasured_release_is_not_used_for_stamps() -> None:
    detect = FenceDetector(lambda: _Renamed(_classifier(), "magika==9.9.9"))
    assert detect(CODE["go"]) == detect_lang(CODE["go"])
    assert detect.model_id is None


def test_a_classifier_that_cannot_answer_stamps_nothing(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    (tmp_path / "config.min.json").write_text("{}", encoding="utf-8")
    broken = MagikaClassifier(model_dir=tmp_path)
    detect = FenceDetector(lambda: _Renamed(broken, CLASSIFIER_MODEL))
    assert detect(CODE["go"]) is None, "a failed guess leaves the fence unlabeled"
    assert detect.model_id == CLASSIFIER_MODEL
