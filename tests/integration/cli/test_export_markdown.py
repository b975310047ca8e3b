"""``memhtml export markdown DIR``: the files it writes, the summary it prints, and the
directories it refuses to write into.

Every path comes from the store, and a target directory can hold a symlink out of
itself, so each destination is checked before anything is written: a refusal leaves
the disk as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.integration.cli.cli_support import call, call_text


def _write(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> str:
    code, answer = call(capsys, "write", *args, "--store", str(store), "--json")
    assert code == 0, answer
    path = answer["new"][0]
    assert isinstance(path, str)
    return path


def _front(text: str) -> dict[str, object]:
    assert text.startswith("---\n")
    block, _, _ = text[4:].partition("\n---\n")
    loaded = yaml.safe_load(block)
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture
def filled(store: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    deploy = _write(capsys, store, "--title", "Deploy steps", "--claim",
                    "Deploys go through the canary first.", "--type", "procedural",
                    "--tag", "ops", "--entity", "service:api", "--dir", "areas/ops/")
    cache = _write(capsys, store, "--title", "Cache TTL", "--claim",
                   "The cache TTL is *five* minutes.", "--link",
                   f"relates_to=/{deploy}")
    old = _write(capsys, store, "--title", "Old rule", "--claim", "Deploys were manual.")
    assert cache and old
    code, answer = call(capsys, "archive", old, "--store", str(store), "--json")
    assert code == 0, answer
    return store


def test_every_active_memory_lands_at_its_store_path(
        filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, answer = call(capsys, "export", "markdown", str(out), "--store", str(filled),
                        "--json")
    assert code == 0, answer
    assert answer["memories"] == 2 and answer["edges"] == 1 and answer["dangling"] == 0
    assert answer["files"] == ["areas/inbox/cache-ttl.md", "areas/ops/deploy-steps.md"]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == answer["files"]
    cache = (out / "areas/inbox/cache-ttl.md").read_text(encoding="utf-8")
    front = _front(cache)
    assert front["description"] == "The cache TTL is *five* minutes."
    assert front["type"] == "semantic"
    assert front["edges"] == {"relates_to": ["[[deploy-steps]]"]}
    assert "The cache TTL is \\*five\\* minutes." in cache
    deploy = _front((out / "areas/ops/deploy-steps.md").read_text(encoding="utf-8"))
    assert deploy["tags"] == ["ops"] and deploy["entities"] == ["service:api"]
    assert deploy["type"] == "procedural"
    assert isinstance(deploy["created"], str) and deploy["created"].endswith("Z")


def test_the_summary_prints_counts(filled: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call_text(capsys, "export", "markdown", str(tmp_path / "out"),
                             "--store", str(filled))
    assert code == 0
    assert out.strip() == f"exported 2 memories to {tmp_path / 'out'} (1 edges)"


def test_a_directory_with_files_is_refused_unless_forced(
        filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    code, answer = call(capsys, "export", "markdown", str(out), "--store", str(filled),
                        "--json")
    assert code == 1
    assert answer["code"] == "ERR_EXPORT_TARGET_NOT_EMPTY"
    assert "--force" in answer["error"]
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    code, answer = call(capsys, "export", "markdown", str(out), "--store", str(filled),
                        "--force", "--json")
    assert code == 0, answer
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (out / "areas/ops/deploy-steps.md").is_file()


def test_an_empty_directory_is_fine_and_a_file_is_refused(
        filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, answer = call(capsys, "export", "markdown", str(empty), "--store", str(filled),
                        "--json")
    assert code == 0, answer
    target = tmp_path / "a-file"
    target.write_text("x", encoding="utf-8")
    code, answer = call(capsys, "export", "markdown", str(target), "--store", str(filled),
                        "--force", "--json")
    assert code == 1
    assert answer["code"] == "ERR_EXPORT_TARGET_NOT_DIRECTORY"
    assert target.read_text(encoding="utf-8") == "x"


def test_a_symlink_out_of_the_directory_is_never_written_through(
        filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "areas").symlink_to(outside, target_is_directory=True)
    code, answer = call(capsys, "export", "markdown", str(out), "--store", str(filled),
                        "--force", "--json")
    assert code == 1
    assert answer["code"] == "ERR_EXPORT_PATH_OUTSIDE"
    assert list(outside.iterdir()) == []


def test_an_empty_store_exports_nothing(store: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "export", "markdown", str(tmp_path / "out"), "--store",
                        str(store), "--json")
    assert code == 0, answer
    assert answer["memories"] == 0 and answer["files"] == []
