"""The strict check and the schema subset: no coercion, every violation with its path."""

from __future__ import annotations

import pytest
from returns.result import Failure, Success

from memhtml.contracts.errors import ModelMalformed
from memhtml.llm import RequestRefused, check, json_equal, json_kind, validate_schema, violations
from memhtml.llm.schema import MAX_REPORTED_VIOLATIONS, SUPPORTED_KEYWORDS, child_path


def obj(properties: dict[str, object], **more: object) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": sorted(properties),
            **more}


def one(sub: dict[str, object]) -> dict[str, object]:
    """A root schema with one property ``x`` of schema ``sub``."""
    return obj({"x": sub})


def found(sub: dict[str, object], value: object) -> tuple[str, ...]:
    schema = one(sub)
    assert isinstance(validate_schema(schema), Success), validate_schema(schema)
    return violations(schema, {"x": value})


# -- no coercion ------------------------------------------------------------------------


@pytest.mark.parametrize(("sub", "value", "expected"), [
    ({"type": "number"}, "1", "$.x: expected number, got string"),
    ({"type": "number"}, True, "$.x: expected number, got boolean"),
    ({"type": "integer"}, False, "$.x: expected integer, got boolean"),
    ({"type": "integer"}, 1.0, "$.x: expected integer, got number 1.0, which is not an "
                               "integer"),
    ({"type": "integer"}, 2.5, "$.x: expected integer, got number 2.5, which is not an "
                               "integer"),
    ({"type": "string"}, 3, "$.x: expected string, got number"),
    ({"type": "string"}, None, "$.x: expected string, got null"),
    ({"type": "boolean"}, 0, "$.x: expected boolean, got number"),
    ({"type": "boolean"}, "true", "$.x: expected boolean, got string"),
    ({"type": "null"}, "", "$.x: expected null, got string"),
    ({"type": "array", "items": {"type": "string"}}, "a", "$.x: expected array, got string"),
    ({"type": "object", "properties": {}}, [], "$.x: expected object, got array"),
    ({"type": ["string", "null"]}, 0, "$.x: expected string or null, got number"),
])
def test_no_value_is_coerced(sub: dict[str, object], value: object, expected: str) -> None:
    assert found(sub, value) == (expected,)


@pytest.mark.parametrize(("sub", "value"), [
    ({"type": "number"}, 1),
    ({"type": "number"}, 1.5),
    ({"type": "integer"}, 10**30),
    ({"type": "boolean"}, False),
    ({"type": "null"}, None),
    ({"type": ["integer", "null"]}, None),
    ({"type": ["integer", "null"]}, 3),
    ({"type": "string"}, ""),
])
def test_values_of_the_declared_kind_pass(sub: dict[str, object], value: object) -> None:
    assert found(sub, value) == ()


def test_non_finite_numbers_and_non_json_values_are_violations() -> None:
    assert found({"type": "number"}, float("nan")) == ("$.x: a non-finite number",)
    assert found({"type": "number"}, float("inf")) == ("$.x: a non-finite number",)
    assert found({"type": "array", "items": {"type": "integer"}}, (1, 2)) == (
        "$.x: not a JSON value (tuple)",)
    assert found({"type": "object", "properties": {}}, {1: 2}) == (
        "$.x: not a JSON value (dict)",)


# -- enum and const compare without coercion ------------------------------------------


def test_enum_and_const_tell_one_true_and_one_point_oh_apart() -> None:
    assert found({"type": "integer", "enum": [1, 2]}, 1) == ()
    assert found({"type": "number", "enum": [1, 2]}, 1.0) == (
        "$.x: 1.0 is not one of [1, 2]",)
    assert found({"type": ["integer", "boolean"], "enum": [1]}, True) == (
        "$.x: True is not one of [1]",)
    assert found({"const": "keep"}, "keep") == ()
    assert found({"const": "keep"}, "Keep") == ("$.x: expected the constant 'keep'",)
    assert found({"enum": [[1, {"a": True}]]}, [1, {"a": True}]) == ()
    assert found({"enum": [[1, {"a": True}]]}, [1, {"a": 1}]) != ()


def test_json_equal_and_json_kind() -> None:
    assert json_equal({"a": [1, "b", None]}, {"a": [1, "b", None]})
    assert not json_equal(1, 1.0)
    assert not json_equal(1, True)
    assert not json_equal(0, False)
    assert not json_equal([1], [1, 2])
    assert not json_equal(float("nan"), float("nan"))
    samples: tuple[object, ...] = (None, True, 1, 1.0, "s", [], {})
    assert [json_kind(v) for v in samples] == [
        "null", "boolean", "integer", "number", "string", "array", "object"]
    assert json_kind(float("inf")) is None
    assert json_kind((1,)) is None


