"""Scopes through the command line: reads span the person's store and the stores
their config names, each hit naming its scope; writes go to the own store unless a
writable scope is named; a scope that is not a store is named, with the fix."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from tests.integration.cli.cli_support import call, call_text, git_log
from tests.integration.scopes.conftest import Stores, write


def _hits(answer: dict[str, object]) -> list[tuple[str, str]]:
    return [(hit["scope"], hit["path"]) for hit in answer["hits"]]  # type: ignore[attr-defined]


def test_search_spans_the_scopes_and_names_each_hit(
        stores: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    mine = write(capsys, stores.own, "Deploy window", "Deploys happen on Tuesdays.")
    theirs = write(capsys, stores.team, "Deploy freeze", "Deploys freeze on Fridays.")
    code, answer = call(capsys, "search", "deploys", "--store", str(stores.own), "--json")
    assert code == 0, answer
    assert _hits(answer) == [("own", mine), ("team", theirs)]
    assert [s["scope"] for s in answer["scopes"]] == ["own", "team"]
    code, out, _ = call_text(capsys, "search", "deploys", "--store", str(stores.own))
    assert code == 0 and f"{theirs} (scope team)" in out and f"{mine}  " in out


def test_one_scope_named_answers_as_its_store_alone(
        stores: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    write(capsys, stores.own, "Deploy window", "Deploys happen on Tuesdays.")
    for n in range(3):
        write(capsys, stores.team, f"Deploy rule {n}", f"Deploys need {n + 1} approvals.")
    _, named = call(capsys, "search", "deploys", "approvals", "--scope", "team",
                    "--store", str(stores.own), "--json")
    _, alone = call(capsys, "search", "deploys", "approvals", "--store", str(stores.team),
                    "--scope", "own", "--json")
    assert [h["scope"] for h in named["hits"]] == ["team"] * 3
    strip = [{k: v for k, v in h.items() if k != "scope"} for h in named["hits"]]
    assert strip == [{k: v for k, v in h.items() if k != "scope"} for h in alone["hits"]]
    _, own_only = call(capsys, "search", "deploys", "--scope", "own",
                       "--store", str(stores.own), "--json")
    assert {h["scope"] for h in own_only["hits"]} == {"own"}


def test_recall_and_brief_span_the_scopes(stores: Stores,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    write(capsys, stores.own, "Kettle", "The kettle descales with citric acid monthly.")
    theirs = write(capsys, stores.team, "Zeppelin", "The zeppelin hangar opens at dawn.")
    code, recalled = call(capsys, "recall", "when", "does", "the", "zeppelin", "hangar",
                          "open", "--store", str(stores.own), "--json")
    assert code == 0, recalled
    assert [(m["scope"], m["path"]) for m in recalled["memories"]] == [("team", theirs)]
    assert f"({theirs} in scope team)" in recalled["text"]
    code, briefed = call(capsys, "brief", "--store", str(stores.own), "--json")
    assert code == 0, briefed
    assert "Scope team: 1 live memories" in briefed["text"]
    assert f"{theirs} in scope team" in briefed["text"]
    assert briefed["memories"] == 2
    assert briefed["tokens"] <= 1_500


def test_writes_go_to_the_own_store_unless_a_writable_scope_is_named(
        stores: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(stores.team)
    code, refused = call(capsys, "write", "--title", "T", "--claim", "Team fact one.",
                         "--scope", "team", "--store", str(stores.own), "--json")
    assert code == 1 and refused["code"] == "ERR_SCOPE_REFUSED", refused
    assert "read only" in refused["error"] and "writable = true" in refused["error"]
    assert git_log(stores.team) == before, "nothing written to a read-only scope"
    stores.scopes(f'[scopes.team]\npath = "{stores.team}"\nwritable = true\n')
    path = write(capsys, stores.own, "T", "Team fact one.", "--scope", "team")
    assert (stores.team / path).is_file() and not (stores.own / path).exists()
    mine = write(capsys, stores.own, "Mine", "My own fact.")
    assert (stores.own / mine).is_file() and not (stores.team / mine).exists()
    code, unknown = call(capsys, "write", "--title", "T", "--claim", "x.", "--scope",
                         "nowhere", "--store", str(stores.own), "--json")
    assert code == 1 and unknown["code"] == "ERR_SCOPE_REFUSED"
    assert "no scope 'nowhere'" in unknown["error"] and "own, team" in unknown["error"]


def test_a_read_only_scope_is_read_with_a_single_store_command(
        stores: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = write(capsys, stores.team, "Deploy freeze", "Deploys freeze on Fridays.")
    code, read = call(capsys, "read", theirs, "--scope", "team", "--store",
                      str(stores.own), "--json")
    assert code == 0 and "Fridays" in read["text"], read
    code, missing = call(capsys, "read", theirs, "--store", str(stores.own), "--json")
    assert code == 1 and missing["code"] == "ERR_NOT_FOUND", "a path is read in its scope"


@pytest.mark.parametrize("shape", ["missing", "empty", "plain-git", "file"])
def test_a_scope_that_is_not_a_store_is_named_and_the_others_answer(
        stores: Stores, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        shape: str) -> None:
    broken = tmp_path / "broken"
    if shape == "empty":
        broken.mkdir()
    elif shape == "plain-git":
        pygit2.init_repository(str(broken), initial_head="main")
    elif shape == "file":
        broken.write_text("not a store", encoding="utf-8")
    stores.scopes(f'[scopes]\nteam = "{stores.team}"\n'
                  f'[scopes.broken]\npath = "{broken}"\nwritable = true\n')
    mine = write(capsys, stores.own, "Deploy window", "Deploys happen on Tuesdays.")
    code, _out, err = call_text(capsys, "search", "deploys", "--store", str(stores.own),
                               "--json")
    assert code == 0
    assert f"warning: scope broken ({broken}) cannot be used" in err
    assert "memhtml init" in err and "remove broken from [scopes]" in err
    code, answer = call(capsys, "search", "deploys", "--store", str(stores.own), "--json")
    assert _hits(answer) == [("own", mine)]
    assert [s["scope"] for s in answer["skipped"]] == ["broken"]
    for tokens in (("search", "deploys"), ("write", "--title", "T", "--claim", "x.")):
        code, refused = call(capsys, *tokens, "--scope", "broken", "--store",
                             str(stores.own), "--json")
        assert code == 1 and refused["code"] == "ERR_SCOPE_UNUSABLE", refused
        assert str(broken) in refused["error"]
    assert not (broken / ".memhtml").exists() and not (broken / ".git" / "memhtml").exists()


@pytest.mark.parametrize(("table", "words"), [
    ('[scopes]\nown = "/srv/x"\n', "own names this store itself"),
    ('[scopes]\n"Team Space" = "/srv/x"\n', "a name is a lower-case letter"),
    ('[scopes]\nteam = "relative/path"\n', "must be absolute"),
    ('[scopes]\nteam = 3\n', "path must be a directory's path"),
    ('[scopes.team]\npath = "/srv/x"\nwritable = "yes"\n', "writable must be true or false"),
    ('[scopes.team]\npath = "/srv/x"\nremote = "origin"\n', "unknown keys 'remote'"),
    ('scopes = "team"\n', "scopes must be a table"),
])
def test_a_bad_scopes_table_is_an_error_naming_it(
        stores: Stores, capsys: pytest.CaptureFixture[str], table: str, words: str) -> None:
    stores.scopes(table)
    code, answer = call(capsys, "status", "--store", str(stores.own), "--json")
    assert code == 1 and words in answer["error"], answer
    assert str(stores.config) in answer["error"]


def test_a_committed_scopes_table_is_ignored_with_a_warning(
        stores: Stores, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The team store's committed config names a scope: a clone of it must not read
    # (nor answer an agent from) a folder of the reader's machine the store chose.
    stores.scopes("")
    elsewhere = tmp_path / "elsewhere"
    assert call(capsys, "init", str(elsewhere), "--json")[0] == 0
    write(capsys, elsewhere, "Secret", "The vault code is 1234.")
    config = stores.team / ".memhtml" / "config.toml"
    config.write_text(f'[scopes]\nloot = "{elsewhere}"\n', encoding="utf-8")
    code, out, err = call_text(capsys, "search", "vault", "--store", str(stores.team),
                               "--json")
    assert code == 0
    assert "ignored scopes in" in err
    # Read as a scope of another store, its file is still only its own to warn about.
    stores.scopes(f'[scopes]\nteam = "{stores.team}"\n')
    code, _out, err = call_text(capsys, "search", "vault", "--store", str(stores.own))
    assert code == 0 and "warning: scope team: ignored scopes in" in err
    import json

    assert json.loads(out)["hits"] == []


def test_a_command_that_opens_no_store_refuses_a_scope(
        stores: Stores, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for tokens in (("init", str(tmp_path / "new")), ("md", "query", "x", "--root", str(notes)),
                   ("clone", str(stores.team), str(tmp_path / "copy"))):
        code, answer = call(capsys, *tokens, "--scope", "team", "--json")
        assert (code, answer["code"]) == (2, "ERR_USAGE"), (tokens, answer)
    assert not (tmp_path / "new").exists() and not (tmp_path / "copy").exists()


def test_a_spanning_brief_keeps_to_its_budget(stores: Stores,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(6):
        write(capsys, stores.own, f"Own fact {n}", f"Own fact number {n} is about kettles.")
        write(capsys, stores.team, f"Team fact {n}", f"Team fact number {n} is about rotas.")
    for budget in ("120", "300"):
        code, briefed = call(capsys, "brief", "--budget", budget, "--store",
                             str(stores.own), "--json")
        assert code == 0, briefed
        assert briefed["tokens"] <= int(budget), briefed["text"]
        assert "in scope team" in briefed["text"]
