"""A hostile repository: a valid store whose author planted everything a reader must
never trust, cloned and used the way a victim would.

The attacker makes a real store (``memhtml init``, two ``memhtml write``) and then
commits, with plain git (``git add -f`` where ``.gitignore`` would stop it):

- pickles that run ``os.system`` when loaded, at every place a cache ever lived or
  might (``.memhtml/snapshots/<sha>.pickle`` and ``.snapshot`` named after real
  commits, ``.memhtml/vectors/<space>/`` with a manifest and an object-dtype ``.npy``,
  the same under ``memhtml/`` at the root, where a bare repository keeps its state);
- a ``.memhtml/config.toml`` naming a loopback endpoint, a key variable, an author and
  unknown keys (the endpoint is a recording HTTP server; the unknown keys name a raw
  TCP listener);
- a symlink farm pointing out of the repository (``/etc/passwd``, a directory the test
  controls, a file that parses as a valid memory, publish's own output files, markdown
  for ``memhtml md``); in a second repository ``.memhtml`` (and a root ``memhtml``)
  is itself a relative symlink out, and in a third ``.memhtml/config.toml`` links to
  ``/etc/passwd``, its caches and ``memhtml-site/`` to absolute paths out;
- valid memory files under ``.memhtml/``;
- a bare repository inside the tree (``resources/vault/``), for a victim whose shell
  happens to be in that directory.

The victim clones each repository and runs every command the CLI has, as
subprocesses (forked from a warm interpreter: ``warm_cli``), with ``HOSTILE_SECRET`` in
its environment, plus the MCP server under the SDK's own client. Each property is its
own test over the recorded runs, so a property that does not hold is one precise
failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import http.server
import json
import os
import pickle
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.integration import warm_cli

pytestmark = [pytest.mark.slow, pytest.mark.first]

SECRET = "hostile-secret-7c1e5d0a9b"
HOSTILE = ("Mallory Hostile", "mallory@hostile.example")
HOSTILE_ELSEWHERE = ("Mallory Elsewhere", "mallory@elsewhere.example")
VICTIM = ("Victim User", "victim@example.org")

# Words that exist only in files outside a clone (or under its .memhtml/). A file
# holds a word the victim searches for and a "tell" nobody ever types (a search echoes
# its query, so only the tell proves the file's text was shown).
OUTSIDE_WORD, OUTSIDE_TELL = "quokkafjord", "tellquokka"
"""In a valid memory file outside the repository, behind a symlink named like a memory."""
EVILDIR_WORD, EVILDIR_TELL = "marmotzephyr", "tellmarmot"
"""In a valid memory file behind the symlinked directory ``areas/evil``."""
DOTMEM_WORD, DOTMEM_TELL = "ibexlantern", "tellibex"
"""In valid memory files committed under ``.memhtml/``."""
ELSEWHERE_WORD, ELSEWHERE_TELL = "okapimeridian", "tellokapi"
"""In a valid memory file in the directory ``.memhtml -> ../elsewhere`` points at."""
MD_WORD, MD_TELL = "wombatcipher", "tellwombat"
"""In a markdown file outside the repository, behind ``notes/leak.md``."""
MDDIR_WORD, MDDIR_TELL = "pangolinvesper", "tellpangolin"
"""In a markdown file behind the symlinked directory ``notes/evil``."""
LISTING_TELL = "narwhalsextant"
"""In the *name* of a file in the directory ``.memhtml -> ../elsewhere`` points at."""
KEY_TELL = "tellkeyname"
"""A key name in the TOML file that directory holds as ``config.toml``."""
PUBLISH_TELL = "capybarabellows"
"""In the files publish's outputs are symlinked to."""
OUTSIDE_TELLS = (OUTSIDE_TELL, EVILDIR_TELL, ELSEWHERE_TELL, MD_TELL, MDDIR_TELL,
                 PUBLISH_TELL)

PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy"})
COMMAND_TIMEOUT_S = 90.0
MCP_TIMEOUT_S = 120.0
PASSWD = Path("/etc/passwd")


# --------------------------------------------------------------------------- payloads


class Detonator:
    """Pickled, it is a call to ``os.system`` that creates ``marker``: loading it is
    running code. Only the call is pickled, not this class."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def pickle_bomb(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(Detonator(marker)))


def npy_bomb(path: Path, marker: Path) -> None:
    """An ``.npy`` of object dtype: ``np.load`` runs it only with ``allow_pickle=True``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as stream:
        np.save(stream, np.array([Detonator(marker)], dtype=object), allow_pickle=True)