# -- objects: closed, all keys present --------------------------------------------------


def test_objects_are_closed_and_complete() -> None:
    schema = obj({"a": {"type": "string"}, "b": {"type": "integer"}})
    assert violations(schema, {"a": "x", "b": 1}) == ()
    assert violations(schema, {"a": "x"}) == ("$.b: required key missing",)
    assert violations(schema, {"a": "x", "b": 1, "c": 0}) == ("$.c: undeclared key",)
    assert violations(schema, {"a": "x", "b": 1, "odd key": 0}) == (
        '$["odd key"]: undeclared key',)


def test_an_explicit_additional_properties_false_means_the_same() -> None:
    schema = obj({"a": {"type": "string"}}, additionalProperties=False)
    assert violations(schema, {"a": "x", "z": 1}) == ("$.z: undeclared key",)


def test_every_violation_is_listed_with_its_json_path() -> None:
    schema = obj({"groups": {"type": "array", "items": obj({
        "members": {"type": "array", "items": {"type": "string"}},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1}})}})
    value = {"groups": [
        {"members": ["m1"], "confidence": 0.5},
        {"members": ["m2", "m3"], "confidence": 1.5},
        {"members": [7, "m4", None], "confidence": -1, "extra": True},
    ]}
    assert violations(schema, value) == (
        "$.groups[1].confidence: 1.5, above maximum 1",
        "$.groups[2].members[0]: expected string, got number",
        "$.groups[2].members[2]: expected string, got null",
        "$.groups[2].confidence: -1, below minimum 0",
        "$.groups[2].extra: undeclared key",
    )


@pytest.mark.parametrize(("key", "path"), [
    ("plain_key", "$.plain_key"), ("_x9", "$._x9"), ("9lives", '$["9lives"]'),
    ("a.b", '$["a.b"]'), ('say "hi"', '$["say \\"hi\\""]'), ("", '$[""]'),
    ("back\\slash", '$["back\\\\slash"]'),
])
def test_paths_quote_keys_that_are_not_identifiers(key: str, path: str) -> None:
    assert child_path("$", key) == path


# -- bounds ------------------------------------------------------------------------------


def test_numeric_bounds_are_inclusive() -> None:
    sub = {"type": "number", "minimum": 0, "maximum": 1}
    assert found(sub, 0) == () and found(sub, 1) == () and found(sub, 0.5) == ()
    assert found(sub, -0.01) == ("$.x: -0.01, below minimum 0",)
    assert found(sub, 1.01) == ("$.x: 1.01, above maximum 1",)


def test_string_length_counts_characters_not_bytes() -> None:
    sub = {"type": "string", "minLength": 2, "maxLength": 3}
    assert found(sub, "日本語") == ()
    assert found(sub, "a") == ("$.x: length 1, below minLength 2",)
    assert found(sub, "abcd") == ("$.x: length 4, above maxLength 3",)


def test_array_length_bounds() -> None:
    sub = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}
    assert found(sub, [1]) == () and found(sub, [1, 2]) == ()
    assert found(sub, []) == ("$.x: length 0, below minItems 1",)
    assert found(sub, [1, 2, "3"]) == ("$.x: length 3, above maxItems 2",
                                       "$.x[2]: expected integer, got string")


# -- check ----------------------------------------------------------------------------------


def test_check_returns_the_value_itself() -> None:
    schema = obj({"a": {"type": "integer"}})
    value = {"a": 1}
    result = check(schema, value, model_id="m")
    assert isinstance(result, Success)
    assert result.unwrap() is value


def test_check_fails_with_every_violation_in_the_reason() -> None:
    schema = obj({"a": {"type": "integer"}, "b": {"type": "string"}})
    result = check(schema, {"a": "1", "b": 2}, model_id="m")
    assert result == Failure(ModelMalformed("m", "off-schema answer: $.a: expected "
                                                 "integer, got string; $.b: expected "
                                                 "string, got number"))


def test_check_spells_out_a_bounded_number_of_violations() -> None:
    schema = obj({"xs": {"type": "array", "items": {"type": "string"}}})
    result = check(schema, {"xs": list(range(MAX_REPORTED_VIOLATIONS + 5))})
    assert isinstance(result, Failure)
    reason = result.failure().reason
    assert reason.count("expected string") == MAX_REPORTED_VIOLATIONS
    assert reason.endswith("and 5 more")


def test_check_refuses_a_non_object_answer() -> None:
    schema = obj({})
    assert check(schema, {}) == Success({})
    not_objects: tuple[object, ...] = ([], "x", None, 1)
    for value in not_objects:
        assert isinstance(check(schema, value), Failure)


