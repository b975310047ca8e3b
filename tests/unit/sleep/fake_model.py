"""A scripted ``LanguageModel`` for the model phases' tests.

It answers from a script keyed by ``(tool name, sha256 of the prompt)``, or from a
function of the request, and records every request it is sent, in order, so a test
can compare the bytes two runs sent. Like every ``LanguageModel`` it checks an answer
against the request's schema (``memhtml.llm.check``) and fails an answer off it
``ModelMalformed``, so a test cannot script an answer no model adapter would hand
over. It can be told to answer malformed or be unavailable on the n-th call (1-based,
counting every call it receives), or to break that promise on purpose, for the tests
of what a reader does with an answer the check should have stopped: swap an offered
key in its answer for one the batch never offered, or hand over answers unchecked.
Nothing in it reads a clock or a random source: the same requests get the same
answers.

``offered`` reads back the member list the batching kernel framed, so a responder
can build its answer from what a batch actually held.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure

from memhtml.contracts.errors import (
    BudgetExhausted,
    ModelError,
    ModelMalformed,
    ModelUnavailable,
)
from memhtml.contracts.services import ModelRequest
from memhtml.llm import check
from memhtml.sleep.batch import key_for

Answer = Mapping[str, object]
Responder = Callable[[ModelRequest], Answer | ModelError]
"""A function of the request: the answer, or the error to fail the call with."""


def digest(prompt: str) -> str:
    """The script key of a prompt: the sha256 of its UTF-8 bytes, in hex."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def request_bytes(request: ModelRequest) -> bytes:
    """Everything a request sends, as bytes: system, tool name, output cap, schema
    (canonical JSON) and prompt, NUL-separated."""
    schema = json.dumps(request.schema, sort_keys=True, separators=(",", ":"),
                        ensure_ascii=False)
    parts = (request.system, request.tool_name, str(request.max_output_tokens), schema,
             request.prompt)
    return "\0".join(parts).encode("utf-8")


def offered(request: ModelRequest) -> dict[str, str]:
    """The members a kernel-framed prompt offered: key to rendered text, in order."""
    members: dict[str, str] = {}
    for line in request.prompt.split("\n"):
        if not line.startswith('{"key": '):
            continue
        item = json.loads(line)
        members[str(item["key"])] = str(item["text"])
    return members


@dataclass
class ScriptedModel:
    """A ``LanguageModel`` that plays a script. See the module docstring.

    An answer is looked up by ``(tool_name, digest(prompt))`` first, then asked of
    ``respond``; a request neither answers fails ``ModelMalformed`` ("unscripted") and
    is listed in ``unscripted``, so a test can assert it sent only what it scripted."""

    script: dict[tuple[str, str], Answer] = field(default_factory=dict)
    respond: Responder | None = None
    malformed_calls: frozenset[int] = frozenset()
    """Calls (1-based) answered ``ModelMalformed`` whatever the script says."""
    unavailable_calls: frozenset[int] = frozenset()
    """Calls (1-based) failed ``ModelUnavailable``."""
    unknown_key_calls: frozenset[int] = frozenset()
    """Calls (1-based) whose answer has its first offered key (depth-first) replaced
    by ``unknown_key``, after the schema check (which a batch's key ``enum`` would
    otherwise stop it at)."""
    unknown_key: str | None = None
    """What replaces it (``None``: the key one past the batch's last, as ``m99``
    stands for in the acceptance tests)."""
    checked: bool = True
    """Whether an answer is checked against the request's schema, as the port
    promises. False hands over whatever the script says: a model breaking the promise."""
    name: str = "scripted"
    requests: list[ModelRequest] = field(default_factory=list)
    unscripted: list[ModelRequest] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return self.name

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def sent(self) -> tuple[bytes, ...]:
        """The bytes of every request received, in order."""
        return tuple(request_bytes(r) for r in self.requests)

    def answer(self, tool_name: str, prompt: str, answer: Answer) -> None:
        """Script the answer to one prompt under one tool."""
        self.script[(tool_name, digest(prompt))] = answer

    def complete_json(self, request: ModelRequest) -> IOResult[Mapping[str, object], ModelError]:
        self.requests.append(request)
        call = len(self.requests)
        if call in self.unavailable_calls:
            return IOFailure(ModelUnavailable(self.name, f"call {call}: scripted unavailable"))
        if call in self.malformed_calls:
            return IOFailure(ModelMalformed(self.name, f"call {call}: scripted malformed"))
        got = self._lookup(request)
        if isinstance(got, ModelUnavailable | ModelMalformed | BudgetExhausted):
            return IOFailure(got)
        answer = copy.deepcopy(dict(got))
        if self.checked and isinstance(refused := check(request.schema, answer,
                                                        model_id=self.name), Failure):
            return IOFailure(refused.failure())
        if call in self.unknown_key_calls:
            answer = self._poisoned(request, answer)
        return IOSuccess(answer)

    def _lookup(self, request: ModelRequest) -> Answer | ModelError:
        scripted = self.script.get((request.tool_name, digest(request.prompt)))
        if scripted is not None:
            return scripted
        if self.respond is not None:
            return self.respond(request)
        self.unscripted.append(request)
        return ModelMalformed(self.name, "unscripted")

    def _poisoned(self, request: ModelRequest, answer: dict[str, object]) -> dict[str, object]:
        keys = offered(request)
        stranger = self.unknown_key or key_for(len(keys))
        done = False

        def swap(value: object) -> object:
            nonlocal done
            if done:
                return value
            if isinstance(value, str) and value in keys:
                done = True
                return stranger
            if isinstance(value, Mapping):
                return {k: swap(v) for k, v in value.items()}
            if isinstance(value, list):
                return [swap(v) for v in value]
            return value

        swapped = {k: swap(v) for k, v in answer.items()}
        if not done:
            raise AssertionError("told to name an unknown key, but the answer names no key")
        return swapped
