"""The examples in the public faces' docstrings run, and say what they print.

The faces are ``memhtml.format``, ``memhtml.head``, ``memhtml.store`` and
``memhtml.compose``; their examples sit beside the functions they show, in the
modules listed here (a package's own docstring for a tour across its functions).
One test per module, which fails when the module holds no example; and every
module under ``src/memhtml`` that holds one must be listed, so none goes unrun.
"""

from __future__ import annotations

import doctest
import importlib
import io
import re
from pathlib import Path

import pytest

EXAMPLE_MODULES = (
    "memhtml.format.template",
    "memhtml.format.parse",
    "memhtml.format.canonical",
    "memhtml.format.hash",
    "memhtml.format.editors",
    "memhtml.format.anchors",
    "memhtml.mdindex.links",
    "memhtml.store.markdown_shape",
    "memhtml.store.markdown_yaml",
    "memhtml.head.version",
    "memhtml.head.search",
    "memhtml.head.overlay",
    "memhtml.head.gate",
    "memhtml.head.when",
    "memhtml.head.passages",
    "memhtml.eval.beir",
    "memhtml.eval.sessions",
    "memhtml.detect.classified",
    "memhtml.agent.memory_tool",
    "memhtml.store",
    "memhtml.store.doors",
    "memhtml.store.listing",
    "memhtml.store.write_rules",
    "memhtml.compose",
    "memhtml.compose.cloning",
    "memhtml.compose.run",
    "memhtml.compose.scoped",
    "memhtml.compose.settings",
    "memhtml.mcp.endpoint",
    "memhtml.mcp.http",
    "memhtml.contracts.credentials",
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
SRC = Path(__file__).resolve().parents[2] / "src"
_PROMPT = re.compile(r"^\s*>>> ", re.MULTILINE)


@pytest.mark.parametrize("name", EXAMPLE_MODULES)
def test_examples_run_as_written(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = io.StringIO()
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=report.write)
    assert runner.tries > 0, f"{name} holds no examples"
    assert runner.failures == 0, report.getvalue()


def _module_of(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_module_with_examples_is_listed() -> None:
    holding = {_module_of(path) for path in (SRC / "memhtml").rglob("*.py")
               if _PROMPT.search(path.read_text(encoding="utf-8"))}
    assert holding == set(EXAMPLE_MODULES)
