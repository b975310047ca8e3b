"""A smart-HTTP git server on loopback: git's own ``git-http-backend`` behind lighttpd,
with basic auth from a plain users file.

Two members: ``writer`` may read and push; ``reader`` may read, and a push of theirs
(or of any user whose name starts with ``reader``, added with ``add_user``) is
refused by the server with HTTP 403, as a hosting service refuses a token without
write access. The refusal is the server's configuration (a CGI wrapper in front of
the backend that looks at the authenticated user), not anything the client is told.
A request with no or wrong credentials gets lighttpd's 401.

Used as a pytest fixture (``http_git``) and by ``bench.team``: ``HttpGitServer.start``
makes the configuration in a directory of its own, picks a free port, waits until the
server answers, and ``stop`` ends it. Skipped, with the reason, where lighttpd or
``git-http-backend`` is not installed (``apt-get install lighttpd``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
import pytest

LIGHTTPD = "lighttpd"
BACKEND_DIRS = ("/usr/lib/git-core", "/usr/libexec/git-core")
WRITER = ("writer", "writer-secret-3141")
READER = ("reader", "reader-secret-2718")
START_TIMEOUT_S = 20.0

_WRAPPER = """#!/bin/sh
# The read-only member's pushes are refused here, before git-http-backend runs.
case "$REMOTE_USER" in
  {reader}*) case "$PATH_INFO?$QUERY_STRING" in
    *git-receive-pack*)
      printf 'Status: 403 Forbidden\\r\\nContent-Type: text/plain\\r\\n\\r\\n'
      printf '{reader} may read this repository, not push to it\\n'
      exit 0;;
  esac;;
esac
exec {backend}
"""

_CONFIG = """server.modules = ("mod_auth", "mod_authn_file", "mod_cgi", "mod_setenv", "mod_alias")
server.document-root = "{root}/www"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{root}/error.log"
server.max-request-size = 0
alias.url = ("/git/" => "{root}/backend.sh/")
cgi.assign = ("" => "")
setenv.add-environment = ("GIT_PROJECT_ROOT" => "{repos}", "GIT_HTTP_EXPORT_ALL" => "1")
auth.backend = "plain"
auth.backend.plain.userfile = "{root}/users"
auth.require = ("/git/" => ("method" => "basic", "realm" => "memhtml test",
                            "require" => "valid-user"))
"""


def backend_path() -> Path | None:
    """Where this machine keeps ``git-http-backend``, or None."""
    for directory in BACKEND_DIRS:
        found = Path(directory) / "git-http-backend"
        if found.is_file():
            return found
    return None


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    if shutil.which(LIGHTTPD) is None and not Path("/usr/sbin/lighttpd").is_file():
        return "lighttpd is not installed (apt-get install lighttpd)"
    if backend_path() is None:
        return "git-http-backend is not installed (it comes with git)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class HttpGitServer:
    """One running server; ``repos`` is the directory it serves under ``/git/``."""

    root: Path
    port: int
    process: subprocess.Popen[bytes]
    repos: Path = field(init=False)

    def __post_init__(self) -> None:
        self.repos = self.root / "repos"

    @classmethod
    def start(cls, root: Path) -> HttpGitServer:
        """Write the configuration under ``root`` (made) and start lighttpd on a free
        loopback port; raises ``RuntimeError`` when it does not come up."""
        backend = backend_path()
        program = shutil.which(LIGHTTPD) or "/usr/sbin/lighttpd"
        if backend is None:
            raise RuntimeError("git-http-backend is not installed")
        root.mkdir(parents=True, exist_ok=True)
        for name in ("www", "repos"):
            (root / name).mkdir(exist_ok=True)
        wrapper = root / "backend.sh"
        wrapper.write_text(_WRAPPER.format(reader=READER[0], backend=backend))
        wrapper.chmod(0o755)
        (root / "users").write_text(f"{WRITER[0]}:{WRITER[1]}\n{READER[0]}:{READER[1]}\n")
        # A port taken between the probe and lighttpd's bind makes it exit: try again.
        last = ""
        for _ in range(5):
            port = _free_port()
            config = root / "lighttpd.conf"
            config.write_text(_CONFIG.format(root=root, port=port, repos=root / "repos"))
            process = subprocess.Popen([program, "-D", "-f", str(config)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if _listening(port, process):
                return cls(root, port, process)
            if process.poll() is None:
                process.kill()
            last = process.communicate()[1].decode("utf-8", "replace")
        raise RuntimeError(f"lighttpd did not start: {last}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()

    def url(self, name: str, who: tuple[str, str] | None = None) -> str:
        """The URL of the served repository ``name``, with ``who``'s credentials in it
        (for the tests that check they never show), else without."""
        userinfo = f"{who[0]}:{who[1]}@" if who else ""
        return f"http://{userinfo}127.0.0.1:{self.port}/git/{name}"

    def create(self, name: str) -> Path:
        """An empty bare repository ``name`` served here, whose reflog records every
        update of its branches (the server's own account of what was pushed)."""
        bare = self.repos / name
        pygit2.init_repository(str(bare), bare=True, initial_head="main")
        subprocess.run(["git", "-C", str(bare), "config", "core.logAllRefUpdates", "always"],
                       check=True)
        # git-http-backend lets an authenticated user push only when told to.
        subprocess.run(["git", "-C", str(bare), "config", "http.receivepack", "true"],
                       check=True)
        return bare

    def add_user(self, who: tuple[str, str]) -> None:
        """One more member (lighttpd reads the users file on each request)."""
        with (self.root / "users").open("a", encoding="utf-8") as users:
            users.write(f"{who[0]}:{who[1]}\n")

    def credentials_file(self, who: tuple[str, str], path: Path) -> Path:
        """A ``git credential-store`` file holding ``who``'s credentials for this
        server, as ``git credential approve`` would write it."""
        path.write_text(f"http://{who[0]}:{who[1]}@127.0.0.1:{self.port}\n")
        path.chmod(0o600)
        return path


def _listening(port: int, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
        else:
            return True
    return False


def git_config_for(server: HttpGitServer, who: tuple[str, str] | None, home: Path) -> Path:
    """A global git config for one member: git's ``store`` credential helper reading
    ``who``'s credentials for the server (None: no credentials at all), a fixed
    identity. The tests point ``GIT_CONFIG_GLOBAL`` at it, so each member's git finds
    only its own credentials, the way two people's machines do."""
    home.mkdir(parents=True, exist_ok=True)
    lines = ["[user]", "\tname = Test Person", "\temail = person@example.org"]
    if who is not None:
        store = server.credentials_file(who, home / "git-credentials")
        lines += ["[credential]", f"\thelper = store --file={store}"]
    config = home / "gitconfig"
    config.write_text("\n".join(lines) + "\n")
    return config


def serving(root: Path) -> Iterator[HttpGitServer]:
    """Start a server under ``root`` for as long as the generator is held open."""
    server = HttpGitServer.start(root)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def http_git(tmp_path: Path) -> Iterator[HttpGitServer]:
    """A smart-HTTP git server for one test, under ``tmp_path/http``."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    yield from serving(tmp_path / "http")
