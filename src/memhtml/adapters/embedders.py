"""Document and query embedders: hashing, any OpenAI-compatible endpoint, a local model.

Every embedder checks what it hands back (one vector per text, in order, each the
space's width, every number finite) and turns a violation into ``EmbedFailure``:
a stored vector of the wrong width or with a NaN would poison every cosine taken
against the cache afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import itertools
import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache, reduce
from pathlib import Path

import numpy as np
import numpy.typing as npt
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.extras import (
    LOCAL_RUNTIME_MODULES,
    absent_modules,
    local_extra_missing,
)
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Vector, VectorSpace

API_KEY_ENV = "MEMHTML_EMBED_API_KEY"
"""The environment variable the edge reads an endpoint's key from. Adapters take the
value, never the variable, so nothing here reads the environment."""

HASHING_MODEL_ID = "hashing-v1"
HASHING_DEFAULT_DIMENSION = 256

_WORD = re.compile(r"[a-z0-9]+")


# --------------------------------------------------------------------------- hashing


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    # blake2b rather than hash(): str hashing is salted per process, and a vector
    # stored by one run must match a query embedded by the next.
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(),
                            "big")
    sign = 1.0 if digest >> 63 else -1.0
    return digest % dimension, sign


def hashing_features(text: str) -> list[str]:
    """The features a text hashes: lowercase word unigrams, then adjacent-word bigrams."""
    words = _WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


class HashingEmbedder:
    """Feature hashing of word unigrams and bigrams into a signed, L2-normalized vector.

    Deterministic across processes and machines and free of dependencies: the
    embedder for tests and the gate. It matches words, not meanings; its space is
    ``hashing-v1`` at the chosen width, so two widths never share a cache.
    """

    def __init__(self, dimension: int = HASHING_DEFAULT_DIMENSION) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._space = VectorSpace(HASHING_MODEL_ID, dimension)

    @property
    def space(self) -> VectorSpace:
        return self._space

    def vector_of(self, text: str) -> Vector:
        """The vector of one text; the zero vector when it has no word."""
        dimension = self._space.dimension
        out = np.zeros(dimension, dtype=np.float64)
        for feature in hashing_features(text):
            index, sign = _bucket(feature, dimension)
            out[index] += sign
        norm = float(np.linalg.norm(out))
        if norm > 0.0:
            out /= norm
        return out.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        return IOSuccess([self.vector_of(text) for text in texts])

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return IOSuccess(self.vector_of(text))


# --------------------------------------------------------------------------- checks


def checked_vectors(
    space: VectorSpace, expected: int, rows: Sequence[object]
) -> IOResult[list[Vector], EmbedFailure]:
    """``rows`` as float32 vectors, or a failure when the count, a width or a value is off."""
    if len(rows) != expected:
        return IOFailure(EmbedFailure(space.model_id,
                                      f"asked for {expected} vectors, got {len(rows)}"))
    out: list[Vector] = []
    for position, row in enumerate(rows):
        try:
            vector = np.asarray(row, dtype=np.float32)
        except (TypeError, ValueError):
            return IOFailure(EmbedFailure(space.model_id,
                                          f"vector {position} is not a list of numbers"))
        if vector.shape != (space.dimension,):
            return IOFailure(EmbedFailure(
                space.model_id,
                f"vector {position} has shape {vector.shape}, the space is "
                f"{space.dimension} wide"))
        if not np.all(np.isfinite(vector)):
            return IOFailure(EmbedFailure(space.model_id,
                                          f"vector {position} holds a non-finite number"))
        out.append(vector)
    return IOSuccess(out)


# --------------------------------------------------------------------------- OpenAI-compatible


DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_BATCH_SIZE = 64
_ERROR_BODY_CHARS = 300


class OpenAICompatibleEmbedder:
    """``POST {base_url}/embeddings`` as OpenAI defines it, which Ollama, llama.cpp's
    server, vLLM and most hosted providers also speak.

    Texts go out in chunks of ``batch_size``; each answer must hold one embedding per
    input (by ``index`` when the server sends it, else in order). When ``dimension``
    is left out, the first answer fixes the space's width and later answers must
    match it; ``space`` cannot be read before that (call ``resolve_space``).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimension: int | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        if dimension is not None and dimension < 1:
            raise ValueError("dimension must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.batch_size = batch_size
        self._api_key = api_key
        self._dimension = dimension
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        # The key stays out of reprs, logs and error messages.
        return (f"OpenAICompatibleEmbedder(base_url={self.base_url!r}, model={self.model!r}, "
                f"dimension={self._dimension!r})")

    @property
    def space(self) -> VectorSpace:
        if self._dimension is None:
            raise RuntimeError("the width of this endpoint's space is not known yet: pass "
                               "dimension= or call resolve_space() first")
        return VectorSpace(self.model, self._dimension)

    @property
    def known_width(self) -> bool:
        """True once the space's width is known (given, or learnt from an answer)."""
        return self._dimension is not None

    def resolve_space(self) -> IOResult[VectorSpace, EmbedFailure]:
        """The space, asking the endpoint for one vector when the width is not known."""
        if self._dimension is not None:
            return IOSuccess(self.space)
        return self.embed(["dimension probe"]).map(lambda _vectors: self.space)

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        chunks = [list(texts[start : start + self.batch_size])
                  for start in range(0, len(texts), self.batch_size)]

        def then(done: IOResult[tuple[Vector, ...], EmbedFailure], chunk: list[str]
                 ) -> IOResult[tuple[Vector, ...], EmbedFailure]:
            # The first failed batch stops the rest: nothing more is sent.
            return done.bind(lambda so_far: self._embed_batch(chunk).map(
                lambda more: (*so_far, *more)))

        start: IOResult[tuple[Vector, ...], EmbedFailure] = IOSuccess(())
        return reduce(then, chunks, start)

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return self.embed([text]).map(lambda vectors: vectors[0])

    def _failure(self, reason: str) -> IOResult[list[Vector], EmbedFailure]:
        return IOFailure(EmbedFailure(self.model, reason))

    def _embed_batch(self, texts: list[str]) -> IOResult[list[Vector], EmbedFailure]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(f"{self.base_url}/embeddings", data=body,
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc)
            hint = " (check the API key)" if exc.code in {401, 403} else ""
            return self._failure(f"HTTP {exc.code}{hint}: {detail}")
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                return self._failure(f"timed out after {self.timeout:g}s")
            return self._failure(f"cannot reach {self.base_url}: {exc.reason}")
        except TimeoutError:
            return self._failure(f"timed out after {self.timeout:g}s")
        except (OSError, http.client.HTTPException) as exc:
            # OSError: resets and refusals; HTTPException: a cut or garbled answer.
            return self._failure(f"connection failed: {type(exc).__name__}: {exc}")
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return self._failure(f"malformed JSON in the answer: {exc}")
        rows = _rows_of(payload, len(texts))
        if isinstance(rows, str):
            return self._failure(rows)
        with self._lock:
            if self._dimension is None and rows:
                first = rows[0]
                if isinstance(first, list) and first:
                    self._dimension = len(first)
            if self._dimension is None:
                return self._failure("the answer held no vector to learn the width from")
            space = VectorSpace(self.model, self._dimension)
        return checked_vectors(space, len(texts), rows)


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    text = " ".join(text.split())[:_ERROR_BODY_CHARS]
    return text or str(exc.reason)


def _rows_of(payload: object, expected: int) -> list[object] | str:
    """The embeddings of an answer in input order, or why the answer is out of contract."""
    if not isinstance(payload, dict):
        return "the answer is not a JSON object"
    data = payload.get("data")
    if not isinstance(data, list):
        return "the answer has no 'data' list"
    if len(data) != expected:
        return f"asked for {expected} vectors, got {len(data)}"
    rows: list[object] = [None] * expected
    seen: set[int] = set()
    for position, item in enumerate(data):
        if not isinstance(item, dict) or "embedding" not in item:
            return f"item {position} has no 'embedding'"
        index = item.get("index", position)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected \
                or index in seen:
            return f"item {position} has an out-of-range or repeated index {index!r}"
        seen.add(index)
        embedding = item["embedding"]
        if not isinstance(embedding, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in embedding
        ):
            return f"item {position}'s embedding is not a list of numbers"
        rows[index] = embedding
    return rows


# --------------------------------------------------------------------------- local model


LOCAL_MODEL_ID = "all-MiniLM-L6-v2/onnx-int8-v2"
"""The space the shipped model's vectors live in. v2: unsigned int8 weights, whose
vectors are the same on every CPU (v1's signed ones saturated on CPUs without VNNI,
tools/build_local_model.py says how much); a cache of v1 vectors is another space,
so it is embedded again rather than mixed."""
"""The local space: all-MiniLM-L6-v2, exported to ONNX and quantized to int8 weights.
Its vectors differ slightly from the float model's, so it is a space of its own. The
shipped file is the same export the first releases made on each machine, so caches
filled then stay valid; a different export must take a new id."""
LOCAL_DIMENSION = 384
LOCAL_MAX_TOKENS = 256
"""The model's own limit (sentence-transformers' max_seq_length for it); longer texts
are cut, as the float model cuts them."""
LOCAL_BATCH_SIZE = 1
"""Texts per forward pass. Dynamic int8 quantization scales activations per call, so in
a batch a text's vector shifts with its neighbours (cosine 0.992 between a short text
alone and beside long ones); one text a call gives every text one vector."""
LOCAL_MODEL_FILE = "model.onnx"
LOCAL_TOKENIZER_FILE = "tokenizer.json"
LOCAL_MANIFEST_FILE = "manifest.json"
"""What the model folder holds: the int8 graph, the model's own tokenizer, and the
record of how they were built (tools/build_local_model.py writes all three)."""


def default_workers() -> int:
    """One worker per CPU this process may run on.

    Each worker runs one text at a time, single-threaded, through the one shared
    session (ONNX Runtime lets threads share a session and releases the GIL while it
    runs). On 2 cores that embedded SciFact abstracts at about 47 documents per
    CPU-second, against 28 for one call spread over both cores, whose threads spin
    between the small matrix products (bench/embed_local.py).
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def shipped_model_dir() -> Path:
    """The model folder installed with the package (package data)."""
    return Path(__file__).resolve().parent.parent / "models" / "all-minilm-l6-v2-int8"


class LocalEmbedder:
    """all-MiniLM-L6-v2 on the CPU through ONNX Runtime, offline: ``memhtml[local]``.

    The int8 model and its tokenizer ship inside the package, so nothing is fetched
    or exported at run time and torch is never imported: the extra is ONNX Runtime and
    ``tokenizers`` alone. ``model_dir`` names another folder of the same layout (a
    rebuild by tools/build_local_model.py). Texts are tokenized with the model's own
    tokenizer, run one a call, mean-pooled over real tokens and L2-normalized, as
    sentence-transformers does for this model.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        batch_size: int = LOCAL_BATCH_SIZE,
        threads: int | None = None,
        workers: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        if workers is not None and workers < 1:
            raise ValueError("workers must be positive")
        self.model_dir = model_dir if model_dir is not None else shipped_model_dir()
        self.batch_size = batch_size
        self.threads = threads
        self.workers = workers if workers is not None else default_workers()
        self._space = VectorSpace(LOCAL_MODEL_ID, LOCAL_DIMENSION)
        self._runner: _OnnxRunner | None = None
        self._lock = threading.Lock()

    @property
    def space(self) -> VectorSpace:
        return self._space

    @property
    def model_path(self) -> Path:
        return self.model_dir / LOCAL_MODEL_FILE

    def missing_extra(self) -> str | None:
        """Why this machine cannot run the model (the extra's modules it lacks, and
        the pip command that adds them); None when it can."""
        if self._runner is not None:
            return None
        missing = absent_modules(LOCAL_RUNTIME_MODULES)
        return local_extra_missing(missing) if missing else None

    def _loaded(self) -> _OnnxRunner:
        with self._lock:
            if self._runner is None:
                if not self.model_path.exists():
                    fix = ("the package's model data is missing: reinstall memhtml"
                           if self.model_dir == shipped_model_dir() else
                           f"build one with python -m tools.build_local_model --out "
                           f"{self.model_dir}")
                    raise FileNotFoundError(f"no model file at {self.model_path} ({fix})")
                self._runner = _OnnxRunner(self.model_path,
                                           self.model_dir / LOCAL_TOKENIZER_FILE,
                                           self.threads, self.workers)
            return self._runner

    def preload(self) -> None:
        """Start loading the model on a background thread, so a command that will embed
        (a write) has it ready by then: importing ONNX Runtime and opening the session
        take about a quarter of a second, which then overlaps the write's own work. A
        failure is left for the ``embed`` that needs the model to report."""
        if self._runner is not None or self.missing_extra() is not None:
            return
        threading.Thread(target=self._load_quietly, name="memhtml-model", daemon=True).start()

    def _load_quietly(self) -> None:
        with contextlib.suppress(*_LOCAL_ERRORS):
            self._loaded()

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        if not texts:
            return IOSuccess([])
        problem = self.missing_extra()
        if problem is not None:
            return IOFailure(EmbedFailure(self._space.model_id, problem))
        unreadable = _first_not_utf8(texts)
        if unreadable is not None:
            # The tokenizer raises a TypeError on such a text; the port answers a value.
            return IOFailure(EmbedFailure(
                self._space.model_id,
                f"text {unreadable} holds a lone surrogate: it is not UTF-8, which the "
                f"tokenizer reads"))
        try:
            matrix = self._loaded().encode(list(texts), self.batch_size)
        except ImportError as exc:
            # A module the check above did not name (a dependency of the extra's own).
            return IOFailure(EmbedFailure(self._space.model_id, local_extra_missing(
                [exc.name or type(exc).__name__])))
        except _LOCAL_ERRORS as exc:
            return IOFailure(EmbedFailure(self._space.model_id,
                                          f"{type(exc).__name__}: {exc}"))
        return checked_vectors(self._space, len(texts), list(matrix))

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return self.embed([text]).map(lambda vectors: vectors[0])


def _first_not_utf8(texts: Sequence[str]) -> int | None:
    """The position of the first text UTF-8 cannot encode (one holding a lone
    surrogate, as a ``surrogateescape`` decode leaves), or None."""
    for position, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return position
    return None


# What loading or running the model raises: a missing extra, a missing or unreadable
# file, onnxruntime's own errors (RuntimeError subclasses), a bad input.
_LOCAL_ERRORS = (ImportError, OSError, RuntimeError, ValueError)


def _onnxruntime_errors() -> tuple[type[Exception], ...]:
    """onnxruntime's own exception classes (Fail, InvalidProtobuf, ...), which derive
    from Exception directly rather than from RuntimeError."""
    from onnxruntime.capi import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        onnxruntime_pybind11_state as state,
    )

    return tuple(value for value in vars(state).values()
                 if isinstance(value, type) and issubclass(value, Exception))


