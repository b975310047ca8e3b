"""``RemoteService``: fetch and push through the git executable, local refs through pygit2.

Transport runs the ``git`` program, not libgit2's remotes: only git itself reads the
person's credential helpers, ``core.sshCommand``, ``url.<base>.insteadOf`` and ssh agent
set-up, so a remote that works with ``git push`` works here (libgit2's transports,
and so any credential callback of pygit2's, are never used). Each run is
``git --git-dir <dir> -C <where> ...`` with no shell, ``LC_ALL=C`` (git's messages are
parsed), ``GIT_TERMINAL_PROMPT=0``, no askpass program (``GIT_ASKPASS`` set empty,
which also overrides ``core.askPass``; ``SSH_ASKPASS`` dropped) and no standard input or
controlling terminal, so a missing credential fails at once instead of waiting for a
person (an MCP server has none to ask), and a timeout kills anything else that hangs.
Variables that would point git at another repository (``GIT_DIR`` and kin) are dropped.

Credentials stay git's: a credential helper supplies them, and a URL carrying a
password is refused by ``clone_repository`` before git could write it into
``.git/config``. Every line of git's output that reaches an error or a progress
callback has the user information of any URL in it replaced (``redact_credentials``).

``<where>`` is where the person's own ``git fetch`` would stand: the top of a
checkout's working tree (git moves there from any folder of it), or a bare repository
itself. git resolves a relative remote URL (``../R.git``, a ``pushurl``, what an
``insteadOf`` makes) against its current directory, so run from inside ``.git`` the
same remote would name another path, or none.

pygit2 serves what is local: the remote names of this clone's config
(``Repository.remotes``), reading and moving ``refs/remotes/<remote>/<branch>``, and
looking up the commit a push sends. Remote names and URLs therefore come from the
clone's own config, never from a tracked file.

A push is plain (no ``+``, no ``--force``, no lease flag, any of which lets git
overwrite a branch that did not fast-forward). The remote's branch is read first
(``git ls-remote``) and the push is refused before anything is sent unless it names
``expected``; git then sends that tip as the old value, and refuses a non-fast-forward
itself. Should the branch move between the read and the push, git either refuses (the
new tip is not in the pushed history) or fast-forwards from a commit the pushed history
already holds: either way no commit on the remote is lost. A refused push says why:
``PushRejected`` when the remote moved (retryable), ``PushDeclined`` when the remote's
own policy refused it (a hook), ``PushForbidden`` when the credentials may not push.

A fetch moves the tracking ref only as a fast-forward (no ``+`` on its refspec): a
remote branch that no longer holds the commit this clone last saw there was rewound
by someone, and the fetch says so (``RemoteRewound``) with the tracking ref kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.git_names import reference
from memhtml.adapters.git_remote_head import local_path, point_missing_head
from memhtml.contracts.credentials import redact_credentials, url_password
from memhtml.contracts.errors import (
    GitFailure,
    NotFound,
    PushDeclined,
    PushForbidden,
    PushRejected,
    RemoteError,
    RemoteMissing,
    RemoteRewound,
    TransportFailed,
)
from memhtml.contracts.services import Progress

DEFAULT_TIMEOUT_S = 300.0
"""How long one fetch or push may run before it is killed."""

_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_LINE_BREAK = re.compile(rb"[\r\n]")
_MESSAGE_LINES = 20
"""How many of git's last stderr lines an error carries."""
_NO_REMOTE_REF = "couldn't find remote ref"
_REPOSITORY_VARIABLES = frozenset({
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_PREFIX",
})
"""Inherited (from a hook, say) they would make git act on another repository."""
_NO_ASKPASS = {"GIT_ASKPASS": "", "SSH_ASKPASS_REQUIRE": "never", "GCM_INTERACTIVE": "never"}
"""An empty ``GIT_ASKPASS`` is git's "no askpass program", ``core.askPass`` included;
ssh and Git Credential Manager are told not to open a prompt of their own."""
_FORBIDDEN = re.compile(
    r"returned error: 40[13]\b|Authentication failed|could not read (Username|Password)"
    r"|Permission to \S+ denied|permission denied|not allowed to push|HTTP 40[13]\b",
    re.IGNORECASE)
