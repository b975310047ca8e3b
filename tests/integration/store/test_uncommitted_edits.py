"""A person's uncommitted edit in the checkout is seen, and never undone.

memhtml commits onto the branch and brings the checkout up to date only where the
person has not changed it. A door that changed an edited file anyway would leave the
file and the branch disagreeing, and the person's next ``git commit -a`` would put
their file back over the door's change. So every door refuses such a path (naming it
and how to commit or discard the edit), commits nothing, and ``status`` and ``doctor``
list the edited files. Each story runs the real CLI and the person's real git.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.cli.app import app
from tests.integration.store.checkout_support import (
    PERSON,
    clean_environment,
    git,
    porcelain,
    rev,
)

MUG = "areas/inbox/mug.html"
KETTLE = "areas/inbox/kettle.html"
TASK = "areas/tasks/descale-the-kettle.html"
LISTING = "areas/inbox/index.html"


def cli(*tokens: str | Path) -> tuple[int, Any]:
    """One command of the real CLI, in this process, with ``--json``: its exit code
    and its answer."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = app([str(t) for t in tokens] + ["--json"], result_action="return_value")
    text = out.getvalue()
    try:
        return code, json.loads(text) if text.strip() else None
    except ValueError as exc:
        raise AssertionError(f"not JSON (exit {code}): {text}{err.getvalue()}") from exc


def done(*tokens: str | Path) -> Any:
    code, answer = cli(*tokens)
    assert code == 0, answer
    return answer


def make_store(root: Path) -> None:
    """A published store: two memories (the kettle links to the mug) and a task."""
    done("init", root)
    done("write", "--store", root, "--title", "Mug", "--claim", "The blue mug is Ada's.",
         "--path", MUG)
    done("write", "--store", root, "--title", "Kettle", "--claim",
         "The kettle is descaled on Mondays.", "--entity", "topic:kitchen",
         "--link", f"relates_to={MUG}", "--path", KETTLE)
    done("task", "add", "--store", root, "--title", "Descale the kettle",
         "--claim", "Descale the kettle with citric acid.")
    done("publish", "--store", root)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One store built once; each test works on its own copy."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        clean_environment(patch, home)
        root = tmp_path_factory.mktemp("template") / "store"
        make_store(root)
        yield root


