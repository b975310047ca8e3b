"""No door puts a memory into the published site's folder.

``publish`` writes a memory's page at ``memhtml-site/view/<its path>/index.html``: a
memory at ``memhtml-site/view/a.html`` sits where the folder of ``a.html``'s page
goes, and the next publish fails on it. A write there and a move there are refused
alike, naming the folder, and nothing is committed; a memory elsewhere publishes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.store.paths import SITE_DIR, portable_path
from tests.integration.cli.cli_support import call, git_log


def _store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    store = tmp_path / "store"
    code, answer = call(capsys, "init", str(store), "--embedder", "none", "--json")
    assert code == 0, answer
    return store


def test_a_write_or_a_move_into_the_site_folder_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, capsys)
    s = ("--store", str(store), "--json")
    before = git_log(store)
    for folder in (f"{SITE_DIR}/view", SITE_DIR, f"{SITE_DIR}/view/areas/x.html"):
        code, answer = call(capsys, "write", "--title", "Misplaced", "--claim",
                            "A memory in the wrong place.", "--dir", folder, *s)
        assert code != 0 and SITE_DIR in answer["error"], (folder, answer)
    assert git_log(store) == before, "nothing committed"
    code, written = call(capsys, "write", "--title", "Placed", "--claim",
                         "A memory in its place.", *s)
    assert code == 0, written
    path = written["paths"][0] if "paths" in written else written["path"]
    before = git_log(store)
    code, answer = call(capsys, "move", path, f"{SITE_DIR}/view/placed.html", *s)
    assert code != 0 and SITE_DIR in answer["error"], answer
    assert git_log(store) == before
    code, answer = call(capsys, "publish", *s)
    assert code == 0, answer


@settings(max_examples=60, deadline=None)
@given(st.lists(st.from_regex(r"[a-z0-9][a-z0-9-]{0,8}", fullmatch=True), min_size=0,
                max_size=3))
def test_every_path_under_the_site_folder_is_refused(parts: list[str]) -> None:
    from memhtml.store.paths import Names

    path = "/".join([SITE_DIR, *parts, "note.html"])
    refused = portable_path(path, Names(()))
    assert not refused.value_or(None), path
    elsewhere = "/".join(["areas", *parts, "note.html"])
    assert portable_path(elsewhere, Names(())).value_or(None) == elsewhere
