"""The request bytes of both dialects match their golden files."""

from __future__ import annotations

import json

import pytest
from tests.golden.llm.llm_golden import GOLDEN, body

from memhtml.llm import Dialect


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_request_bytes_match_the_golden_file(dialect: Dialect) -> None:
    assert body(dialect) == GOLDEN[dialect].read_bytes().removesuffix(b"\n")


def test_the_golden_files_show_what_they_pin() -> None:
    anthropic = json.loads(GOLDEN["anthropic"].read_bytes())
    openai = json.loads(GOLDEN["openai"].read_bytes())
    assert "—" in GOLDEN["anthropic"].read_text(encoding="utf-8")
    tool = anthropic["tools"][0]
    assert tool["cache_control"] == anthropic["system"][0]["cache_control"] == {
        "type": "ephemeral"}
    assert anthropic["tool_choice"] == {"type": "tool", "name": tool["name"]}
    members = tool["input_schema"]["properties"]["groups"]["items"]["properties"]["members"]
    assert members["items"]["maxLength"] == 8
    fmt = openai["response_format"]["json_schema"]
    assert fmt["strict"] is True
    sent = fmt["schema"]["properties"]["groups"]["items"]
    assert sent["additionalProperties"] is False
    # Every bound goes on the wire, in every form, so a decoder cannot leave it.
    assert sent["properties"]["members"]["items"]["maxLength"] == 8
    assert list(sent["properties"]) == ["members", "confidence", "note"], \
        "properties in their declared order: the members before the confidence"
