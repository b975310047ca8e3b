"""Archive names and commit ops: the pure parts of restore and the stale-index write-back.

An archive path keeps the original path whole below its year's folder, the second
archive of a path in one year included (``archive/<YYYY>-2/``), so the original reads
back from any of them and the later archive ranks higher. A write-back commit is read
as ``rewrite-stale`` whether it was recorded under that name or, as earlier releases
did, as ``restore``; the ``restore`` door's own commits stay ``restore``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memhtml.contracts.services import CommitInfo, Signature
from memhtml.store.layout import (
    archive_path,
    archive_rank,
    free_archive_path,
    original_of_archived,
)
from memhtml.store.recovery import REWRITE_STALE, commit_ops, is_stale_rewrite

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1,
                  max_size=12).filter(lambda s: s not in (".", ".."))
PATHS = st.lists(SEGMENT, min_size=1, max_size=4).map(lambda parts: "/".join(parts) + ".html")


@given(path=PATHS, year=st.integers(1, 9999), ordinal=st.integers(1, 50))
def test_the_original_reads_back_from_every_archive_of_it(path: str, year: int,
                                                          ordinal: int) -> None:
    archived = archive_path(path, year, ordinal)
    assert original_of_archived(archived) == path
    assert archive_rank(archived) == (year, ordinal)
    assert archived.startswith(f"archive/{year:04d}/" if ordinal == 1
                               else f"archive/{year:04d}-{ordinal}/")


@given(path=PATHS, year=st.integers(2000, 2100), held=st.integers(0, 6))
def test_the_free_name_is_the_first_ordinal_no_earlier_archive_holds(
        path: str, year: int, held: int) -> None:
    taken = {archive_path(path, year, n) for n in range(1, held + 1)}
    free = free_archive_path(path, year, taken.__contains__)
    assert free == archive_path(path, year, held + 1)
    ranks = sorted((archive_rank(p), p) for p in (*taken, free))
    assert ranks[-1][1] == free, "the later archive ranks higher"


def test_paths_that_are_not_archive_paths() -> None:
    for path in ("areas/inbox/x.html", "archive/x.html", "archive/2026", "archive/2026/",
                 "archive/twenty/x.html", "archive/2026-1/x.html", "archive/2026-02/x.html",
                 "archive/2026-x/x.html", "archive/\u0662\u0660\u0662\u0666/x.html"):
        assert original_of_archived(path) is None, path
        assert archive_rank(path) is None, path


def _info(message: str, trailers: tuple[tuple[str, str], ...] = ()) -> CommitInfo:
    who = Signature("memhtml", "memhtml@localhost")
    return CommitInfo("a" * 40, ("b" * 40,), message, who, datetime(2026, 5, 1, tzinfo=UTC),
                      trailers, who)


def test_a_write_back_reads_as_rewrite_stale_under_either_name() -> None:
    old = _info("memhtml restore: 2 path(s) undone by 0123456789\n\nCommit 0123456789 ...\n\n"
                "Memhtml-Op: restore\nMemhtml-Path: areas/inbox/x.html\n",
                (("Memhtml-Op", "restore"), ("Memhtml-Path", "areas/inbox/x.html")))
    new = _info("memhtml rewrite-stale: 1 path(s) undone by 0123456789\n\n"
                "Memhtml-Op: rewrite-stale\n", (("Memhtml-Op", REWRITE_STALE),))
    door = _info("memhtml restore: areas/inbox/x.html\n\nrestored from archive/2026/areas/"
                 "inbox/x.html\n\nMemhtml-Op: restore\n", (("Memhtml-Op", "restore"),))
    assert commit_ops(old) == (REWRITE_STALE,) and is_stale_rewrite(old.message)
    assert commit_ops(new) == (REWRITE_STALE,) and is_stale_rewrite(new.message)
    assert commit_ops(door) == ("restore",) and not is_stale_rewrite(door.message)
