"""Bounded input at the CLI: ``--file`` takes a regular file within the cap and reads
no more than the cap; out-of-range numbers and non-portable names are refused at the
door with exit 1, and nothing is committed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memhtml.cli.inputs import MAX_FILE_BYTES
from memhtml.format import NewMemoryInput, render_template
from memhtml.store.write_checks import MAX_WRITE_BYTES
from tests.integration.cli.cli_support import call, call_text, git_log

SUBPROCESS_TIMEOUT_S = 60
"""A refusal is immediate; the bound is what turns a hang (a FIFO opened blocking, an
endless device read to its end) into a failed test rather than a stuck run."""


def memhtml(store: Path, *tokens: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a separate process, bounded in time."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMHTML_") or k == "MEMHTML_EMBEDDER"}
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens, "--store", str(store)],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
                          env=env, check=False)


def test_the_cap_is_the_doors_and_the_help_says_it(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    assert MAX_FILE_BYTES == MAX_WRITE_BYTES == 1 << 20
    _, out, _ = call_text(capsys, "write", "--help")
    assert "of at most 1 MiB" in " ".join(out.replace("│", " ").split())


def test_dev_zero_is_refused_before_it_is_read(store: Path) -> None:
    before = git_log(store)
    started = time.monotonic()
    done = memhtml(store, "write", "--file", "/dev/zero")
    assert time.monotonic() - started < SUBPROCESS_TIMEOUT_S
    assert done.returncode == 1, done
    assert "/dev/zero" in done.stderr
    assert "a device" in done.stderr
    assert "1048576-byte" in done.stderr
    assert git_log(store) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting_for_a_writer(store: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    before = git_log(store)
    done = memhtml(store, "write", "--file", str(fifo))
    assert done.returncode == 1, done
    assert str(fifo) in done.stderr
    assert "FIFO" in done.stderr
    assert git_log(store) == before


def test_a_directory_is_refused(store: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(store)
    code, _, err = call_text(capsys, "write", "--file", str(tmp_path), "--store", str(store))
    assert code == 1
    assert "a directory" in err
    assert git_log(store) == before


def _memory_of_size(size: int) -> bytes:
    """A valid memory file padded with trailing whitespace to exactly ``size`` bytes."""
    html = render_template(NewMemoryInput(
        title="Padded", claim="This file is as large as the cap allows.",
        memory_type="semantic", at="2026-05-01T12:00:00Z")).encode()
    assert len(html) < size
    return html + b"\n" * (size - len(html))


def test_a_file_one_byte_over_the_cap_is_refused(store: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.html"
    big.write_bytes(_memory_of_size(MAX_FILE_BYTES + 1))
    before = git_log(store)
    code, _, err = call_text(capsys, "write", "--file", str(big), "--store", str(store))
    assert code == 1
    assert str(big) in err
    assert f"{MAX_FILE_BYTES}-byte" in err
    assert git_log(store) == before


def test_a_file_at_the_cap_is_judged_by_its_content_not_its_size(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exact = tmp_path / "exact.html"
    exact.write_bytes(_memory_of_size(MAX_FILE_BYTES))
    code, answer = call(capsys, "write", "--file", str(exact), "--store", str(store), "--json")
    if code != 0:
        assert "cap" not in str(answer), answer
    else:
        assert answer["path"] == "areas/inbox/padded.html"


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--confidence", "nan", "confidence nan is not a finite number in [0, 1]"),
    ("--confidence", "inf", "confidence inf is not a finite number in [0, 1]"),
    ("--confidence", "2", "confidence 2.0 is not a finite number in [0, 1]"),
    ("--confidence", "-0.5", "confidence -0.5 is not a finite number in [0, 1]"),
    ("--importance", "-5", "importance -5 is not an integer from 1 to 10"),
    ("--importance", "11", "importance 11 is not an integer from 1 to 10"),
    ("--importance", "0", "importance 0 is not an integer from 1 to 10"),
])
def test_out_of_range_numbers_are_refused_and_nothing_is_committed(
        store: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, words: str
) -> None:
    before = git_log(store)
    code, _, err = call_text(capsys, "write", "--title", "Numbers", "--claim",
                             "A claim with a number.", f"{option}={value}",
                             "--store", str(store))
    assert code == 1, err
    assert words in err
    assert git_log(store) == before
    if option == "--importance":
        code, _, err = call_text(capsys, "task", "add", "--title", "Numbers", "--claim",
                                 "Do a thing.", f"{option}={value}", "--store", str(store))
        assert code == 1, err
        assert words in err
        assert git_log(store) == before


def test_the_edges_of_the_ranges_are_accepted(store: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for confidence, importance in (("0", "1"), ("1", "10"), ("0.5", "5")):
        code, answer = call(capsys, "write", "--title", f"Edge {confidence}", "--claim",
                            f"A claim at the edge {confidence}.", "--confidence", confidence,
                            "--importance", importance, "--store", str(store), "--json")
        assert code == 0, answer


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--dir", ".memhtml/", "state directory"),
    ("--dir", ".MEMHTML/notes/", "state directory"),
    ("--dir", "Areas/Inbox", "differs only by case"),
    ("--dir", "areas/" + "x" * 300, "255-byte"),
    ("--path", "areas/aux.html", "Windows device name AUX"),
    ("--path", "areas/why?.html", "Windows"),
])
def test_non_portable_names_are_refused_and_nothing_is_committed(
        store: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, words: str
) -> None:
    before = git_log(store)
    code, _, err = call_text(capsys, "write", "--title", "Named", "--claim", "A claim.",
                             option, value, "--store", str(store))
    assert code == 1, err
    assert words in err
    assert git_log(store) == before
