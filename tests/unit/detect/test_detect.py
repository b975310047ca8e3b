"""Fence-language detection: vocabulary, gates, laziness, measured quality, and the
template guessing only through a detector its caller hands in."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import get_args

import pytest

from memhtml.detect import (
    CANONICAL_LANGS,
    DEPLOY_THRESHOLD,
    MAX_DETECT_CHARS,
    CanonicalLang,
    Detection,
    detect,
    detect_lang,
    normalize_lang,
)
from memhtml.detect import detector as detector_module
from memhtml.format import NewMemoryInput, render_template

SNIPPETS = Path(__file__).resolve().parents[2] / "data" / "langdetect" / "snippets.jsonl"


@cache
def _snippets() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in SNIPPETS.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        rows[raw["id"]] = (raw["label"], raw["code"])
    return rows


def test_vocabulary_is_the_twelve_tokens_in_order() -> None:
    assert CANONICAL_LANGS == (
        "typescript",
        "javascript",
        "python",
        "bash",
        "json",
        "sql",
        "yaml",
        "html",
        "toml",
        "css",
        "go",
        "rust",
    )
    assert get_args(CanonicalLang) == CANONICAL_LANGS


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ts", "typescript"),
        ("TSX", "typescript"),
        ("js", "javascript"),
        ("jsx", "javascript"),
        ("mjs", "javascript"),
        ("py", "python"),
        ("python3", "python"),
        ("sh", "bash"),
        ("shell", "bash"),
        ("zsh", "bash"),
        ("console", "bash"),
        ("shell-session", "bash"),
        ("yml", "yaml"),
        ("htm", "html"),
        ("xhtml", "html"),
        ("postgresql", "sql"),
        ("mysql", "sql"),
        ("sqlite3", "sql"),
        ("golang", "go"),
        ("rs", "rust"),
        ("jsonc", "json"),
        (".toml", "toml"),
        ("language-css", "css"),
        ("  Python  ", "python"),
        ('python title="demo.py"', "python"),
        ("{.rust}", "rust"),
    ],
)
def test_normalize_lang_folds_aliases(raw: str, expected: CanonicalLang) -> None:
    assert normalize_lang(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "xml", "scss", "less", "fish", "powershell", "pycon", "c", "ruby", "text", "md"],
)
def test_normalize_lang_rejects_outside_vocabulary(raw: str) -> None:
    assert normalize_lang(raw) is None


@pytest.mark.parametrize("lang", CANONICAL_LANGS)
def test_every_canonical_token_is_a_fixed_point(lang: CanonicalLang) -> None:
    assert normalize_lang(lang) == lang


def test_oversize_fence_abstains_without_lexing(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(code: str) -> object:
        raise AssertionError("a lexer ran on an oversize fence")

    monkeypatch.setattr(detector_module, "_ranked", boom)
    code = "SELECT id FROM users WHERE id = 1;\n" * (MAX_DETECT_CHARS // 20)
    assert len(code) > MAX_DETECT_CHARS
    assert detect(code) == Detection(lang=None, confidence=0.0)
    assert detect_lang(code) is None


def _run_python(source: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def test_import_does_not_load_lexers() -> None:
    out = _run_python("import memhtml.detect, sys; print('pygments.lexers' in sys.modules)")
    assert out == "False"


def test_oversize_detection_does_not_load_lexers() -> None:
    out = _run_python(
        "import sys\n"
        "from memhtml.detect import detect, MAX_DETECT_CHARS\n"
        "detect('x = 1\\n' * MAX_DETECT_CHARS)\n"
        "print('pygments.lexers' in sys.modules)"
    )
    assert out == "False"


def test_blank_fence_abstains() -> None:
    assert detect("") == Detection(lang=None, confidence=0.0)
    assert detect("  \n\t\n") == Detection(lang=None, confidence=0.0)


def test_detection_is_frozen() -> None:
    found = detect("fn main() {}\n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.lang = "go"  # type: ignore[misc]


def test_detect_is_deterministic() -> None:
    for label, code in list(_snippets().values())[::15]:
        first = detect(code)
        assert detect(code) == first, label
        assert detect(code.rstrip("\n")) == first, label


def test_confidence_is_in_unit_interval() -> None:
    for label, code in _snippets().values():
        found = detect(code)
        assert 0.0 <= found.confidence < 1.0, label
        assert found.lang is None or found.lang in CANONICAL_LANGS


# Each of these clears DEPLOY_THRESHOLD (0.99) in the sweep: json-11 at 0.9985,
# json-08 and json-14 at 0.9975, sql-16 at 0.9933. They are the only design-set
# snippets that do.
@pytest.mark.parametrize("snippet_id", ["json-11", "json-08", "json-14", "sql-16"])
def test_confident_examples_stamp_their_label(snippet_id: str) -> None:
    label, code = _snippets()[snippet_id]
    assert detect_lang(code) == label


# Each of these stays far below DEPLOY_THRESHOLD (<= 0.3) in the sweep.
@pytest.mark.parametrize(
    "snippet_id",
    [
        "other-prose-03",
        "other-prose-06",
        "other-c-02",
        "other-java-02",
        "other-diff-02",
        "other-markdown-03",
        "other-ini-03",
        "other-log-02",
        "other-r-02",
    ],
)
def test_prose_and_other_languages_do_not_stamp(snippet_id: str) -> None:
    _, code = _snippets()[snippet_id]
    assert detect_lang(code) is None


# PowerShell one-liners whose winner clears DEPLOY_THRESHOLD (0.9933 and 0.9975);
# no design-set snippet outside the vocabulary wins by that much.
@pytest.mark.parametrize(
    "code",
    [
        "Get-ChildItem -Recurse | Where-Object { $_.Length -gt 1MB } | "
        "Sort-Object Length -Descending | Select-Object -First 10 FullName, Length\n",
        'Write-Host "Done" -ForegroundColor Green; Start-Sleep -Seconds 2; '
        "Remove-Item -Force -Recurse $env:TEMP\\build\n",
    ],
)
def test_confident_winner_outside_vocabulary_does_not_stamp(code: str) -> None:
    found = detect(code)
    assert found.lang is None
    assert found.confidence >= DEPLOY_THRESHOLD
    assert detect_lang(code) is None


def test_precision_at_deploy_threshold_meets_the_floor() -> None:
    stamped = correct = 0
    for label, code in _snippets().values():
        lang = detect_lang(code)
        if lang is not None:
            stamped += 1
            correct += lang == label
    assert stamped > 0
    assert correct / stamped >= 0.95


def _fenced(code: str, detector: Callable[[str], str | None] | None) -> str:
    return render_template(
        NewMemoryInput(
            title="Fence",
            claim="A fence follows.",
            memory_type="semantic",
            at="2026-01-01T00:00:00Z",
            body=("```\n" + code.rstrip("\n") + "\n```",),
            detect=detector,
        )
    )


def test_template_stamps_an_unlabeled_fence_only_through_the_detector_it_is_given() -> None:
    label, code = _snippets()["json-11"]
    assert f'<code data-lang="{label}">' in _fenced(code, detect_lang)
    assert "<code>" in _fenced(code, None)
    assert "data-lang" not in _fenced(code, None)
