"""A language model over HTTP: the Anthropic Messages API, or any OpenAI-compatible chat
completions endpoint (hosted, or a local server on loopback).

The bytes sent and the reading of the answer belong to ``memhtml.llm`` (pure, tested
without a socket); this module only moves them: it adds the credentials, streams the
answer, finds which structured-output form the endpoint takes, and sorts every failure
into the contract's two kinds. ``ModelUnavailable`` means no usable answer could be had
(transport, timeout, credentials, a status the server answered with);
``ModelMalformed`` means an answer came back and was not what was asked, which
retrying the same bytes would not mend.

**Time is bounded.** Each call has one deadline (``llm_timeout``, or less when the
caller's ``ModelRequest.time_limit`` says so), and the answer is streamed: at the
deadline the connection is closed, which is what makes a server stop generating an
answer nobody will read. Only a connection lost on the way is tried once more; a
status code is the server's verdict on these bytes (a 4xx, a 5xx naming a validation
failure, a model that crashed on them) and the same bytes would get it again, and a
timeout means the model is slower than the night allows.

**Structured output negotiates.** ``llm_structured = auto`` sends OpenAI's
``json_schema`` response format first; a server whose error says the format is not
supported (llama-cpp-python's HTTP 500 "Input should be 'text' or 'json_object'")
gets the next form at once (``json_object`` in llama-cpp-python's spelling, then
``prompt``), and the form that got an answer is remembered for that endpoint and model
in this clone's state directory, so later runs start there. Each such step is said in
``notes()``, which the run's report carries.

The key is a secret of the user's: only the *name* of its variable is held, the value
is read from the environment at each call, sent in a header and scrubbed from any text
an error carries. It is in no repr, no error and no log.

It stays one module: the bytes and their reading are already ``memhtml.llm``'s, and
what is left, the wire and the structured-output negotiation, are methods reading one
object's state (endpoint, key variable, clock, lock, the form found), which a split
would only pass across a module line.
"""

from __future__ import annotations

import http.client
import math
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Final, Literal, TypeAlias

from returns.io import IOFailure, IOResult
from returns.result import Failure, Result, Success

