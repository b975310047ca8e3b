"""The read and task commands through the app, on a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log


def add(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str,
        *extra: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim, *extra,
                        "--store", str(store), "--json")
    assert code == 0, answer
    return str(answer["path"])


def test_search_hits_and_filters(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deploy = add(capsys, store, "Deploy window", "Deploys happen on Tuesdays.",
                 "--type", "procedural", "--tag", "deploy", "--entity", "team:checkout")
    add(capsys, store, "Deploy freeze", "Deploys stop during the freeze.",
        "--dir", "areas/ops/")
    s = ("--store", str(store), "--json")
    code, answer = call(capsys, "search", "deploy", *s)
    assert code == 0
    assert answer["mode"] == "lexical"
    assert {hit["path"] for hit in answer["hits"]} == {deploy, "areas/ops/deploy-freeze.html"}
    hit = answer["hits"][0]
    assert set(hit) == {"path", "claim", "score", "arms", "ranks", "holds"}
    assert "lexical" in hit["arms"]
    assert [r["arm"] for r in hit["ranks"]] == ["lexical"]
    for flags in (("--type", "procedural"), ("--tag", "deploy"), ("--entity", "team:checkout"),
                  ("--prefix", "areas/inbox/")):
        code, answer = call(capsys, "search", "deploy", *flags, *s)
        assert [h["path"] for h in answer["hits"]] == [deploy], flags
    code, answer = call(capsys, "search", "deploy", "--limit", "1", *s)
    assert len(answer["hits"]) == 1
    code, out, _ = call_text(capsys, "search", "deploy", "--store", str(store))
    assert deploy in out
    assert out.startswith("arms: lexical (bm25); vector off: no embedder configured")
    assert "lex 1 (bm25 " in out and "fused " in out


def test_search_and_read_at_an_older_commit(store: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = add(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    then = git_log(store)[0].split()[0]
    s = ("--store", str(store), "--json")
    call(capsys, "archive", path, *s)
    assert call(capsys, "search", "tuesdays", *s)[1]["hits"] == []
    _, answer = call(capsys, "search", "tuesdays", "--at", then, *s)
    assert [h["path"] for h in answer["hits"]] == [path]
    _, answer = call(capsys, "read", path, "--at", then, "--tier", "gist", *s)
    assert answer["text"] == "Deploys happen on Tuesdays."


def test_hybrid_search_once_vectors_cover_the_store(
        store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    add(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    add(capsys, store, "Coffee", "The office coffee machine is on floor two.")
    monkeypatch.setenv("MEMHTML_EMBEDDER", "hashing")
    s = ("--store", str(store), "--json")
    code, answer = call(capsys, "status", *s)
    assert answer["vectors"]["have"] == 0
    code, answer = call(capsys, "embed", "--limit", "1", *s)
    assert code == 0, answer
    # Passages first (what search reads), then the memories' own vectors (sleep's).
    assert answer["passages"]["embedded"] == 1
    assert answer["passages_remaining"] == 1
    assert (answer["counts"]["embedded"], answer["remaining"]) == (0, 2)
    code, answer = call(capsys, "status", *s)
    vectors = answer["vectors"]
    assert (vectors["have"], vectors["passages_have"], vectors["passages_total"]) == (1, 1, 2)
    # A search never ranks a half-embedded store: it embeds the one memory missing
    # (a gap this small is filled on the spot) and is hybrid over both.
    code, answer = call(capsys, "search", "deploy tuesdays", *s)
    assert answer["mode"] == "hybrid"
    assert "vector" in answer["hits"][0]["arms"]
    code, answer = call(capsys, "status", *s)
    vectors = answer["vectors"]
    assert (vectors["have"], vectors["passages_have"], vectors["memory_vectors"]) == (2, 2, 0)
    code, answer = call(capsys, "embed", *s)
    assert answer["remaining"] == answer["passages_remaining"] == 0
    assert answer["counts"]["embedded"] == 2
    code, answer = call(capsys, "status", *s)
    assert answer["vectors"]["have"] == answer["vectors"]["total"] == 2
    assert answer["vectors"]["memory_vectors"] == answer["vectors"]["passages_have"] == 2


def test_embed_without_an_embedder_is_refused(store: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "embed", "--store", str(store), "--json")
    assert code == 1
    assert "no embedder" in answer["error"]


def test_status_doctor_log_related(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = add(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    (store / "areas" / "inbox").mkdir(exist_ok=True)
    s = ("--store", str(store), "--json")
    code, answer = call(capsys, "status", *s)
    assert code == 0
    assert answer["memories"] == 1
    assert answer["by_type"] == {"semantic": 1}
    assert answer["commit"] == git_log(store)[0].split()[0]
    code, answer = call(capsys, "doctor", *s)
    assert code == 0
    code, answer = call(capsys, "log", path, *s)
    assert [c["subject"] for c in answer["commits"]] == [f"memhtml write: {path}"]
    code, answer = call(capsys, "related", path, *s)
    assert answer == {"path": path, "outbound": [], "inbound": []}
    code, answer = call(capsys, "read", "areas/inbox/missing.html", *s)
    assert code == 1
    assert answer["code"] == "ERR_NOT_FOUND"
    assert answer["error"].startswith("no memory at areas/inbox/missing.html")


def test_tasks(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    code, answer = call(capsys, "task", "add", "--title", "Rotate the key",
                        "--claim", "Rotate the API key.", "--due", "2000-01-01", *s)
    assert code == 0, answer
    late = answer["path"]
    assert late == "areas/tasks/rotate-the-key.html"
    code, answer = call(capsys, "task", "add", "--title", "Later", "--claim", "Do it later.",
                        "--due", "2999-01-01", "--status", "doing", *s)
    code, answer = call(capsys, "task", "list", *s)
    assert [(t["path"], t["overdue"]) for t in answer["tasks"]] == [
        (late, True), ("areas/tasks/later.html", False)]
    assert answer["overdue"] == 1
    code, out, _ = call_text(capsys, "task", "list", "--store", str(store))
    assert "OVERDUE" in out
    code, answer = call(capsys, "task", "status", late, "done", *s)
    assert code == 0
    assert [t["path"] for t in call(capsys, "task", "list", *s)[1]["tasks"]] == [
        "areas/tasks/later.html"]
    code, answer = call(capsys, "task", "list", "--all", *s)
    assert len(answer["tasks"]) == 2


def test_list_counts_a_folder_with_its_subfolders(store: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    disk = add(capsys, store, "Disk", "The build disk filled up.", "--dir", "areas/ops/")
    runner = add(capsys, store, "Runner", "The runner has 50 GB.", "--dir", "areas/ops/ci/")
    task = "areas/tasks/rotate-the-key.html"
    code, _ = call(capsys, "task", "add", "--title", "Rotate the key", "--claim",
                   "Rotate the key.", "--store", str(store), "--json")
    assert code == 0
    code, out, _ = call_text(capsys, "list", "areas/", "--store", str(store))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "areas/: 3 memories at any depth"
    assert [line.split() for line in lines[1:3]] == [["areas/ops/", "2"], ["areas/tasks/", "1"]]
    assert [line.split()[:2] for line in lines[3:]] == [
        ["active", runner], ["active", disk], ["todo", task]]
    code, out, _ = call_text(capsys, "list", "areas/ops", "--no-recursive", "--limit", "1",
                             "--store", str(store))
    assert out.splitlines() == ["areas/ops/: 1 memory directly in it",
                                "  areas/ops/ci/  1", f"active  {disk}  Disk"]
    code, out, _ = call_text(capsys, "list", "areas/", "--limit", "1", "--store", str(store))
    assert out.rstrip("\n").endswith("... 2 more (--limit shows more)")
    code, out, err = call_text(capsys, "list", "areas/none", "--store", str(store))
    assert code == 1 and out == ""
    assert err.startswith("error: no memories under areas/none/")
