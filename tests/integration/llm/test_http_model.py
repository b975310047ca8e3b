"""HttpLanguageModel against a real HTTP server on loopback, in both dialects.

The wait before the one retry a lost connection gets goes through a ManualClock, so
it runs instantly and is read back exactly; the jitter is seeded. A status code is the
server's answer to the bytes sent and is never retried. The key lives in an
explicit environment mapping, so the process environment is never read or changed.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path

import pytest
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.result import Success
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.llm import (
    ANTHROPIC_VERSION,
    BACKOFF_BASE_SECONDS,
    MAX_RESPONSE_BYTES,
    HttpLanguageModel,
)
from memhtml.contracts.errors import ModelError, ModelMalformed, ModelUnavailable
from memhtml.contracts.services import LanguageModel, ModelRequest
from memhtml.llm import Dialect, request_bytes
from tests.integration.llm.loopback import (
    GOOD_ANSWER,
    HUGE_DECLARED,
    RETRY_AFTER_SECONDS,
    RIGHT_KEY,
    TOOL,
    Seen,
    http_date,
    serving,
)

KEY_ENV = "MEMHTML_TEST_LLM_KEY"
LEAKY_KEY = "sk-LEAKCHECK-7f3a9c-do-not-print"
"""A key no server accepts, recognizable in any text it might leak into."""
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MODEL_ID = "loopback-model"
DIALECTS: tuple[Dialect, ...] = ("anthropic", "openai")
ENDPOINT = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["same", "different"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["verdict", "confidence"],
    "additionalProperties": False,
}
REQUEST = ModelRequest(system="You compare two notes and say whether they agree.",
                       prompt="m1: the deploy runs at nine\nm2: deploys start at 9am",
                       schema=SCHEMA, tool_name=TOOL, max_output_tokens=256)
EXTRA_BODY: dict[str, object] = {"metadata": {"user_id": "loopback"}}

_tokens = count()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Seen]]:
    with serving() as running:
        yield running


def token() -> str:
    """A fresh path token: this test's attempts are counted apart from the others'."""
    return f"t{next(_tokens)}"


def model(base: str, mode: str, tok: str, dialect: Dialect, clock: ManualClock, *,
          env: Mapping[str, str] | None = None, **options: object) -> HttpLanguageModel:
    settings: dict[str, object] = {"seed": 7}
    settings.update(options)
    timeout = settings.pop("timeout", 5.0)
    extra = settings.pop("extra_body", {})
    assert isinstance(timeout, float) and isinstance(extra, dict)
    return HttpLanguageModel(
        dialect, f"{base}/{mode}/{tok}/v1", MODEL_ID, KEY_ENV, timeout, extra, clock,
        environ={KEY_ENV: RIGHT_KEY} if env is None else env,
        **settings)  # type: ignore[arg-type]


def answer(result: IOResult[Mapping[str, object], ModelError]) -> Mapping[str, object]:
    assert is_successful(result), result
    return unsafe_perform_io(result.unwrap())


def failure(result: IOResult[Mapping[str, object], ModelError]) -> ModelError:
    assert not is_successful(result), "expected a failure"
    return unsafe_perform_io(result.failure())


def clock() -> ManualClock:
    return ManualClock(START)


# ------------------------------------------------------------------------- valid answers


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_valid_answer_is_the_checked_object(server: tuple[str, Seen],
                                              dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    client: LanguageModel = model(base, "good", tok, dialect, time)
    assert client.model_id == MODEL_ID
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    assert seen.attempts("good", tok) == 1
    assert time.sleeps == ()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_server_receives_exactly_the_bytes_the_pure_room_built(
        server: tuple[str, Seen], dialect: Dialect) -> None:
    base, seen = server
    tok = token()
    client = model(base, "good", tok, dialect, clock(), extra_body=EXTRA_BODY)
    answer(client.complete_json(REQUEST))
    answer(client.complete_json(REQUEST))
    built = request_bytes(dialect, REQUEST, MODEL_ID, EXTRA_BODY, stream=True)
    assert isinstance(built, Success)
    assert seen.bodies("good", tok) == [built.unwrap(), built.unwrap()]
    received = seen.last("good", tok)
    assert received.path == f"/good/{tok}{ENDPOINT[dialect]}"
    headers = received.headers
    assert headers["content-type"] == "application/json"
    if dialect == "anthropic":
        assert headers["x-api-key"] == RIGHT_KEY
        assert headers["anthropic-version"] == ANTHROPIC_VERSION
        assert "authorization" not in headers
    else:
        assert headers["authorization"] == f"Bearer {RIGHT_KEY}"
        assert "x-api-key" not in headers


def test_a_url_that_names_the_endpoint_is_not_extended(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    client = HttpLanguageModel("openai", f"{base}/good/{tok}/v1/chat/completions/", MODEL_ID,
                               None, 5.0, {}, clock(), environ={})
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    received = seen.last("good", tok)
    assert received.path == f"/good/{tok}/v1/chat/completions"
    assert "authorization" not in received.headers


def test_the_key_is_read_at_call_time(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    env: dict[str, str] = {}
    client = model(base, "auth", tok, "openai", clock(), env=env)
    assert isinstance(failure(client.complete_json(REQUEST)), ModelUnavailable)
    env[KEY_ENV] = RIGHT_KEY
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    assert seen.last("auth", tok).headers["authorization"] == f"Bearer {RIGHT_KEY}"


# ------------------------------------------------------------------------- bad answers


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("mode", ["offschema", "notool", "truncated", "cutjson", "refusal"])
def test_an_answer_out_of_contract_is_malformed_and_not_retried(
        server: tuple[str, Seen], dialect: Dialect, mode: str) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, mode, tok, dialect, time).complete_json(REQUEST))
    assert isinstance(got, ModelMalformed), got
    assert got.model_id == MODEL_ID
    assert got.reason
    assert seen.attempts(mode, tok) == 1
    assert time.sleeps == ()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_off_schema_answer_names_the_violation(server: tuple[str, Seen],
                                                  dialect: Dialect) -> None:
    base, _ = server
    got = failure(model(base, "offschema", token(), dialect, clock()).complete_json(REQUEST))
    assert isinstance(got, ModelMalformed)
    assert "verdict" in got.reason and "confidence" in got.reason


def test_an_oversized_answer_is_refused_unread(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    got = failure(model(base, "huge", tok, "openai", clock()).complete_json(REQUEST))
    assert isinstance(got, ModelMalformed)
    assert "oversized" in got.reason
    assert HUGE_DECLARED > MAX_RESPONSE_BYTES
    assert seen.attempts("huge", tok) == 1


# ------------------------------------------------------------------------- retries


@pytest.mark.parametrize("dialect", DIALECTS)
def test_429_is_not_retried_and_says_what_the_server_asked(server: tuple[str, Seen],
                                                           dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "ratelimit", tok, dialect, time).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "HTTP 429" in got.reason and f"wait {RETRY_AFTER_SECONDS}s" in got.reason
    assert seen.attempts("ratelimit", tok) == 1
    assert time.sleeps == ()


def test_retry_after_as_an_http_date_is_read_against_the_clock(
        server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    seen.retry_date = http_date(START + timedelta(seconds=5))
    got = failure(model(base, "retrydate", tok, "anthropic", time).complete_json(REQUEST))
    assert "HTTP 503" in got.reason and "wait 5s" in got.reason
    assert seen.attempts("retrydate", tok) == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_500_is_the_servers_answer_and_is_not_retried(server: tuple[str, Seen],
                                                        dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "fail", tok, dialect, time, retries=3).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "HTTP 500" in got.reason and "the model crashed" in got.reason
    assert seen.attempts("fail", tok) == 1
    assert time.sleeps == ()


def test_the_jitter_is_seeded(server: tuple[str, Seen]) -> None:
    base, _ = server
    waits = []
    for seed in (7, 7, 8):
        time = clock()
        answer(model(base, "reset", token(), "openai", time, seed=seed).complete_json(REQUEST))
        waits.append(time.sleeps)
    assert waits[0] == waits[1]
    assert waits[0] != waits[2]
    assert all(BACKOFF_BASE_SECONDS / 2 <= w[0] <= BACKOFF_BASE_SECONDS for w in waits)


def test_no_retries_means_one_attempt(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "reset", tok, "openai", time, retries=0).complete_json(REQUEST))
    assert "gave up after 1 attempt" in got.reason
    assert seen.attempts("reset", tok) == 1
    assert time.sleeps == ()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_reset_connection_is_retried_once(server: tuple[str, Seen],
                                            dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    assert answer(model(base, "reset", tok, dialect, time).complete_json(REQUEST)) \
        == GOOD_ANSWER
    assert seen.attempts("reset", tok) == 2
    assert len(time.sleeps) == 1


def test_a_connection_lost_twice_is_unavailable(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "resetall", tok, "openai", time).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "gave up after 2 attempts" in got.reason
    assert seen.attempts("resetall", tok) == 2


def test_a_body_cut_short_is_retried(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    assert answer(model(base, "cutconn", tok, "openai", time).complete_json(REQUEST)) \
        == GOOD_ANSWER
    assert seen.attempts("cutconn", tok) == 2
    assert len(time.sleeps) == 1


def test_a_timeout_gives_up_without_retrying(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "slow", tok, "openai", time, timeout=0.3
                        ).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "timed out after 0.3s" in got.reason
    assert seen.attempts("slow", tok) == 1
    assert time.sleeps == ()


def test_a_time_limit_below_the_timeout_bounds_the_call(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "slow", tok, "openai", time, timeout=30.0).complete_json(
        replace(REQUEST, time_limit=0.2)))
    assert "timed out after 0.2s" in got.reason
    assert seen.attempts("slow", tok) == 1


# ------------------------------------------------------------------------- refusals at once


@pytest.mark.parametrize("dialect", DIALECTS)
def test_401_names_the_variable_and_never_the_key(server: tuple[str, Seen],
                                                  dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    client = model(base, "auth", tok, dialect, time, env={KEY_ENV: LEAKY_KEY})
    got = failure(client.complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "HTTP 401" in got.reason
    assert f"${KEY_ENV}" in got.reason
    assert seen.attempts("auth", tok) == 1
    assert time.sleeps == ()
    # The server echoed the key into its body; none of it reaches any text of ours.
    for text in (got.reason, repr(got), str(got), repr(client), str(client)):
        assert LEAKY_KEY not in text
        assert "LEAKCHECK" not in text


def test_401_with_the_variable_unset_says_so(server: tuple[str, Seen]) -> None:
    base, _ = server
    got = failure(model(base, "auth", token(), "anthropic", clock(), env={}
                        ).complete_json(REQUEST))
    assert f"${KEY_ENV}" in got.reason
    assert "not set" in got.reason


def test_a_key_no_header_can_carry_is_refused_unsent(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    for bad in (f"{LEAKY_KEY}\nX-Injected: 1", f"{LEAKY_KEY}\u00e9"):
        client = model(base, "good", tok, "anthropic", clock(), env={KEY_ENV: bad})
        got = failure(client.complete_json(REQUEST))
        assert isinstance(got, ModelUnavailable)
        assert f"${KEY_ENV}" in got.reason and "LEAKCHECK" not in got.reason
    assert seen.attempts("good", tok) == 0


def test_whitespace_around_the_key_is_not_sent(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    client = model(base, "auth", tok, "anthropic", clock(), env={KEY_ENV: f" {RIGHT_KEY}\n"})
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    assert seen.last("auth", tok).headers["x-api-key"] == RIGHT_KEY


def test_a_key_echoed_in_an_error_is_redacted(server: tuple[str, Seen]) -> None:
    base, _ = server
    got = failure(model(base, "echo500", token(), "openai", clock(), retries=1,
                        env={KEY_ENV: LEAKY_KEY}).complete_json(REQUEST))
    assert "HTTP 500" in got.reason
    assert "[redacted]" in got.reason
    assert LEAKY_KEY not in got.reason and LEAKY_KEY not in repr(got)


def test_another_4xx_is_unavailable_at_once(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok, time = token(), clock()
    got = failure(model(base, "badrequest", tok, "openai", time).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "HTTP 400" in got.reason and "no such model" in got.reason
    assert seen.attempts("badrequest", tok) == 1
    assert time.sleeps == ()


def test_a_redirect_is_not_followed(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    got = failure(model(base, "redirect", tok, "anthropic", clock()).complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "HTTP 307" in got.reason
    assert seen.attempts("redirect", tok) == 1
    assert seen.attempts("good", tok) == 0


def test_an_unreachable_server_is_unavailable_without_retrying() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    time = clock()
    client = HttpLanguageModel("openai", f"http://127.0.0.1:{port}/v1", MODEL_ID, None, 2.0,
                               {}, time, environ={})
    got = failure(client.complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "cannot reach" in got.reason
    assert time.sleeps == ()


def test_the_openai_output_cap_field_can_be_renamed(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    client = model(base, "good", tok, "openai", clock(), token_field="max_tokens")
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    built = request_bytes("openai", REQUEST, MODEL_ID, {}, "max_tokens", stream=True)
    assert seen.bodies("good", tok) == [built.unwrap()]
    assert b'"max_tokens":256' in built.unwrap()


def test_a_request_the_pure_room_refuses_is_never_sent(server: tuple[str, Seen]) -> None:
    base, seen = server
    tok = token()
    off_subset = ModelRequest(system="s", prompt="p", schema={
        "type": "object", "properties": {"x": {"type": "string", "pattern": "^a"}},
        "required": ["x"]}, tool_name=TOOL, max_output_tokens=16)
    got = failure(model(base, "good", tok, "openai", clock()).complete_json(off_subset))
    assert isinstance(got, ModelUnavailable)
    assert "refused before sending" in got.reason and "pattern" in got.reason
    clash = model(base, "good", tok, "anthropic", clock(), extra_body={"model": "other"})
    got = failure(clash.complete_json(REQUEST))
    assert isinstance(got, ModelUnavailable)
    assert "extra_body would replace 'model'" in got.reason
    assert seen.attempts("good", tok) == 0


# ------------------------------------------------------------------------- construction


def test_the_repr_shows_no_secret() -> None:
    client = HttpLanguageModel("openai", "https://user:hunter2@llm.example/v1?key=abc",
                               MODEL_ID, KEY_ENV, 5.0, {}, clock(),
                               environ={KEY_ENV: LEAKY_KEY})
    shown = repr(client)
    assert "hunter2" not in shown and "key=abc" not in shown and LEAKY_KEY not in shown
    assert "https://llm.example/v1/chat/completions" in shown
    assert KEY_ENV in shown


@pytest.mark.parametrize(("arguments", "words"), [
    ({"dialect": "gemini"}, "dialect"),
    ({"url": "file:///etc/passwd"}, "http or https"),
    ({"url": "http:///v1"}, "http or https"),
    ({"model_id": ""}, "model_id"),
    ({"timeout": 0.0}, "timeout"),
    ({"timeout": float("nan")}, "timeout"),
    ({"retries": -1}, "retries"),
])
def test_bad_arguments_are_refused(arguments: dict[str, object], words: str) -> None:
    options: dict[str, object] = {"dialect": "openai", "url": "http://127.0.0.1:1/v1",
                                  "model_id": MODEL_ID, "key_env": None, "timeout": 5.0,
                                  "extra_body": {}, "clock": clock()}
    options.update(arguments)
    with pytest.raises(ValueError, match=words):
        HttpLanguageModel(**options)  # type: ignore[arg-type]


# ------------------------------------------------------------------------- live


@pytest.mark.skipif(not os.environ.get("MEMHTML_LLM_TEST_URL"),
                    reason="set MEMHTML_LLM_TEST_URL (and MEMHTML_LLM_TEST_MODEL) to ask a "
                           "real endpoint")
def test_live_endpoint_answers_on_schema() -> None:
    """Optional: a real server (a local OpenAI-compatible one, or a hosted API) answers
    the request on schema. ``MEMHTML_LLM_TEST_DIALECT`` picks the dialect (openai by
    default); ``MEMHTML_LLM_TEST_KEY_ENV`` names the key's variable, if any."""
    from memhtml.adapters.clock import SystemClock

    model_id = os.environ.get("MEMHTML_LLM_TEST_MODEL")
    if not model_id:
        pytest.skip("MEMHTML_LLM_TEST_MODEL names no model (no model id is built in)")
    dialect: Dialect = "anthropic" if os.environ.get("MEMHTML_LLM_TEST_DIALECT") \
        == "anthropic" else "openai"
    client = HttpLanguageModel(dialect, os.environ["MEMHTML_LLM_TEST_URL"], model_id,
                               os.environ.get("MEMHTML_LLM_TEST_KEY_ENV"), 120.0, {},
                               SystemClock())
    got = answer(client.complete_json(REQUEST))
    assert got["verdict"] in {"same", "different"}