class _OnnxRunner:
    """A loaded session and tokenizer; ``encode`` is the model's forward pass and pooling.

    ``workers`` threads share the session; with more than one, each call runs on one
    intra-op thread unless ``threads`` says otherwise, so the calls do not fight over
    the cores. A text's vector does not depend on either setting (the integer kernels
    and the per-call activation scale see the same one text).
    """

    def __init__(self, model: Path, tokenizer: Path, threads: int | None,
                 workers: int) -> None:
        self.workers = workers
        try:
            self._open(model, tokenizer, threads if threads is not None
                       else (1 if workers > 1 else None))
        except _onnxruntime_errors() as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc

    def _open(self, model: Path, tokenizer: Path, threads: int | None) -> None:
        import onnxruntime  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from tokenizers import Tokenizer  # type: ignore[import-not-found,import-untyped,unused-ignore]

        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(model), options,
                                                    providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        # The shipped tokenizer.json pads and cuts at 128; the model reads up to 256.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(LOCAL_MAX_TOKENS)

    def encode(self, texts: list[str], batch_size: int) -> npt.NDArray[np.float32]:
        encodings = self.tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        # Longest first, so each batch pads to lengths close to its own, and the
        # workers finish together rather than one waiting on a long text at the end.
        order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
        batches = [order[start : start + batch_size]
                   for start in range(0, len(order), batch_size)]
        out = np.zeros((len(texts), LOCAL_DIMENSION), dtype=np.float32)

        def run(rows: list[int]) -> None:
            width = max(lengths[i] for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for j, i in enumerate(rows):
                ids[j, : lengths[i]] = encodings[i].ids
                mask[j, : lengths[i]] = 1
            feed = {"input_ids": ids, "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids)}
            try:
                hidden = self.session.run(None, feed)[0]
            except _onnxruntime_errors() as exc:
                raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
            weights = mask[:, :, None].astype(np.float32)
            pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
            pooled /= np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled  # disjoint rows: the workers never write the same one

        if self.workers == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                # list() re-raises the first failure here, in the caller's thread.
                list(pool.map(run, batches))
        return out
