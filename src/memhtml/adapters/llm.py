"""A language model over HTTP: the Anthropic Messages API, or any OpenAI-compatible chat
completions endpoint (hosted, or a local server on loopback).

The bytes sent and the reading of the answer belong to ``memhtml.llm`` (pure, tested
without a socket); this module only moves them: it adds the credentials, waits out
rate limits and transient faults, and sorts every failure into the contract's two
kinds. ``ModelUnavailable`` means no usable answer could be had (transport, timeout,
credentials, retries spent); ``ModelMalformed`` means an answer came back and was not
what was asked, which retrying the same bytes would not mend.

The key is a secret of the user's: only the *name* of its variable is held, the value
is read from the environment at each call, sent in a header and scrubbed from any text
an error carries. It is in no repr, no error and no log.
"""

from __future__ import annotations

import http.client
import math
import os
import random
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Final, TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure, Success

from memhtml import __version__
from memhtml.contracts.errors import ModelMalformed, ModelUnavailable
from memhtml.contracts.services import Clock, ModelRequest
from memhtml.llm import (
    DEFAULT_OPENAI_TOKEN_FIELD,
    DIALECTS,
    OPENAI_TOKEN_FIELDS,
    Dialect,
    OpenAITokenField,
    decode_answer,
    request_bytes,
)

ENDPOINTS: Final[Mapping[Dialect, str]] = {"anthropic": "/messages",
                                           "openai": "/chat/completions"}
"""The path each dialect posts to, appended to the configured base URL (which carries
its version segment, ``https://api.anthropic.com/v1``, ``http://127.0.0.1:8080/v1``)
unless the URL already ends with it."""
ANTHROPIC_VERSION: Final = "2023-06-01"
"""The Messages API version the anthropic body is written against."""

DEFAULT_KEY_ENV: Final = "MEMHTML_LLM_API_KEY"
DEFAULT_TIMEOUT_SECONDS: Final = 120.0
"""Per request. A structured answer of a few thousand tokens can take a minute on a
busy hosted model or a small local one, so the bound is generous; it exists so a
stalled connection cannot hang a night's run."""
DEFAULT_RETRIES: Final = 3
"""Retries after the first attempt: at most four requests per call."""
BACKOFF_BASE_SECONDS: Final = 1.0
BACKOFF_CAP_SECONDS: Final = 16.0
RETRY_AFTER_CAP_SECONDS: Final = 60.0
"""The longest wait a server's ``Retry-After`` is granted: a night run waits out a rate
limit, not an outage, and a header asking for an hour spends the attempts instead."""
MAX_RESPONSE_BYTES: Final = 4 << 20
"""A response body larger than this is refused unread. The answer inside is capped
much lower by the decoder; this bound only keeps a runaway body out of memory."""
_ERROR_BODY_CHARS: Final = 300
_HEADER_SAFE: Final = re.compile(r"[\x21-\x7e]+")
"""What a key may hold to be sent in a header: visible ASCII, no space or control."""
_REDACTED: Final = "[redacted]"


@dataclass(frozen=True, slots=True)
class _Answer:
    raw: bytes


@dataclass(frozen=True, slots=True)
class _Transient:
    """Worth another try: 429, a 5xx, a reset, a timeout, a body cut short."""

    reason: str
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class _Final:
    error: ModelUnavailable | ModelMalformed