"""git's words (LC_ALL=C) for a push the server refused to these credentials: HTTP
401 or 403, a credential that did not authenticate, none to give, a host's own
"permission denied"."""
_RACE = re.compile(r"cannot lock ref|failed to lock|unable to lock|failed to update ref"
                   r"|incorrect old value|stale info")
"""What receive-pack says when another push moved the branch during this one: a
``[remote rejected]`` that another round can win."""
_NON_FAST_FORWARD = "(non-fast-forward)"


@dataclass(frozen=True, slots=True)
class _Run:
    """One git run: its exit status (None: killed at the timeout), stdout, and the
    last lines of stderr."""

    status: int | None
    stdout: str
    stderr: tuple[str, ...]

    @property
    def message(self) -> str:
        return "\n".join(self.stderr) or f"git exited with status {self.status}"


def git_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without what would point git at another repository, in the C locale."""
    env = {key: value for key, value in base.items() if key not in _REPOSITORY_VARIABLES}
    env.pop("LANGUAGE", None)
    env.pop("SSH_ASKPASS", None)
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", **_NO_ASKPASS)
    return env


def _run_git(git_dir: Path | None, args: Sequence[str], timeout_s: float,
            on_progress: Progress | None = None,
            env: Mapping[str, str] | None = None, run_in: Path | None = None) -> _Run:
    """Run ``git args`` on ``git_dir`` (None: on no repository, for a clone) from the
    directory ``run_in`` (None: ``git_dir`` itself); each stderr line goes to
    ``on_progress`` as it arrives (progress meters redraw with a carriage return, so
    both breaks end a line).

    Raises ``OSError`` when the program cannot be started."""
    where = [] if git_dir is None else [
        "--git-dir", str(git_dir), "-C", str(run_in if run_in is not None else git_dir)]
    command = ["git", *where, *args]
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=git_environment(os.environ if env is None else env),
        # A session of its own: ssh cannot open the terminal to ask for a passphrase.
        start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _kill_group(proc)

    stdout, stderr = proc.stdout, proc.stderr
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(stdout.read()), daemon=True)
    deadline = time.monotonic() + timeout_s
    watchdog = threading.Timer(timeout_s, expire)
    lines: deque[str] = deque(maxlen=_MESSAGE_LINES)
    try:
        reader.start()
        watchdog.start()
        pending = b""
        while chunk := os.read(stderr.fileno(), 4096):
            *done, pending = _LINE_BREAK.split(pending + chunk)
            for raw in done:
                _take(raw, lines, on_progress)
        _take(pending, lines, on_progress)
        # The watchdog is stopped before git is reaped, so it can never signal a
        # process group whose id has been given to another process since.
        watchdog.cancel()
        watchdog.join()
        try:
            status = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            expire()
            status = proc.wait()
        reader.join()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            _kill_group(proc)
            proc.wait()
        stdout.close()
        stderr.close()
    if timed_out.is_set():
        lines.append(f"timed out after {timeout_s:g} s")
        return _Run(None, "", tuple(lines))
    return _Run(status, b"".join(out).decode("utf-8", "replace"), tuple(lines))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill git and what it started (ssh, a remote helper, upload-pack): a child left
    running would hold the stderr pipe open and the read would never end."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _take(raw: bytes, lines: deque[str], on_progress: Progress | None) -> None:
    line = redact_credentials(raw.decode("utf-8", "replace").strip())
    if not line:
        return
    lines.append(line)
    if on_progress is not None:
        on_progress(line)


class GitRemotes:
    """The remotes of the repository at ``git_dir``; each fetch or push runs at most
    ``timeout_s`` seconds."""

    def __init__(self, git_dir: str | os.PathLike[str],
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._git_dir = Path(git_dir)
        self._timeout_s = timeout_s

    def _repo(self) -> pygit2.Repository:
        # Opened per call: refs and config are re-read, since the git program changes
        # them behind any handle kept open.
        return pygit2.Repository(str(self._git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)

    def remotes(self) -> IOResult[tuple[str, ...], RemoteError]:
        names = self._names()
        return IOFailure(names) if isinstance(names, GitFailure) else IOSuccess(names)

    def fetch(self, remote: str, branch: str, on_progress: Progress | None = None
              ) -> IOResult[str | None, RemoteError]:
        checked = self._check(remote, branch, "fetch")
        if checked is not None:
            return IOFailure(checked)
        tracking = f"refs/remotes/{remote}/{branch}"
        # Not forced: the tracking ref records what this clone last saw, and a remote
        # branch that does not descend from it was rewound (see ``_rewound``).
        run = self._git(remote, "fetch", [
            "fetch", "--no-tags", "--recurse-submodules=no",
            *(["--progress"] if on_progress is not None else []), "--end-of-options",
            remote, f"refs/heads/{branch}:{tracking}"], on_progress)
        if isinstance(run, TransportFailed):
            return IOFailure(run)
        if run.status != 0:
            if any(_NON_FAST_FORWARD in line for line in run.stderr):
                return self._rewound(remote, branch, tracking, run)
            if not any(_NO_REMOTE_REF in line for line in run.stderr):
                return IOFailure(TransportFailed(remote, "fetch", run.message))
            return self._set_tracking("fetch", tracking, None).map(lambda _: None)
        return self._read_tracking(tracking)

    def _rewound(self, remote: str, branch: str, tracking: str, run: _Run
                 ) -> IOResult[str | None, RemoteError]:
        """The fetch found ``branch`` not descending from the tracking ref: what it
        found is in ``FETCH_HEAD`` (git writes it before refusing the ref update)."""
        found = self._git(remote, "fetch", [
            "rev-parse", "--verify", "--quiet", "--end-of-options", "FETCH_HEAD^{commit}"])
        sha = "" if isinstance(found, TransportFailed) or found.status != 0 else (
            found.stdout.strip())
        if not _FULL_SHA.fullmatch(sha):
            return IOFailure(TransportFailed(remote, "fetch", run.message))
        return self._read_tracking(tracking).bind(
            lambda seen: IOFailure(RemoteRewound(remote, branch, seen, sha)) if seen
            else IOFailure(TransportFailed(remote, "fetch", run.message)))

    def push(self, remote: str, branch: str, sha: str, expected: str | None,
             on_progress: Progress | None = None) -> IOResult[None, RemoteError]:
        checked = self._check(remote, branch, "push")
        if checked is not None:
            return IOFailure(checked)
        for value in (sha, expected):
            if value is not None and not _FULL_SHA.fullmatch(value):
                return IOFailure(GitFailure("push", f"not a full lowercase sha: {value!r}"))
        if not self._has_commit(sha):
            return IOFailure(NotFound(f"commit {sha!r}"))
        head = f"refs/heads/{branch}"
        listed = self._git(remote, "push", ["ls-remote", "--end-of-options", remote, head])
        if isinstance(listed, TransportFailed):
            return IOFailure(listed)
        if listed.status != 0:
            return IOFailure(TransportFailed(remote, "push", listed.message))
        actual = next((line.split("\t")[0] for line in listed.stdout.splitlines()
                       if line.endswith(f"\t{head}")), None)
        if actual != expected:
            return IOFailure(PushRejected(
                remote, branch, f"{remote}/{branch} is at {actual or '(no branch)'}, not "
                                f"{expected or '(no branch)'}: fetch and merge again"))
        run = self._git(remote, "push", [
            "push", "--porcelain", "--no-recurse-submodules",
            *(["--progress"] if on_progress is not None else []), "--end-of-options",
            remote, f"{sha}:{head}"], on_progress)
        if isinstance(run, TransportFailed):
            return IOFailure(run)
        refused = [redact_credentials(line.split("\t")[-1])
                   for line in run.stdout.splitlines() if line.startswith("!\t")]
        if refused:
            return IOFailure(self._refused(remote, branch, refused, run))
        if run.status != 0:
            if any(_FORBIDDEN.search(line) for line in run.stderr):
                return IOFailure(PushForbidden(remote, branch, self._push_url(remote),
                                               run.message))
            return IOFailure(TransportFailed(remote, "push", run.message))
        return self._set_tracking("push", f"refs/remotes/{remote}/{branch}", sha)

    def _refused(self, remote: str, branch: str, refused: list[str], run: _Run
                 ) -> RemoteError:
        """A push git reported as refused: lost to another push (retryable), or
        declined by the remote's own policy, told with what its hook printed."""
        declined = [reason for reason in refused
                    if "[remote rejected]" in reason and not _RACE.search(reason)]
        if not declined:
            return PushRejected(remote, branch, "; ".join(refused))
        said = [line for line in run.stderr if line.startswith("remote:")]
        return PushDeclined(remote, branch, self._push_url(remote),
                            "; ".join([*declined, *said]))

    def _push_url(self, remote: str) -> str:
        """The URL a push to ``remote`` goes to, credentials taken out; the remote's
        name when git cannot say."""
        listed = self._git(remote, "push", [
            "remote", "get-url", "--push", "--end-of-options", remote])
        if isinstance(listed, TransportFailed) or listed.status != 0:
            return remote
        return redact_credentials(listed.stdout.strip()) or remote

    def point_head(self, remote: str, branch: str, sha: str) -> IOResult[str | None, RemoteError]:
        """Point ``remote``'s HEAD at ``branch`` where git cannot: when it is a bare
        repository on this machine whose HEAD names a branch it does not have, and
        ``branch`` there is at ``sha`` (see ``git_remote_head``). The branch HEAD named
        before, or None when nothing was changed. The URLs are git's own answer
        (``git remote get-url --push --all``: ``pushurl`` and ``insteadOf`` applied),
        each read as git reads it from where it runs."""
        checked = self._check(remote, branch, "point HEAD")
        if checked is not None:
            return IOFailure(checked)
        listed = self._git(remote, "point HEAD", [
            "remote", "get-url", "--push", "--all", "--end-of-options", remote])
        if isinstance(listed, TransportFailed):
            return IOFailure(listed)
        if listed.status != 0:
            return IOFailure(TransportFailed(remote, "point HEAD", listed.message))
        where = self._where()
        pointed: str | None = None
        for url in listed.stdout.splitlines():
            path = local_path(url, where)
            if path is None or not path.is_dir():
                continue
            try:
                pointed = point_missing_head(path, branch, sha) or pointed
            except (pygit2.GitError, OSError, ValueError) as exc:
                return IOFailure(GitFailure("point HEAD", f"{url}: {exc}"))
        return IOSuccess(pointed)

    def tracked_branches(self, remote: str) -> IOResult[Mapping[str, str], RemoteError]:
        """What this clone last saw on ``remote``: each branch its tracking refs
        (``refs/remotes/<remote>/...``) record, with its commit; ``<remote>/HEAD``,
        a pointer at one of them, is not a branch."""
        prefix = f"refs/remotes/{remote}/"
        try:
            repo = self._repo()
            found = {name.removeprefix(prefix): str(ref.target)
                     for name in repo.references
                     if name.startswith(prefix) and name != f"{prefix}HEAD"
                     and isinstance((ref := repo.references[name]).target, pygit2.Oid)}
        except (pygit2.GitError, ValueError, OSError) as exc:
            return IOFailure(GitFailure("branches", f"{prefix}*: {exc}"))
        return IOSuccess(dict(sorted(found.items())))

    # -- internals -------------------------------------------------------------------

    def _check(self, remote: str, branch: str, operation: str) -> RemoteError | None:
        """Why ``remote`` and ``branch`` cannot be used, or None."""
        if not pygit2.reference_is_valid_name(f"refs/heads/{branch}") or branch.startswith("-"):
            return GitFailure(operation, f"not a valid branch name: {branch!r}")
        names = self._names()
        if isinstance(names, GitFailure):
            return names
        if remote not in names:
            listed = ", ".join(names) or "none"
            return RemoteMissing(remote, f"no remote named {remote!r} (configured: {listed}); "
                                         f"add it with: git remote add {remote} <url>")
        return None

    def _names(self) -> tuple[str, ...] | GitFailure:
        try:
            return tuple(sorted(name for name in self._repo().remotes.names() if name))
        except (pygit2.GitError, OSError) as exc:
            return GitFailure("remotes", str(exc))

    def _git(self, remote: str, operation: str, args: Sequence[str],
             on_progress: Progress | None = None) -> _Run | TransportFailed:
        try:
            run = _run_git(self._git_dir, args, self._timeout_s, on_progress,
                           run_in=self._where())
        except OSError as exc:
            return TransportFailed(remote, operation, f"cannot run git: {exc}")
        return TransportFailed(remote, operation, run.message) if run.status is None else run

    def _where(self) -> Path:
        """Where git runs: the checkout's working tree (libgit2's answer, which follows
        ``core.worktree`` and a linked worktree's ``gitdir`` as git does), or the bare
        repository itself. A relative remote URL is git's to resolve from there."""
        try:
            workdir = self._repo().workdir
        except (pygit2.GitError, OSError):
            return self._git_dir
        return Path(workdir) if workdir else self._git_dir

    def _has_commit(self, sha: str) -> bool:
        try:
            found = self._repo().get(sha)
        except (pygit2.GitError, ValueError, OSError):
            return False
        return found is not None and found.type == pygit2.enums.ObjectType.COMMIT

    def _read_tracking(self, tracking: str) -> IOResult[str | None, RemoteError]:
        try:
            found = reference(self._repo(), tracking)
            return IOSuccess(None if found is None else str(found.peel(pygit2.Commit).id))
        except (pygit2.GitError, ValueError, OSError) as exc:
            return IOFailure(GitFailure("fetch", f"{tracking}: {exc}"))

    def _set_tracking(self, operation: str, tracking: str, sha: str | None
                      ) -> IOResult[None, RemoteError]:
        """Point the tracking ref at ``sha`` (None: remove it, the remote has no such
        branch): it records what the remote was last seen to hold."""
        try:
            repo = self._repo()
            if sha is not None:
                repo.references.create(tracking, sha, force=True)
            elif (found := reference(repo, tracking)) is not None:
                found.delete()
        except (pygit2.GitError, ValueError, OSError) as exc:
            return IOFailure(GitFailure(operation, f"{tracking}: {exc}"))
        return IOSuccess(None)


