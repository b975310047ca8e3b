"""The README's tour runs as written, and prints what the README says it prints.

The tour is the first ```sh block under "## A tour". A command is a line that is not a
comment (a trailing backslash continues it on the next line); the ``#`` lines right
under it are what it prints on stdout, ``# `` stripped (a lone ``#`` is an empty line).
A command with no lines under it is run and must succeed, its output unchecked. A shown
``...`` stands for any run of printed lines (none included).

The commands run in order in one ``bash`` session (so ``cd`` carries over) through the
installed ``memhtml`` executable, with ``HOME`` a fresh temporary directory, no git
identity or system config, and no ``MEMHTML_*`` variable. Before comparing, both sides
are normalised in the only places that must vary between runs: the temporary home
reads as ``/home/you``, a ten-hex-digit commit id as ``<commit>``, and the year in an
``archive/YYYY/`` path as ``YYYY`` (a memory is archived under the year it happens in).
Everything else (scores, paths, counts, the overdue flag of a task due in the past)
is compared exactly.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
MARK = "@@memhtml-tour-step@@"
ANY = "..."


@dataclass(frozen=True)
class Step:
    command: str
    shown: tuple[str, ...]


def tour_steps(text: str) -> list[Step]:
    """The tour's commands, each with the lines shown under it."""
    section = text[text.index("## A tour"):]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found is not None, "the tour has no ```sh block"
    steps: list[Step] = []
    command: list[str] = []
    shown: list[str] = []

    def close() -> None:
        if command:
            steps.append(Step(" ".join(command), tuple(shown)))
        command.clear()
        shown.clear()

    continuing = False
    for line in found.group(1).splitlines():
        if continuing:
            command.append(line.rstrip("\\").strip())
            continuing = line.endswith("\\")
        elif line.startswith("#"):
            assert command, f"a shown line with no command above it: {line!r}"
            shown.append(line[2:] if line.startswith("# ") else line[1:])
        elif line.strip():
            close()
            command.append(line.rstrip("\\").strip())
            continuing = line.endswith("\\")
    close()
    return steps


def normalised(line: str, home: str) -> str:
    line = line.replace(home, "/home/you")
    line = re.sub(r"\b[0-9a-f]{10}\b", "<commit>", line)
    return re.sub(r"\barchive/\d{4}/", "archive/YYYY/", line)


def matches(shown: tuple[str, ...], printed: list[str]) -> bool:
    """Whether ``printed`` is ``shown``, each ``...`` standing for any run of lines."""
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head == ANY:
        return any(matches(rest, printed[i:]) for i in range(len(printed) + 1))
    return bool(printed) and printed[0] == head and matches(rest, printed[1:])


def run_tour(steps: list[Step], home: Path) -> list[tuple[int, list[str], str]]:
    """Each step's exit code, stdout lines and stderr, from one bash session."""
    script = ["set +e"]
    for index, step in enumerate(steps):
        script += [f"echo {MARK} {index} >&2", f"echo {MARK} {index}", step.command,
                   f"echo {MARK} rc $?"]
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("MEMHTML_", "GIT_"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               COLUMNS="200", NO_COLOR="1")
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=home, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    outs = re.split(rf"^{re.escape(MARK)} \d+\n", done.stdout, flags=re.M)[1:]
    errs = re.split(rf"^{re.escape(MARK)} \d+\n", done.stderr, flags=re.M)[1:]
    assert len(outs) == len(steps), done.stdout + done.stderr
    results = []
    for out, err in zip(outs, errs, strict=True):
        body, _, code = out.rpartition(f"{MARK} rc ")
        results.append((int(code.strip()), body.splitlines(), err))
    return results


def test_the_tour_prints_what_the_readme_shows(tmp_path: Path) -> None:
    steps = tour_steps(README.read_text(encoding="utf-8"))
    assert len(steps) >= 10
    assert steps[0].command.startswith("memhtml init ~/memory")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("", encoding="utf-8")
    results = run_tour(steps, home)
    wrong = []
    for step, (code, printed, err) in zip(steps, results, strict=True):
        if code != 0:
            wrong.append(f"$ {step.command}\nexit {code}\n{err}")
            continue
        if not step.shown:
            continue
        got = [normalised(line, str(home)) for line in printed]
        want = tuple(normalised(line, str(home)) for line in step.shown)
        if not matches(want, got):
            wrong.append(f"$ {step.command}\nREADME shows:\n" + "\n".join(want)
                         + "\nprinted:\n" + "\n".join(got))
    assert not wrong, "\n\n".join(wrong)


def test_the_tour_is_read_as_commands_and_their_lines() -> None:
    steps = tour_steps("## A tour\n\n```sh\nmemhtml a \\\n  --b c\n# out 1\n#\n# ...\n"
                       "memhtml d\nmemhtml e\n#   indented\n```\n")
    assert steps == [Step("memhtml a --b c", ("out 1", "", "...")), Step("memhtml d", ()),
                     Step("memhtml e", ("  indented",))]
    assert matches(("a", ANY, "z"), ["a", "b", "c", "z"])
    assert matches(("a", ANY), ["a"])
    assert not matches(("a", "z"), ["a", "b", "z"])
    assert shlex.split(steps[0].command) == ["memhtml", "a", "--b", "c"]
