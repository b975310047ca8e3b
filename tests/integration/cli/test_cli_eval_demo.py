"""``memhtml eval`` (a tiny BEIR split, the gate between two commits) and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log


@pytest.fixture
def beir(tmp_path: Path) -> tuple[str, str, str]:
    root = tmp_path / "beir"
    root.mkdir()
    docs = [
        {"_id": "d1", "title": "Vitamin D and bones",
         "text": "Vitamin D supplements strengthen bones in older adults. The effect is small."},
        {"_id": "d2", "title": "Coffee and sleep",
         "text": "Coffee late in the day shortens sleep. Caffeine has a long half-life."},
        {"_id": "d3", "title": "Exercise and mood",
         "text": "Regular exercise improves mood in adults with mild depression."},
    ]
    queries = [{"_id": "q1", "text": "does caffeine harm sleep"},
               {"_id": "q2", "text": "vitamin D bone strength"}]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t1\n")
    return str(root / "corpus.jsonl"), str(root / "queries.jsonl"), str(root / "qrels.tsv")


def test_eval_beir(beir: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "eval", "beir", *beir, "--json")
    assert code == 0, answer
    assert answer["queries"] == 2
    assert answer["documents"] == 3
    assert [a["arm"] for a in answer["arms"]] == ["lexical"]
    assert answer["arms"][0]["ndcg_at_k"] == 1.0
    code, answer = call(capsys, "eval", "beir", *beir, "--arm", "lexical", "--arm", "vector",
                        "--arm", "hybrid", "--embedder", "hashing", "--json")
    assert code == 0, answer
    assert [a["arm"] for a in answer["arms"]] == ["lexical", "vector", "hybrid"]
    code, out, _ = call_text(capsys, "eval", "beir", *beir)
    assert "nDCG@10" in out


def test_eval_gate(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    for n in range(4):
        call(capsys, "write", "--title", f"Fact {n} about deploys", "--claim",
             f"Deploy fact number {n}.", *s)
    base = git_log(store)[0].split()[0]
    call(capsys, "write", "--title", "Unrelated", "--claim", "Coffee is on floor two.", *s)
    code, answer = call(capsys, "eval", "gate", base, "main", *s)
    assert code == 0, answer
    assert answer["passed"] is True
    assert answer["base"] == base
    # Probes come from the base: a claim and a title for each of its four memories.
    assert answer["probes"] == 8
    code, out, _ = call_text(capsys, "eval", "gate", base, "main", "--store", str(store))
    assert "head gate: 8 probes; passed" in out
    code, answer = call(capsys, "eval", "gate", "nope", "main", *s)
    assert code == 1


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    code, out, _ = call_text(capsys, "demo", "--dir", str(target))
    assert code == 0
    assert (target / "index.html").is_file()
    assert f"file://{target}/index.html" in out
    assert "OVERDUE" in out
    assert "memhtml status --store" in out
    log = git_log(target)
    assert log[0].split(" ", 1)[1].startswith("memhtml publish:")
    assert any("memhtml correct:" in line for line in log)
    code, answer = call(capsys, "status", "--store", str(target), "--json")
    assert answer["memories"] == 53
    assert answer["by_status"] == {"active": 52, "archived": 1}
    code, answer = call(capsys, "doctor", "--store", str(target), "--json")
    assert answer["findings"] == []
    again = tmp_path / "again"
    code, answer = call(capsys, "demo", "--dir", str(again), "--json")
    assert answer["commit"] == log[0].split()[0], "the demo's commits are deterministic"
    assert answer["searches"][0]["hits"]
    code, answer = call(capsys, "demo", "--dir", str(again), "--json")
    assert code == 1
    assert "not empty" in answer["error"]


def test_eval_beir_weights(beir: tuple[str, str, str],
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "eval", "beir", *beir, "--embedder", "hashing", "--weight",
                        "0", "--weight", "0.5", "--weight", "2", "--json")
    assert code == 0, answer
    names = [a["arm"] for a in answer["arms"]]
    assert names == ["lexical", "vector", "hybrid", "hybrid w=0", "hybrid w=0.5", "hybrid w=2"]
    lexical = answer["arms"][0]
    assert answer["arms"][3]["ndcg_at_k"] == lexical["ndcg_at_k"], \
        "weight 0 ranks as the lexical arm"
    assert answer["best_vector_weight"] in (0.0, 0.5, 2.0)
    code, bad = call(capsys, "eval", "beir", *beir, "--weight", "-1", "--json")
    assert code == 2 and "weight" in bad["error"], bad


def test_eval_beir_long_sessions(beir: tuple[str, str, str],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """--long packs the corpus into sessions (three short documents make one), judged
    as their most relevant document; every arm is reported side by side."""
    code, answer = call(capsys, "eval", "beir", *beir, "--long", "--embedder", "hashing",
                        "--json")
    assert code == 0, answer
    assert (answer["collection"], answer["half"]) == ("long", "all")
    assert answer["documents"] == 1
    assert answer["queries"] == 2
    arms = {a["arm"]: a for a in answer["arms"]}
    assert list(arms) == ["lexical", "vector", "hybrid"]
    assert all(a["recall_at_5"] == 1.0 for a in arms.values()), "one session holds all"
    code, out, _ = call_text(capsys, "eval", "beir", *beir, "--long")
    assert code == 0 and out.startswith("long sessions, all queries: 2 queries over 1 documents")
    code, answer = call(capsys, "eval", "beir", *beir, "--half", "dev", "--json")
    assert code == 0, answer
    assert answer["half"] == "dev" and answer["queries"] == 1, "q1 is held out, q2 is dev"