def clone_repository(url: str, target: Path, branch: str | None = None,
                     timeout_s: float = 600.0, on_progress: Progress | None = None
                     ) -> IOResult[None, RemoteError]:
    """``git clone`` of ``url`` into the new or empty directory ``target`` (on
    ``branch``, else the remote's default), through the git program for the same
    reasons as fetch and push: git's own credentials and transports. A clone runs
    nothing of the remote's: hooks are never cloned, submodules are not fetched, and a
    filter named in a cloned ``.gitattributes`` runs only if the person's own config
    defines it."""
    shown = redact_credentials(url)
    if url.startswith("-") or (branch or "").startswith("-"):
        return IOFailure(TransportFailed(shown, "clone", "a URL or branch cannot start with '-'"))
    if url_password(url) is not None:
        # git clone would record the URL, password and all, as remote.<name>.url.
        return IOFailure(TransportFailed(shown, "clone", (
            "the URL carries a password or token, which git clone would write as-is into "
            ".git/config; give it to git's credential helper instead (git config --global "
            "credential.helper store, or your system's keychain helper; then printf "
            "'url=URL\\nusername=NAME\\npassword=TOKEN\\n' | git credential approve) "
            "and clone the URL without it")))
    args = ["clone", "--progress", "--no-recurse-submodules"]
    args += ["--branch", branch] if branch else []
    try:
        run = _run_git(None, [*args, "--", url, str(target)], timeout_s, on_progress)
    except OSError as error:
        return IOFailure(TransportFailed(shown, "clone", f"cannot run git: {error}"))
    if run.status != 0:
        return IOFailure(TransportFailed(shown, "clone", run.message))
    return IOSuccess(None)


