"""``memory_status`` answers exactly what ``memhtml status --json`` prints.

One store with a bit of everything status reports (memories of two types, a task, a
committed file that is not a memory, a memory edited in the checkout and not
committed) is read both ways: the CLI in this process, the MCP server as a real
subprocess through the official client. The two answers are the same value.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from memhtml.cli.app import app
from memhtml.store import Store, WriteInput, task_add, write
from tests.integration.mcp.mcp_support import (
    data,
    git_cli,
    make_store,
    ok,
    outside_store,
    run,
)


def status_json(root: Path) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = app(["status", "--store", str(root), "--json"], result_action="return_value")
    assert code == 0, out.getvalue()
    return json.loads(out.getvalue())


def test_memory_status_and_status_json_are_one_shape(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)
    root = make_store(tmp_path)
    store: Store = outside_store(root)
    kettle = ok(write(store, WriteInput(title="Kettle", claim="The kettle is descaled on "
                                        "Mondays."))).primary
    ok(write(store, WriteInput(title="Deploys", claim="Deploys go out on Tuesdays.",
                               memory_type="procedural")))
    ok(task_add(store, "Descale", "Descale the kettle.", due_at="2000-01-01"))
    (root / "areas" / "inbox" / "broken.html").write_text("<p>not a memory</p>\n",
                                                          encoding="utf-8")
    git_cli(root, "add", "areas/inbox/broken.html")
    git_cli(root, "-c", "user.name=P", "-c", "user.email=p@example.org", "commit", "-qm",
            "a file of mine")
    assert kettle is not None
    edited = root / kettle
    edited.write_text(edited.read_text(encoding="utf-8") + "<!-- mine -->\n", encoding="utf-8")

    from_cli = status_json(root)
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        seen.update(data(await session.call_tool("memory_status", {})))

    run(root, scenario)

    assert seen == from_cli
    assert from_cli["memories"] == 3
    assert from_cli["by_type"] == {"procedural": 1, "semantic": 1, "task": 1}
    assert from_cli["overdue"] == 1
    assert [s["path"] for s in from_cli["skipped"]] == ["areas/inbox/broken.html"]
    assert from_cli["uncommitted"] == [
        {"path": kettle, "kind": "modified", "staged": False, "unstaged": True}]
    assert from_cli["in_progress"] is None
    assert from_cli["commit"] == git_cli(root, "rev-parse", "HEAD").strip()
