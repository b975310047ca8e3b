"""CI runs the README's test command verbatim: the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                      re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines()
                if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci, (commands[1], ci[-1])
    assert commands[1].endswith("just test")