def vector_bomb(root: Path, space_key: str, model_id: str, dimension: int,
                hashes: Sequence[str], marker: Path) -> None:
    """A vector file set as memhtml lays one out, whose matrix is a pickle."""
    generation = "000000000001-deadbeef"
    folder = root / space_key
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format": 1, "model_id": model_id, "dimension": dimension,
        "generation": generation, "count": len(hashes)}), encoding="utf-8")
    (folder / f"hashes-{generation}.txt").write_text("".join(f"{h}\n" for h in hashes),
                                                       encoding="ascii")
    npy_bomb(folder / f"vectors-{generation}.npy", marker)


def plant_state(root: Path, shas: Sequence[str], hashes: Sequence[str], markers: Path,
                tag: str) -> None:
    """Every cache a memhtml ever kept, as pickles, under ``root`` (a ``.memhtml/``, a
    bare repository's ``memhtml/``); each detonation names ``tag`` and the file."""
    for sha in shas:
        pickle_bomb(root / "snapshots" / f"{sha}.pickle",
                    markers / f"{tag}-snapshot-pickle-{sha[:8]}")
        npy_bomb(root / "snapshots" / f"{sha}.snapshot",
                 markers / f"{tag}-snapshot-npy-{sha[:8]}")
    for key, model, width in (("hashing-v1-256", "hashing-v1", 256), ("x-8", "x", 8),
                              ("all-MiniLM-L6-v2_onnx-int8-v1-384",
                               "all-MiniLM-L6-v2/onnx-int8-v1", 384),
                              ("all-MiniLM-L6-v2_onnx-int8-v2-384",
                               "all-MiniLM-L6-v2/onnx-int8-v2", 384)):
        vector_bomb(root / "vectors", key, model, width, hashes,
                    markers / f"{tag}-vectors-{key}")
    pickle_bomb(root / "head.pickle", markers / f"{tag}-head-pickle")


# --------------------------------------------------------------------------- listeners


@dataclass
class Listeners:
    """A recording HTTP server and a raw TCP listener on loopback: whatever reaches
    either is data that left the process."""

    http_port: int
    tcp_port: int
    seen: list[str]
    """One line per request or connection either received."""


