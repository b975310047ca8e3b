"""Every schema a phase sends compiles to a grammar in llama.cpp, for real.

llama-cpp-python turns a ``json_object`` schema into a GBNF grammar; where llama.cpp's
parser refuses it (a rule repeated more than about a thousand times), the server drops
the grammar and its 0.3.36 build then died mid-night. So each phase's schema, in the
shape a batch of the largest size sends it (every key an ``enum`` of the batch's
keys) and as ``closed_schema`` puts it on the wire, is compiled by the installed
llama.cpp with the packaged model's vocabulary: the same parser the server runs.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping

import pytest

from memhtml.llm.wire import closed_schema
from memhtml.sleep.batch import batch_schema
from tests.integration.real_model_support import need_real_model, weights_cache

pytestmark = pytest.mark.slow

PHASE_SCHEMAS = (
    ("dedup_prompt", "SCHEMA"), ("entity_resolution", "SCHEMA"), ("edge_typing", "SCHEMA"),
    ("arc_synthesis", "TRIAGE_SCHEMA"), ("arc_synthesis", "WRITE_SCHEMA"),
    ("compress_prompt", "SCHEMA"), ("trace_prompt", "SCHEMA"),
    ("task_detection", "SCHEMA"), ("placement_triage", "SCHEMA"))
BATCH_SIZES = (2, 40, 500)
"""The smallest batch, dedup's and edge-typing's size, and entity-resolution's."""


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    need_real_model()
    import llama_cpp
    from bench.llama_server import model_file

    model = llama_cpp.Llama(str(model_file(weights_cache(tmp_path_factory))),
                            vocab_only=True, verbose=False)
    yield llama_cpp.llama_model_get_vocab(model._model.model)
    model.close()


def compiles(vocab: object, schema: Mapping[str, object]) -> bool:
    import llama_cpp
    from llama_cpp import llama_grammar

    grammar = llama_grammar.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    sampler = llama_cpp.llama_sampler_init_grammar(
        vocab, grammar._grammar.encode("utf-8"), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


@pytest.mark.parametrize(("module", "name"), PHASE_SCHEMAS)
@pytest.mark.parametrize("size", BATCH_SIZES)
def test_phase_schema_compiles_to_a_grammar(vocab: object, module: str, name: str,
                                            size: int) -> None:
    schema = getattr(importlib.import_module(f"memhtml.sleep.phases.{module}"), name)
    keys = [f"m{i}" for i in range(1, size + 1)]
    wire = closed_schema(batch_schema(schema, keys))
    assert compiles(vocab, wire), (module, name, size)


def test_the_parser_refuses_past_the_limit(vocab: object) -> None:
    """The limit is the parser's, not ours: one past it does not compile (so the test
    above would see a schema that crossed it)."""
    def string(n: int) -> dict[str, object]:
        return {"type": "object", "properties": {"a": {"type": "string", "maxLength": n}},
                "required": ["a"], "additionalProperties": False}

    assert compiles(vocab, string(1000))
    assert not compiles(vocab, string(1500))