from memhtml import __version__
from memhtml.contracts.errors import ModelMalformed, ModelUnavailable
from memhtml.contracts.local_files import read_regular, write_replacing
from memhtml.contracts.services import Clock, ModelRequest
from memhtml.llm import (
    DEFAULT_OPENAI_TOKEN_FIELD,
    DIALECTS,
    OPENAI_TOKEN_FIELDS,
    STRUCTURED_FORMS,
    Dialect,
    OpenAITokenField,
    StructuredForm,
    assemble,
    decode_answer,
    encode_json,
    event_data,
    is_final,
    parse_json,
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
DEFAULT_RETRIES: Final = 1
"""Retries after the first attempt, for a lost connection only: at most two requests
per call."""
BACKOFF_BASE_SECONDS: Final = 1.0
BACKOFF_CAP_SECONDS: Final = 16.0
MAX_RESPONSE_BYTES: Final = 4 << 20
"""A response body larger than this is refused unread. The answer inside is capped
much lower by the decoder; this bound only keeps a runaway body out of memory."""
StructuredSetting: TypeAlias = Literal["auto", "json_schema", "json_object", "prompt"]
STRUCTURED_SETTINGS: Final[tuple[StructuredSetting, ...]] = ("auto", *STRUCTURED_FORMS)
STRUCTURED_MEMORY_FILE: Final = "llm-structured.json"
"""In this clone's state directory: which structured-output form each endpoint and
model took, written by ``auto`` when it had to step down from ``json_schema``."""
_MEMORY_BYTES: Final = 64 * 1024
_MAX_EVENT_LINE: Final = 1 << 20
_UNSUPPORTED_TOPIC: Final = re.compile(
    r"response_format|json_schema|json_object|structured output|guided", re.IGNORECASE)
_UNSUPPORTED_WORDS: Final = re.compile(
    r"input should be|not supported|unsupported|not support|unknown|unrecognized|invalid|"
    r"not permitted|extra inputs|must be", re.IGNORECASE)
"""An error body that names the structured-output field *and* says it is refused:
llama-cpp-python's "Input should be 'text' or 'json_object'" (its pydantic message
names ``response_format`` in the location), LM Studio's "'response_format.type' must
be 'json_schema'", a proxy's "json_schema is not supported"."""
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


@dataclass(frozen=True, slots=True)
class _Unsupported:
    """The server refused the structured-output form it was sent (its words)."""

    reason: str


_Outcome: TypeAlias = _Answer | _Transient | _Final | _Unsupported


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
    body's output cap (``max_tokens`` for local servers that know no other);
    ``structured`` picks the openai body's structured-output form, or ``auto`` to find
    it (see the module docstring), remembering what it found in ``memory`` (None:
    nothing is remembered). ``timeout`` bounds a whole call, streamed answer included.
    The wait before a retry goes through ``clock.sleep`` and its jitter comes from a
    ``random.Random(seed)``, so a test runs it instantly and sees the same wait every
    time. ``environ`` replaces ``os.environ`` as where the key is read.
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
        structured: StructuredSetting = "auto",
        memory: Path | None = None,
        stream: bool = True,
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
        if structured not in STRUCTURED_SETTINGS:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_SETTINGS)}")
        self.dialect: Final = dialect
        self.url: Final = endpoint_url(dialect, url)
        self.key_env: Final = key_env or None
        self.timeout: Final = timeout
        self.retries: Final = retries
        self.token_field: Final = token_field
        self.structured: Final = structured
        self.stream: Final = stream
        self._memory = memory
        self._model_id = model_id
        self._extra_body = dict(extra_body)
        self._clock = clock
        self._environ = os.environ if environ is None else environ
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._form: StructuredForm | None = None
        self._notes: list[str] = []

    def __repr__(self) -> str:
        return (f"HttpLanguageModel(dialect={self.dialect!r}, url={shown_url(self.url)!r}, "
                f"model_id={self._model_id!r}, key_env={self.key_env!r})")

    @property
    def model_id(self) -> str:
        return self._model_id

    def notes(self) -> tuple[str, ...]:
        """What this model found out about its endpoint so far (a structured-output form
        refused, the one used instead, one remembered from an earlier run), each once."""
        with self._lock:
            return tuple(self._notes)

    def structured_form(self) -> StructuredForm:
        """The structured-output form the next openai request is sent in."""
        with self._lock:
            if self._form is None:
                self._form = self._first_form()
            return self._form

    def complete_json(self, request: ModelRequest
                      ) -> IOResult[Mapping[str, object], ModelUnavailable | ModelMalformed]:
        """Send ``request`` (streamed), stepping down the structured-output forms where
        ``auto`` lets it, and return the answer's object once it is decoded and checked
        against ``request.schema``. A request the pure room refuses to build is never
        sent: the model could not be asked."""
        key = (self._environ.get(self.key_env, "") if self.key_env else "").strip() or None
        if key is not None and not _HEADER_SAFE.fullmatch(key):
            # http.client would raise on it; the message names the variable, not the value.
            return IOFailure(ModelUnavailable(
                self._model_id, f"the key in ${self.key_env} holds characters an HTTP "
                                f"header cannot carry"))
        limit = self.timeout if request.time_limit is None else min(self.timeout,
                                                                    request.time_limit)
        deadline = time.monotonic() + max(limit, 0.0)
        form = self.structured_form()
        while True:
            match request_bytes(self.dialect, request, self._model_id, self._extra_body,
                                self.token_field, form, stream=self.stream):
                case Success(body):
                    outcome = self._exchange(body, key, deadline, limit)
                case Failure(refused):
                    return IOFailure(ModelUnavailable(
                        self._model_id, f"the request was refused before sending: "
                                        f"{refused.reason}"))
            match outcome:
                case _Unsupported(reason) if self.dialect == "openai":
                    stepped = self._step_down(form, reason)
                    if isinstance(stepped, ModelUnavailable):
                        return IOFailure(stepped)
                    form = stepped
                case _Unsupported(reason):
                    return IOFailure(ModelUnavailable(self._model_id, reason))
                case _Final(error):
                    return IOFailure(error)
                case _Transient(reason):
                    return IOFailure(ModelUnavailable(self._model_id, reason))
                case _Answer(raw):
                    self._accepted(form)
                    return IOResult.from_result(
                        decode_answer(self.dialect, raw, request, self._model_id).alt(
                            lambda error: ModelMalformed(error.model_id,
                                                         self._scrub(error.reason, key))))

    # ------------------------------------------------------ structured-output forms

    def _memory_key(self) -> str:
        return f"{shown_url(self.url)} {self._model_id}"

    def _first_form(self) -> StructuredForm:
        if self.structured != "auto":
            return self.structured
        remembered = self._remembered().get(self._memory_key())
        if remembered in STRUCTURED_FORMS and remembered != "json_schema":
            form: StructuredForm = "json_object" if remembered == "json_object" else "prompt"
            self._notes.append(
                f"the model endpoint {shown_url(self.url)} ({self._model_id}) is asked in "
                f"the {form} structured-output form, remembered from an earlier run in "
                f"{self._memory}; set llm_structured to choose another")
            return form
        return "json_schema"

    def _step_down(self, form: StructuredForm, reason: str
                   ) -> StructuredForm | ModelUnavailable:
        """The next form after the endpoint refused ``form``, or why there is none."""
        later = STRUCTURED_FORMS[STRUCTURED_FORMS.index(form) + 1:]
        if self.structured != "auto" or not later:
            return ModelUnavailable(self._model_id, (
                f"{reason}; the endpoint refuses the {form} structured-output form "
                "(llm_structured = auto finds one it takes)"))
        nxt = later[0]
        with self._lock:
            self._form = nxt
            self._notes.append(
                f"the model endpoint {shown_url(self.url)} ({self._model_id}) refused the "
                f"{form} structured-output form ({reason[:160]}); trying {nxt}")
        return nxt

    def _accepted(self, form: StructuredForm) -> None:
        """Remember ``form`` when ``auto`` had to step down to it (a failure to write
        is said in the notes and changes nothing else: the next run steps down again)."""
        if self.structured != "auto" or form == "json_schema":
            return
        memory = self._memory
        with self._lock:
            known = self._remembered()
            if known.get(self._memory_key()) == form:
                return
            known[self._memory_key()] = form
            if memory is None:
                return
            data = encode_json({"endpoints": known, "version": 1})
            try:
                memory.parent.mkdir(parents=True, exist_ok=True)
                write_replacing(memory, data.unwrap() + b"\n",
                                memory.with_name(memory.name + ".tmp"))
            except OSError as exc:
                self._notes.append(f"could not remember the {form} form in {memory}: {exc}")
                return
            self._notes.append(
                f"the model endpoint {shown_url(self.url)} ({self._model_id}) answered in "
                f"the {form} structured-output form; remembered in {memory}")

    def _remembered(self) -> dict[str, str]:
        """The forms remembered per endpoint; empty when the file is absent, is not a
        regular file, or does not read as this module writes it."""
        if self._memory is None:
            return {}
        try:
            raw = read_regular(self._memory, _MEMORY_BYTES)
        except OSError:
            return {}
        parsed = parse_json(raw)
        value = parsed.unwrap() if isinstance(parsed, Success) else None
        endpoints = value.get("endpoints") if isinstance(value, dict) else None
        if not isinstance(endpoints, dict):
            return {}
        return {str(k): str(v) for k, v in endpoints.items()
                if isinstance(v, str) and v in STRUCTURED_FORMS}

    # ---------------------------------------------------------------- the wire

    def _exchange(self, body: bytes, key: str | None, deadline: float, limit: float
                  ) -> _Outcome:
        """One attempt, and one more only when the connection was lost on the way."""
        attempts = self.retries + 1
        outcome: _Outcome = _Transient("no attempt was made")
        for attempt in range(attempts):
            outcome = self._attempt(body, key, deadline, limit)
            if not isinstance(outcome, _Transient):
                return outcome
            if attempt + 1 < attempts:
                wait = min(self._wait(attempt), max(deadline - time.monotonic(), 0.0))
                self._clock.sleep(wait)
        assert isinstance(outcome, _Transient)
        return _Transient(f"{outcome.reason}; gave up after {attempts} attempt"
                          f"{'s' if attempts > 1 else ''}")

    def _wait(self, attempt: int) -> float:
        """An exponential back-off with equal jitter: half the step fixed, half drawn."""
        step = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2.0 ** attempt)
        with self._lock:
            drawn = self._random.random()
        return step * (0.5 + 0.5 * drawn)

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json",
                   "Accept": "text/event-stream, application/json" if self.stream
                   else "application/json",
                   "User-Agent": f"memhtml/{__version__}"}
        if self.dialect == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if key:
                headers["x-api-key"] = key
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _attempt(self, body: bytes, key: str | None, deadline: float, limit: float
                 ) -> _Outcome:
        remaining = deadline - time.monotonic()
        gave_up = _Final(ModelUnavailable(
            self._model_id, f"timed out after {limit:g}s (the connection was closed, so "
                            "the server stops generating)"))
        if remaining <= 0:
            return gave_up
        outgoing = urllib.request.Request(self.url, data=body, headers=self._headers(key),
                                          method="POST")
        try:
            with _OPENER.open(outgoing, timeout=remaining) as response:
                return self._answer_of(response, deadline, gave_up)
        except urllib.error.HTTPError as exc:
            with exc:
                return self._status_outcome(exc, key)
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                return gave_up
            if isinstance(exc.reason, ConnectionResetError | ConnectionAbortedError):
                return _Transient(self._scrub(f"connection reset: {exc.reason}", key))
            return _Final(ModelUnavailable(self._model_id, self._scrub(
                f"cannot reach {shown_url(self.url)}: {exc.reason}", key)))
        except TimeoutError:
            return gave_up
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError,
                http.client.IncompleteRead) as exc:
            # RemoteDisconnected is a ConnectionResetError: the server dropped the line.
            return _Transient(f"connection lost: {type(exc).__name__}")
        except (OSError, http.client.HTTPException) as exc:
            return _Final(ModelUnavailable(self._model_id, self._scrub(
                f"connection failed: {type(exc).__name__}: {exc}", key)))

    def _answer_of(self, response: http.client.HTTPResponse, deadline: float,
                   gave_up: _Final) -> _Outcome:
        kind = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            return self._stream_of(response, deadline, gave_up)
        declared = _declared_length(response.headers.get("Content-Length"))
        if declared is not None and declared > MAX_RESPONSE_BYTES:
            return _Final(self._oversized(declared))
        _read_timeout(response, deadline - time.monotonic())
        raw = response.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            return _Final(self._oversized(len(raw)))
        if declared is not None and len(raw) < declared:
            return _Transient(f"the connection closed after {len(raw)} of {declared} bytes")
        return _Answer(raw)

    def _stream_of(self, response: http.client.HTTPResponse, deadline: float,
                   gave_up: _Final) -> _Outcome:
        """The events of a streamed answer, read line by line until the final one, each
        read bounded by what is left of the call's time; past it, the caller's ``with``
        closes the connection."""
        lines: list[str] = []
        size = 0
        finished = False
        while not finished:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return gave_up
            _read_timeout(response, remaining)
            line = response.readline(_MAX_EVENT_LINE)
            if not line:
                break
            size += len(line)
            if size > MAX_RESPONSE_BYTES:
                return _Final(self._oversized(size))
            lines.append(line.decode("utf-8", "replace"))
            if line.startswith(b"data:"):
                finished = is_final(self.dialect, lines[-1][len("data:"):].strip())
        events = event_data(lines)
        assembled = assemble(self.dialect, events)
        if not finished and not _says_it_finished(assembled):
            # Closed before the final event, and with no finish reason either: the
            # connection was lost, not the answer ended (some servers send no [DONE]).
            return _Transient(f"the stream was cut after {len(events)} event(s)")
        match assembled:
            case Success(payload):
                return encode_json(payload).map(_Answer).value_or(
                    _Final(ModelMalformed(self._model_id, "the stream is not JSON")))
            case Failure(reason):
                return _Final(ModelMalformed(self._model_id, reason))
        return gave_up

    def _oversized(self, size: int) -> ModelMalformed:
        return ModelMalformed(self._model_id, f"the answer is oversized ({size} bytes, at "
                                              f"most {MAX_RESPONSE_BYTES} are read)")

    def _status_outcome(self, exc: urllib.error.HTTPError, key: str | None) -> _Outcome:
        """A status is the server's answer to these bytes: never retried. One whose
        body says the structured-output form is refused is told apart, so ``auto``
        can send the next form."""
        code = exc.code
        if code in {401, 403}:
            # The body is not shown: some providers echo part of the key back.
            return _Final(ModelUnavailable(self._model_id, (
                f"HTTP {code}: the endpoint refused the credentials; check the key in "
                f"${self.key_env}" + ("" if key else " (it is not set)")
                if self.key_env else
                f"HTTP {code}: the endpoint wants a key; name its variable in llm_key_env")))
        if 300 <= code <= 399:
            return _Final(ModelUnavailable(self._model_id, (
                f"HTTP {code}: the endpoint redirects, which is not followed; set llm_url "
                "to the address it names")))
        full = self._scrub(_error_text(exc), key)
        detail = " ".join(full.split())[:_ERROR_BODY_CHARS] or str(exc.reason)
        if 400 <= code <= 599 and refuses_structured_form(full):
            return _Unsupported(f"HTTP {code}: {detail}")
        later = retry_after_seconds(exc.headers.get("Retry-After"), self._clock)
        wait = f" (it asks to wait {later:g}s; the batch is left for a later run)" \
            if later is not None else ""
        return _Final(ModelUnavailable(self._model_id, f"HTTP {code}: {detail}{wait}"))

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


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(_ERROR_BODY_CHARS * 8).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""


def _says_it_finished(assembled: Result[dict[str, object], str]) -> bool:
    """Whether an assembled stream names how it ended (a finish or stop reason)."""
    if not isinstance(assembled, Success):
        return False
    payload = assembled.unwrap()
    choices = payload.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("finish_reason") is not None
    return payload.get("stop_reason") is not None or payload.get("type") == "error" \
        or "error" in payload


def refuses_structured_form(body: str) -> bool:
    """Whether an error body says the structured-output form it was sent is refused:
    it names the form's field and says it is not accepted."""
    return bool(_UNSUPPORTED_TOPIC.search(body) and _UNSUPPORTED_WORDS.search(body))


def _read_timeout(response: http.client.HTTPResponse, seconds: float) -> None:
    """Bound the next read on ``response``'s socket by ``seconds`` (what is left of the
    call), where the socket can be reached: urllib sets the timeout once, at connect,
    and a stream read past the deadline would otherwise wait a whole timeout more."""
    raw = getattr(response.fp, "raw", None)
    sock = getattr(raw, "_sock", None)
    settimeout = getattr(sock, "settimeout", None)
    if callable(settimeout):
        settimeout(max(seconds, 0.001))
