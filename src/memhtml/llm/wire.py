"""Request bodies for the two dialects, as deterministic bytes.

**anthropic** is the Messages API with one tool the model is forced to call
(``tool_choice`` names it), so the answer arrives as the tool's parsed ``input``.
**openai** is chat completions, its structured output in one of three forms
(``StructuredForm``): OpenAI's strict ``json_schema`` response format;
``json_object`` carrying the schema the way llama-cpp-python spells it
(``{"type": "json_object", "schema": ...}``), for servers that refuse the first; or
``prompt``, no response format at all, the schema and one example answer written into
the system prompt, for servers that know neither (the answer is then read as strictly
as any other: one JSON object, nothing around it). Which form a server takes is the
adapter's to find out; this module only spells each.

Both dialects can ask for the answer streamed (``stream: true``): the adapter reads
server-sent events, so giving up on a call closes the connection and the server stops
generating, where a plain request would keep it busy with an answer nobody reads.

A phase keeps its system prompt and tool name identical across a night's batches, and
its schema across batches of one size (a batch's schema names its keys, ``m1``..``mN``),
so only the prompt changes from one full batch to the next. In the anthropic body the
system block and the tool carry ``cache_control``, which makes tools and system a
cache-eligible prefix (the API caches in the order tools, system, messages), so each
batch after the first pays for its member list alone. Bytes are canonical (sorted keys,
no spaces), so equal requests give equal bytes in every run and the cached prefix is
byte-stable.

One exception to the sorting: a schema's ``properties`` keep the order the phase
declared them in (``canonical_order``). A grammar-constrained decoder writes an
object's members in the order its schema lists them, so that order is the order the
model reasons in: the members before the canonical they make, the judgement before
the confidence that qualifies it. Sorted, ``confidence`` would come before the verdict
and ``canonical`` before ``members``. ``required`` follows the same order.

Both bodies send the schema closed: ``additionalProperties: false`` is written out on
every object schema, since the check reads its absence as ``false`` but a strict
provider only honours it spelled out. Every bound the schema states (``minLength``,
``maxLength``, ``minimum``, ``maximum``, ``minItems``, ``maxItems``, an ``enum``) is
sent in every form: a decoder that compiles the schema to a grammar (llama.cpp,
llama-cpp-python, vLLM, Ollama) can only hold the model to the bounds it is given, and
without them a grammar allows an empty key, a 78-character key or a confidence of 400.
A length or count bound is sent at most ``WIRE_REPEAT_LIMIT`` (see there): the check
still holds an answer to the phase's own bound, which is never tighter.
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

StructuredForm: TypeAlias = Literal["json_schema", "json_object", "prompt"]
STRUCTURED_FORMS: Final[tuple[StructuredForm, ...]] = ("json_schema", "json_object", "prompt")
"""The openai body's structured-output forms, in the order ``auto`` tries them: each
later one is understood by more servers and constrains the model less."""

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

SCHEMA_FIELDS: Final = frozenset({"input_schema", "schema"})
"""The body fields that hold a schema (the anthropic tool's, and the openai response
format's in its ``json_schema`` and ``json_object`` forms): below them ``properties``
keep their declared order."""

RESERVED_EXTRA_KEYS: Final = frozenset({"stream", "response_format"})
"""Fields ``extra_body`` may not add even where the body lacks them: whether the answer
streams is the adapter's to decide (it reads what it asked for), and the response
format is ``llm_structured``'s (the ``prompt`` form sends none, and an extra one would
contradict the schema written into the prompt)."""

PROMPT_FORM_HEADING: Final = "Answer format"
"""The heading of the instructions the ``prompt`` form appends to the system prompt."""

WIRE_REPEAT_LIMIT: Final = 1000
"""The largest ``maxLength``/``maxItems`` (and so ``minLength``/``minItems``) a wire
schema states. llama.cpp's grammar parser refuses a rule repeated more than about a
thousand times ("number of rules that are going to be repeated multiplied by the new
repetition exceeds sane defaults"; measured with llama-cpp-python 0.3.36: a string of
``maxLength`` 1001 compiles, 1002 does not, and an array likewise). llama-cpp-python
then drops the grammar, and its 0.3.36 server died on the next token: compress's
4,000-character paragraphs and trace-consolidation's 2,000 took the server down
mid-night, and every later call was refused. A bound of 1,000 only narrows what the
model may write (a paragraph of 1,000 characters, a list of 1,000 entries); the
answer is still checked against the phase's own schema."""

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What both providers accept as a tool or response-format name."""


def anthropic_body(
    request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    *, stream: bool = False,
) -> Result[dict[str, object], RequestRefused]:
    """The Messages API body for ``request``: the system prompt and the tool cached, the
    tool forced, ``extra_body`` merged last (adding fields, never replacing one)."""
    def build(schema: Mapping[str, object]) -> dict[str, object]:
        return {**({"stream": True} if stream else {}),
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
    form: StructuredForm = "json_schema",
    *, stream: bool = False,
) -> Result[dict[str, object], RequestRefused]:
    """The chat-completions body for ``request``: a system and a user message, and the
    schema in structured-output ``form`` (see the module docstring); ``extra_body``
    merged last."""
    if token_field not in OPENAI_TOKEN_FIELDS:
        return Failure(RequestRefused(f"unknown token field {token_field!r}"))
    if form not in STRUCTURED_FORMS:
        return Failure(RequestRefused(f"unknown structured-output form {form!r}"))

    def build(schema: Mapping[str, object]) -> Result[dict[str, object], RequestRefused]:
        system = request.system
        formats: dict[str, object] = {}
        if form == "json_schema":
            formats = {"response_format": {"type": "json_schema", "json_schema": {
                "name": request.tool_name, "strict": True,
                "schema": closed_schema(schema)}}}
        elif form == "json_object":
            # llama-cpp-python's spelling: it compiles the schema to a grammar.
            formats = {"response_format": {"type": "json_object",
                                           "schema": closed_schema(schema)}}
        else:
            instructions = prompt_instructions(request.tool_name, schema)
            if isinstance(instructions, Failure):
                return instructions
            system = f"{request.system}\n\n{instructions.unwrap()}"
        return Success({
            "model": model_id,
            token_field: request.max_output_tokens,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": request.prompt}],
            **formats,
            **({"stream": True} if stream else {}),
        })

    return _checked(request, model_id).bind(build).bind(
        lambda body: merge_extra(body, extra_body))


def prompt_instructions(tool_name: str,
                        schema: Mapping[str, object]) -> Result[str, RequestRefused]:
    """What the ``prompt`` form appends to the system prompt: the answer's name, its
    schema, and one answer of that shape, so a model that no grammar constrains still
    sees exactly what is read back (and that nothing may surround it)."""
    return encode_json(canonical_order(closed_schema(schema), schema=True),
                       ordered=True).bind(
        lambda shown: encode_json(example_answer(schema), ordered=True).map(lambda example: (
            f"{PROMPT_FORM_HEADING} ({tool_name}): reply with one JSON object and "
            "nothing else: no prose, no code fence. It must match this JSON schema:\n"
            f"{shown.decode('utf-8')}\n"
            f"An answer of that shape (its values only show the form):\n"
            f"{example.decode('utf-8')}"))).alt(RequestRefused)


def example_answer(schema: Mapping[str, object]) -> object:
    """One value of ``schema``'s shape, for the ``prompt`` form's example: the first
    member an ``enum`` offers, a ``const``, the least a range allows, one item of an
    array, its members in the schema's order. It shows form, not content: where a
    batch's schema offers its keys as an ``enum``, the example names the first."""
    if "const" in schema:
        return schema["const"]
    members = schema.get("enum")
    if isinstance(members, list) and members:
        return members[0]
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared
    kinds = [t for t in types if t != "null"] if isinstance(types, list) else []
    kind = kinds[0] if kinds else "null"
    if kind == "object":
        properties = schema.get("properties")
        return {name: example_answer(sub) if isinstance(sub, Mapping) else None
                for name, sub in (properties.items() if isinstance(properties, Mapping)
                                  else ())}
    if kind == "array":
        items = schema.get("items")
        least = schema.get("minItems")
        count = max(1, least if isinstance(least, int) else 0)
        if not isinstance(items, Mapping):
            return []
        offered = items.get("enum")
        if isinstance(offered, list) and offered and "const" not in items:
            # Distinct members where the enum has enough (two keys, not one twice).
            return [offered[index % len(offered)] for index in range(count)]
        return [example_answer(items) for _ in range(count)]
    if kind == "string":
        least = schema.get("minLength")
        return "text" if not isinstance(least, int) or least <= 4 else "x" * least
    if kind in {"integer", "number"}:
        low, high = schema.get("minimum"), schema.get("maximum")
        value: float = low if isinstance(low, int | float) else (
            high if isinstance(high, int | float) and high < 0 else 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return None


def request_body(
    dialect: Dialect, request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
    form: StructuredForm = "json_schema",
    *, stream: bool = False,
) -> Result[dict[str, object], RequestRefused]:
    """The body of ``request`` in ``dialect`` (``token_field`` and ``form`` apply to
    openai only)."""
    match dialect:
        case "anthropic":
            return anthropic_body(request, model_id, extra_body, stream=stream)
        case "openai":
            return openai_body(request, model_id, extra_body, token_field, form,
                               stream=stream)
        case _ as never:
            assert_never(never)


def request_bytes(
    dialect: Dialect, request: ModelRequest, model_id: str,
    extra_body: Mapping[str, object] | None = None,
    token_field: OpenAITokenField = DEFAULT_OPENAI_TOKEN_FIELD,
    form: StructuredForm = "json_schema",
    *, stream: bool = False,
) -> Result[bytes, RequestRefused]:
    """The bytes to POST for ``request``: canonical JSON in UTF-8, equal for equal
    requests. A value that is not JSON (a NaN, a set in ``extra_body``) refuses."""
    return request_body(dialect, request, model_id, extra_body, token_field, form,
                        stream=stream).bind(
        lambda body: encode_json(canonical_order(body), ordered=True).alt(RequestRefused))


def canonical_order(value: object, *, schema: bool = False) -> object:
    """``value`` with every object's keys sorted, except a schema's ``properties``,
    which keep their declared order (see the module docstring). ``schema`` says that
    ``value`` is a schema node; below a body field named in ``SCHEMA_FIELDS`` every
    node reached through ``properties`` or ``items`` is one. The result is a function
    of the value and its declared property order alone, so equal requests still give
    equal bytes."""
    if isinstance(value, Mapping):
        out: dict[object, object] = {}
        for key in sorted(value, key=str):
            item = value[key]
            if schema and key == "properties" and isinstance(item, Mapping):
                out[key] = {name: canonical_order(sub, schema=True)
                            for name, sub in item.items()}
            else:
                out[key] = canonical_order(
                    item, schema=(schema and key == "items") or key in SCHEMA_FIELDS)
        return out
    if isinstance(value, list):
        return [canonical_order(item) for item in value]
    return value


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


_REPEAT_BOUNDS: Final = frozenset({"minLength", "maxLength", "minItems", "maxItems"})


def closed_schema(schema: Mapping[str, object]) -> dict[str, object]:
    """A copy of a validated ``schema`` with ``additionalProperties: false`` written out
    on every object schema, ``required`` listed in the properties' order, and every
    length and count bound at most ``WIRE_REPEAT_LIMIT``, at every depth."""
    out: dict[str, object] = {
        key: (min(value, WIRE_REPEAT_LIMIT)
              if key in _REPEAT_BOUNDS and isinstance(value, int) else value)
        for key, value in schema.items()}
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if isinstance(types, list) and "object" in types:
        out["additionalProperties"] = False
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: closed_schema(sub) if isinstance(sub, Mapping) else sub
                             for name, sub in properties.items()}
        required = schema.get("required")
        if isinstance(required, list):
            # In the properties' order, so the wire states one order throughout.
            out["required"] = [name for name in properties if name in required] + [
                name for name in required if name not in properties]
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = closed_schema(items)
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

