"""Remote branches holding whatever a hostile collaborator can push: trees written
object by object (so a name libgit2's builders refuse, ``..`` or ``.GIT`` or a
300-byte segment, goes in as bytes), committed in an attacker's own repository and
pushed to the shared remote with plain ``git push``, as another machine would.

``push_tree`` takes the commit to build on from any repository that has it (the
victim's clone for a descendant of its branch, the remote for an older commit), lays
the given entries over its tree, and force-pushes the result to the remote's branch.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, ObjectType

from tests.integration.sync.sync_support import git

ATTACKER = pygit2.Signature("mallory", "mallory@example.invalid", 1_900_000_000, 0)
FILE = int(FileMode.BLOB)
LINK = int(FileMode.LINK)
TREE = int(FileMode.TREE)


@dataclass(frozen=True)
class Entry:
    """One file of a pushed tree: its bytes and mode (``LINK`` for a symbolic link,
    whose bytes are its target)."""

    data: bytes
    mode: int = FILE


_Node = dict[str, "tuple[int, pygit2.Oid] | _Node"]


def _read(repo: pygit2.Repository, tree: pygit2.Tree) -> _Node:
    node: _Node = {}
    for entry in tree:
        name = entry.name or ""
        if entry.filemode == FileMode.TREE:
            node[name] = _read(repo, repo[entry.id].peel(pygit2.Tree))
        else:
            node[name] = (int(entry.filemode), entry.id)
    return node


def _write(repo: pygit2.Repository, node: _Node) -> pygit2.Oid:
    """A tree object built byte by byte, entries in git's order (a tree sorts as if
    its name ended in ``/``)."""
    rows: list[tuple[bytes, bytes]] = []
    for name, value in node.items():
        raw = name.encode("utf-8", "surrogateescape")
        if isinstance(value, dict):
            rows.append((raw + b"/", f"{TREE:o} ".encode() + raw + b"\0" + _write(repo, value).raw))
        else:
            mode, oid = value
            rows.append((raw, f"{mode:o} ".encode() + raw + b"\0" + oid.raw))
    body = b"".join(row for _, row in sorted(rows))
    return repo.odb.write(ObjectType.TREE, body)


def _lay(repo: pygit2.Repository, node: _Node, path: str, entry: Entry | None) -> None:
    *folders, name = path.split("/")
    here = node
    for folder in folders:
        found = here.get(folder)
        if not isinstance(found, dict):
            found = {}
            here[folder] = found
        here = found
    if entry is None:
        here.pop(name, None)
    else:
        here[name] = (entry.mode, repo.create_blob(entry.data))


@dataclass(frozen=True)
class Attacker:
    """A repository of the attacker's own, and the remote it pushes to."""

    root: Path
    remote: str
    """A path or URL plain git pushes to."""
    branch: str = "main"

    @classmethod
    def beside(cls, root: Path, remote: str, branch: str = "main") -> Attacker:
        pygit2.init_repository(str(root), bare=True)
        return cls(root, remote, branch)

    def push_tree(self, source: str, parent: str, files: Mapping[str, Entry | None],
                  subject: str = "hostile") -> str:
        """Fetch ``parent`` from ``source``, commit its tree with ``files`` laid over it
        (``None`` removes a path), and force-push the commit to the remote's branch."""
        git(self.root, "fetch", "-q", source, f"+{parent}:refs/base")
        repo = pygit2.Repository(str(self.root))
        base = repo.revparse_single("refs/base").peel(pygit2.Commit)
        node = _read(repo, base.tree)
        for path, entry in files.items():
            _lay(repo, node, path, entry)
        made = repo.create_commit(None, ATTACKER, ATTACKER, subject, _write(repo, node),
                                  [base.id])
        pushed = subprocess.run(
            ["git", "-C", str(self.root), "push", "-q", "--force", self.remote,
             f"{made}:refs/heads/{self.branch}"], capture_output=True, text=True, check=False)
        assert pushed.returncode == 0, pushed.stderr
        return str(made)


def tip(root: Path, ref: str = "refs/heads/main") -> str | None:
    """The commit a repository's branch names, or None."""
    found = pygit2.Repository(str(root)).references.get(ref)
    return None if found is None else str(found.target)


def checkout_state(root: Path) -> tuple[str, str, tuple[str, ...]]:
    """What a person sees of a checkout: HEAD, ``git status``, and every file under it
    (git's directory aside), so a test can tell that nothing in it moved."""
    files = tuple(sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                         if ".git" not in p.relative_to(root).parts[:1]))
    return (git(root, "rev-parse", "HEAD").strip(),
            git(root, "status", "--porcelain=v1", "--untracked-files=all"), files)


def tree_paths(root: Path, ref: str = "main") -> set[str]:
    return set(git(root, "ls-tree", "-r", "-z", "--name-only", ref).split("\0")) - {""}


def removed(paths: Iterable[str]) -> dict[str, Entry | None]:
    return dict.fromkeys(paths)
