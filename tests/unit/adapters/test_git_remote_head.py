"""A remote's HEAD is pointed only where git would reach the repository through the
file system, only in a bare repository, only when it names a missing branch, and only
when the pushed branch there is at the commit just pushed."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from memhtml.adapters.git_remote_head import local_path, point_missing_head

WHERE = Path("/home/a/store")


@pytest.mark.parametrize(("url", "path"), [
    ("/srv/R.git", Path("/srv/R.git")),
    ("../R.git", WHERE / "../R.git"),
    ("R.git", WHERE / "R.git"),
    ("./a:b", WHERE / "./a:b"),
    ("file:///srv/R.git", Path("/srv/R.git")),
    ("FILE:///srv/R.git", Path("/srv/R.git")),
    ("file://localhost/srv/R.git", Path("/srv/R.git")),
    ("file:///srv/a%20b.git", Path("/srv/a b.git")),
    ("file://../R.git", None),
    ("file://other/srv/R.git", None),
    ("host:R.git", None),
    ("user@host:srv/R.git", None),
    ("ssh://host/srv/R.git", None),
    ("git://host/R.git", None),
    ("https://host/R.git", None),
    ("ext::sh -c true", None),
])
def test_a_url_is_local_exactly_where_git_reads_a_path(url: str, path: Path | None) -> None:
    assert local_path(url, WHERE) == path


def _bare(tmp_path: Path, head: str = "master") -> tuple[pygit2.Repository, str]:
    """A bare repository whose HEAD names ``head``, with ``main`` at one commit."""
    repo = pygit2.init_repository(str(tmp_path / "R.git"), bare=True, initial_head=head)
    who = pygit2.Signature("t", "t@example.org", 0, 0)
    tree = repo.TreeBuilder().write()
    sha = repo.create_commit("refs/heads/main", who, who, "one", tree, [])
    return repo, str(sha)


def _head(repo: pygit2.Repository) -> str:
    target = pygit2.Repository(repo.path).references["HEAD"].target
    assert isinstance(target, str)
    return target


def test_a_head_naming_a_missing_branch_is_pointed_at_the_pushed_one(tmp_path: Path) -> None:
    repo, sha = _bare(tmp_path)
    assert point_missing_head(Path(repo.path), "main", sha) == "master"
    assert _head(repo) == "refs/heads/main"
    assert point_missing_head(Path(repo.path), "main", sha) is None, "once is enough"


def test_a_head_naming_a_branch_the_remote_has_is_never_moved(tmp_path: Path) -> None:
    repo, sha = _bare(tmp_path)
    who = pygit2.Signature("t", "t@example.org", 0, 0)
    repo.create_commit("refs/heads/master", who, who, "two", repo.TreeBuilder().write(), [])
    assert point_missing_head(Path(repo.path), "main", sha) is None
    assert _head(repo) == "refs/heads/master"


def test_another_commit_there_means_another_repository(tmp_path: Path) -> None:
    repo, _ = _bare(tmp_path)
    assert point_missing_head(Path(repo.path), "main", "0" * 40) is None
    assert point_missing_head(Path(repo.path), "other", "0" * 40) is None
    assert _head(repo) == "refs/heads/master"


def test_a_checkout_s_head_is_the_person_s(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "R"), initial_head="master")
    who = pygit2.Signature("t", "t@example.org", 0, 0)
    sha = repo.create_commit("refs/heads/main", who, who, "one", repo.TreeBuilder().write(), [])
    assert point_missing_head(tmp_path / "R", "main", str(sha)) is None
    assert _head(repo) == "refs/heads/master"


def test_a_detached_head_is_left_alone(tmp_path: Path) -> None:
    repo, sha = _bare(tmp_path)
    repo.set_head(pygit2.Oid(hex=sha))
    assert point_missing_head(Path(repo.path), "main", sha) is None
    assert repo.head_is_detached
