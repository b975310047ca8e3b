"""Time in search through the CLI: a span named in the query puts that time's
memories first, ``--as-of`` searches what the store held then (git's time) that was
valid then (the file's), and every hit says when its fact holds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memhtml.format import content_hash, set_meta
from tests.integration.cli.cli_support import call

IDENTITY = ("-c", "user.name=Test Person", "-c", "user.email=person@example.org")


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str,
           happened: str | None = None) -> str:
    dated = f'<p>It happened on <time datetime="{happened}">{happened}</time>.</p>'
    body = [] if happened is None else ["--body-html", dated]
    code, answer = call(capsys, "write", "--title", title, "--claim", claim, *body,
                        "--store", str(store), "--json")
    assert code == 0, answer
    return str(answer["path"])


def _search(capsys: pytest.CaptureFixture[str], store: Path, *tokens: str) -> dict[str, Any]:
    code, answer = call(capsys, "search", *tokens, "--store", str(store), "--json")
    assert code == 0, answer
    return dict(answer)


def _persons_commit(store: Path, path: str, edit: dict[str, str], claim: tuple[str, str],
                    when: str) -> None:
    """A person's edit, committed by git at ``when`` (author time, what as-of reads)."""
    text = (store / path).read_text(encoding="utf-8").replace(*claim)
    for name, value in edit.items():
        text = set_meta(text, name, value)
    text = set_meta(text, "memhtml-content-hash", content_hash(text))
    (store / path).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", *IDENTITY, "-C", str(store), "commit", "-qam", "edited by hand"],
                   check=True, env=env)


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "store"
    assert call(capsys, "init", str(root), "--json")[0] == 0
    return root


def test_a_span_in_the_query_puts_that_times_memories_first(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    august = _write(capsys, store, "Cache moved", "The cache moved to Redis.", "2023-08-14")
    _write(capsys, store, "Cache sizing", "The cache cache holds a day of sessions.",
           "2024-02-01")
    plain = _search(capsys, store, "cache")
    assert plain["hits"][0]["path"] != august, "the words alone rank the other first"
    found = _search(capsys, store, "cache", "in", "August", "2023")
    assert found["hits"][0]["path"] == august
    assert found["when"]["phrase"] == "August 2023"
    assert (found["when"]["start"], found["when"]["end"]) == ("2023-08-01", "2023-09-01")
    assert found["hits"][0]["holds"]["since"] == "2023-08-14"
    only_time = _search(capsys, store, "what", "happened", "in", "August", "2023")
    assert [hit["path"] for hit in only_time["hits"]] == [august]
    assert only_time["hits"][0]["arms"] == ["time"]
    # The filters hold for a time-only answer as for the words' arms.
    elsewhere = _search(capsys, store, "what", "happened", "in", "August", "2023",
                        "--prefix", "areas/projects/")
    assert elsewhere["hits"] == []


def test_a_span_placed_by_a_memory_about_the_event(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(capsys, store, "Postgres migration", "The migration to Postgres finished.",
           "2024-01-10")
    before = _write(capsys, store, "Rota old", "The on-call rota rotated daily.", "2023-11-01")
    after = _write(capsys, store, "Rota new", "The on-call rota rotates weekly rota.",
                   "2024-03-01")
    found = _search(capsys, store, "on-call", "rota", "before", "the", "migration")
    assert found["hits"][0]["path"] == before, found
    assert found["when"]["end"] == "2024-01-10"
    found = _search(capsys, store, "on-call", "rota", "after", "the", "migration")
    assert found["hits"][0]["path"] == after, found
    unplaced = _search(capsys, store, "rota", "before", "the", "reorg")
    assert "no memory about 'reorg'" in unplaced["note"]


def test_as_of_searches_what_the_store_held_then_and_was_valid_then(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(capsys, store, "Deploy day", "Deploys happen on Tuesdays.")
    _persons_commit(store, path, {"memhtml-updated": "2030-01-01T00:00:00Z"},
                    ("Tuesdays", "Thursdays"), "2030-01-01T00:00:00Z")
    _persons_commit(store, path, {"memhtml-valid-until": "2030-06-01T00:00:00Z"},
                    ("Thursdays", "Thursdays"), "2030-02-01T00:00:00Z")
    claims = {moment: [h["claim"] for h in _search(capsys, store, "deploys", "--as-of",
                                                   moment)["hits"]]
              for moment in ("2029-12-31", "2030-01-15", "2030-07-01")}
    assert claims == {"2029-12-31": ["Deploys happen on Tuesdays."],
                      "2030-01-15": ["Deploys happen on Thursdays."],
                      "2030-07-01": []}
    held = _search(capsys, store, "deploys", "--as-of", "2030-03-01T12:00:00Z")
    assert held["when"]["as_of"] == "2030-03-01T12:00:00Z"
    assert held["hits"][0]["holds"]["until"] == "2030-06-01T00:00:00Z"


@pytest.mark.parametrize(("tokens", "says"), [
    (("--as-of", "March 2024"), "is not a date"),
    (("--as-of", "1999-01-01"), "held nothing as of 1999-01-01"),
    (("--as-of", "2030-01-01", "--at", "HEAD"), "not both"),
])
def test_as_of_refuses_what_it_cannot_place(store: Path, capsys: pytest.CaptureFixture[str],
                                            tokens: tuple[str, ...], says: str) -> None:
    _write(capsys, store, "Deploy day", "Deploys happen on Tuesdays.")
    code, answer = call(capsys, "search", "deploys", *tokens, "--store", str(store), "--json")
    assert code != 0
    assert says in str(answer), answer
