"""A first load spread over forked workers, in rounds, is the plain load.

``load_head`` with a fork pool (made to fork on every round, whatever its size) and a
progress callback, on a real repository holding plain files (read quickly), richer
ones (parsed in full), archived and refused files, a file that is not UTF-8 and a
symbolic link, gives the version ``load_head`` alone gives: the same records, skips,
maps and lexical index, and the snapshot written from it is the same bytes. The
progress is told every round, in order, ending with the whole count.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters import fork_pool
from memhtml.adapters.git import PygitService
from memhtml.adapters.snapshot_files import save_snapshot, snapshot_files
from memhtml.compose import value_of
from memhtml.contracts.services import PathChange, Signature
from memhtml.format import NewMemoryInput, render_template
from memhtml.head import load_head
from memhtml.head import version as head_version

AT = datetime(2026, 1, 6, 9, 0, tzinfo=UTC)
ADA = Signature("Ada", "ada@example.org")


def _files() -> list[PathChange]:
    changes = []
    for i in range(90):
        body: tuple[str, ...] = (f"Paragraph {i} & more <text>.", "A second one.")
        if i % 7 == 0:
            body = ("```python\nprint(1)\n```",)  # a figure: the full parse
        html = render_template(NewMemoryInput(
            title=f"Memory {i}", claim=f"Fact number {i} about café {i % 5}.",
            memory_type="semantic", at="2026-01-06T09:00:00Z", body=body,
            tags=("t",) if i % 3 else ()))
        if i % 11 == 0:
            html = html.replace('content="active"', 'content="archived"').replace(
                "</head>", '<meta name="memhtml-archived" content="2026-01-07T00:00:00Z">\n'
                "</head>")
        changes.append(PathChange(f"areas/{i % 4}/m{i:03d}.html", html.encode()))
    changes.append(PathChange("areas/0/refused.html", b"<p>not a memory</p>"))
    changes.append(PathChange("areas/1/latin.html", "caf\xe9".encode("latin-1")))
    return changes


@pytest.fixture
def repo(tmp_path: Path) -> tuple[PygitService, str]:
    git = value_of(PygitService.init(tmp_path / "store"))
    sha = value_of(git.commit("refs/heads/main", None, _files(), "files", ADA, AT))
    # A symbolic link among the memories, committed the way git stores one.
    raw = pygit2.Repository(str(tmp_path / "store"))
    builder = raw.TreeBuilder(raw[sha].peel(pygit2.Tree))
    builder.insert("link.html", raw.create_blob(b"areas/0/m001.html"), pygit2.GIT_FILEMODE_LINK)
    tree = builder.write()
    ada = pygit2.Signature("Ada", "ada@example.org", 0, 0)
    linked = raw.create_commit("refs/heads/main", ada, ada, "link", tree, [pygit2.Oid(hex=sha)])
    return git, str(linked)


def test_a_fanned_load_in_rounds_is_the_plain_load(
        repo: tuple[PygitService, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git, sha = repo
    plain = value_of(load_head(git, sha))
    monkeypatch.setattr(head_version, "LOAD_ROUND", 16)
    told: list[tuple[str, int, int]] = []
    pool = fork_pool.ForkPool(2, 1, may_fork=lambda: True)
    fanned = value_of(load_head(git, sha, fan=pool,
                                progress=lambda what, done, total: told.append(
                                    (what, done, total))))

    assert fanned.skipped_files == plain.skipped_files
    assert {s.path for s in plain.skipped_files} == {
        "areas/0/refused.html", "areas/1/latin.html", "link.html"}
    assert [vars(r) for r in fanned.records()] == [vars(r) for r in plain.records()]
    assert fanned.indexes == plain.indexes
    assert fanned.indexes.lexical.materialize() == plain.indexes.lexical.materialize()

    candidates = len(list(plain.records())) + len(plain.skipped_files)
    rounds = [t for t in told if t[0] == "parsing"]
    assert [done for _, done, _ in rounds] == [
        *range(16, candidates, 16), candidates]
    assert all(total == candidates for _, _, total in rounds)
    assert told[-1] == ("indexing", candidates, candidates)

    for name, version in (("plain", plain), ("fanned", fanned)):
        unsafe_perform_io(save_snapshot(tmp_path / name, version).unwrap())
    [one] = snapshot_files(tmp_path / "plain")
    [other] = snapshot_files(tmp_path / "fanned")
    assert one.read_bytes() == other.read_bytes()
