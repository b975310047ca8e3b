"""The ``LanguageModel`` port's contract, run on every model the code may be handed:
``HttpLanguageModel`` in both dialects against a real HTTP server on loopback
(tests/integration/llm/loopback.py), the sleep tests' ``ScriptedModel``, the planted
corpus's oracle (a ``ScriptedModel`` answering from what the manifest says is true),
``BudgetedModel`` and the bench's ``RecordingModel`` around the HTTP model, and the
bench's instant model. None needs the real llama server (its night runs in
tests/integration/sleep/test_sleep_real_model.py).

Most of them say what the test tells them to (the loopback's ``echo`` mode, a
scripted responder); for those the laws are exact:

- what the model says, when it satisfies ``request.schema`` (``memhtml.llm.check``),
  is the answer, as it was said: never coerced;
- what it says off the schema is a ``ModelMalformed``, never handed over;
- whatever object it says, an answer handed over satisfies the schema.

The oracle and the instant model answer the phases' own questions; for them the law
is that every phase's request, built by the batching kernel with the phase's schema,
gets an answer, and the answer satisfies that schema.

For all of them ``model_id`` is the same before and after every call, and a failure
to reach the model (an HTTP 500, a connection reset, nothing listening, a scripted
outage, a spent budget) is a ``ModelError`` value, returned, never raised.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from itertools import count, pairwise
from typing import Any, Final

import pytest
from bench.llama_server import RecordingModel
from bench.sleep_model import InstantModel
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from returns.io import IOResult, IOSuccess
from returns.result import Success
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.llm import HttpLanguageModel
from memhtml.contracts.errors import (
    BudgetExhausted,
    ModelError,
    ModelMalformed,
    ModelUnavailable,
)
from memhtml.contracts.services import LanguageModel, ModelRequest
from memhtml.llm import Dialect, json_equal, violations
from memhtml.sleep.batch import BatchSpec, mint, request_for
from memhtml.sleep.budget import BudgetedModel, CallBudget
from memhtml.sleep.phases.arc_synthesis import TRIAGE_SPEC as ARC_TRIAGE_SPEC
from memhtml.sleep.phases.compress_prompt import SPEC as COMPRESS_SPEC
from memhtml.sleep.phases.dedup_prompt import SPEC as DEDUP_SPEC
from memhtml.sleep.phases.edge_typing import SPEC as EDGE_SPEC
from memhtml.sleep.phases.entity_resolution import SPEC as ENTITY_SPEC
from memhtml.sleep.phases.task_detection import SPEC as TASK_SPEC
from tests.integration.llm.loopback import TOOL, serving
from tests.integration.sleep.planted_oracle import (
    ORACLE_NAME,
    Canon,
    EntityCluster,
    Oracle,
    collapsed,
)
from tests.property.schema_strategies import (
    WRONG_KINDS,
    Schema,
    json_values,
    leaves,
    names,
    rules_out,
    schema_and_value,
)
from tests.unit.sleep.fake_model import ScriptedModel

MODEL_ID: Final = "contract-model"
START: Final = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SYSTEM: Final = "You answer with the JSON object the prompt holds."
EXAMPLES: Final = 30

_tokens = count()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The loopback model server's base address."""
    with serving() as (address, _seen):
        yield address


def http(base: str, mode: str, dialect: Dialect) -> HttpLanguageModel:
    """The HTTP model on one of the loopback's modes, its attempts counted apart (a
    fresh path token), its one retry's wait on a manual clock."""
    return HttpLanguageModel(dialect, f"{base}/{mode}/t{next(_tokens)}/v1", MODEL_ID, None,
                             5.0, {}, ManualClock(START))


def says_its_prompt(request: ModelRequest) -> Mapping[str, object]:
    """A scripted model's responder that says what the prompt holds, as ``echo`` does."""
    said: Mapping[str, object] = json.loads(request.prompt)
    return said


def ask(schema: Mapping[str, object], said: object) -> ModelRequest:
    """A request whose model is told to say ``said``."""
    return ModelRequest(system=SYSTEM, prompt=json.dumps(said), schema=schema, tool_name=TOOL,
                        max_output_tokens=1024)


SPEAKERS = ("http-anthropic", "http-openai", "scripted", "budgeted-http-openai",
            "recording-http-anthropic")


@pytest.fixture(params=SPEAKERS)
def speaker(request: pytest.FixtureRequest) -> LanguageModel:
    """A model that says what the test tells it to."""
    if request.param == "scripted":
        return ScriptedModel(respond=says_its_prompt, name=MODEL_ID)
    address = request.getfixturevalue("base")
    match request.param:
        case "http-anthropic":
            return http(address, "echo", "anthropic")
        case "http-openai":
            return http(address, "echo", "openai")
        case "budgeted-http-openai":
            return BudgetedModel(http(address, "echo", "openai"), CallBudget())
        case _:
            return RecordingModel(http(address, "echo", "anthropic"))


def answer_of(result: IOResult[Mapping[str, object], ModelError]) -> Mapping[str, object]:
    assert isinstance(result, IOSuccess), result
    return unsafe_perform_io(result.unwrap())


