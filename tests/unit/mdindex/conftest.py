"""Fixtures: a small lighthouse corpus in a real temp directory, and its index.

Tests take what they need as fixtures rather than importing this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, TypeVar

import pytest
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader
from memhtml.mdindex import Corpus, build

T = TypeVar("T")
E = TypeVar("E")

# Each specimen hides a phrase from a plain phrase search in its own way.
WRAP = (
    "> the light is not the point. the point is that somebody is awake\n"
    "> and watching, and the light is only how that fact travels\n"
    "> to a ship."
)
EMPHASIS = (
    "the rule the station runs on: treat every **instrument reading** as a"
    " measurement with a date on it."
)
FUNCTION_WORD = (
    "the anemometer is reliable about the gusts and unreliable about the mean,"
    " three winters running."
)

LIGHTHOUSE: Mapping[str, str] = {
    "HANDBOOK.md": "# Handbook\n\n" + WRAP + "\n\nA second paragraph about the relief boat"
    " and the eighteen minutes it runs late.",
    "CHARTER.md": "# Charter\n\n" + EMPHASIS + "\n\nWhat the station owes the coast,"
    " and what the coast owes the station.",
    "notes/wind.md": "---\nname: wind-log\ntype: measured\n---\n\n" + FUNCTION_WORD,
    "notes/glass.md": "---\nname: glazing-care\ntype: reference\n---\n\nsalt haze etches the"
    " glazing unless it is washed in daylight with fresh water.\n\nnever bring the brass"
    " paste into the lightroom; it scratches optical glass permanently.",
    "notes/index-a.md": "# Index\n\n- [wind-log](wind.md) — the anemometer\n"
    "- [glazing-care](glass.md) — the glazing\n",
    "log/1974-03-11.md": "# A day\n\nOnshore gale until dark; the diaphone ran for nine hours"
    " and the compressor held pressure throughout.",
}


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> DirectoryReader:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return DirectoryReader(root)


def success(result: IOResult[T, E]) -> T:
    """The value of a successful IOResult; a failure raises with the error shown."""
    return unsafe_perform_io(result.unwrap())


def failure(result: IOResult[T, E]) -> E:
    """The error of a failed IOResult; a success raises."""
    return unsafe_perform_io(result.failure())


class TreeWriter(Protocol):
    def __call__(
        self, files: Mapping[str, str | bytes], under: str = "tree"
    ) -> DirectoryReader: ...


@pytest.fixture
def specimens() -> dict[str, str]:
    return {"wrap": WRAP, "emphasis": EMPHASIS, "function_word": FUNCTION_WORD}


@pytest.fixture
def lighthouse_files() -> dict[str, str]:
    return dict(LIGHTHOUSE)


@pytest.fixture
def tree(tmp_path: Path) -> TreeWriter:
    def write(files: Mapping[str, str | bytes], under: str = "tree") -> DirectoryReader:
        return write_tree(tmp_path / under, files)

    return write


@pytest.fixture
def lighthouse(tmp_path: Path) -> DirectoryReader:
    return write_tree(tmp_path, LIGHTHOUSE)


@pytest.fixture
def corpus(lighthouse: DirectoryReader) -> Corpus:
    return success(build(lighthouse))
