"""Request bodies for the two dialects, as deterministic bytes.

**anthropic** is the Messages API with one tool the model is forced to call
(``tool_choice`` names it), so the answer arrives as the tool's parsed ``input``.
**openai** is chat completions with a strict ``json_schema`` response format, which
local OpenAI-compatible servers also accept.

A phase keeps its system prompt, schema and tool name identical across a night's
batches, and only the prompt changes. In the anthropic body the system block and the
tool carry ``cache_control``, which makes tools and system a cache-eligible prefix
(the API caches in the order tools, system, messages), so each batch after the first
pays for its member list alone. Bytes are canonical (sorted keys, no spaces), so equal
requests give equal bytes in every run and the cached prefix is byte-stable.

Both bodies send the schema closed: ``additionalProperties: false`` is written out on
every object schema, since the check reads its absence as ``false`` but a strict
provider only honours it spelled out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias, assert_never

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import VIOLATION_SEPARATOR
from memhtml.contracts.services import ModelRequest
from memhtml.llm.errors import RequestRefused
from memhtml.llm.json_text import encode_json
from memhtml.llm.schema import validate_schema

Dialect: TypeAlias = Literal["anthropic", "openai"]
DIALECTS: Final[tuple[Dialect, ...]] = ("anthropic", "openai")

OpenAITokenField: TypeAlias = Literal["max_completion_tokens", "max_tokens"]
OPENAI_TOKEN_FIELDS: Final[tuple[OpenAITokenField, ...]] = ("max_completion_tokens", "max_tokens")
DEFAULT_OPENAI_TOKEN_FIELD: Final[OpenAITokenField] = "max_completion_tokens"
"""OpenAI deprecated ``max_tokens`` for ``max_completion_tokens`` and its reasoning
models refuse the old name; some local servers (Ollama, LM Studio, older llama.cpp)
know only ``max_tokens`` and ignore the new one, leaving the output uncapped. So the
name is a setting, defaulting to the documented one; sending both is no way out, as a
strict server refuses a request that names both."""

TOOL_DESCRIPTION: Final = (
    "Record the answer: call this tool once, with one JSON object that matches the "
    "input schema exactly.")
"""The forced tool's description. Constant, so it stays part of the cached prefix."""

EPHEMERAL: Final[Mapping[str, object]] = {"type": "ephemeral"}

OPENAI_UNSENT_KEYWORDS: Final = frozenset({"minLength", "maxLength"})
"""Keywords left out of the openai response format: OpenAI's strict mode lists no
string-length keyword among those it supports, and a strict server refuses a schema with
one (HTTP 400) rather than ignoring it. They are not lost: the answer check enforces
them on every answer, whichever dialect it came through."""

