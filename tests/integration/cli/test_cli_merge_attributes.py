"""A store's attributes never make a plain ``git pull`` drop the other side's memory edits.

Generated pages are marked ``merge=memhtml-generated``; memhtml defines that driver, and
no longer git's generic ``ours`` (which an earlier release set to ``true``: keep this
side of any file). A ``.gitattributes`` is untrusted input: a collaborator can commit
``*.html merge=ours`` or ``*.html merge=memhtml-generated`` and every clone pulls it.
Neither may cost a memory edit: the other side's edit merges, or conflicts, exactly as
git's own text merge would have it, and ``doctor`` names every memory file git's
attributes give a merge driver. Everything runs as a person would: ``memhtml clone``,
plain ``git pull`` and ``git push`` against a file remote, hand edits committed with git.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memhtml.store.merge_driver import DRIVER_COMMAND, DRIVER_KEY
from tests.integration.cli.cli_support import call
from tests.integration.store.checkout_support import clean_environment, git, memhtml

PARAGRAPHS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
BODY = tuple(token for paragraph in PARAGRAPHS for token in ("--body", paragraph))
APART = "areas/inbox/apart.html"
"""Edited on both sides, lines apart: git's text merge takes both edits."""
CLASH = "areas/inbox/clash.html"
"""Edited on both sides, the same line: git's text merge leaves a conflict."""
PAGE = "notes/index.html"
"""A person's own page at a generated page's name: not written by publish."""


