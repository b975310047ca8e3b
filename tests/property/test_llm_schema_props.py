"""Laws of the strict answer check.

- A value generated from a schema passes it, and comes back as itself.
- Changing one leaf to a value of a kind its schema rules out fails with exactly one
  violation, at that leaf's path.
- The check never raises, whatever JSON (or near-JSON) value it is handed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.llm import check, validate_schema, violations
from tests.property.schema_strategies import (
    WRONG_KINDS,
    Schema,
    json_values,
    leaves,
    names,
    roots,
    rules_out,
    schema_and_value,
)


@given(roots)
def test_generated_schemas_are_inside_the_subset(schema: Schema) -> None:
    assert validate_schema(schema) == Success(schema)


@given(schema_and_value())
def test_a_value_generated_from_a_schema_passes_it(case: tuple[Schema, Any]) -> None:
    schema, value = case
    assert violations(schema, value) == ()
    result = check(schema, value)
    assert isinstance(result, Success)
    assert result.unwrap() is value


@given(schema_and_value(), st.data())
def test_one_wrong_leaf_fails_at_that_leaf(case: tuple[Schema, Any], data: st.DataObject
                                           ) -> None:
    schema, value = case
    found = list(leaves(schema, value, "$", ()))
    assume(found)
    path, where, leaf_schema = data.draw(st.sampled_from(found))
    wrong = data.draw(st.sampled_from([w for w in WRONG_KINDS if rules_out(leaf_schema, w)]))
    mutated = copy.deepcopy(value)
    holder = mutated
    for step in where[:-1]:
        holder = holder[step]
    holder[where[-1]] = wrong
    got = violations(schema, mutated)
    assert len(got) == 1, got
    assert got[0].startswith(f"{path}: "), (path, got)
    assert isinstance(check(schema, mutated), Failure)


@given(roots, json_values)
def test_check_never_raises_on_any_json_value(schema: Schema, value: Any) -> None:
    result = check(schema, value)
    assert isinstance(result, Success | Failure)
    if isinstance(result, Success):
        assert violations(schema, value) == ()
        json.dumps(value, allow_nan=False)  # only JSON passes


@given(roots, st.dictionaries(names, json_values, max_size=5))
def test_check_never_raises_on_objects_with_arbitrary_members(schema: Schema,
                                                              value: dict[str, Any]) -> None:
    result = check(schema, value)
    assert isinstance(result, Success) == (violations(schema, value) == ())
