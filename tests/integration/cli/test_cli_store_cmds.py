"""The write commands through the app: each a commit, each refusal nothing committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log, usage_code

WRITE = ("write", "--title", "Deploy window", "--claim", "Deploys happen on Tuesdays.",
         "--type", "procedural", "--entity", "service:checkout-api", "--tag", "deploy",
         "--body", "Never on a Friday.", "--body", "Ask the on-call first.")


def write(capsys: pytest.CaptureFixture[str], store: Path, *extra: str) -> str:
    code, answer = call(capsys, *WRITE, *extra, "--store", str(store), "--json")
    assert code == 0, answer
    path = answer["path"]
    assert isinstance(path, str)
    return path


def test_init_makes_the_layout_and_is_idempotent(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (store / ".gitattributes").is_file()
    assert (store / "areas" / "inbox" / ".gitkeep").is_file()
    code, answer = call(capsys, "init", str(store), "--json")
    assert code == 0
    assert answer["committed"] is False
    assert len(git_log(store)) == 1


def test_write_commits_one_memory(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store)
    assert path == "areas/inbox/deploy-window.html"
    assert (store / path).is_file()
    assert git_log(store)[0].endswith(f"memhtml write: {path}")
    code, answer = call(capsys, "read", path, "--tier", "gist", "--store", str(store),
                        "--json")
    assert code == 0
    assert answer["text"] == "Deploys happen on Tuesdays."


def test_write_with_links_and_options(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write(capsys, store)
    code, answer = call(capsys, "write", "--title", "Friday freeze", "--claim",
                        "Nothing ships on Fridays.", "--link", f"supports=/{first}",
                        "--dir", "areas/deploy/", "--confidence", "0.8", "--importance", "6",
                        "--store", str(store), "--json")
    assert code == 0, answer
    assert answer["path"] == "areas/deploy/friday-freeze.html"
    code, related = call(capsys, "related", first, "--store", str(store), "--json")
    assert related["inbound"] == [{"path": "areas/deploy/friday-freeze.html",
                                   "rel": "supports"}]


def test_write_from_a_file_at_a_chosen_path(store: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store)
    html = (store / path).read_text(encoding="utf-8")
    source = tmp_path / "copy.html"
    source.write_text(html.replace("Deploy window", "Deploy window copy"), encoding="utf-8")
    code, answer = call(capsys, "write", "--file", str(source), "--path",
                        "areas/deploy/copy.html", "--store", str(store), "--json")
    assert code == 1 and answer["code"] == "ERR_DUPLICATE_CLAIM", answer
    assert path in answer["error"], "the memory holding the claim is named"
    code, answer = call(capsys, "write", "--file", str(source), "--path",
                        "areas/deploy/copy.html", "--allow-duplicate", "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert answer["path"] == "areas/deploy/copy.html"


def test_an_invalid_file_is_refused_with_every_violation(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html><head><title>x</title></head><body><article>"
                   "<p>no claim here</p><script>alert(1)</script></article></body></html>",
                   encoding="utf-8")
    before = git_log(store)
    code, answer = call(capsys, "write", "--file", str(bad), "--store", str(store), "--json")
    assert code == 1
    assert answer["ok"] is False
    assert len(answer["violations"]) >= 2
    for violation in answer["violations"]:
        assert violation in answer["error"]
    code, out, err = call_text(capsys, "write", "--file", str(bad), "--store", str(store))
    assert code == 1
    assert out == ""
    for violation in answer["violations"]:
        assert violation in err
    assert git_log(store) == before


@pytest.mark.parametrize("path", ["../outside.html", "/etc/passwd", "a\\b.html",
                                  ".git/config"])
def test_paths_outside_the_store_are_refused(
        store: Path, path: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(store)
    code, answer = call(capsys, "read", path, "--store", str(store), "--json")
    assert code == 1
    assert "refused" in answer["error"]
    code, answer = call(capsys, "archive", path, "--store", str(store), "--json")
    assert code == 1
    code, answer = call(capsys, *WRITE, "--path", path, "--store", str(store), "--json")
    assert code == 1
    assert git_log(store) == before


def test_correct_supersedes_and_archives(store: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    old = write(capsys, store)
    code, answer = call(capsys, "correct", old, "--title", "Deploy window",
                        "--claim", "Deploys happen on Tuesdays and Thursdays.",
                        "--store", str(store), "--json")
    assert code == 0, answer
    new = answer["path"]
    assert new == "areas/inbox/deploy-window-2.html"
    assert any(p.startswith("archive/") for p in answer["paths"])
    assert answer["new"] == [new]
    assert answer["archived"] == [{"path": old,
                                   "archived_at": next(p for p in answer["paths"]
                                                       if p.startswith("archive/"))}]
    code, found = call(capsys, "read", new, "--tier", "all", "--store", str(store), "--json")
    assert 'rel="memhtml-supersedes"' in found["text"]
    assert 'content="procedural"' in found["text"], "the correction keeps the type"


def test_archive_link_label_move(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write(capsys, store)
    code, answer = call(capsys, "write", "--title", "Second", "--claim", "A second fact.",
                        "--store", str(store), "--json")
    second = answer["path"]
    s = ("--store", str(store), "--json")
    assert call(capsys, "link", second, "relates_to", "/" + first, *s)[0] == 0
    assert call(capsys, "label", second, "team:checkout", *s)[0] == 0
    code, answer = call(capsys, "read", second, "--tier", "all", *s)
    assert 'content="team:checkout"' in answer["text"]
    assert call(capsys, "unlabel", second, "team:checkout", *s)[0] == 0
    assert call(capsys, "unlink", second, "relates_to", "/" + first, *s)[0] == 0
    code, answer = call(capsys, "move", first, "areas/deploy/", *s)
    assert code == 0, answer
    assert "areas/deploy/deploy-window.html" in answer["paths"]
    code, answer = call(capsys, "archive", "areas/deploy/deploy-window.html", *s)
    assert code == 0
    assert any(p.startswith("archive/") for p in answer["paths"])
    code, answer = call(capsys, "archive", "areas/deploy/deploy-window.html", *s)
    assert code == 1


def test_publish_commits_the_site_once(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(capsys, store)
    code, answer = call(capsys, "publish", "--store", str(store), "--json")
    assert code == 0, answer
    assert "index.html" in answer["paths"]
    assert "sitemap.xml" in answer["paths"]
    assert (store / "index.html").is_file()
    assert answer["index"].startswith("file://")
    assert git_log(store)[0].split(" ", 1)[1].startswith("memhtml publish:")
    code, again = call(capsys, "publish", "--store", str(store), "--json")
    assert code == 0
    assert again["committed"] is False
    code, doctor = call(capsys, "doctor", "--store", str(store), "--json")
    assert code == 0
    assert doctor["findings"] == []


def test_exit_codes(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_code(capsys, "write", "--type", "nonsense") == 2
    assert usage_code(capsys, "read") == 2
    assert usage_code(capsys, "no-such-command") == 2
    code, answer = call(capsys, "write", "--title", "x", "--store", str(store), "--json")
    assert code == 2
    assert "--claim" in answer["error"]
    code, answer = call(capsys, "write", "--title", "x", "--claim", "y.", "--link", "bogus",
                        "--store", str(store), "--json")
    assert code == 2 and answer["code"] == "ERR_USAGE" and "REL=TARGET" in answer["error"]
    code, answer = call(capsys, "status", "--store", str(store.parent / "missing"), "--json")
    assert code == 1
    assert "no git repository" in answer["error"]


def test_no_store_anywhere_names_how_to_make_one(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside any repository, with no --store and no MEMHTML_STORE, a command is
    refused with its own code and the two ways to name a store."""
    monkeypatch.delenv("MEMHTML_STORE", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, answer = call(capsys, "status", "--json")
    assert code == 1 and answer["code"] == "ERR_NO_STORE"
    assert "--store" in answer["error"] and "memhtml init" in answer["error"]
