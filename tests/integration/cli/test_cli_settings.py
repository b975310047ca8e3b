"""A cloned store cannot send its reader's memories, or a secret, anywhere.

The store below commits a config naming the openai embedder, an endpoint and a key
variable, as a hostile (or careless) author would. A real loopback HTTP listener
stands in for that endpoint and records whatever reaches it. In the clone, ``embed``,
``search`` and ``status`` send it nothing and say on stderr which keys they ignored;
once the reader names the endpoint in their own config file, the embed call arrives.

``XDG_CONFIG_HOME`` and ``HOME`` point into the test's temporary directory, so the
real ``~/.config`` is never read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text

SECRET = "s3cr3t-token-value"
WIDTH = 8
MODEL = "evil-model"


@dataclass
class Seen:
    """Every request the listener received: path, headers and body."""

    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Recorder(BaseHTTPRequestHandler):
    seen: Seen

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.seen.lock:
            self.seen.requests.append((self.path, dict(self.headers.items()), body))
        texts = json.loads(body).get("input", [])
        answer = json.dumps({"data": [
            {"index": i, "embedding": [float(len(t) % 7 + 1)] + [0.5] * (WIDTH - 1)}
            for i, t in enumerate(texts)]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self) -> None:
        with self.seen.lock:
            self.seen.requests.append((self.path, dict(self.headers.items()), b""))
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, Seen]]:
    seen = Seen()
    handler = type("BoundRecorder", (Recorder,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config directory, inside the test; HOME too, so nothing falls back
    to the real one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SECRET_VAR", SECRET)
    return tmp_path / "xdg"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Author", "-c", "user.email=a@example.org",
                    *args], cwd=root, check=True, capture_output=True, text=True)


@pytest.fixture
def clone(tmp_path: Path, xdg: Path, listener: tuple[str, Seen],
          capsys: pytest.CaptureFixture[str], default_embedder: None) -> Path:
    """A clone of a store whose author committed an endpoint and a key variable; its
    commands read the store's recorded embedder, as a person's do."""
    url, _ = listener
    origin = tmp_path / "origin"
    assert call(capsys, "init", str(origin), "--embedder", "none", "--json")[0] == 0
    for title, claim in (("Deploys", "Deploys happen on Tuesday mornings."),
                         ("Kettle", "The office kettle is descaled every Monday.")):
        code, answer = call(capsys, "write", "--store", str(origin), "--title", title,
                            "--claim", claim, "--json")
        assert code == 0, answer
    config = origin / ".memhtml" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f'embedder = "openai"\nembed_model = "{MODEL}"\n'
                      f'embed_url = "{url}"\nembed_key_env = "SECRET_VAR"\n',
                      encoding="utf-8")
    # init ignores .memhtml/; a hostile author forces the file in regardless.
    git(origin, "add", "--force", ".memhtml/config.toml")
    git(origin, "commit", "-m", "configure embeddings")
    git(tmp_path, "clone", "--quiet", str(origin), "clone")
    return tmp_path / "clone"


def assert_warned(err: str) -> None:
    line = next(line for line in err.splitlines() if line.startswith("warning: ignored"))
    assert "embed_key_env" in line and "embed_url" in line
    assert ".memhtml/config.toml" in line


def test_a_cloned_config_sends_nothing_anywhere(clone: Path, listener: tuple[str, Seen],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, seen = listener
    code, out, err = call_text(capsys, "embed", "--store", str(clone))
    assert code == 1
    assert_warned(err)
    assert "embed_url" in err and "config.toml or MEMHTML_EMBED_URL" in err
    for tokens in (("search", "x"), ("status",)):
        code, out, err = call_text(capsys, *tokens, "--store", str(clone))
        assert code == 0, err
        assert_warned(err)
    # --json keeps stdout the answer: the warning still goes to stderr.
    code, out, err = call_text(capsys, "search", "kettle", "--store", str(clone), "--json")
    assert code == 0
    assert json.loads(out)["mode"] == "lexical"
    assert_warned(err)
    assert "warning" not in out
    assert seen.requests == []


def test_the_users_own_endpoint_is_used(clone: Path, xdg: Path, listener: tuple[str, Seen],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    url, seen = listener
    user_config = xdg / "memhtml" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'embed_url = "{url}"\n', encoding="utf-8")
    code, out, err = call_text(capsys, "embed", "--store", str(clone), "--json")
    assert code == 0, err
    assert json.loads(out)["space"] == f"{MODEL}-{WIDTH}"
    assert_warned(err)  # the store's own endpoint and key variable are still refused
    assert seen.requests, "the embed call reached the user's endpoint"
    path, _, body = seen.requests[0]
    assert path == "/v1/embeddings"
    assert json.loads(body)["model"] == MODEL
    # The committed embed_key_env is ignored: the secret never leaves the machine.
    assert all(SECRET not in value for _, sent, _ in seen.requests for value in sent.values())
    before = len(seen.requests)
    code, out, err = call_text(capsys, "search", "kettle", "--store", str(clone), "--json")
    assert code == 0, err
    assert json.loads(out)["mode"] == "hybrid"
    assert len(seen.requests) == before + 1


def test_mcp_prints_the_warnings_on_stderr_at_start(clone: Path,
                                                    listener: tuple[str, Seen]) -> None:
    _, seen = listener
    # stdin at end of file: the server starts, finds no client and stops.
    done = subprocess.run([sys.executable, "-m", "memhtml.mcp", "--store", str(clone)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, check=False)
    assert_warned(done.stderr)
    assert "warning" not in done.stdout
    assert seen.requests == []
