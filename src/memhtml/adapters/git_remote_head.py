"""A remote's HEAD: pointed at the store's branch when it names one the remote lacks.

``git init --bare`` makes a repository whose HEAD names ``master`` (or whatever the
person's ``init.defaultBranch`` says) and no branch at all. A store pushed there
lives on ``main``, so the remote's HEAD goes on naming a branch that does not exist:
``git clone`` then checks nothing out, and what a clone finds by following HEAD is
nothing. git has no way to set a remote's HEAD by pushing (the protocol carries
refs, not HEAD), so it can be set only where the remote is a repository on this
machine, through the file system, as ``git symbolic-ref`` in it would.

Only a bare repository's HEAD is touched: a checkout's HEAD is what its working tree
is on, the person's. Only a HEAD that names a missing branch: one naming a branch the
remote has is the remote's choice. And only when the pushed branch there is at the
commit just pushed, so a path that names another repository than the one git pushed
to (a URL read wrongly here) is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pygit2

from memhtml.adapters.git_names import reference

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def local_path(url: str, where: Path) -> Path | None:
    """The repository on this machine that ``url`` names, as git reads it when run in
    ``where``; None for a remote reached through a transport (ssh, https, git, a
    remote helper).

    git takes a URL with a scheme as a URL (``file://`` is this machine: an absolute
    path, percent-escapes decoded, ``localhost`` or no host), and a string whose
    first colon comes before any slash as ssh's ``host:path``; anything else is a
    path, relative to where git runs."""
    if _SCHEME.match(url):
        scheme, _, rest = url.partition("://")
        if scheme.lower() != "file":
            return None
        rest = rest.removeprefix("localhost")
        return Path(unquote(rest)) if rest.startswith("/") else None
    colon, slash = url.find(":"), url.find("/")
    if colon != -1 and (slash == -1 or colon < slash):
        return None
    return where / url


def point_missing_head(repository: Path, branch: str, sha: str) -> str | None:
    """Point the HEAD of the bare repository at ``repository`` at ``branch`` when HEAD
    names a branch that repository does not have and ``branch`` there is at ``sha``;
    the branch HEAD named before, or None when nothing was changed.

    The change is a compare-and-swap on HEAD itself (libgit2 refuses it if HEAD was
    repointed meanwhile). Whether the branch HEAD names was created in the instant
    between the look and the swap cannot be locked out from here; the window is the
    length of one ref write.

    Raises ``pygit2.GitError``, ``OSError`` or ``ValueError`` when the repository
    cannot be opened or HEAD cannot be written."""
    repo = pygit2.Repository(str(repository), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    if not repo.is_bare:
        return None
    head = reference(repo, "HEAD")
    named = None if head is None else head.target
    if not isinstance(named, str) or not named.startswith("refs/heads/"):
        return None
    if reference(repo, named) is not None:
        return None
    pushed = reference(repo, f"refs/heads/{branch}")
    if pushed is None or str(pushed.resolve().target) != sha:
        return None
    assert head is not None
    head.set_target(f"refs/heads/{branch}",
                    f"memhtml sync: HEAD named {named}, which does not exist")
    return named.removeprefix("refs/heads/")
