"""The README's Python example runs as written against a real store (the demo's)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from memhtml.cli.demo import build_demo

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_python_example_runs(tmp_path: Path) -> None:
    store = tmp_path / "demo"
    build_demo(store)
    found = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert found is not None
    code = found.group(1).replace("/path/to/store", str(store))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[-2].endswith("memories")
    assert lines[-1].startswith("no commit ")