_Outcome: TypeAlias = _Answer | _Transient | _Final


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: urllib would resend the credential headers to
    whatever host a redirect names (and turn the POST into a GET)."""

    def redirect_request(self, req: urllib.request.Request, fp: object, code: int,
                         msg: str, headers: object, newurl: str) -> None:
        return None


_OPENER: Final = urllib.request.build_opener(_NoRedirect)


class HttpLanguageModel:
    """``LanguageModel`` over one HTTP endpoint speaking ``dialect``.

    ``url`` is the API base (``/messages`` or ``/chat/completions`` is appended);
    ``key_env`` names the variable holding the key (None or unset: no credential
    header, as a local server needs none); ``extra_body`` holds top-level fields the
    body should carry besides the ones built here (a provider's thinking or routing
    switches; it may add fields, never replace one). ``token_field`` names the openai
    body's output cap (``max_tokens`` for local servers that know no other). Waits
    between attempts go through ``clock.sleep`` and their jitter comes from a
    ``random.Random(seed)``, so a test runs the back-off instantly and sees the same
    waits every time. ``environ`` replaces ``os.environ`` as where the key is read.
    """

    def __init__(
        self,
        dialect: Dialect,
        url: str,
        model_id: str,
        key_env: str | None,
        timeout: float,
        extra_body: Mapping[str, object],
        clock: Clock,
        retries: int = DEFAULT_RETRIES,
        seed: int = 0,
        *,
        token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, not {dialect!r}")
        bad_url = url_problem(url)
        if bad_url is not None:
            raise ValueError(bad_url)
        if not model_id.strip():
            raise ValueError("model_id must not be blank")
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        if retries < 0:
            raise ValueError("retries must not be negative")
        if token_field not in OPENAI_TOKEN_FIELDS:
            raise ValueError(f"token_field must be one of {', '.join(OPENAI_TOKEN_FIELDS)}")
        self.dialect: Final = dialect
        self.url: Final = endpoint_url(dialect, url)
        self.key_env: Final = key_env or None
        self.timeout: Final = timeout
        self.retries: Final = retries
        self.token_field: Final = token_field
        self._model_id = model_id
        self._extra_body = dict(extra_body)
        self._clock = clock
        self._environ = os.environ if environ is None else environ
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"HttpLanguageModel(dialect={self.dialect!r}, url={shown_url(self.url)!r}, "
                f"model_id={self._model_id!r}, key_env={self.key_env!r})")

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete_json(self, request: ModelRequest
                      ) -> IOResult[Mapping[str, object], ModelUnavailable | ModelMalformed]:
        """Send ``request``, retrying what may pass, and return the answer's object once
        it is decoded and checked against ``request.schema``. A request the pure room
        refuses to build is never sent: the model could not be asked."""
        key = (self._environ.get(self.key_env, "") if self.key_env else "").strip() or None
        if key is not None and not _HEADER_SAFE.fullmatch(key):
            # http.client would raise on it; the message names the variable, not the value.
            return IOFailure(ModelUnavailable(
                self._model_id, f"the key in ${self.key_env} holds characters an HTTP "
                                f"header cannot carry"))
        match request_bytes(self.dialect, request, self._model_id, self._extra_body,
                            self.token_field):
            case Success(body):
                sent = self._exchange(body, key)
            case Failure(refused):
                return IOFailure(ModelUnavailable(
                    self._model_id, f"the request was refused before sending: "
                                    f"{refused.reason}"))
        return sent.bind(lambda raw: IOResult.from_result(
            decode_answer(self.dialect, raw, request, self._model_id).alt(
                lambda error: ModelMalformed(error.model_id, self._scrub(error.reason, key)))))

    # ---------------------------------------------------------------- the wire

    def _exchange(self, body: bytes, key: str | None
                  ) -> IOResult[bytes, ModelUnavailable | ModelMalformed]:
        attempts = self.retries + 1
        last = "no attempt was made"
        for attempt in range(attempts):
            match self._attempt(body, key):
                case _Answer(raw):
                    return IOSuccess(raw)
                case _Final(error):
                    return IOFailure(error)
                case _Transient(reason, retry_after):
                    last = reason
                    if attempt + 1 < attempts:
                        self._clock.sleep(self._wait(attempt, retry_after))
        return IOFailure(ModelUnavailable(
            self._model_id, f"{last}; gave up after {attempts} attempt"
                            f"{'s' if attempts > 1 else ''}"))

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        """What the server asked for (capped), else an exponential back-off with equal
        jitter: half the step fixed, half drawn, so retries spread out but never
        shrink to nothing."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), RETRY_AFTER_CAP_SECONDS)
        step = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2.0 ** attempt)
        with self._lock:
            drawn = self._random.random()
        return step * (0.5 + 0.5 * drawn)

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"memhtml/{__version__}"}
        if self.dialect == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if key:
                headers["x-api-key"] = key
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _attempt(self, body: bytes, key: str | None) -> _Outcome:
        outgoing = urllib.request.Request(self.url, data=body, headers=self._headers(key),
                                          method="POST")
        try:
            with _OPENER.open(outgoing, timeout=self.timeout) as response:
                return self._answer_of(response)
        except urllib.error.HTTPError as exc:
            with exc:
                return self._status_outcome(exc, key)
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                return _Transient(f"timed out after {self.timeout:g}s")
            if isinstance(exc.reason, ConnectionResetError | ConnectionAbortedError):
                return _Transient(self._scrub(f"connection reset: {exc.reason}", key))
            return _Final(ModelUnavailable(self._model_id, self._scrub(
                f"cannot reach {shown_url(self.url)}: {exc.reason}", key)))
        except TimeoutError:
            return _Transient(f"timed out after {self.timeout:g}s")
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError,
                http.client.IncompleteRead) as exc:
            # RemoteDisconnected is a ConnectionResetError: the server dropped the line.
            return _Transient(f"connection lost: {type(exc).__name__}")
        except (OSError, http.client.HTTPException) as exc:
            return _Final(ModelUnavailable(self._model_id, self._scrub(
                f"connection failed: {type(exc).__name__}: {exc}", key)))

    def _answer_of(self, response: http.client.HTTPResponse) -> _Outcome:
        declared = _declared_length(response.headers.get("Content-Length"))
        if declared is not None and declared > MAX_RESPONSE_BYTES:
            return _Final(self._oversized(declared))
        raw = response.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            return _Final(self._oversized(len(raw)))
        if declared is not None and len(raw) < declared:
            return _Transient(f"the connection closed after {len(raw)} of {declared} bytes")
        return _Answer(raw)

    def _oversized(self, size: int) -> ModelMalformed:
        return ModelMalformed(self._model_id, f"the answer is oversized ({size} bytes, at "
                                              f"most {MAX_RESPONSE_BYTES} are read)")

    def _status_outcome(self, exc: urllib.error.HTTPError, key: str | None) -> _Outcome:
        code = exc.code
        if code in {401, 403}:
            # The body is not shown: some providers echo part of the key back.
            return _Final(ModelUnavailable(self._model_id, (
                f"HTTP {code}: the endpoint refused the credentials; check the key in "
                f"${self.key_env}" + ("" if key else " (it is not set)")
                if self.key_env else
                f"HTTP {code}: the endpoint wants a key; name its variable in llm_key_env")))
        detail = self._scrub(_error_detail(exc), key)
        if code == 429 or 500 <= code <= 599:
            return _Transient(f"HTTP {code}: {detail}",
                              retry_after_seconds(exc.headers.get("Retry-After"), self._clock))
        if 300 <= code <= 399:
            return _Final(ModelUnavailable(self._model_id, (
                f"HTTP {code}: the endpoint redirects, which is not followed; set llm_url "
                "to the address it names")))
        return _Final(ModelUnavailable(self._model_id, f"HTTP {code}: {detail}"))

    def _scrub(self, text: str, key: str | None) -> str:
        return text.replace(key, _REDACTED) if key else text


# ------------------------------------------------------------------------ helpers


def endpoint_url(dialect: Dialect, url: str) -> str:
    """The address ``dialect`` posts to under the base ``url`` (its query kept: some
    gateways want a version or a deployment there)."""
    parts = urllib.parse.urlsplit(url)
    base = parts.path.rstrip("/")
    endpoint = ENDPOINTS[dialect]
    path = base if base.endswith(endpoint) else base + endpoint
    return urllib.parse.urlunsplit(parts._replace(path=path, fragment=""))


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an endpoint, or None: only http(s) with a host, since urllib
    would as readily open a ``file:`` address."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        return f"llm_url is not a URL: {exc}"
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return f"llm_url must be an http or https address, not {shown_url(url)!r}"
    return None


def shown_url(url: str) -> str:
    """``url`` without what may be a secret: user info and the query string."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def retry_after_seconds(value: str | None, clock: Clock) -> float | None:
    """A ``Retry-After`` header as seconds from now: a delay, or an HTTP date read
    against ``clock``; None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - clock.now()).total_seconds()
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _declared_length(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().isdigit() else None


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(_ERROR_BODY_CHARS * 4).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        text = ""
    text = " ".join(text.split())[:_ERROR_BODY_CHARS]
    return text or str(exc.reason)