RESERVED_EXTRA_KEYS: Final = frozenset({"stream"})
"""Fields ``extra_body`` may not add even though the body lacks them: a streamed answer
is a sequence of events, not the one JSON document the decoder reads."""

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What both providers accept as a tool or response-format name."""


def anthropic_body(
    request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
) -> Result[dict[str, object], RequestRefused]:
    """The Messages API body for ``request``: the system prompt and the tool cached, the
    tool forced, ``extra_body`` merged last (adding fields, never replacing one)."""
    def build(schema: Mapping[str, object]) -> dict[str, object]:
        return {
            "model": model_id,
            "max_tokens": request.max_output_tokens,
            "system": [{"type": "text", "text": request.system,
                        "cache_control": dict(EPHEMERAL)}],
            "tools": [{"name": request.tool_name, "description": TOOL_DESCRIPTION,
                       "input_schema": closed_schema(schema),
                       "cache_control": dict(EPHEMERAL)}],
            "tool_choice": {"type": "tool", "name": request.tool_name},
            "messages": [{"role": "user", "content": request.prompt}],
        }

    return _checked(request, model_id).map(build).bind(
        lambda body: merge_extra(body, extra_body))


def openai_body(
    request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
) -> Result[dict[str, object], RequestRefused]:
    """The chat-completions body for ``request``: a system and a user message, and the
    schema as a strict ``json_schema`` response format; ``extra_body`` merged last."""
    if token_field not in OPENAI_TOKEN_FIELDS:
        return Failure(RequestRefused(f"unknown token field {token_field!r}"))

    def build(schema: Mapping[str, object]) -> dict[str, object]:
        return {
            "model": model_id,
            token_field: request.max_output_tokens,
            "messages": [{"role": "system", "content": request.system},
                         {"role": "user", "content": request.prompt}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": request.tool_name, "strict": True,
                "schema": closed_schema(schema, drop=OPENAI_UNSENT_KEYWORDS)}},
        }

    return _checked(request, model_id).map(build).bind(
        lambda body: merge_extra(body, extra_body))


def request_body(
    dialect: Dialect, request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
) -> Result[dict[str, object], RequestRefused]:
    """The body of ``request`` in ``dialect`` (``token_field`` applies to openai only)."""
    match dialect:
        case "anthropic":
            return anthropic_body(request, model_id, extra_body)
        case "openai":
            return openai_body(request, model_id, extra_body, token_field)
        case _ as never:
            assert_never(never)


def request_bytes(
    dialect: Dialect, request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
) -> Result[bytes, RequestRefused]:
    """The bytes to POST for ``request``: canonical JSON in UTF-8, equal for equal
    requests. A value that is not JSON (a NaN, a set in ``extra_body``) refuses."""
    return request_body(dialect, request, model_id, extra_body, token_field).bind(
        lambda body: encode_json(body).alt(RequestRefused))


def merge_extra(body: Mapping[str, object],
                extra_body: Mapping[str, object] | None) -> Result[dict[str, object],
                                                                   RequestRefused]:
    """``body`` with ``extra_body``'s fields added. A field the body already has is
    refused, not replaced: the extra body carries provider-specific settings (thinking,
    reasoning effort), and silently overriding the schema, the model or the output cap
    would turn a setting into a way around the request's contract."""
    extra = dict(extra_body or {})
    problems: list[str] = []
    if not all(isinstance(key, str) for key in extra):
        problems.append("extra_body keys must be strings")
    clashes = sorted(str(key) for key in extra if key in body)
    if clashes:
        problems.append(f"extra_body would replace {', '.join(map(repr, clashes))}")
    reserved = sorted(str(key) for key in extra if key in RESERVED_EXTRA_KEYS)
    if reserved:
        problems.append(f"extra_body may not set {', '.join(map(repr, reserved))}")
    if problems:
        return Failure(RequestRefused(VIOLATION_SEPARATOR.join(problems)))
    return Success({**body, **extra})


def closed_schema(schema: Mapping[str, object],
                  drop: frozenset[str] = frozenset()) -> dict[str, object]:
    """A copy of a validated ``schema`` with ``additionalProperties: false`` written out
    on every object schema and the ``drop`` keywords removed, at every depth."""
    out: dict[str, object] = {key: value for key, value in schema.items() if key not in drop}
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if isinstance(types, list) and "object" in types:
        out["additionalProperties"] = False
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: closed_schema(sub, drop) if isinstance(sub, Mapping) else sub
                             for name, sub in properties.items()}
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = closed_schema(items, drop)
    return out


def _checked(request: ModelRequest,
             model_id: str) -> Result[Mapping[str, object], RequestRefused]:
    """The request's schema once everything both providers would refuse is ruled out."""
    problems: list[str] = []
    if not model_id.strip():
        problems.append("no model id: the settings must name one")
    if not _TOOL_NAME.fullmatch(request.tool_name):
        problems.append(f"tool name {request.tool_name!r} is not 1-64 of [A-Za-z0-9_-]")
    tokens = request.max_output_tokens
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        problems.append(f"max_output_tokens must be a positive integer, not {tokens!r}")
    # The Messages API refuses an empty text block, so neither may be blank in either
    # dialect: a phase that sends one has a bug, and both dialects should say so alike.
    if not request.system.strip():
        problems.append("the system prompt is blank")
    if not request.prompt.strip():
        problems.append("the prompt is blank")
    validated = validate_schema(request.schema)
    if isinstance(validated, Failure):
        problems.append(f"schema: {validated.failure().reason}")
    if problems:
        return Failure(RequestRefused(VIOLATION_SEPARATOR.join(problems)))
    return Success(request.schema)