def error_of(result: IOResult[Mapping[str, object], ModelError]) -> ModelError:
    assert not isinstance(result, IOSuccess), result
    error: ModelError = unsafe_perform_io(result.failure())
    assert isinstance(error, ModelUnavailable | ModelMalformed | BudgetExhausted)
    return error


def asked(model: LanguageModel, request: ModelRequest
          ) -> IOResult[Mapping[str, object], ModelError]:
    """``model``'s result for ``request``; its ``model_id`` the same before and after."""
    before = model.model_id
    assert before.strip()
    result = model.complete_json(request)
    assert model.model_id == before
    return result


# --------------------------------------------------------------------------- speakers


@st.composite
def off_schema(draw: st.DrawFn, schema: Schema, value: dict[str, Any]) -> dict[str, Any]:
    """``value`` broken in one place: a leaf of a kind its schema rules out, a member the
    schema does not declare (every object schema is closed), or a required one gone."""
    ways = ["stranger"]
    found = list(leaves(schema, value, "$", ()))
    if found:
        ways.append("leaf")
    if value:
        ways.append("missing")
    broken: dict[str, Any] = json.loads(json.dumps(value))
    match draw(st.sampled_from(ways)):
        case "leaf":
            _path, where, leaf_schema = draw(st.sampled_from(found))
            holder = broken
            for step in where[:-1]:
                holder = holder[step]
            holder[where[-1]] = draw(st.sampled_from(
                [w for w in WRONG_KINDS if rules_out(leaf_schema, w)]))
        case "missing":
            del broken[draw(st.sampled_from(sorted(broken)))]
        case _:
            broken["unasked" + "_" * len(schema["properties"])] = 1
    return broken


def test_what_a_model_says_on_its_schema_is_the_answer_as_said(speaker: LanguageModel) -> None:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(schema_and_value())
    def on_schema(case: tuple[Schema, dict[str, Any]]) -> None:
        schema, said = case
        answer = answer_of(asked(speaker, ask(schema, said)))
        assert violations(schema, answer) == ()
        assert json_equal(dict(answer), said)

    on_schema()


def test_what_a_model_says_off_its_schema_is_malformed_never_an_answer(
        speaker: LanguageModel) -> None:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(schema_and_value(), st.data())
    def off(case: tuple[Schema, dict[str, Any]], data: st.DataObject) -> None:
        schema, value = case
        said = data.draw(off_schema(schema, value))
        assume(violations(schema, said))
        error = error_of(asked(speaker, ask(schema, said)))
        assert isinstance(error, ModelMalformed)
        assert error.model_id == speaker.model_id

    off()


def test_any_object_said_is_an_answer_on_the_schema_or_malformed(
        speaker: LanguageModel) -> None:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(schema_and_value(), st.dictionaries(names, json_values, max_size=4))
    def any_object(case: tuple[Schema, dict[str, Any]], said: dict[str, Any]) -> None:
        schema, _value = case
        result = asked(speaker, ask(schema, said))
        if isinstance(result, IOSuccess):
            assert violations(schema, answer_of(result)) == ()
        else:
            assert isinstance(error_of(result), ModelMalformed)

    any_object()


# --------------------------------------------------------------------------- answerers


NOTES: Final = (
    ("areas/ops/deploy-day.html", "Deploy day", "Deploys go out on Tuesdays.",
     "We owe the release team a rota by Friday. The rota covers three weeks."),
    ("areas/ops/deploy-day-again.html", "Deploy day again", "Deploys ship every Tuesday.",
     "Tuesday is the release day. Nothing ships on Fridays."),
    ("areas/ops/cache-ttl.html", "Cache TTL", "The cache TTL is 300 s.",
     "Raised after the incident. The pager is quieter since."),
    ("areas/ops/cache-ttl-raised.html", "Cache TTL raised", "The cache TTL is 600 s.",
     "Raised again in May. Nobody objected."),
    ("areas/ops/freeze.html", "Freeze", "Code freezes start in December.",
     "The freeze lasts two weeks. Hotfixes need two approvals."),
    ("areas/ops/pager.html", "Pager", "The pager rotates weekly.",
     "Handover is on Monday. The outgoing person writes a note."),
)
"""(path, title, claim, article) of the notes the answerers are asked about: a pair of
paraphrases, a pair that contradicts, and two the oracle folds into a canonical."""
NAMES: Final = (("person", "Ada Lovelace"), ("person", "Ada"), ("person", "Grace Hopper"),
                ("tool", "Terraform"), ("tool", "terraform"))


def planted_oracle() -> ScriptedModel:
    """The planted corpus's model: a ``ScriptedModel`` playing an ``Oracle`` that knows
    these notes, so every phase's answer it has is one a test could meet."""
    paths = [path for path, *_ in NOTES]
    oracle = Oracle(
        path_of={collapsed(claim): path for path, _title, claim, _article in NOTES},
        groups=((paths[0], paths[1]),),
        contradictions=frozenset({frozenset((paths[2], paths[3]))}),
        clusters=(EntityCluster("person", ("Ada Lovelace", "Ada")),),
        canonicals=(Canon("Ops routines", "Ops routines run on a fixed rhythm.",
                          ("Code freezes start in December.", "The pager rotates weekly."),
                          (paths[4], paths[5])),),
        detect_first=True)
    return ScriptedModel(respond=oracle, name=ORACLE_NAME)


