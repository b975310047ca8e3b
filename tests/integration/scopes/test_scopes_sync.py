"""A scope that is a clone syncs on its own settings: ``sync --scope team`` pushes
through the team clone's own remote, and nothing of the person's private store
reaches it (no commit, no memory blob, no claim), while the private store syncs with
its own remote and receives nothing of the team's either."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from tests.integration.cli.cli_support import call
from tests.integration.scopes.conftest import write
from tests.integration.sync.sync_support import git, init_remote, memory_claims

PRIVATE_CLAIMS = ("My bank PIN hint is the cat's birthday.",
                  "I am interviewing with another company on Thursday.")
TEAM_CLAIM = "The team deploys on Tuesdays after standup."
TEAMMATE_CLAIM = "The staging database restarts nightly at two."


def _sync(capsys: pytest.CaptureFixture[str], store: Path, *extra: str) -> dict[str, object]:
    code, answer = call(capsys, "sync", "--store", str(store), "--json", *extra)
    assert code == 0, answer
    return dict(answer)


def _reachable(bare: Path) -> set[str]:
    """Every object any ref of ``bare`` reaches: what a fetch of it can give."""
    repo = pygit2.Repository(str(bare))
    seen: set[str] = set()

    def tree(node: pygit2.Tree) -> None:
        seen.add(str(node.id))
        for entry in node:
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                tree(obj)
            else:
                seen.add(str(obj.id))

    for ref in repo.references:
        tip = repo.references[ref].peel(pygit2.Commit)
        for commit in repo.walk(tip.id):
            seen.add(str(commit.id))
            tree(commit.tree)
    return seen


def _all_objects(root: Path) -> set[str]:
    repo = pygit2.Repository(str(root))
    return {str(oid) for oid in repo.odb}


def test_a_private_store_never_leaks_into_a_team_push(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "memhtml").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    team_remote, private_remote = tmp_path / "team.git", tmp_path / "private.git"
    init_remote(team_remote)
    init_remote(private_remote)
    # A teammate publishes the team store; the person clones it as their team scope.
    teammate = tmp_path / "teammate"
    assert call(capsys, "init", str(teammate), "--json")[0] == 0
    git(teammate, "remote", "add", "origin", team_remote.as_uri())
    write(capsys, teammate, "Staging restarts", TEAMMATE_CLAIM)
    _sync(capsys, teammate)
    team = tmp_path / "person" / "team"
    code, cloned = call(capsys, "clone", team_remote.as_uri(), str(team), "--json")
    assert code == 0, cloned
    own = tmp_path / "person" / "private"
    assert call(capsys, "init", str(own), "--json")[0] == 0
    git(own, "remote", "add", "origin", private_remote.as_uri())
    (xdg / "memhtml" / "config.toml").write_text(
        f'[scopes.team]\npath = "{team}"\nwritable = true\n', encoding="utf-8")

    private_paths = [write(capsys, own, f"Private {n}", claim)
                     for n, claim in enumerate(PRIVATE_CLAIMS)]
    team_path = write(capsys, own, "Deploy day", TEAM_CLAIM, "--scope", "team")
    assert (team / team_path).is_file() and not (own / team_path).exists()

    pushed = _sync(capsys, own, "--scope", "team")
    assert pushed["pushed"] is True, pushed
    _sync(capsys, own)

    assert set(memory_claims(team_remote).values()) == {TEAMMATE_CLAIM, TEAM_CLAIM}
    assert set(memory_claims(private_remote).values()) == set(PRIVATE_CLAIMS)
    private = pygit2.Repository(str(own))
    # Commits are deterministic: two stores initialised in the same second by the same
    # person share their layout commits, so only what the teammate's store never held
    # counts as the private store's.
    teammates = _all_objects(teammate / ".git")
    private_commits = {str(c.id) for c in private.walk(private.head.target)} - teammates
    assert len(private_commits) >= len(PRIVATE_CLAIMS)
    private_blobs = {str(private.revparse_single(f"HEAD:{p}").id) for p in private_paths}
    for bare in (team_remote, team):
        held = _all_objects(bare)
        assert not held & private_commits, "no commit of the private store"
        assert not held & private_blobs, "no memory of the private store"
    reachable = _reachable(team_remote)
    repo = pygit2.Repository(str(team_remote))
    for oid in reachable:
        obj = repo[oid]
        if isinstance(obj, pygit2.Blob):
            text = obj.data.decode("utf-8", errors="replace")
            assert not any(claim in text for claim in PRIVATE_CLAIMS), oid
    # The teammate pulls the team scope's write, and nothing else of the person's.
    _sync(capsys, teammate)
    assert (teammate / team_path).is_file()
    assert set(memory_claims(teammate).values()) == {TEAMMATE_CLAIM, TEAM_CLAIM}
