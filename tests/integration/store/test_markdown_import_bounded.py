"""``memhtml import markdown`` on notes whose frontmatter would not stay bounded, or
whose keys YAML 1.1 would fold together, through the command as a person runs it.

The alias bomb is the one that made an import climb to 3 GB and die with MemoryError
after 36 s: about 700 bytes, nine levels of nine aliases. It runs in a process of its
own with its address space capped at 1 GiB and a time-out, so a reader that expanded
it would fail this test with MemoryError (or be stopped) instead of taking the machine
with it; the answer asserted is the typed refusal naming the file, beside the notes
that import as usual.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log

ADDRESS_SPACE = 1 << 30


def alias_bomb(levels: int = 9, fan: int = 9) -> str:
    lines = ["l0: &a0 [" + ", ".join(['"lol"'] * fan) + "]"]
    lines += [f"l{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * fan) + "]"
              for n in range(1, levels)]
    return "---\nname: Bomb\n" + "\n".join(lines) + "\n---\nA note that never loads.\n"


NOTES = {
    "good.md": "---\nname: Deploys\n---\nDeploys happen on Tuesdays.\n",
    "bomb.md": alias_bomb(),
    "deep.md": "---\nname: Deep\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep.\n",
    "twice.md": "---\nname: Twice\nowner: priya\nowner: ines\n---\nOwned twice.\n",
    "keys.md": "---\nname: Keys\n1: one\ntrue: yes\nnull: nothing\n---\nKeys stay apart.\n",
}


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _folder(root: Path) -> Path:
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_bomb_is_refused_by_name_and_the_rest_imports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert 500 <= len(NOTES["bomb.md"].encode()) <= 800
    store, notes = tmp_path / "store", _folder(tmp_path / "notes")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    before = len(git_log(store))
    ran = subprocess.run(
        [sys.executable, "-m", "memhtml", "import", "markdown", str(notes),
         "--store", str(store), "--json"],
        capture_output=True, text=True, check=False, timeout=300, preexec_fn=_capped)
    assert "MemoryError" not in ran.stderr, ran.stderr[-2000:]
    assert ran.returncode == 0, (ran.stdout, ran.stderr[-2000:])
    answer = json.loads(ran.stdout)
    assert answer["ok"] is True and answer["commit"], answer
    skipped = {entry["file"]: entry for entry in answer["skipped"]}
    assert set(skipped) == {"bomb.md", "deep.md", "twice.md"}, skipped
    assert skipped["bomb.md"]["code"] == "ERR_FRONTMATTER_OVER_LIMIT"
    assert "alias (*a0)" in skipped["bomb.md"]["reason"]
    assert skipped["deep.md"]["code"] == "ERR_FRONTMATTER_OVER_LIMIT"
    assert "nests" in skipped["deep.md"]["reason"]
    assert skipped["twice.md"]["code"] == "ERR_FRONTMATTER_DUPLICATE_FIELD"
    assert "'owner' twice (lines 3 and 4)" in skipped["twice.md"]["reason"]
    assert sorted(a["file"] for a in answer["added"]) == ["good.md", "keys.md"]
    assert len(git_log(store)) == before + 1, "the notes that read are committed"
    code, read = call(capsys, "read", "areas/imported/keys.html", "--tier", "all",
                      "--store", str(store), "--json")
    assert code == 0, read
    html = read["text"]
    for name, value in (("1", "one"), ("true", "yes"), ("null", "nothing")):
        assert f"<dt>{name}</dt><dd>{value}</dd>" in html, html


def test_the_text_answer_names_each_file_and_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, notes = tmp_path / "store", _folder(tmp_path / "notes")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    code, out, err = call_text(capsys, "import", "markdown", str(notes), "--store", str(store))
    assert code == 0, "what could be imported landed; the skipped files are named"
    text = out + err
    assert "not converted: bomb.md: the frontmatter uses an alias (*a0)" in text, text
    assert "not converted: twice.md: the frontmatter names the field 'owner' twice" in text
    assert "2 added" in text and "3 not converted" in text