Note = tuple[str, str, str, str]
PHASES: Final[Mapping[str, tuple[BatchSpec[Any, Any], Callable[[Sequence[Note]], list[str]]]]] = {
    "dedup-merge": (DEDUP_SPEC, lambda notes: [
        f"set {n // 2 + 1}: {title}\nclaim: {claim}\n{article}"
        for n, (_path, title, claim, article) in enumerate(notes)]),
    "entity-resolution": (ENTITY_SPEC, lambda notes: [
        json.dumps({"type": kind, "name": name, "memories": 1, "titles": [],
                    "nearest": []}) for kind, name in NAMES[:max(len(notes) - 1, 1)]]),
    "edge-typing": (EDGE_SPEC, lambda notes: [
        f"a: {a[2]}\nb: {b[2]}" for a, b in pairwise(notes)]
        or [f"a: {notes[0][2]}\nb: {notes[0][2]}"]),
    "arc-synthesis": (ARC_TRIAGE_SPEC, lambda notes: [
        "; ".join(title for _path, title, *_ in notes)]),
    "compress": (COMPRESS_SPEC, lambda notes: [
        f"title: {title}\ntype: note\nclaim: {claim}\ntext: {article}"
        for _path, title, claim, article in notes]),
    "task-detection": (TASK_SPEC, lambda notes: [
        f"{title}\n{article}" for _path, title, _claim, article in notes]),
}
"""Each phase the answerers know: its batch spec, and its members' texts for some notes
in the shape the phase renders them (``render`` in each phase module)."""


def phase_request(spec: BatchSpec[Any, Any], texts: Sequence[str]) -> ModelRequest:
    """The request the batching kernel sends for members rendered as ``texts``."""
    as_text: BatchSpec[str, object] = BatchSpec(
        system=spec.system, schema=spec.schema, tool_name=spec.tool_name,
        max_output_tokens=spec.max_output_tokens, size=spec.size, render=str,
        read=lambda answer, _resolver: Success(answer), heading=spec.heading)
    return request_for(as_text, mint(texts))


ANSWERERS: Final[Mapping[str, Callable[[], LanguageModel]]] = {
    "planted-oracle": planted_oracle,
    "bench-instant": InstantModel,
}


@pytest.mark.parametrize("make", ANSWERERS.values(), ids=list(ANSWERERS))
def test_every_phase_request_gets_an_answer_on_its_schema(
        make: Callable[[], LanguageModel]) -> None:
    model = make()

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(st.sampled_from(sorted(PHASES)), st.permutations(NOTES), st.integers(1, len(NOTES)))
    def answered(phase: str, notes: list[Note], size: int) -> None:
        spec, texts = PHASES[phase]
        request = phase_request(spec, texts(notes[:size]))
        answer = answer_of(asked(model, request))
        assert violations(request.schema, answer) == ()

    answered()


def test_the_oracle_says_what_it_knows_on_every_phase() -> None:
    """The oracle's known answers are met above, not only its empty ones."""
    oracle = planted_oracle()
    for phase, (spec, texts) in PHASES.items():
        answer = answer_of(asked(oracle, phase_request(spec, texts(NOTES))))
        lists = [value for value in answer.values() if isinstance(value, list)]
        assert lists and (lists[0] or phase == "arc-synthesis"), (phase, answer)


# --------------------------------------------------------------------------- failures


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


FAILING = ("http-answers-500", "http-hangs-up", "http-nothing-listens",
           "scripted-unavailable", "budget-spent", "recording-around-500")


@pytest.fixture(params=FAILING)
def failing(request: pytest.FixtureRequest) -> LanguageModel:
    if request.param == "scripted-unavailable":
        return ScriptedModel(respond=says_its_prompt, unavailable_calls=frozenset({1}))
    if request.param == "http-nothing-listens":
        return HttpLanguageModel("openai", f"http://127.0.0.1:{unused_port()}/v1", MODEL_ID,
                                 None, 2.0, {}, ManualClock(START))
    address = request.getfixturevalue("base")
    match request.param:
        case "http-answers-500":
            return http(address, "fail", "openai")
        case "http-hangs-up":
            return http(address, "resetall", "anthropic")
        case "budget-spent":
            return BudgetedModel(http(address, "echo", "openai"), CallBudget(0))
        case _:
            return RecordingModel(http(address, "fail", "anthropic"))


SCHEMA: Final[Mapping[str, object]] = {
    "type": "object", "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"], "additionalProperties": False}


def test_a_model_that_cannot_be_reached_is_a_model_error_never_an_exception(
        failing: LanguageModel) -> None:
    error = error_of(asked(failing, ask(SCHEMA, {"verdict": "same"})))
    assert not isinstance(error, ModelMalformed)
    assert error.reason
