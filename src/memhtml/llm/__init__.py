"""The language-model room: request bodies for each dialect, answers decoded to one
mapping, and the strict schema check. Pure: it builds and reads bytes, and the adapter
that sends them lives in ``memhtml.adapters``."""

from memhtml.llm.decode import (
    MAX_ANSWER_BYTES,
    answer_of_anthropic,
    answer_of_openai,
    decode_answer,
)
from memhtml.llm.errors import RequestRefused
from memhtml.llm.json_text import encode_json, parse_json
from memhtml.llm.schema import (
    SCHEMA_TYPES,
    SUPPORTED_KEYWORDS,
    check,
    json_equal,
    json_kind,
    validate_schema,
    violations,
)
from memhtml.llm.stream import assemble, event_data, is_final
from memhtml.llm.wire import (
    DEFAULT_OPENAI_TOKEN_FIELD,
    DIALECTS,
    OPENAI_TOKEN_FIELDS,
    STRUCTURED_FORMS,
    Dialect,
    OpenAITokenField,
    StructuredForm,
    anthropic_body,
    closed_schema,
    example_answer,
    merge_extra,
    openai_body,
    prompt_instructions,
    request_body,
    request_bytes,
)

__all__ = [
    "DEFAULT_OPENAI_TOKEN_FIELD",
    "DIALECTS",
    "MAX_ANSWER_BYTES",
    "OPENAI_TOKEN_FIELDS",
    "SCHEMA_TYPES",
    "STRUCTURED_FORMS",
    "SUPPORTED_KEYWORDS",
    "Dialect",
    "OpenAITokenField",
    "RequestRefused",
    "StructuredForm",
    "answer_of_anthropic",
    "answer_of_openai",
    "anthropic_body",
    "assemble",
    "check",
    "closed_schema",
    "decode_answer",
    "encode_json",
    "event_data",
    "example_answer",
    "is_final",
    "json_equal",
    "json_kind",
    "merge_extra",
    "openai_body",
    "parse_json",
    "prompt_instructions",
    "request_body",
    "request_bytes",
    "validate_schema",
    "violations",
]