def _recording_handler(seen: list[str]) -> type[http.server.BaseHTTPRequestHandler]:
    class Recorder(http.server.BaseHTTPRequestHandler):
        def _record(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            seen.append(f"http {self.command} {self.path} {dict(self.headers)!r} {body!r}")
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = _record  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Recorder


@contextlib.contextmanager
def listening() -> Iterator[Listeners]:
    seen: list[str] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _recording_handler(seen))
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.bind(("127.0.0.1", 0))
    raw.listen(8)
    raw.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = raw.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(0.5)
                try:
                    first = conn.recv(4096)
                except OSError:
                    first = b""
            seen.append(f"tcp connection from {peer}: {first!r}")

    threads = [threading.Thread(target=server.serve_forever, daemon=True),
               threading.Thread(target=accept, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        yield Listeners(server.server_address[1], raw.getsockname()[1], seen)
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        for thread in threads:
            thread.join(timeout=5)
        raw.close()


# --------------------------------------------------------------------------- processes


@dataclass(frozen=True)
class Run:
    """One command the victim ran: where, what, what it printed, and which planted
    payloads had gone off by the time it returned."""

    where: str
    label: str
    code: int
    out: str
    err: str
    detonated: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.out + "\n" + self.err

    @property
    def is_md(self) -> bool:
        return self.label.startswith("md ")

    def warnings(self) -> str:
        return "\n".join(line for line in self.err.splitlines()
                         if line.startswith("warning:"))

    def json(self) -> Any:
        return json.loads(self.out)


def environment(home: Path, author: tuple[str, str]) -> dict[str, str]:
    """This process's environment without a developer's memhtml or git settings and
    without proxies (a request must reach the listeners, not a proxy), with a home of
    its own, its own memhtml config naming ``author``, and ``HOSTILE_SECRET`` set."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("MEMHTML_", "GIT_")) and name.lower() not in PROXY_VARIABLES}
    config = home / ".config"
    (config / "memhtml").mkdir(parents=True, exist_ok=True)
    (config / "memhtml" / "config.toml").write_text(
        f'author_name = "{author[0]}"\nauthor_email = "{author[1]}"\n', encoding="utf-8")
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(config), GIT_CONFIG_NOSYSTEM="1",
               HOSTILE_SECRET=SECRET, OPENBLAS_NUM_THREADS="1")
    return env


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def hostile_commit(cwd: Path, env: dict[str, str], message: str, *paths: str) -> str:
    git(cwd, env, "add", "-f", "--", *paths)
    git(cwd, env, "-c", f"user.name={HOSTILE[0]}", "-c", f"user.email={HOSTILE[1]}",
        "commit", "-q", "-m", message)
    return git(cwd, env, "rev-parse", "HEAD").strip()


def memhtml(cwd: Path, env: dict[str, str], *tokens: str) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml`` in ``cwd`` under ``env``: its own process, forked from a warm
    interpreter started under ``env`` (``warm_cli``)."""
    return warm_cli.memhtml(*tokens, env=env, cwd=cwd, timeout=COMMAND_TIMEOUT_S)


def made(cwd: Path, env: dict[str, str], *tokens: str) -> Any:
    """An attacker's memhtml command that must succeed; its JSON answer."""
    done = memhtml(cwd, env, *tokens, "--json")
    assert done.returncode == 0, f"memhtml {' '.join(tokens)}: {done.stdout}{done.stderr}"
    return json.loads(done.stdout)


def fingerprint(*roots: Path) -> dict[str, str]:
    """Every entry under ``roots`` (a file's sha-256, a symlink's target, a directory),
    symlinks not followed: two equal fingerprints mean nothing there changed."""
    found: dict[str, str] = {}
    for root in roots:
        if root.is_file():
            found[str(root)] = hashlib.sha256(root.read_bytes()).hexdigest()
            continue
        for folder, dirs, files in os.walk(root):
            for name in (*dirs, *files):
                path = Path(folder) / name
                if path.is_symlink():
                    found[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_dir():
                    found[str(path)] = "dir"
                else:
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def content_hashes(root: Path) -> list[str]:
    pattern = re.compile(r'name="memhtml-content-hash" content="([^"]+)"')
    return sorted(match.group(1) for path in sorted(root.rglob("*.html"))
                  if ".git" not in path.parts
                  if (match := pattern.search(path.read_text(encoding="utf-8"))))


# --------------------------------------------------------------------------- the scene


@dataclass
class Scene:
    base: Path
    outside: Path
    elsewhere: Path
    markers: Path
    clones: dict[str, Path]
    passwd_line: str
    runs: list[Run] = field(default_factory=list)
    mcp_stderr: str = ""
    leaks: list[str] = field(default_factory=list)
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    published: dict[str, str] = field(default_factory=dict)
    """Per clone: ``git show`` of its tip after publish (authors, paths, diff)."""
    authors: dict[str, str] = field(default_factory=dict)
    """Per clone whose publish committed: ``author | committer`` of that commit."""
    vault: Run | None = None
    control: list[str] = field(default_factory=list)
    """What the positive control (an endpoint named by the victim's own variables) sent."""

    def save(self) -> None:
        """The scene as JSON beside it (``scene.json``): for another xdist worker to
        load, and for a failing check to be read against."""
        (self.base / "scene.json").write_text(json.dumps(
            vars(self),
            default=lambda value: str(value) if isinstance(value, Path) else vars(value),
            indent=1), encoding="utf-8")

    @classmethod
    def load(cls, record: Path) -> Scene:
        data = json.loads(record.read_text(encoding="utf-8"))

        def run(fields: dict[str, Any]) -> Run:
            return Run(**{**fields, "detonated": tuple(fields["detonated"])})

        return cls(**{
            **data,
            **{name: Path(data[name]) for name in ("base", "outside", "elsewhere", "markers")},
            "clones": {name: Path(path) for name, path in data["clones"].items()},
            "runs": [run(fields) for fields in data["runs"]],
            "vault": run(data["vault"]) if data["vault"] else None,
        })

    def detonated(self) -> tuple[str, ...]:
        return tuple(sorted(p.name for p in self.markers.iterdir()))

    def run(self, where: str, env: dict[str, str], *tokens: str, cwd: Path | None = None
            ) -> Run:
        done = memhtml(cwd or self.clones[where], env, *tokens)
        ran = Run(where, " ".join(tokens), done.returncode, done.stdout, done.stderr,
                  self.detonated())
        self.runs.append(ran)
        return ran

    def of(self, where: str, label: str) -> Run:
        return next(r for r in self.runs if r.where == where and r.label == label)


def _memory_file(scratch: Path, env: dict[str, str], word: str, tell: str) -> bytes:
    """The bytes of a valid memory file holding ``word`` and ``tell``, written by memhtml
    itself in a scratch store."""
    answer = made(scratch, env, "write", "--title", word.capitalize(), "--claim",
                  f"The {word} fact is {tell}.", "--body", f"Its body says {tell} again.")
    return (scratch / str(answer["path"])).read_bytes()


def build(base: Path, listeners: Listeners) -> Scene:
    """The attacker's three repositories, the outside world they point at, and the
    victim's three clones; nothing of the victim's has run yet."""
    attacker = environment(base / "attacker-home", HOSTILE)
    outside, elsewhere, markers = base / "outside", base / "elsewhere", base / "markers"
    for folder in (outside, elsewhere, markers, base / "origins"):
        folder.mkdir()
    passwd_line = PASSWD.read_text(encoding="utf-8").splitlines()[0] if PASSWD.is_file() else ""

    # The attacker's memory files, made valid by memhtml itself.
    scratch = base / "scratch"
    made(base, attacker, "init", str(scratch), "--embedder", "none")
    outside_memory = _memory_file(scratch, attacker, OUTSIDE_WORD, OUTSIDE_TELL)
    evildir_memory = _memory_file(scratch, attacker, EVILDIR_WORD, EVILDIR_TELL)
    dotmem_memory = _memory_file(scratch, attacker, DOTMEM_WORD, DOTMEM_TELL)
    elsewhere_memory = _memory_file(scratch, attacker, ELSEWHERE_WORD, ELSEWHERE_TELL)

    # The outside world: a folder the victim owns, which the symlinks point into.
    (outside / "memory.html").write_bytes(outside_memory)
    (outside / "evil").mkdir()
    (outside / "evil" / "leak.html").write_bytes(evildir_memory)
    (outside / "notes.md").write_text(
        f"---\nname: leak\n---\nThe {MD_WORD} paragraph is {MD_TELL}.\n", encoding="utf-8")
    (outside / "mddir").mkdir()
    (outside / "mddir" / "hidden.md").write_text(
        f"The {MDDIR_WORD} paragraph is {MDDIR_TELL}.\n", encoding="utf-8")
    (outside / "publish").mkdir()
    for name in ("sitemap.xml", "headers", "index.html"):
        (outside / "publish" / name).write_text(f"{PUBLISH_TELL} {name}\n", encoding="utf-8")
    (outside / "site").mkdir()
    (outside / "site" / "memhtml.css").write_text(f"/* {PUBLISH_TELL} */\n", encoding="utf-8")

    # The store every hostile repository starts from.
    store = base / "origins" / "store"
    made(base, attacker, "init", str(store), "--embedder", "none")
    made(store, attacker, "write", "--title", "Deploy window", "--claim",
         "Deploys happen on Tuesdays.", "--body", "Never on a Friday.")
    made(store, attacker, "write", "--title", "Sakura timeout", "--claim",
         "The sakura service times out after thirty seconds.")
    hashes = content_hashes(store)
    store_shas = git(store, attacker, "rev-list", "HEAD").split()

    # The directory ``.memhtml -> ../elsewhere`` lands on in the victim's clones.
    (elsewhere / "config.toml").write_text(
        'embedder = "openai"\nembed_model = "x"\n'
        f'embed_url = "http://localhost:{listeners.tcp_port}/v1"\n'
        'embed_key_env = "HOSTILE_SECRET"\n'
        f'author_name = "{HOSTILE_ELSEWHERE[0]}"\nauthor_email = "{HOSTILE_ELSEWHERE[1]}"\n'
        f'{KEY_TELL} = "http://127.0.0.1:{listeners.http_port}/v1"\n', encoding="utf-8")
    plant_state(elsewhere, store_shas, hashes, markers, "elsewhere")
    (elsewhere / "areas" / "inbox").mkdir(parents=True)
    (elsewhere / "areas" / "inbox" / "okapi.html").write_bytes(elsewhere_memory)
    (elsewhere / f"victim-private-{LISTING_TELL}.txt").write_text("private\n", encoding="utf-8")

    # 1. main: a real .memhtml/ full of payloads, the config, the symlink farm.
    main = base / "origins" / "main"
    git(base, attacker, "clone", "-q", str(store), str(main))
    dot = main / ".memhtml"
    dot.mkdir(exist_ok=True)  # the store's marker is already there
    (dot / "config.toml").write_text(
        'embedder = "openai"\nembed_model = "x"\n'
        f'embed_url = "http://127.0.0.1:{listeners.http_port}/v1"\n'
        'embed_key_env = "HOSTILE_SECRET"\n'
        f'author_name = "{HOSTILE[0]}"\nauthor_email = "{HOSTILE[1]}"\n'
        f'exfiltrate_to = "http://127.0.0.1:{listeners.tcp_port}/v1"\n'
        f'MEMHTML_EMBED_URL = "http://127.0.0.1:{listeners.tcp_port}/v1"\n'
        f'[embed]\nurl = "http://127.0.0.1:{listeners.tcp_port}/v1"\n', encoding="utf-8")
    (dot / "areas" / "inbox").mkdir(parents=True)
    (dot / "areas" / "inbox" / "ibex.html").write_bytes(dotmem_memory)
    (dot / "ibex-top.html").write_bytes(dotmem_memory)
    links = {
        "areas/inbox/passwd.html": str(PASSWD),
        "areas/evil": str(outside / "evil"),
        "areas/inbox/ledger.html": str(outside / "memory.html"),
        "areas/inbox/ledger-relative.html": "../../../outside/memory.html",
        "sitemap.xml": str(outside / "publish" / "sitemap.xml"),
        "_headers": str(outside / "publish" / "headers"),
        "areas/index.html": str(outside / "publish" / "index.html"),
        "notes/leak.md": str(outside / "notes.md"),
        "notes/passwd.md": str(PASSWD),
        "notes/evil": str(outside / "mddir"),
    }
    for path, target in links.items():
        (main / path).parent.mkdir(parents=True, exist_ok=True)
        (main / path).symlink_to(target)
    (main / "notes" / "real.md").write_text("---\nname: real\n---\nReal notes on deploys.\n",
                                            encoding="utf-8")
    planted = hostile_commit(main, attacker, "Add notes", ".")
    # Named after real commits (the tip's parent among them), so they look right.
    shas = [planted, *store_shas]
    plant_state(dot, shas, hashes, markers, "dotmemhtml")
    plant_state(main / "memhtml", shas, hashes, markers, "rootmemhtml")
    hostile_commit(main, attacker, "Add caches", ".memhtml", "memhtml")

    # 2. linked: .memhtml and memhtml are symlinks to ../elsewhere; a bare repository
    # (a copy of the store's, with its own state folder of payloads) sits in the tree.
    linked = base / "origins" / "linked"
    git(base, attacker, "clone", "-q", str(store), str(linked))
    git(linked, attacker, "rm", "-q", "-r", ".memhtml")  # the marker goes; the layout stays
    (linked / ".memhtml").symlink_to("../elsewhere")
    (linked / "memhtml").symlink_to("../elsewhere")
    vault = linked / "resources" / "vault"
    bare = base / "origins" / "vault.git"
    git(base, attacker, "clone", "-q", "--bare", str(store), str(bare))
    shutil.copytree(bare, vault)
    (vault / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (vault / "refs" / "heads" / "main").write_text(f"{store_shas[0]}\n", encoding="ascii")
    plant_state(vault / "memhtml", store_shas, hashes, markers, "vault")
    (vault / ".memhtml").mkdir()
    (vault / ".memhtml" / "config.toml").write_text('embedder = "hashing"\n',
                                                    encoding="utf-8")
    hostile_commit(linked, attacker, "Link state", ".")

    # 3. absolute: a real .memhtml/ whose config is /etc/passwd and whose caches are
    # absolute symlinks; publish's stylesheet folder is a symlink out.
    absolute = base / "origins" / "absolute"
    git(base, attacker, "clone", "-q", str(store), str(absolute))
    (absolute / ".memhtml").mkdir(exist_ok=True)
    (absolute / ".memhtml" / "config.toml").symlink_to(PASSWD)
    (absolute / ".memhtml" / "snapshots").symlink_to(elsewhere / "snapshots")
    (absolute / ".memhtml" / "vectors").symlink_to(elsewhere / "vectors")
    (absolute / ".memhtml" / "areas").symlink_to(elsewhere / "areas")
    (absolute / "memhtml-site").symlink_to(outside / "site")
    hostile_commit(absolute, attacker, "Absolute links", ".")

    # The victim: a plain clone of each.
    victim = environment(base / "victim-home", VICTIM)
    clones: dict[str, Path] = {}
    for name, origin in (("main", main), ("linked", linked), ("absolute", absolute)):
        clones[name] = base / f"clone-{name}"
        git(base, victim, "clone", "-q", origin.as_uri(), str(clones[name]))
    # The links are live in the victim's checkout: each leads where the attacker meant.
    main_clone = clones["main"]
    assert (main_clone / "areas" / "inbox" / "ledger-relative.html").read_bytes() \
        == outside_memory
    assert (main_clone / "areas" / "evil" / "leak.html").read_bytes() == evildir_memory
    assert (main_clone / "notes" / "leak.md").resolve() == outside / "notes.md"
    assert (clones["linked"] / ".memhtml").resolve() == elsewhere.resolve()
    assert (clones["absolute"] / ".memhtml" / "config.toml").resolve() == PASSWD.resolve()
    return Scene(base, outside, elsewhere, markers, clones, passwd_line)


# --------------------------------------------------------------------------- the victim


MAIN_READS: tuple[tuple[str, ...], ...] = (
    ("status",),
    ("status", "--json"),
    ("search", "deploy", "--json"),
    ("search", OUTSIDE_WORD, "--json"),
    ("search", EVILDIR_WORD),
    ("search", DOTMEM_WORD, "--json"),
    ("search", "root", "--json"),
    ("read", "areas/inbox/deploy-window.html"),
    ("read", "areas/inbox/passwd.html"),
    ("read", "areas/inbox/ledger.html", "--tier", "all"),
    ("read", "areas/inbox/ledger-relative.html", "--tier", "details"),
    ("read", "areas/evil/leak.html"),
    ("read", ".memhtml/areas/inbox/ibex.html"),
    ("read", ".memhtml/ibex-top.html", "--json"),
    ("related", "areas/inbox/deploy-window.html"),
    ("related", "areas/inbox/ledger.html", "--json"),
    ("doctor", "--json"),
    ("doctor",),
    ("log", "areas/inbox/deploy-window.html"),
    ("log", "areas/inbox/passwd.html", "--json"),
    ("task", "list", "--all"),
    ("embed",),
    ("embed", "--embedder", "hashing", "--json"),
    ("search", "deploy", "--json"),
    ("eval", "gate", "HEAD", "HEAD"),
    ("md", "stats", "--root", "."),
    ("md", "query", MD_WORD, "--root", "."),
    ("md", "query", MDDIR_WORD, "--root", "."),
    ("md", "query", "root", "--root", "."),
    ("md", "query", "deploys", "--root", "."),
)
OTHER_READS: tuple[tuple[str, ...], ...] = (
    ("status", "--json"),
    ("search", "deploy", "--json"),
    ("search", ELSEWHERE_WORD, "--json"),
    ("read", ".memhtml/areas/inbox/okapi.html"),
    ("doctor", "--json"),
    ("task", "list", "--all"),
    ("embed",),
    ("eval", "gate", "HEAD", "HEAD"),
)
MCP_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("memory_status", {}),
    ("memory_search", {"query": "deploy"}),
    ("memory_search", {"query": OUTSIDE_WORD}),
    ("memory_search", {"query": EVILDIR_WORD}),
    ("memory_search", {"query": DOTMEM_WORD}),
    ("memory_search", {"query": "root"}),
    ("memory_read", {"path": "areas/inbox/deploy-window.html", "tier": "all"}),
    ("memory_read", {"path": "areas/inbox/passwd.html", "tier": "all"}),
    ("memory_read", {"path": "areas/inbox/ledger.html", "tier": "all"}),
    ("memory_read", {"path": "areas/inbox/ledger-relative.html", "tier": "all"}),
    ("memory_read", {"path": "areas/evil/leak.html", "tier": "all"}),
    ("memory_read", {"path": ".memhtml/areas/inbox/ibex.html", "tier": "all"}),
)


def serve_mcp(scene: Scene, env: dict[str, str]) -> None:
    """``memhtml mcp --store <clone>`` under the SDK's stdio client: each call a Run."""
    root = scene.clones["main"]
    command, args = warm_cli.launcher("memhtml", "mcp", "--store", str(root), env=env)
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(scene.base))
    log = scene.base / "mcp-stderr.log"

    async def session() -> None:
        with log.open("w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as client:
                await client.initialize()
                for tool, arguments in MCP_CALLS:
                    result = await client.call_tool(tool, arguments)
                    scene.runs.append(Run(
                        "main", f"mcp {tool} {json.dumps(arguments, sort_keys=True)}",
                        1 if result.is_error else 0, result.model_dump_json(), "",
                        scene.detonated()))

    asyncio.run(asyncio.wait_for(session(), MCP_TIMEOUT_S))
    scene.mcp_stderr = log.read_text(encoding="utf-8")
    scene.runs.append(Run("main", "mcp server stderr", 0, "", scene.mcp_stderr,
                          scene.detonated()))


def publish(scene: Scene, where: str, env: dict[str, str]) -> None:
    root = scene.clones[where]
    before = git(root, env, "rev-parse", "HEAD").strip()
    scene.run(where, env, "publish", "--json")
    tip = git(root, env, "rev-parse", "HEAD").strip()
    if tip != before:
        scene.authors[where] = git(root, env, "log", "-1", "--format=%an <%ae> | %cn <%ce>")
        scene.published[where] = git(root, env, "show", "--format=fuller", "--stat",
                                     "--patch", tip)


def positive_control(scene: Scene, env: dict[str, str]) -> list[str]:
    """The same endpoint and key variable named by the victim's own variables: the
    endpoint is reached and the key is sent, so the listeners do see a leak when the
    settings come from somewhere they may."""
    with listening() as control:
        # The embedder is named here too: the victim's own `embed --embedder hashing`
        # recorded that choice in the store's config.
        trusted = dict(env, MEMHTML_EMBED_URL=f"http://127.0.0.1:{control.http_port}/v1",
                       MEMHTML_EMBED_KEY_ENV="HOSTILE_SECRET", MEMHTML_EMBEDDER="openai",
                       MEMHTML_EMBED_MODEL="x")
        memhtml(scene.clones["main"], trusted, "embed")
        return list(control.seen)


def stage(base: Path) -> Scene:
    """Build the repositories, then play the victim; every outcome recorded."""
    with listening() as listeners:
        # The listeners are live: a request and a connection are both recorded.
        with contextlib.suppress(OSError):  # the recorder answers 500
            urllib.request.urlopen(f"http://127.0.0.1:{listeners.http_port}/canary",
                                   timeout=5)
        with socket.create_connection(("127.0.0.1", listeners.tcp_port), timeout=5) as conn:
            conn.sendall(b"canary")
        for _ in range(100):
            if len(listeners.seen) >= 2:
                break
            threading.Event().wait(0.05)
        assert len(listeners.seen) == 2, listeners.seen
        listeners.seen.clear()

        made_scene = build(base, listeners)
        assert made_scene.detonated() == (), "a payload went off while it was planted"
        victim = environment(base / "victim-home", VICTIM)
        made_scene.before = fingerprint(made_scene.outside, made_scene.elsewhere, PASSWD)

        for tokens in MAIN_READS:
            made_scene.run("main", victim, *tokens)
        serve_mcp(made_scene, victim)
        for where in ("linked", "absolute"):
            for tokens in OTHER_READS:
                made_scene.run(where, victim, *tokens, "--store", str(made_scene.clones[where]))
        for where in ("main", "linked", "absolute"):
            publish(made_scene, where, victim)
            made_scene.run(where, victim, "status", "--json")
        made_scene.vault = made_scene.run(
            "linked", victim, "status", "--json",
            cwd=made_scene.clones["linked"] / "resources" / "vault")
        made_scene.after = fingerprint(made_scene.outside, made_scene.elsewhere, PASSWD)
        made_scene.leaks = list(listeners.seen)
    made_scene.control = positive_control(made_scene, victim)
    return made_scene


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    """The scene, staged once per test session: under xdist the first worker to get
    here stages it in the run's shared temporary directory and the others load its
    record, rather than each spending the whole run again."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        staged = stage(tmp_path_factory.mktemp("hostile"))
        staged.save()
        return staged
    shared = tmp_path_factory.getbasetemp().parent / "hostile-clone"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            record = shared / "scene.json"
            if record.exists():
                return Scene.load(record)
            staged = stage(Path(tempfile.mkdtemp(dir=shared)))
            staged.save()
            shutil.copyfile(staged.base / "scene.json", record)
            return staged
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- the checks


def store_runs(scene: Scene, where: str | None = None) -> list[Run]:
    """Runs that opened a store (every one but ``md``, which reads a directory)."""
    return [r for r in scene.runs if not r.is_md and (where is None or r.where == where)]


def test_the_payloads_and_listeners_are_live(scene: Scene, tmp_path: Path) -> None:
    """The checks below can fail: each planted payload runs when loaded as a pickle, and
    an endpoint named by the victim's own variables is reached with the key."""
    markers = tmp_path / "markers"
    markers.mkdir()
    pickle_bomb(tmp_path / "p.pickle", markers / "pickle")
    npy_bomb(tmp_path / "p.npy", markers / "npy")
    pickle.loads((tmp_path / "p.pickle").read_bytes())
    np.load(tmp_path / "p.npy", allow_pickle=True)
    assert sorted(p.name for p in markers.iterdir()) == ["npy", "pickle"]
    assert any(f"Bearer {SECRET}" in hit and "/v1/embeddings" in hit
               for hit in scene.control), scene.control
    main = scene.clones["main"]
    assert (main / ".memhtml" / "snapshots").is_dir()
    assert any(p.suffix == ".pickle" for p in (main / ".memhtml" / "snapshots").iterdir())
    assert (main / "memhtml" / "vectors" / "hashing-v1-256" / "manifest.json").is_file()


def test_the_clones_still_work(scene: Scene) -> None:
    """The hostile store is still a store: the reads answer, publish commits."""
    status = scene.of("main", "status --json")
    assert status.code == 0, status.err
    assert status.json()["memories"] == 2
    hits = scene.of("main", "search deploy --json").json()["hits"]
    assert [h["path"] for h in hits] == ["areas/inbox/deploy-window.html"]
    assert scene.of("main", "read areas/inbox/deploy-window.html").code == 0
    assert "main" in scene.authors and "linked" in scene.authors, scene.runs[-8:]
    for where in ("linked", "absolute"):
        ran = next(r for r in scene.runs if r.where == where and r.label.startswith("status"))
        assert ran.code == 0, ran.err
        assert ran.json()["memories"] == 2


def test_no_payload_a_clone_carries_ever_runs(scene: Scene) -> None:
    went_off = [(r.where, r.label, r.detonated) for r in scene.runs if r.detonated]
    assert not went_off, went_off
    assert scene.detonated() == ()


def test_nothing_leaves_the_machine(scene: Scene) -> None:
    """No request or connection reaches the endpoint the store's config names (nor the
    one its unknown keys name), and the secret its ``embed_key_env`` names is printed
    nowhere and committed nowhere."""
    assert scene.leaks == []
    leaked = [(r.where, r.label) for r in scene.runs if SECRET in r.text]
    assert not leaked, leaked
    assert all(SECRET not in shown for shown in scene.published.values())


def test_every_ignored_setting_and_stray_file_is_named_on_stderr(scene: Scene) -> None:
    """Each command that opens the main clone, and the MCP server, says on stderr what
    of the store's ``.memhtml/`` it ignored: each local key, each unknown key, and the
    caches and memory files that sit there."""
    wanted = ("embed_url", "embed_key_env", "author_name", "author_email",
              "'exfiltrate_to'", "'MEMHTML_EMBED_URL'", "'embed'",
              "'snapshots'", "'vectors'", "'areas'", "'head.pickle'")
    runs = [r for r in store_runs(scene, "main") if not r.label.startswith("mcp memory_")]
    assert any(r.label == "mcp server stderr" for r in runs)
    missing = {r.label: [w for w in wanted if w not in r.warnings()] for r in runs}
    assert not {label: names for label, names in missing.items() if names}, missing
    # A config that is a symlink to a file that is not TOML (/etc/passwd) is ignored,
    # and said to be, as are the symlinked caches beside it.
    unreadable = ("config.toml", "its settings are ignored", "'snapshots'", "'vectors'",
                  "'areas'")
    runs = store_runs(scene, "absolute")
    missing = {r.label: [w for w in unreadable if w not in r.warnings()] for r in runs}
    assert not {label: names for label, names in missing.items() if names}, missing


def test_store_commands_never_show_what_a_symlink_points_at(scene: Scene) -> None:
    """No store command, MCP call or published commit holds the text of a file a
    committed symlink points at (outside files, /etc/passwd)."""
    words = [w for w in (*OUTSIDE_TELLS, scene.passwd_line) if w]
    shown = [(r.where, r.label, w) for r in store_runs(scene) for w in words if w in r.text]
    assert not shown, shown
    for word in (OUTSIDE_WORD, "root"):
        assert scene.of("main", f"search {word} --json").json()["hits"] == [], word
    published = [(where, w) for where, text in scene.published.items() for w in words
                 if w in text]
    assert not published, published


def test_md_commands_never_show_what_a_symlink_points_at(scene: Scene) -> None:
    words = [w for w in (*OUTSIDE_TELLS, scene.passwd_line) if w]
    md = [r for r in scene.runs if r.is_md]
    assert len(md) == 5
    shown = [(r.label, w) for r in md for w in words if w in r.text]
    assert not shown, shown


def test_a_symlinked_state_directory_is_not_followed(scene: Scene) -> None:
    shown = [(r.where, r.label, tell) for r in scene.runs for tell in (LISTING_TELL, KEY_TELL)
             if tell in r.text]
    assert not shown, shown


def test_no_command_writes_outside_the_clone(scene: Scene) -> None:
    """Publish (and every read before it) left the folders the symlinks point into, and
    /etc/passwd, exactly as they were: no file changed, none appeared or went."""
    assert scene.before, "nothing fingerprinted"
    assert scene.after == scene.before


def test_nothing_under_the_state_directory_is_a_memory(scene: Scene) -> None:
    """A valid memory file under ``.memhtml/`` (or behind a ``.memhtml`` symlink) is not
    searched, read, counted, skipped, checked or published."""
    for where in scene.clones:
        for ran in store_runs(scene, where):
            assert DOTMEM_TELL not in ran.text, (where, ran.label)
            assert ELSEWHERE_TELL not in ran.text, (where, ran.label)
    status = scene.of("main", "status --json").json()
    assert status["memories"] == 2
    assert not [s for s in status["skipped"] if s["path"].startswith(".memhtml")]
    doctor = scene.of("main", "doctor --json").json()
    assert not [f for f in doctor["findings"] if ".memhtml" in f["path"]]
    assert scene.of("main", f"search {DOTMEM_WORD} --json").json()["hits"] == []
    for label in ("read .memhtml/areas/inbox/ibex.html", "read .memhtml/ibex-top.html --json"):
        assert scene.of("main", label).code != 0
    mcp_read = scene.of("main", 'mcp memory_read {"path": ".memhtml/areas/inbox/ibex.html", '
                                '"tier": "all"}')
    assert mcp_read.code != 0
    for where, shown in scene.published.items():
        paths = [line for line in shown.splitlines() if line.startswith("+++ b/")]
        assert not [p for p in paths if ".memhtml" in p], (where, paths)


def test_publish_commits_as_the_user_not_the_store(scene: Scene) -> None:
    """The store's ``author_name``/``author_email`` never sign a commit: publish in
    each clone is authored by the victim's own settings, and committed by memhtml."""
    victim = f"{VICTIM[0]} <{VICTIM[1]}>"
    assert scene.authors, "no publish committed"
    for where, authors in scene.authors.items():
        assert authors.strip() == f"{victim} | memhtml <memhtml@localhost>", where


def test_a_bare_repository_in_the_tree_is_not_the_store(scene: Scene) -> None:
    assert scene.vault is not None
    clone = scene.clones["linked"]
    answer = scene.vault.json()
    assert Path(answer["store"]) == clone.resolve(), answer["store"]