def check_out_tracked(target: Path, remote: str, branch: str, timeout_s: float = 600.0,
                      on_progress: Progress | None = None) -> IOResult[None, RemoteError]:
    """In the clone at ``target`` (just made: nothing of the person's is in it yet),
    make ``branch`` from ``remote``'s branch of that name, tracking it, and check it
    out: what ``git clone --branch`` would have done. For a clone whose remote's HEAD
    named a branch it lacks (nothing was checked out) or one that is not the store's."""
    run_in = ["-C", str(target)]
    start = f"refs/remotes/{remote}/{branch}"
    try:
        run = _run_git(None, [*run_in, "switch", "--progress", "--no-guess", "--create",
                              branch, "--track", "--end-of-options", start],
                       timeout_s, on_progress)
    except OSError as error:
        return IOFailure(GitFailure(f"switch {branch}", f"cannot run git: {error}"))
    if run.status != 0:
        return IOFailure(GitFailure(f"switch {branch}", run.message))
    return IOSuccess(None)


def discard_clone(target: Path, made: bool) -> None:
    """Take away a clone that was refused after ``git clone`` made it, as git does with
    a clone that fails: ``target`` removed when the clone made it, else emptied (it
    was given empty, and the command checked). Best effort: what cannot be removed
    stays, and the refusal is still what the person reads."""
    if made:
        shutil.rmtree(target, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        for entry in target.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