def run(env: dict[str, str], root: Path, *tokens: str) -> Any:
    """A memhtml command that must succeed, as its own process; its JSON answer."""
    done = memhtml(env, *tokens, "--store", str(root), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def setup(capsys: pytest.CaptureFixture[str], root: Path, *tokens: str) -> Any:
    """A memhtml command of a test's set-up, run in this process (the same entry point,
    without a process's start-up); its JSON answer."""
    code, answer = call(capsys, *tokens, "--store", str(root), "--json")
    assert code == 0, answer
    return answer


def doctor(env: dict[str, str], root: Path) -> list[dict[str, str]]:
    done = memhtml(env, "doctor", "--store", str(root), "--json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    findings: list[dict[str, str]] = json.loads(done.stdout)["findings"]
    return findings


def config(root: Path, env: dict[str, str], key: str) -> str | None:
    found = git(root, env, "config", "--get", key, check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def edit(root: Path, env: dict[str, str], path: str, old: str, new: str) -> None:
    """A person's edit of one line, committed with git."""
    target = root / path
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    target.write_text(text.replace(old, new), encoding="utf-8")
    git(root, env, "commit", "-q", "-am", f"edit {path}")


def text_merge(root: Path, env: dict[str, str], path: str, base: str, ours: str,
               theirs: str) -> subprocess.CompletedProcess[str]:
    """What git's own three-way text merge makes of ``path`` at three commits."""
    files = {}
    for name, commit in (("base", base), ("ours", ours), ("theirs", theirs)):
        files[name] = root.parent / f"{root.name}-{name}"
        files[name].write_text(git(root, env, "show", f"{commit}:{path}").stdout,
                               encoding="utf-8")
    return subprocess.run(["git", "merge-file", "-p", str(files["ours"]),
                           str(files["base"]), str(files["theirs"])],
                          capture_output=True, text=True, env=env, check=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clean home for the module's tests: nothing writes there, so their commands
    share one warm interpreter (``warm_cli``)."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def pair(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, str], Path, Path]:
    """Two clones of a store on a file remote, each cloned with ``memhtml clone``; the
    first made by an earlier release, whose config still defines ``ours`` as ``true``."""
    env = clean_environment(monkeypatch, home)
    seed = tmp_path / "seed"
    assert memhtml(env, "init", str(seed)).returncode == 0
    for path, title in ((APART, "Apart"), (CLASH, "Clash")):
        written = setup(capsys, seed, "write", "--title", title, "--claim", f"{title} holds.",
                        *BODY)
        assert written["path"] == path
    (seed / "notes").mkdir()
    (seed / PAGE).write_text("<h1>A page of my own</h1>\n"
                             + "".join(f"<p>{p}</p>\n" for p in PARAGRAPHS), encoding="utf-8")
    git(seed, env, "add", PAGE)
    git(seed, env, "commit", "-q", "-m", "my page")
    origin = tmp_path / "origin.git"
    git(tmp_path, env, "clone", "-q", "--bare", str(seed), str(origin))
    ada, bob = tmp_path / "ada", tmp_path / "bob"
    for clone in (ada, bob):
        cloned = memhtml(env, "clone", str(origin), str(clone), "--json")
        assert cloned.returncode == 0, cloned.stdout + cloned.stderr
        assert config(clone, env, DRIVER_KEY) == DRIVER_COMMAND
        assert config(clone, env, "merge.ours.driver") is None
    git(ada, env, "config", "merge.ours.driver", "true")
    return env, ada, bob


@pytest.mark.parametrize("driver", ["ours", "memhtml-generated"])
def test_a_committed_merge_driver_never_drops_the_other_sides_memory_edit(
        pair: tuple[dict[str, str], Path, Path], driver: str) -> None:
    env, ada, bob = pair
    # A collaborator commits the line and pushes it; ada pulls it with plain git.
    with (bob / ".gitattributes").open("a", encoding="utf-8") as attributes:
        attributes.write(f"*.html merge={driver}\n")
    git(bob, env, "commit", "-q", "-am", "attributes")
    git(bob, env, "push", "-q", "origin", "HEAD")
    git(ada, env, "pull", "-q", "--no-rebase", "origin", "main")

    # Any memhtml command in ada removes the ``ours`` driver an earlier release defined,
    # and doctor names every memory file the line gives a driver.
    found = doctor(env, ada)
    assert config(ada, env, "merge.ours.driver") is None
    flagged = [f for f in found if f["kind"] == "merge-attribute"]
    assert len(flagged) == 1, found
    assert f"merge={driver}" in flagged[0]["message"]
    assert APART in flagged[0]["message"] and CLASH in flagged[0]["message"]

    # Both sides edit both memories and the person's page; bob pushes first.
    base = git(ada, env, "rev-parse", "HEAD").stdout.strip()
    edit(ada, env, APART, "<p>two</p>", "<p>two, as ada has it</p>")
    edit(ada, env, CLASH, "<p>four</p>", "<p>four, as ada has it</p>")
    edit(ada, env, PAGE, "<p>two</p>", "<p>two, as ada has it</p>")
    ours = git(ada, env, "rev-parse", "HEAD").stdout.strip()
    git(bob, env, "pull", "-q", "--no-rebase", "origin", "main")
    edit(bob, env, APART, "<p>seven</p>", "<p>seven, as bob has it</p>")
    edit(bob, env, CLASH, "<p>four</p>", "<p>four, as bob has it</p>")
    edit(bob, env, PAGE, "<p>seven</p>", "<p>seven, as bob has it</p>")
    git(bob, env, "push", "-q", "origin", "HEAD")
    theirs = git(bob, env, "rev-parse", "HEAD").stdout.strip()

    pulled = git(ada, env, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False)
    # The clash conflicts, as git's text merge has it; nothing is kept silently.
    assert pulled.returncode == 1, pulled.stdout + pulled.stderr
    assert f"CONFLICT (content): Merge conflict in {CLASH}" in pulled.stdout
    unmerged = git(ada, env, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert unmerged == [CLASH]
    clash = (ada / CLASH).read_text(encoding="utf-8")
    assert "four, as ada has it" in clash and "four, as bob has it" in clash
    assert "<<<<<<<" in clash and ">>>>>>>" in clash
    assert text_merge(ada, env, CLASH, base, ours, theirs).returncode == 1

    # The edits apart merge to exactly what git's text merge makes of them.
    for path in (APART, PAGE):
        expected = text_merge(ada, env, path, base, ours, theirs)
        assert expected.returncode == 0, expected.stderr
        merged = (ada / path).read_text(encoding="utf-8")
        assert merged == expected.stdout
        assert "as ada has it" in merged and "as bob has it" in merged


def test_doctor_names_every_memory_file_git_gives_a_merge_driver(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    env = clean_environment(monkeypatch, home)
    root = tmp_path / "store"
    assert memhtml(env, "init", str(root)).returncode == 0
    places = {"ours": "areas/a/", "union": "areas/b/", "binary": "areas/c/",
              "custom": "areas/d/", "info": "areas/e/", "text": "areas/f/",
              "set": "areas/g/", "plain": "areas/h/"}
    paths = {name: setup(capsys, root, "write", "--title", f"Memory {name}", "--claim",
                         f"The {name} memory holds.", "--dir", folder)["path"]
             for name, folder in places.items()}
    with (root / ".gitattributes").open("a", encoding="utf-8") as attributes:
        attributes.write("[attr]mine merge=custom\n"
                         "areas/a/*.html merge=ours\n"
                         "areas/b/** merge=union\n"
                         "areas/d/*.html mine\n"
                         "areas/f/*.html merge=text\n"
                         "areas/g/*.html merge\n"
                         "*.txt merge=ours\n")
    (root / "areas" / "c" / ".gitattributes").write_text("*.html binary\n", encoding="utf-8")
    git(root, env, "add", ".gitattributes", "areas/c/.gitattributes")
    git(root, env, "commit", "-q", "-m", "attributes")
    # Never committed: this clone's own attributes count as much.
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("areas/e/*.html -merge\n",
                                                       encoding="utf-8")

    flagged = {f["path"]: f["message"] for f in doctor(env, root)
               if f["kind"] == "merge-attribute"}
    assert set(flagged) == {paths["ours"], paths["union"], paths["binary"], paths["custom"]}
    assert "merge=ours" in flagged[paths["ours"]]
    assert "dropped without a conflict" in flagged[paths["ours"]]
    assert "merge=union" in flagged[paths["union"]]
    assert "merge=custom" in flagged[paths["custom"]]
    # -merge from info/attributes and the binary macro are one driver: one finding.
    binary = flagged[paths["binary"]]
    assert "-merge (binary)" in binary and "2 memory file(s)" in binary
    assert paths["info"] in binary
    # git's own text merge (merge=text, merge set) is no driver, nor is a line for
    # other files; memhtml's own lines name generated pages only.
    for name in ("text", "set", "plain"):
        assert all(paths[name] not in message for message in flagged.values())

    done = memhtml(env, "doctor", "--store", str(root), "--json")
    assert done.returncode == 1


def test_an_earlier_stores_merge_ours_lines_are_named_and_replaced(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    env = clean_environment(monkeypatch, home)
    root = tmp_path / "store"
    assert memhtml(env, "init", str(root)).returncode == 0
    setup(capsys, root, "write", "--title", "Alpha", "--claim", "Alpha holds.")
    setup(capsys, root, "publish")
    # What an earlier release's init wrote, and the driver it defined.
    (root / ".gitattributes").write_text(
        "# Generated by memhtml publish: regenerate, never merge.\n"
        "index.html merge=ours\nsitemap.xml merge=ours\n"
        "memhtml-site/memhtml.css merge=ours\n/_headers merge=ours\n"
        "*.pdf -diff\n", encoding="utf-8")
    git(root, env, "commit", "-q", "-am", "an earlier release's attributes")
    git(root, env, "config", "merge.ours.driver", "true")

    # A clone stays equal to its remote, and says what init would replace.
    copy = tmp_path / "copy"
    cloned = memhtml(env, "clone", str(root), str(copy), "--json")
    assert cloned.returncode == 0, cloned.stdout + cloned.stderr
    notes = json.loads(cloned.stdout)["notes"]
    assert len(notes) == 1 and "index.html merge=ours" in notes[0], notes
    assert "run memhtml init" in notes[0]
    assert git(copy, env, "rev-parse", "HEAD").stdout == git(root, env, "rev-parse",
                                                              "HEAD").stdout
    assert config(copy, env, DRIVER_KEY) == DRIVER_COMMAND

    found = [f for f in doctor(env, root) if f["kind"] == "merge-driver"]
    assert [f["path"] for f in found] == [".gitattributes"]
    assert "index.html merge=ours" in found[0]["message"]
    assert "memhtml doctor --fix" in found[0]["message"]
    assert config(root, env, "merge.ours.driver") is None

    tip = git(root, env, "rev-parse", "HEAD").stdout.strip()
    fixed = run(env, root, "doctor", "--fix")
    assert fixed == {"ok": True, "errors": 0, "advice": 0, "findings": []}
    assert git(root, env, "rev-parse", "HEAD~1").stdout.strip() == tip
    lines = (root / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert lines == ["# Generated by memhtml publish: regenerate, never merge.",
                     "*.pdf -diff",
                     "index.html merge=memhtml-generated",
                     "/sitemap.xml merge=memhtml-generated",
                     "/memhtml-site/memhtml.css merge=memhtml-generated",
                     "/_headers merge=memhtml-generated"]
    assert git(root, env, "status", "--porcelain").stdout == ""
    # Once is enough: nothing more to replace; and a line of memhtml's a person removes
    # on purpose is not put back by doctor.
    (root / ".gitattributes").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    git(root, env, "commit", "-q", "-am", "no _headers line")
    mine = git(root, env, "rev-parse", "HEAD").stdout.strip()
    assert run(env, root, "doctor", "--fix") == {"ok": True, "errors": 0, "advice": 0,
                                                 "findings": []}
    assert git(root, env, "rev-parse", "HEAD").stdout.strip() == mine