def test_check_refuses_a_schema_outside_the_subset_instead_of_ignoring_it() -> None:
    schema = obj({"a": {"type": "string", "pattern": "^m[0-9]+$"}})
    result = check(schema, {"a": "anything"}, model_id="m")
    assert isinstance(result, Failure)
    assert "the schema is refused" in result.failure().reason
    assert "'pattern'" in result.failure().reason


# -- validate_schema ------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "needle"), [
    ([], "a schema must be a JSON object"),
    ({"type": "array", "items": {"type": "string"}}, "root schema"),
    (one({"type": "string", "format": "date"}), "'format' is outside"),
    (one({"anyOf": [{"type": "string"}]}), "'anyOf' is outside"),
    (one({"$ref": "#/defs/x"}), "'$ref' is outside"),
    (one({"type": "string", "minimum": 1}), "'minimum' needs number or integer"),
    (one({"type": "integer", "maxLength": 1}), "'maxLength' needs string"),
    (one({"type": "string", "items": {"type": "string"}}), "'items' needs array"),
    (one({"enum": ["a"], "minLength": 1}), "'minLength' needs string"),
    (one({"type": "date"}), "unknown type 'date'"),
    (one({"type": []}), "non-empty list"),
    (one({"type": ["string", "string"]}), "repeats"),
    (one({"description": "no type"}), "must declare 'type'"),
    (one({"type": "array"}), "needs 'items'"),
    (one({"type": "object"}), "needs 'properties'"),
    (one({"type": "string", "enum": []}), "non-empty list"),
    (one({"type": "string", "enum": ["a", 1]}), "1 in 'enum'/'const' is not of its 'type'"),
    (one({"type": "integer", "const": 1.5}), "not of its 'type'"),
    (one({"enum": [float("nan")]}), "not a JSON value"),
    (one({"type": "string", "minLength": -1}), "'minLength' must be a non-negative"),
    (one({"type": "string", "maxLength": 2.0}), "'maxLength' must be a non-negative"),
    (one({"type": "array", "items": {"type": "string"}, "minItems": True}),
     "'minItems' must be a non-negative"),
    (one({"type": "number", "minimum": "0"}), "'minimum' must be a finite number"),
    (one({"type": "number", "maximum": float("inf")}), "'maximum' must be a finite number"),
    (one({"type": "number", "minimum": 2, "maximum": 1}), "'minimum' exceeds 'maximum'"),
    (one({"type": "string", "description": 3}), "'description' must be a string"),
    (obj({"a": {"type": "string"}}, additionalProperties=True), "may only be false"),
    (obj({"a": {"type": "string"}}, additionalProperties={"type": "string"}),
     "may only be false"),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, "every property must be "
                                                                  "required"),
    ({"type": "object", "properties": {}, "required": ["a"]}, "names undeclared 'a'"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
     "repeats"),
    ({"type": "object", "properties": {}, "required": "a"}, "list of property names"),
    (obj({"x": "string"}), "#/properties/x: a schema must be a JSON object"),
    (one({"type": "array", "items": {"type": "array", "items": {"type": "object",
                                                                "properties": {"q": {}}}}}),
     "#/properties/x/items/items/properties/q: a schema must declare"),
])
def test_a_schema_outside_the_subset_is_refused(schema: object, needle: str) -> None:
    result = validate_schema(schema)
    assert isinstance(result, Failure), result
    error = result.failure()
    assert isinstance(error, RequestRefused)
    assert needle in error.reason, error.reason


def test_a_schema_inside_the_subset_is_accepted_unchanged() -> None:
    schema = obj({
        "rel": {"type": "string", "enum": ["supports", "none"], "description": "the edge"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "count": {"type": "integer", "minimum": 0},
        "why": {"type": ["string", "null"], "minLength": 1, "maxLength": 300},
        "keys": {"type": "array", "items": {"type": "string"}, "minItems": 0,
                 "maxItems": 40},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "kind": {"const": "edge"},
        "nested": obj({"a": {"type": "integer"}}, additionalProperties=False),
    }, additionalProperties=False, description="one answer")
    assert validate_schema(schema) == Success(schema)


def test_every_problem_is_reported_at_once() -> None:
    result = validate_schema(obj({"a": {"type": "strin"}, "b": {"type": "string",
                                                               "pattern": "x"}}))
    assert isinstance(result, Failure)
    reason = result.failure().reason
    assert "#/properties/a: unknown type 'strin'" in reason
    assert "#/properties/b: the keyword 'pattern'" in reason


def test_the_subset_is_the_one_documented() -> None:
    assert frozenset({
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
        "description"}) == SUPPORTED_KEYWORDS
