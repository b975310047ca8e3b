"""The command's output goes somewhere that cannot take it: a reader that closed its end
of the pipe, or a full device. The exit code says the output was not written (never a
silent success), and stderr holds at most a line saying so, not a Python traceback.

The console command's own docstring promises this for a closed pipe; it holds only
while the whole output fits in the pipe's buffer before the reader goes away. Here the
reader's end is closed before the command writes, so every write meets it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.store.checkout_support import clean_env, git, memhtml


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("closed-output")
    root, env = base / "store", clean_env(base / "home")
    root.mkdir()
    git(root, env, "init", "-q", "-b", "main")
    assert memhtml(env, "init", "--store", str(root)).returncode == 0
    wrote = memhtml(env, "write", "--title", "Kettle", "--claim",
                    "The kettle is descaled on Fridays.", "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    return root, env


def _run_into(target: str, root: Path, env: dict[str, str], *tokens: str
              ) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml TOKENS`` with stdout sent to ``target``: a shell redirection,
    or ``closed-pipe`` for a pipe whose reader has already closed its end."""
    command = " ".join([sys.executable, "-m", "memhtml", *tokens, "--store", str(root)])
    shell = (f"{command} | (exec 0<&-; sleep 0.2)" if target == "closed-pipe"
             else f"{command} > {target}")
    return subprocess.run(["bash", "-o", "pipefail", "-c", shell], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("target", ["closed-pipe", "/dev/full"])
@pytest.mark.parametrize("tokens", [("search", "kettle", "--json"), ("status",)])
def test_output_that_cannot_be_written_fails_without_a_traceback(
        store: tuple[Path, dict[str, str]], target: str, tokens: tuple[str, ...]) -> None:
    if target == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    root, env = store
    done = _run_into(target, root, env, *tokens)
    assert done.returncode != 0, "the output was lost and the command still said success"
    assert "Traceback" not in done.stderr, done.stderr
