"""The planted-defect corpus in a real store, its vectors served over loopback.

The store is configured exactly as a user's would be for an OpenAI-compatible
endpoint (``embedder = "openai"`` and the model in its committed config, the URL a
local setting), and the endpoint is a real HTTP server on 127.0.0.1 answering from a
``ScriptedEmbedder``. So the sleep run's vectors go through the adapter a user's do,
while every cosine between planted pairs stays the scripted one.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from returns.io import IOResult

from memhtml.adapters.clock import FixedClock
from memhtml.compose import Services, Settings, init_repository, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.services import PathChange, Signature
from memhtml.eval.planted_embedder import PLANTED_MODEL_ID, ScriptedEmbedder
from memhtml.eval.planted_manifest import PlantedCorpus
from memhtml.sleep.deps import SleepDeps
from memhtml.store import init_store
from memhtml.store.errors import StoreError
from memhtml.store.landing import Draft, land

IMPORT_AT = datetime(2026, 11, 29, 4, 0, 0, tzinfo=UTC)
"""When the planted files are committed: a day before the run the corpus is built for
(``PlantConfig.now``, which is also ``sleep_support.RUN_AT``)."""
RUN_AT = datetime(2026, 11, 30, 4, 0, 0, tzinfo=UTC)
IMPORTER = Signature("planted corpus", "planted@memhtml.invalid")
STORE_CONFIG_PATH = ".memhtml/config.toml"
STORE_CONFIG = (f'embedder = "openai"\nembed_model = "{PLANTED_MODEL_ID}"\n').encode()
"""The store keys a store may carry; the URL is a local setting and never committed."""
ROUTE = "/v1/embeddings"


# --------------------------------------------------------------------------- the endpoint


class _Handler(BaseHTTPRequestHandler):
    embedder: ScriptedEmbedder
    texts: list[str] | None

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length))
        except ValueError:
            self._reply(400, {"error": {"message": "the body is not JSON"}})
            return
        if self.path.rstrip("/") != ROUTE:
            self._reply(404, {"error": {"message": f"no route {self.path}"}})
            return
        model = self.embedder.space.model_id
        if not isinstance(request, dict) or request.get("model") != model:
            # A store pointed at another model would cache these vectors under the
            # wrong space: refuse loudly instead.
            self._reply(404, {"error": {"message": f"this endpoint serves {model} only"}})
            return
        given = request.get("input")
        texts = [given] if isinstance(given, str) else given
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._reply(400, {"error": {"message": "input must be a string or strings"}})
            return
        if self.texts is not None:
            self.texts.extend(texts)
        data = [{"object": "embedding", "index": i,
                 "embedding": [float(x) for x in self.embedder.vector_of(text)]}
                for i, text in enumerate(texts)]
        self._reply(200, {"object": "list", "model": model, "data": data})


@contextlib.contextmanager
def serve_embeddings(embedder: ScriptedEmbedder, texts: list[str] | None = None
                     ) -> Iterator[str]:
    """An OpenAI-compatible embeddings endpoint on loopback, answering from ``embedder``;
    yields its base URL (``http://127.0.0.1:<port>/v1``). Every text asked for is
    appended to ``texts`` when given, so a test can see what was (not) embedded."""
    handler = type("ScriptedHandler", (_Handler,), {"embedder": embedder, "texts": texts})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --------------------------------------------------------------------------- the store


def planted_settings(root: Path, url: str) -> Settings:
    """The settings a reader of the planted store has: the openai embedder at ``url``."""
    return Settings(store=root, embedder="openai", embed_model=PLANTED_MODEL_ID,
                    embed_url=url)


def planted_env(url: str) -> dict[str, str]:
    """The same settings as ``MEMHTML_*`` variables, for a command in another process."""
    return {"MEMHTML_EMBEDDER": "openai", "MEMHTML_EMBED_MODEL": PLANTED_MODEL_ID,
            "MEMHTML_EMBED_URL": url}


def planted_services(root: Path, url: str, at: datetime = RUN_AT) -> Services:
    return value_of(open_services(planted_settings(root, url), clock=FixedClock(at)))


def planted_deps(root: Path, url: str, at: datetime = RUN_AT) -> SleepDeps:
    """A sleep run's dependencies over the planted store, vectors from ``url``."""
    return sleep_deps(planted_services(root, url, at), head_gate).unwrap()


def write_planted_store(root: Path, corpus: PlantedCorpus, url: str,
                        at: datetime = IMPORT_AT) -> str:
    """A new store at ``root`` (a checkout) holding the planted files and a config
    naming the openai embedder, in one commit after the layout's; that commit's sha.

    The files go in byte for byte through the store's landing path (the doors would
    restamp them with the clock), and the checkout follows the branch."""
    value_of(init_repository(root))
    store = value_of(open_services(planted_settings(root, url), clock=FixedClock(at),
                                   require_store=False)).store()
    value_of(init_store(store.deps))
    changes = (*corpus.changes(), PathChange(STORE_CONFIG_PATH, STORE_CONFIG))

    def derive() -> IOResult[Draft, StoreError]:
        return store.deps.tip().map(lambda tip: Draft(
            parent=tip, changes=tuple(sorted(changes, key=lambda c: c.path)),
            ops=("write",), subject=f"plant a defect corpus of {len(corpus.files)} files",
            body="The planted-defect corpus and the embedder setting it is read with.",
            before={c.path: None for c in changes}, label="import"))

    return value_of(land(store.deps, derive)).commit


def run_planted_in_subprocess(root: Path, url: str, seed: str, at: datetime = RUN_AT) -> str:
    """``sleep run`` over the planted store in a fresh interpreter with
    ``PYTHONHASHSEED=seed``, vectors from ``url`` (served by this process); its tip."""
    script = (
        "import sys\n"
        "from datetime import datetime\n"
        "from pathlib import Path\n"
        "from memhtml.compose import value_of\n"
        "from memhtml.sleep.runner import run_sleep\n"
        "from tests.integration.sleep.planted_support import planted_deps\n"
        "deps = planted_deps(Path(sys.argv[1]), sys.argv[2], datetime.fromisoformat(sys.argv[3]))\n"
        "report = value_of(run_sleep(deps))\n"
        "assert report.ok, report\n"
        "print(report.head_sha)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", script, str(root), url, at.isoformat()],
                          check=True, capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[3])
    return done.stdout.strip().splitlines()[-1]
