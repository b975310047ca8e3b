"""The golden requests: one realistic batch question, put on the wire in each dialect.

The prompt holds non-ASCII text and a quote so the files pin the encoding (UTF-8 as is,
not ``\\u`` escapes); the schema holds a ``maxLength`` so the openai file pins that the
keyword stays out of its strict response format while the anthropic file keeps it.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.contracts.services import ModelRequest
from memhtml.llm import Dialect, request_bytes

HERE = Path(__file__).resolve().parent

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "groups": {
            "type": "array",
            "description": "Sets of members that state the same fact.",
            "items": {
                "type": "object",
                "properties": {
                    "members": {"type": "array", "minItems": 2, "maxItems": 8,
                                "items": {"type": "string", "maxLength": 8}},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "note": {"type": ["string", "null"]},
                },
                "required": ["members", "confidence", "note"],
            },
        },
    },
    "required": ["groups"],
}

REQUEST = ModelRequest(
    system="You group memories that state the same fact. Answer with one JSON object.",
    prompt='m1: Deploys run at 09:00 UTC — "every weekday".\nm2: Déploiement à 9h UTC.',
    schema=SCHEMA,
    tool_name="group_duplicates",
    max_output_tokens=1024,
)

MODEL_IDS: dict[Dialect, str] = {"anthropic": "example-anthropic-model",
                                  "openai": "example-openai-model"}

GOLDEN: dict[Dialect, Path] = {dialect: HERE / f"{dialect}_body.json"
                               for dialect in ("anthropic", "openai")}


def body(dialect: Dialect) -> bytes:
    """Today's bytes for the golden request in ``dialect``."""
    return request_bytes(dialect, REQUEST, MODEL_IDS[dialect]).unwrap()