# ------------------------------------------------------------------ streamed answers


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_streamed_answer_is_the_checked_object(server: tuple[str, Seen],
                                                 dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    assert answer(model(base, "sse", tok, dialect, time).complete_json(REQUEST)) \
        == GOOD_ANSWER
    assert json.loads(seen.last("sse", tok).body)["stream"] is True
    assert seen.last("sse", tok).headers["accept"].startswith("text/event-stream")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stream_cut_before_its_end_is_a_lost_connection_tried_once_more(
        server: tuple[str, Seen], dialect: Dialect) -> None:
    base, seen = server
    tok, time = token(), clock()
    assert answer(model(base, "ssecut", tok, dialect, time).complete_json(REQUEST)) \
        == GOOD_ANSWER
    assert seen.attempts("ssecut", tok) == 2
    assert len(time.sleeps) == 1


# ------------------------------------------------------------------ the remembered form


def sent_form(seen: Seen, tok: str) -> str:
    body = json.loads(seen.last("good", tok).body)
    fmt = body.get("response_format")
    return str(fmt["type"]) if isinstance(fmt, dict) else "prompt"


def test_a_remembered_form_is_where_a_later_model_starts(server: tuple[str, Seen],
                                                         tmp_path: Path) -> None:
    base, seen = server
    tok = token()
    memory = tmp_path / "llm-structured.json"
    url = f"{base}/good/{tok}/v1"
    memory.write_text(json.dumps({"version": 1, "endpoints": {
        f"{url}/chat/completions {MODEL_ID}": "json_object"}}))
    client = HttpLanguageModel("openai", url, MODEL_ID, None, 5.0, {}, clock(), environ={},
                               memory=memory)
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    assert sent_form(seen, tok) == "json_object"
    assert "remembered from an earlier run" in " ".join(client.notes())


@pytest.mark.parametrize("planted", ["garbage", "symlink", "fifo", "unknown-form"])
def test_a_memory_file_that_is_not_ours_is_ignored(server: tuple[str, Seen], tmp_path: Path,
                                                   planted: str) -> None:
    base, seen = server
    tok = token()
    memory = tmp_path / "llm-structured.json"
    url = f"{base}/good/{tok}/v1"
    key = f"{url}/chat/completions {MODEL_ID}"
    if planted == "garbage":
        memory.write_bytes(b"\xff{not json")
    elif planted == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps({"endpoints": {key: "prompt"}}))
        memory.symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(memory)
    else:
        memory.write_text(json.dumps({"endpoints": {key: "yaml"}}))
    client = HttpLanguageModel("openai", url, MODEL_ID, None, 5.0, {}, clock(), environ={},
                               memory=memory)
    assert answer(client.complete_json(REQUEST)) == GOOD_ANSWER
    assert sent_form(seen, tok) == "json_schema"
    assert client.notes() == ()
