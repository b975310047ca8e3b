"""Hybrid by default: a new store records the offline model, every write embeds what it
wrote, and a search fills a small gap before it ranks, so a person who never runs
``memhtml embed`` still searches with both arms.

These tests clear the suite's ``MEMHTML_EMBEDDER=none`` (``default_embedder``) and
drive the real CLI; the first runs the shipped model itself, the rest use the hashing
embedder where the model's vectors are not what is checked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memhtml.compose.vectors import TOP_UP_PASSAGES
from tests.integration.cli.cli_support import call, call_text, git_log
from tests.integration.cli.test_cli_search_explain import (
    CONFIG,
    PIP_HINT,
    _memhtml,
    _without_local_extra,
)

pytestmark = pytest.mark.usefixtures("default_embedder")


def _store(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> Path:
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), *flags, "--json")
    assert code == 0, answer
    return root


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str
           ) -> tuple[str, str]:
    code, out, err = call_text(capsys, "write", "--title", title, "--claim", claim,
                               "--store", str(store))
    assert code == 0, err
    return out, err


def test_a_new_store_records_the_offline_model_and_searches_hybrid_from_its_first_write(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, capsys)
    config = (store / CONFIG).read_text(encoding="utf-8")
    assert 'embedder = "local"' in config.splitlines()
    [init] = git_log(store)
    assert init.endswith("memhtml init: store layout")
    shown = subprocess.run(["git", "show", "--name-only", "--format=%B", "HEAD"], cwd=store,
                           check=True, capture_output=True, text=True).stdout
    assert CONFIG.as_posix() in shown and "first settings" in shown

    _, err = _write(capsys, store, "Deploy window", "Deploys to production happen on Tuesdays.")
    assert "vectors" not in err, err  # embedded in the same command, nothing to say
    _write(capsys, store, "Coffee", "The office coffee machine is on the second floor.")
    s = ("--store", str(store), "--json")
    code, status = call(capsys, "status", *s)
    assert code == 0, status
    vectors = status["vectors"]
    assert vectors["embedder"] == "local"
    assert (vectors["have"], vectors["total"]) == (2, 2)
    assert vectors["passages_have"] == vectors["passages_total"] == 2
    code, found = call(capsys, "search", "when do we ship to production", *s)
    assert code == 0, found
    assert found["mode"] == "hybrid" and found["note"] is None
    assert [(a["arm"], a["ran"], a["by"]) for a in found["arms"]] == [
        ("lexical", True, "bm25"), ("vector", True, "local")]
    # "ship" is in no memory: the vector arm is what finds the deploy window.
    assert found["hits"][0]["path"].endswith("deploy-window.html")
    assert "vector" in found["hits"][0]["arms"]


def test_init_can_choose_and_never_rewrites_a_stores_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lexical = _store(tmp_path / "a", capsys, "--embedder", "none")
    assert not (lexical / CONFIG).exists()
    hashing = _store(tmp_path / "b", capsys, "--embedder", "hashing")
    assert 'embedder = "hashing"' in (hashing / CONFIG).read_text(encoding="utf-8")
    # init again, on a store, asking for another: what the store holds stays.
    commits = git_log(hashing)
    code, answer = call(capsys, "init", str(hashing), "--embedder", "local", "--json")
    assert code == 0, answer
    assert git_log(hashing) == commits
    assert 'embedder = "hashing"' in (hashing / CONFIG).read_text(encoding="utf-8")


def test_without_the_runtime_init_stays_lexical_and_a_write_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = _without_local_extra(tmp_path)
    store = tmp_path / "store"
    done = _memhtml(env, "init", str(store))
    assert done.returncode == 0, done.stderr
    assert not (store / CONFIG).exists(), "no runtime: nothing recorded, search is lexical"
    # A store that does record the model (a clone made elsewhere) still takes writes
    # here; each says why it has no vectors, and nothing is lost.
    recorded = tmp_path / "recorded"
    assert call(capsys, "init", str(recorded), "--json")[0] == 0
    done = _memhtml(env, "write", "--title", "Kettle", "--claim", "The kettle is descaled "
                    "on Mondays.", "--store", str(recorded))
    assert done.returncode == 0, done.stderr
    assert PIP_HINT in done.stderr and "Traceback" not in done.stderr
    assert "memhtml write" in git_log(recorded)[0]


def test_a_write_embeds_itself_and_a_search_fills_a_small_gap(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path, capsys, "--embedder", "hashing")
    s = ("--store", str(store), "--json")
    _write(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    # A memory that arrives without vectors (a pull, a person's own commit, a
    # process with the vector arm off) ...
    monkeypatch.setenv("MEMHTML_EMBEDDER", "none")
    _write(capsys, store, "Coffee", "The coffee machine is on floor two.")
    monkeypatch.delenv("MEMHTML_EMBEDDER")
    code, status = call(capsys, "status", *s)
    assert code == 0 and (status["vectors"]["have"], status["vectors"]["total"]) == (1, 2)
    # ... is embedded by the next search, before it ranks.
    code, found = call(capsys, "search", "coffee machine", *s)
    assert code == 0 and found["mode"] == "hybrid" and found["note"] is None
    code, status = call(capsys, "status", *s)
    assert code == 0 and (status["vectors"]["have"], status["vectors"]["total"]) == (2, 2)


def test_a_large_gap_is_left_to_embed_and_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path, capsys, "--embedder", "hashing")
    s = ("--store", str(store), "--json")
    notes = tmp_path / "notes"
    notes.mkdir()
    count = TOP_UP_PASSAGES + 1
    for n in range(count):
        (notes / f"note-{n}.md").write_text(f"# Note {n}\n\nImported note number {n}.\n",
                                            encoding="utf-8")
    monkeypatch.setenv("MEMHTML_EMBEDDER", "none")
    code, answer = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0, answer
    monkeypatch.delenv("MEMHTML_EMBEDDER")
    code, found = call(capsys, "search", "imported note", *s)
    assert found["mode"] == "lexical" and found["hits"]
    assert f"vectors cover 0 of {count} memories; run memhtml embed" in found["note"]
    # A write embeds what it wrote, not the back-fill, and says what is left.
    _, err = _write(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    assert f"{count} memories have no vectors yet" in err and "memhtml embed" in err
    code, status = call(capsys, "status", *s)
    assert (status["vectors"]["have"], status["vectors"]["total"]) == (1, count + 1)
    code, answer = call(capsys, "embed", *s)
    assert code == 0 and answer["passages_remaining"] == 0
    code, found = call(capsys, "search", "imported note", *s)
    assert found["mode"] == "hybrid" and found["note"] is None


def test_a_back_fill_sized_landing_is_left_to_embed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, capsys, "--embedder", "hashing")
    s = ("--store", str(store), "--json")
    notes = tmp_path / "notes"
    notes.mkdir()
    count = TOP_UP_PASSAGES + 1
    for n in range(count):
        (notes / f"note-{n}.md").write_text(f"# Note {n}\n\nImported note number {n}.\n",
                                            encoding="utf-8")
    # An import of more memories than a command embeds: committed, not embedded, said.
    code, _, err = call_text(capsys, "import", "markdown", str(notes), "--store", str(store))
    assert code == 0, err
    assert f"{count} memories have no vectors yet" in err and "memhtml embed" in err
    code, status = call(capsys, "status", *s)
    assert code == 0 and status["vectors"]["have"] == 0
    # A memory longer than WRITE_PASSAGES passages is committed and left to embed too.
    long_body = " ".join(f"Line {n} of a pasted log, kept whole." for n in range(12_000))
    code, _, err = call_text(capsys, "write", "--title", "Pasted log", "--claim",
                               "The nightly job printed this log.", "--body", long_body,
                               "--store", str(store))
    assert code == 0, err
    assert f"{count + 1} memories have no vectors yet" in err
    assert "memhtml write" in git_log(store)[0]