@pytest.fixture
def store(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[Path, dict[str, str]]:
    env = clean_environment(monkeypatch, tmp_path / "home")
    root = tmp_path / "store"
    shutil.copytree(template, root, symlinks=True)
    return root, env


def hand_edit(root: Path, path: str, old: str | None = None, new: str = "") -> None:
    """Replace ``old`` with ``new`` in the file, or (no ``old``) add a line at its end."""
    target = root / path
    text = target.read_text(encoding="utf-8")
    changed = text + "<!-- a person's note -->\n" if old is None else text.replace(old, new)
    assert changed != text
    target.write_text(changed, encoding="utf-8")


def snapshot(root: Path, env: dict[str, str], path: str) -> tuple[str, list[str], bytes | None]:
    """What a refused door must leave as it was: the branch, git's view of the checkout,
    and the edited file's bytes."""
    target = root / path
    return rev(root, env), porcelain(root, env), (
        target.read_bytes() if target.exists() else None)


def assert_refused(answer: Any, path: str) -> None:
    assert answer["ok"] is False
    assert answer.get("code") == "ERR_UNCOMMITTED_EDITS", answer
    assert "nothing was written" in answer["error"]
    assert [v for v in answer["violations"] if v.startswith(f"{path}: ")], answer


# -- the story as a person met it -----------------------------------------------------


def test_a_label_after_a_hand_edit_refuses_and_git_commit_a_reverts_nothing(
        store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    hand_edit(root, KETTLE, "Mondays", "Tuesdays")
    before = snapshot(root, env, KETTLE)

    code, answer = cli("label", KETTLE, "person:ada", "--store", root)

    assert code == 1
    assert_refused(answer, KETTLE)
    assert f"git commit {KETTLE}" in answer["error"]
    assert f"git checkout -- {KETTLE}" in answer["error"]
    assert snapshot(root, env, KETTLE) == before

    # The person commits their edit as the message says; the label then lands, and a
    # later `git commit -a` has nothing of memhtml's to undo.
    git(root, env, *PERSON, "commit", "-q", "-m", "Tuesdays now", "--", KETTLE)
    done("label", KETTLE, "person:ada", "--store", root)
    assert porcelain(root, env) == []
    assert git(root, env, *PERSON, "commit", "-a", "-m", "anything?", check=False).returncode == 1
    on_branch = git(root, env, "show", f"HEAD:{KETTLE}").stdout
    assert "Tuesdays" in on_branch
    assert 'content="person:ada"' in on_branch or "person:ada" in on_branch


def test_a_door_on_another_path_lands_and_the_edit_survives_git_commit_a(
        store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    hand_edit(root, KETTLE, "Mondays", "Tuesdays")

    done("label", MUG, "person:ada", "--store", root)
    assert porcelain(root, env) == [f" M {KETTLE}"]

    git(root, env, *PERSON, "commit", "-qam", "my kettle edit")
    assert "person:ada" in git(root, env, "show", f"HEAD:{MUG}").stdout
    assert "Tuesdays" in git(root, env, "show", f"HEAD:{KETTLE}").stdout


# -- every door ---------------------------------------------------------------------


def _staged(root: Path, env: dict[str, str], path: str) -> None:
    hand_edit(root, path)
    git(root, env, "add", "--", path)


def _deleted(root: Path, env: dict[str, str], path: str) -> None:
    (root / path).unlink()


def _modified(root: Path, env: dict[str, str], path: str) -> None:
    hand_edit(root, path)


def _task_edited(root: Path, env: dict[str, str], path: str) -> None:
    hand_edit(root, path, "citric acid", "vinegar")


def _page_edited(root: Path, env: dict[str, str], path: str) -> None:
    # A new memory makes the listing stale, then the person edits the listing itself.
    done("write", "--store", root, "--title", "Teapot", "--claim", "The teapot is cracked.")
    target = root / path
    target.write_text(target.read_text(encoding="utf-8") + "<!-- mine -->\n", encoding="utf-8")


def _untracked(root: Path, env: dict[str, str], path: str) -> None:
    (root / path).write_text("<p>my own draft</p>\n", encoding="utf-8")


DOORS = {
    "label": (("label", KETTLE, "person:ada"), KETTLE, _modified),
    "unlabel": (("unlabel", KETTLE, "topic:kitchen"), KETTLE, _staged),
    "link": (("link", KETTLE, "supports", MUG), KETTLE, _deleted),
    "unlink": (("unlink", KETTLE, "relates_to", MUG), KETTLE, _modified),
    "archive": (("archive", KETTLE), KETTLE, _modified),
    "archive-rewrites-an-inbound-href": (("archive", MUG), KETTLE, _modified),
    "correct": (("correct", KETTLE, "--title", "Kettle", "--claim",
                 "The kettle is descaled on Fridays."), KETTLE, _staged),
    "move": (("move", KETTLE, "areas/kitchen/"), KETTLE, _modified),
    "task-status": (("task", "status", TASK, "done"), TASK, _task_edited),
    "publish": (("publish",), LISTING, _page_edited),
    "write-over-an-untracked-file": (("write", "--title", "Draft", "--claim",
                                      "A draft of mine.", "--path",
                                      "areas/inbox/draft.html"),
                                     "areas/inbox/draft.html", _untracked),
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_every_door_refuses_a_path_with_an_uncommitted_edit(
        store: tuple[Path, dict[str, str]], door: str) -> None:
    root, env = store
    tokens, path, edit = DOORS[door]
    edit(root, env, path)
    before = snapshot(root, env, path)

    code, answer = cli(*tokens, "--store", root)

    assert code == 1, answer
    assert_refused(answer, path)
    assert snapshot(root, env, path) == before


# -- what status and doctor say ---------------------------------------------------------


def test_status_and_doctor_list_edited_memory_files_of_every_kind(
        store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    _modified(root, env, KETTLE)
    _staged(root, env, MUG)
    _deleted(root, env, TASK)
    (root / "areas" / "kitchen").mkdir(parents=True)
    _untracked(root, env, "areas/kitchen/fresh.html")
    (root / "notes.txt").write_text("not a memory\n", encoding="utf-8")

    status = done("status", "--store", root)
    listed = [e["path"] for e in status["uncommitted"]]
    assert listed == sorted(listed)
    by_path = {e["path"]: e for e in status["uncommitted"]}
    assert by_path == {
        KETTLE: {"path": KETTLE, "kind": "modified", "staged": False, "unstaged": True},
        MUG: {"path": MUG, "kind": "modified", "staged": True, "unstaged": False},
        TASK: {"path": TASK, "kind": "deleted", "staged": False, "unstaged": True},
        "areas/kitchen/fresh.html": {"path": "areas/kitchen/fresh.html",
                                     "kind": "untracked", "staged": False, "unstaged": True},
    }
    assert status["in_progress"] is None

    code, text = text_of("status", "--store", root)
    assert code == 0
    assert "4 file(s) edited in the checkout and not committed" in text
    assert "search and read see only what is committed" in text
    assert f"{MUG}: modified, staged; commit it (git commit {MUG}) or discard it " \
           f"(git checkout HEAD -- {MUG})" in text

    code, doctor = cli("doctor", "--store", root)
    uncommitted = sorted(f["path"] for f in doctor["findings"] if f["kind"] == "uncommitted")
    assert uncommitted == sorted(by_path)
    # A person's edit is their work, not a fault of the store: doctor still passes.
    assert (code, doctor["ok"]) == (0, True), doctor


def text_of(*tokens: str | Path) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = app([str(t) for t in tokens], result_action="return_value")
    return code, out.getvalue()


# -- the law, over any mix of edits -------------------------------------------------------

def _staged_then_edited(root: Path, env: dict[str, str], path: str) -> None:
    _staged(root, env, path)
    hand_edit(root, path)


EDITS = {
    "none": None,
    "modified": _modified,
    "staged": _staged,
    "staged-then-edited": _staged_then_edited,
    "deleted": _deleted,
    "deleted-staged": lambda root, env, path: git(root, env, "rm", "-q", "--", path),
}
SUBJECTS = (MUG, KETTLE)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.tuples(*(st.sampled_from(sorted(EDITS)) for _ in SUBJECTS)))
def test_a_door_refuses_exactly_the_edited_paths_and_git_commit_a_keeps_every_landed_write(
        template: Path, monkeypatch: pytest.MonkeyPatch, kinds: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        env = clean_environment(monkeypatch, Path(scratch) / "home")
        root = Path(scratch) / "store"
        shutil.copytree(template, root, symlinks=True)
        for path, kind in zip(SUBJECTS, kinds, strict=True):
            edit = EDITS[kind]
            if edit is not None:
                edit(root, env, path)

        listed = {e["path"] for e in done("status", "--store", root)["uncommitted"]}
        edited = {path for path, kind in zip(SUBJECTS, kinds, strict=True) if kind != "none"}
        assert listed == edited

        landed = []
        for path in SUBJECTS:
            tip = rev(root, env)
            code, answer = cli("label", path, "person:grace", "--store", root)
            if path in edited:
                assert code == 1, answer
                assert_refused(answer, path)
                assert rev(root, env) == tip
            else:
                assert code == 0, answer
                landed.append(path)

        git(root, env, *PERSON, "commit", "-qam", "whatever the person had", check=False)
        for path in landed:
            assert "person:grace" in git(root, env, "show", f"HEAD:{path}").stdout
