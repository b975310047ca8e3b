"""Laws over random input, each checked on both implementations at once: they agree with
a dict model, with each other, and, sha for sha, with git."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.errors import GitError
from memhtml.contracts.services import PathChange, Signature
from tests.contract.git_backends import (
    AT,
    AUTHOR,
    Backend,
    memory_backend,
    ok,
    put,
    pygit_backend,
)


@contextmanager
def both() -> Iterator[tuple[Backend, Backend]]:
    with tempfile.TemporaryDirectory() as tmp:
        yield pygit_backend(Path(tmp) / "law.git", bare=True), memory_backend(bare=True)


def outcome(io: IOResult[object, GitError]) -> object:
    """A success's value, or a failure's type: reasons are worded by each implementation."""
    if is_successful(io):
        return unsafe_perform_io(io.unwrap())
    return type(unsafe_perform_io(io.failure()))


# -- a random history ----------------------------------------------------------------

_DIRS = ["", "a/", "a/b/", "ü/ñ/", "日本/"]
_NAMES = ["x.html", "y.html", "é.html", "z", "a-b", "a.b"]
_PATHS = [d + n for d in _DIRS for n in _NAMES]

_steps = st.lists(
    st.tuples(
        st.lists(st.tuples(st.sampled_from(_PATHS),
                           st.none() | st.binary(max_size=12)), max_size=8),
        # Times across the 32-bit edges libgit2 writes, in zones east and west.
        st.datetimes(datetime(1900, 1, 1), datetime(2200, 1, 1),
                     timezones=st.sampled_from([UTC, timezone(timedelta(hours=2)),
                                                timezone(-timedelta(hours=3, minutes=30))])),
        st.sampled_from([AUTHOR, Signature(" Ann ;", "\tann@x"), Signature("Bo", "b")]),
        st.sampled_from(["step", "subject\n\nMemhtml-Op: put\n", ""]),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=40)
@given(steps=_steps)
def test_a_random_history_matches_the_model_with_git_s_shas(
    steps: list[tuple[list[tuple[str, bytes | None]], datetime, Signature, str]],
) -> None:
    with both() as (real, double):
        model: dict[str, bytes] = {}
        tips: list[str] = []
        for changes, at, author, message in steps:
            change_set = [PathChange(path, data) for path, data in changes]
            parent = tips[-1] if tips else None
            shas = [ok(b.git.commit("main", parent, change_set, message, author, at))
                    for b in (real, double)]
            assert shas[0] == shas[1]
            tips.append(shas[0])
            for path, data in changes:
                if data is None:
                    model.pop(path, None)
                else:
                    model[path] = data
            for backend in (real, double):
                assert backend.tree_bytes(tips[-1]) == model
        for backend in (real, double):
            assert ok(backend.git.commits_between(None, "main")) == tuple(dict.fromkeys(tips))

        def answers(b: Backend) -> list[object]:
            return [outcome(b.git.commit_info(tips[-1])),
                    outcome(b.git.changed_paths(tips[0], tips[-1])),
                    outcome(b.git.entries_at(tips[-1], _PATHS)),
                    outcome(b.git.commits_touching("main", "a", 9))]

        assert answers(real) == answers(double)


# -- names and paths git judges -------------------------------------------------------

_name_chars = "ab/.-_@{}~^:?*[\\ A\x7fé"
_names = st.text(alphabet=_name_chars, max_size=8) | st.sampled_from(
    ["HEAD", "@", "main", "refs/heads/x", "a.lock", "a/.b", "-a", "x/@", "@/x", "A_B", "A/b"])


@settings(max_examples=150)
@given(names=st.lists(_names, min_size=1, max_size=6))
def test_branch_names_are_judged_alike(names: list[str]) -> None:
    with both() as (real, double):
        for backend in (real, double):
            backend.commit(None, [put("a.html", "a")])
        for name in names:
            made = [outcome(b.git.create_branch(name, "main")) for b in (real, double)]
            assert made[0] == made[1], name


_rev_chars = "abcdef0189AH/.-_ @é"
_revs = st.text(alphabet=_rev_chars, max_size=8) | st.sampled_from(
    ["HEAD", "@", "main", "heads/main", "refs/heads/main", "side", "refs/heads/side",
     "heads/side", "refs/side", "remotes/x", "HEAD/x", "a..b", "x.lock"])


@settings(max_examples=150)
@given(revs=st.lists(_revs, min_size=1, max_size=6), branch=st.booleans())
def test_revisions_resolve_alike(revs: list[str], branch: bool) -> None:
    with both() as (real, double):
        for backend in (real, double):
            root = backend.commit(None, [put("a.html", "a")])
            backend.commit(root, [put("b.html", "b")])
            if branch:
                ok(backend.git.create_branch("side", root))
        tips = [ok(b.git.resolve("main")) for b in (real, double)]
        # Every sha prefix of the tip is a revision too, down to the ambiguous ones.
        for rev in [*revs, *(tips[0][:n] for n in (2, 3, 4, 7))]:
            resolved = [outcome(b.git.resolve(rev)) for b in (real, double)]
            assert resolved[0] == resolved[1], rev


_path_chars = "agitGIT.~1 :\\/é-"


@settings(max_examples=150)
@given(path=st.text(alphabet=_path_chars, min_size=1, max_size=10))
def test_paths_are_judged_alike(path: str) -> None:
    with both() as (real, double):
        results = [outcome(b.git.commit("main", None, [put(path, "x")], "m", AUTHOR, AT))
                   for b in (real, double)]
        assert results[0] == results[1], path
