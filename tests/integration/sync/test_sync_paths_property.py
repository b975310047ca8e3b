"""Property: whatever paths a remote's branch brings, ``memhtml sync`` refuses exactly
the ones a door would refuse, names each, and moves nothing; every door keeps working.

Each example is real git work: an attacker lays generated entries over the store's
branch (or over an older commit, so the sync would merge), pushes the commit to a
bare remote with plain ``git push --force``, and the store syncs through the real
CLI. The generated entries mix offending paths (names over 255 bytes or paths over
4096, case and Unicode twins of a name here or of each other, symbolic links at
layout paths, ``.git`` in any case, ``..``, control characters, backslashes, Windows
device names and characters, the state directory) with acceptable ones (a plain new
file, a symbolic link outside the layout, a sleep report, an edit of a memory here),
each kind in a directory of its own so no two interact unless meant to. Required:
the refusal names exactly the offending paths, the branch and the checkout are as
they were, and a write then commits and ``status`` answers.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.contracts.paths import shown_path
from tests.integration.cli.cli_support import call
from tests.integration.sync.remote_trees import LINK, Attacker, Entry, checkout_state, tip
from tests.integration.sync.sync_support import git

REFUSED = "ERR_REMOTE_PATHS_REFUSED"
SEED = "areas/inbox/coffee.html"
LAYOUT_LINKS = ("areas/tasks", "archive", "memhtml-site", "resources/people", "areas/deploy",
                ".gitignore", "index.html", ".memhtml/state", "sitemap.xml")
"""Paths of the layout no other kind below lays anything under."""

Built = tuple[dict[str, Entry | None], set[str]]
"""Entries to lay over the tree, and which of their paths a door would refuse."""
Kind = Callable[[st.DataObject, int], Built]


def _bad(*paths: str, data: bytes = b"x\n", mode: int = 0o100644) -> Built:
    laid: dict[str, Entry | None] = {p: Entry(data, mode) for p in paths}
    return laid, set(paths)


def _long_name(draw: st.DataObject, i: int) -> Built:
    char = draw.draw(st.sampled_from(["x", "\u00e9", "\u8a9e"]), label="char")
    width = len(char.encode())
    segment = char * draw.draw(st.integers(256 // width + 1, 400 // width), label="length")
    where = draw.draw(st.sampled_from(["file", "directory"]), label="where")
    path = f"areas/l{i}/{segment}.html" if where == "file" else f"areas/{segment}/l{i}.html"
    return _bad(path)


def _long_path(draw: st.DataObject, i: int) -> Built:
    depth = draw.draw(st.integers(21, 24), label="depth")
    return _bad("/".join([f"lp{i}", *(["d" * 199] * depth), "x.html"]))


def _case_twin_here(draw: st.DataObject, i: int) -> Built:
    flips = draw.draw(st.lists(st.booleans(), min_size=6, max_size=6).filter(any), label="case")
    name = "".join(c.upper() if up else c for c, up in zip("coffee", flips, strict=True))
    return _bad(f"areas/inbox/{name}.html")


def _twins_together(draw: st.DataObject, i: int) -> Built:
    letter = draw.draw(st.sampled_from(["\u00e9", "\u00f1", "\u00fc", "\u00c5", "\u1ed9"]),
                       label="letter")
    how = draw.draw(st.sampled_from(["case", "normalization"]), label="how")
    if how == "case":
        return _bad(f"areas/t{i}/pair{letter}.html", f"areas/t{i}/PAIR{letter.upper()}.html")
    composed = unicodedata.normalize("NFC", f"areas/t{i}/caf{letter}.html")
    return _bad(composed, unicodedata.normalize("NFD", composed))


def _layout_link(draw: st.DataObject, i: int) -> Built:
    return _bad(draw.draw(st.sampled_from(LAYOUT_LINKS), label="link"), data=b"/etc",
                mode=LINK)


def _git_name(draw: st.DataObject, i: int) -> Built:
    spelled = draw.draw(st.sampled_from([".git", ".GIT", ".Git", ".gIT"]), label="git")
    shape = draw.draw(st.sampled_from(["root", "nested", "leaf"]), label="shape")
    return _bad({"root": f"{spelled}/x{i}", "nested": f"areas/g{i}/{spelled}/config",
                 "leaf": f"areas/g{i}/{spelled}"}[shape])


def _climbing(draw: st.DataObject, i: int) -> Built:
    return _bad(draw.draw(st.sampled_from([f"areas/d{i}/../x.html", f"areas/d{i}/./x.html"]),
                          label="dots"))


def _control(draw: st.DataObject, i: int) -> Built:
    char = draw.draw(st.sampled_from(["\x01", "\x1b", "\x7f", "\n", "\t"]), label="control")
    return _bad(f"areas/c{i}/a{char}b.html")


def _backslash(draw: st.DataObject, i: int) -> Built:
    return _bad(f"areas/b{i}/a\\..\\b.html")


def _windows(draw: st.DataObject, i: int) -> Built:
    name = draw.draw(st.sampled_from(["con.html", "AUX", "nul.txt", "Com1.html", "lpt9",
                                      "dot.", "space ", "a:b.html", "what?.html", "p|q",
                                      "<x>.html", 'say"hi".html', "star*.html"]),
                     label="name")
    return _bad(f"areas/w{i}/{name}")


def _state(draw: st.DataObject, i: int) -> Built:
    return _bad(draw.draw(st.sampled_from([f".memhtml/snapshots{i}/x.bin", f".MEMHTML/x{i}",
                                           f".Memhtml/config{i}.toml"]), label="state"))


OFFENCES: tuple[Kind, ...] = (_long_name, _long_path, _case_twin_here, _twins_together,
                              _layout_link, _git_name, _climbing, _control, _backslash,
                              _windows, _state)


def _fine(draw: st.DataObject, i: int) -> Built:
    kind = draw.draw(st.sampled_from(["file", "page", "link", "report", "edit"]), label="fine")
    path, entry = {
        "file": (f"notes/ok{i}.txt", Entry(b"fine\n")),
        "page": (f"areas/ok{i}/fine.html", Entry(b"<p>not a memory</p>\n")),
        "link": (f"areas/inbox/link{i}.html", Entry(b"../../elsewhere", LINK)),
        "report": (f".memhtml/sleep/2026-02-{i + 1:02d}.html", Entry(b"<p>report</p>\n")),
        "edit": (SEED, Entry(b"<p>edited elsewhere</p>\n")),
    }[kind]
    laid: dict[str, Entry | None] = {path: entry}
    return laid, set()


@dataclass
class World:
    """A store syncing through a bare remote, and the attacker beside it; examples run
    one after another against it (the store only ever moves by its own writes)."""

    store: Path
    attacker: Attacker
    base: str
    capsys: pytest.CaptureFixture[str]
    writes: itertools.count[int]

    def cli(self, *tokens: str) -> tuple[int, Any]:
        return call(self.capsys, *tokens, "--store", str(self.store), "--json")


@pytest.fixture
def world(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> World:
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Pat\n\temail = pat@example.invalid\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    git(store, "remote", "add", "origin", str(remote))
    code, wrote = call(capsys, "write", "--title", "Coffee", "--claim", "Coffee is downstairs.",
                       "--store", str(store), "--json")
    assert code == 0 and wrote["new"] == [SEED], wrote
    assert call(capsys, "sync", "--store", str(store), "--json")[0] == 0
    base = tip(store)
    assert base is not None
    return World(store, Attacker.beside(tmp_path / "attacker.git", str(remote)), base, capsys,
                 itertools.count())


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sync_refuses_exactly_the_paths_a_door_would_refuse(world: World,
                                                            data: st.DataObject) -> None:
    kinds = data.draw(st.lists(st.sampled_from(OFFENCES), min_size=1, max_size=3),
                      label="offences")
    fine = data.draw(st.integers(0, 2), label="acceptable")
    diverged = data.draw(st.booleans(), label="diverged")
    files: dict[str, Entry | None] = {}
    offending: set[str] = set()
    for i, kind in enumerate(kinds):
        laid, bad = kind(data, i)
        files.update(laid)
        offending |= bad
    for i in range(fine):
        files.update(_fine(data, len(kinds) + i)[0])
    world.attacker.push_tree(str(world.store), world.base if diverged else
                             str(tip(world.store)), files)
    before, seen = tip(world.store), checkout_state(world.store)

    code, answer = world.cli("sync")

    assert code == 1, answer
    assert answer["ok"] is False and answer["code"] == REFUSED, answer
    named = [v.split(" refused: ", 1)[0] for v in answer["violations"]]
    assert named == [f"path {shown_path(p)}" for p in sorted(offending)], answer
    assert tip(world.store) == before, "the branch did not move"
    assert checkout_state(world.store) == seen, "the checkout did not change"
    number = next(world.writes)
    code, wrote = world.cli("write", "--title", f"Fact {number}",
                            "--claim", f"Fact {number} was written after a refusal.")
    assert code == 0 and wrote["committed"] is True, wrote
    code, status = world.cli("status")
    assert code == 0 and status["commit"] == tip(world.store), status
