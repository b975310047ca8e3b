"""Benchmark ``memhtml import markdown`` on a large agent-memory folder, as whole processes.

Run from the repository root: ``python -m bench.markdown_import``.

The folder is generated deterministically into a temporary directory: 3,000 notes
shaped like an agent's memory (YAML frontmatter with name, description, type and
tags; a heading, a few paragraphs with emphasis and code spans, a bullet list, and
wikilinks and relative ``.md`` links to other notes), a ``MEMORY.md`` index listing
every note, and one 50 MB markdown file, which the import must refuse by its size
cap without reading it whole.

Each run makes a fresh store (``memhtml init``, not timed) and then times, each as a
process of its own:

- ``import markdown`` of the whole folder into the empty store;
- the same command again on the same store, nothing changed (the folder kept in
  step: every note unchanged, nothing to commit);
- ``import markdown`` of a folder holding only the 50 MB file, into another fresh store.

The fresh import is also given as notes a second of the whole process (by wall and by
CPU time), the figure its target is set in: 1,000 notes/s; the second import's is 1 s.

For every process the bench reports wall and CPU time (user + system, the steadier
of the two when other jobs share the machine), the lines it printed on stdout and
on stderr (a summary is a handful of lines, not one per note), its exit code, and
its peak resident size: ``ru_maxrss`` of that child alone, from ``os.wait4``. The
peak of ``memhtml init`` is printed beside them as the floor a command pays for the
interpreter and its imports. Figures are printed, never asserted.

    python -m bench.markdown_import              # three runs
    python -m bench.markdown_import --runs 1     # a quick look
    python -m bench.markdown_import --profile    # also cProfile the two imports
    python -m bench.markdown_import --tree ../t  # measure another checkout's src/

"This tree" is the checkout as it stands, uncommitted work included; to measure one
commit alone, export it (``git archive C src | tar -x -C T``) and pass ``--tree T``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, compiled

SEED = 20260811
NOTES = 3_000
BIG_BYTES = 50 * 1024 * 1024
RUNS = 3
TYPES = ("user", "feedback", "project", "reference")
FOLDERS = ("", "", "people", "projects", "lessons", "reference")
TOPICS = ("deploy", "tests", "review", "schema", "cache", "release", "billing", "search",
          "auth", "logging", "backup", "editor", "queue", "metrics", "docs", "build")
VERBS = ("prefers", "asked for", "rejected", "measured", "kept", "renamed", "dropped",
         "documented", "fixed", "moved")
WORDS = tuple("""
the a of to in and for with on when after before every only never always each
change file branch commit review test suite run step note rule reason result value
user agent team project module function service script config release version
because so that then while unless since until though whereas
quickly carefully twice again first last later sooner locally remotely
""".split())


@dataclass(frozen=True)
class Measured:
    """One child process: wall and CPU seconds, lines on stdout and stderr, exit code,
    peak RSS."""

    wall: float
    cpu: float
    out_lines: int
    err_lines: int
    code: int
    rss_mb: float
    tail: str


def _sentence(rng: random.Random, topic: str) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(9, 18))]
    words.insert(rng.randrange(len(words)), f"the {topic}")
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), f"**{rng.choice(WORDS)}**")
    if rng.random() < 0.2:
        words.insert(rng.randrange(len(words)), f"`src/{topic}/mod_{rng.randrange(9)}.py`")
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _stem(i: int) -> str:
    return f"{TYPES[i % len(TYPES)]}_{TOPICS[i % len(TOPICS)]}_{i:04d}"


def _folder(i: int) -> str:
    return FOLDERS[(i // len(TYPES)) % len(FOLDERS)]


def _relative(from_folder: str, to: int) -> str:
    """A relative ``.md`` link from a note in ``from_folder`` to note ``to``."""
    target = f"{_folder(to)}/{_stem(to)}.md" if _folder(to) else f"{_stem(to)}.md"
    return f"../{target}" if from_folder else target


def note(rng: random.Random, i: int, notes: int = NOTES) -> str:
    """One agent-memory note: frontmatter, a heading, paragraphs, a list, links."""
    topic = TOPICS[i % len(TOPICS)]
    kind = TYPES[i % len(TYPES)]
    first = _sentence(rng, topic)
    tags = sorted({topic, rng.choice(TOPICS), kind})
    # A plain YAML scalar may not start with ``*`` or a backquote: no markup in it.
    description = first[:-1].replace("**", "").replace("`", "")
    lines = ["---", f"name: {_stem(i)}", f"description: {description}", f"type: {kind}",
             f"tags: [{', '.join(tags)}]"]
    if i % 3 == 0:
        lines.append(f"created: 2025-{1 + i % 12:02d}-{1 + i % 28:02d}")
    lines += ["---", "", f"# {topic.capitalize()} note {i}", "", first + " " + " ".join(
        _sentence(rng, topic) for _ in range(rng.randint(1, 3)))]
    for _ in range(rng.randint(1, 3)):
        lines += ["", " ".join(_sentence(rng, topic) for _ in range(rng.randint(2, 5)))]
    lines += ["", "## Why" if i % 2 else "## How to apply", ""]
    lines += [f"- {rng.choice(VERBS)} {rng.choice(WORDS)} {rng.choice(WORDS)} "
              f"for the {rng.choice(TOPICS)}" for _ in range(rng.randint(2, 5))]
    others = [rng.randrange(notes) for _ in range(rng.randint(1, 3))]
    lines.append("")
    for j, other in enumerate(others):
        if j % 2:
            lines.append(f"See also [{TOPICS[other % len(TOPICS)]}]"
                         f"({_relative(_folder(i), other)}).")
        else:
            alias = f"|the {TOPICS[other % len(TOPICS)]} note" if other % 3 == 0 else ""
            lines.append(f"Related: [[{_stem(other)}{alias}]]")
    return "\n".join(lines) + "\n"


def generate(root: Path, notes: int = NOTES) -> int:
    """Write ``notes`` notes and ``MEMORY.md`` under root; their total size in bytes."""
    rng = random.Random(SEED)
    size = 0
    index = ["# Memory", ""]
    for i in range(notes):
        folder = root / _folder(i)
        folder.mkdir(parents=True, exist_ok=True)
        data = note(rng, i, notes).encode("utf-8")
        (folder / f"{_stem(i)}.md").write_bytes(data)
        size += len(data)
        index.append(f"- [{_stem(i)}]({_relative('', i)}): {TOPICS[i % len(TOPICS)]}")
    data = ("\n".join(index) + "\n").encode("utf-8")
    (root / "MEMORY.md").write_bytes(data)
    return size + len(data)


def write_big(path: Path, size: int = BIG_BYTES) -> None:
    """A markdown file of ``size`` bytes, written a block at a time (never held whole)."""
    rng = random.Random(SEED + 1)
    block = "\n\n".join(
        " ".join(_sentence(rng, rng.choice(TOPICS)) for _ in range(6)) for _ in range(40)
    ).encode("utf-8") + b"\n\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(b"---\nname: huge\ntype: reference\n---\n\n# A huge note\n\n")
        written = out.tell()
        while written < size:
            chunk = block[: size - written]
            out.write(chunk)
            written += len(chunk)


def measure(argv: list[str], env: dict[str, str], work: Path) -> Measured:
    """Run argv to the end; its wall time, printed lines, exit code and own peak RSS."""
    with (work / "out.txt").open("w+b") as out, (work / "err.txt").open("w+b") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    last = (stdout.strip().splitlines() or [""])[-1]
    return Measured(elapsed, usage.ru_utime + usage.ru_stime, len(stdout.splitlines()),
                    len(stderr.splitlines()), process.returncode, usage.ru_maxrss / 1024,
                    last[:160])


def memhtml(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memhtml", *args, "--store", str(store)]


def fresh_store(path: Path, env: dict[str, str], work: Path) -> Measured:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    init = measure(memhtml(path, "init"), env, work)
    if init.code:
        raise SystemExit(f"memhtml init failed in {path}: {(work / 'err.txt').read_text()}")
    return init


def row(label: str, samples: list[Measured]) -> None:
    walls = [m.wall for m in samples]
    rss = [m.rss_mb for m in samples]
    print(f"{label:34s} wall median {statistics.median(walls):6.2f} s "
          f"(min {min(walls):.2f}, max {max(walls):.2f}), CPU median "
          f"{statistics.median(m.cpu for m in samples):.2f} s; lines printed "
          f"{'/'.join(str(m.out_lines) for m in samples)} stdout, "
          f"{'/'.join(str(m.err_lines) for m in samples)} stderr; exit "
          f"{'/'.join(str(m.code) for m in samples)}; peak RSS median "
          f"{statistics.median(rss):.0f} MB (max {max(rss):.0f})")
    print(f"{'':34s} last line: {samples[-1].tail}")


_PROFILED = """
import cProfile, sys
from memhtml.cli.app import main
out, sys.argv = sys.argv[1], ["memhtml", *sys.argv[2:]]
profiler = cProfile.Profile()
try:
    profiler.runcall(main)
except SystemExit:
    pass
profiler.dump_stats(out)
"""
"""One command under cProfile. ``python -m cProfile -m memhtml`` writes no profile:
the command ends its process with ``os._exit`` (``cli.app.console``), so the profile
is taken around ``main``, which returns by ``SystemExit``."""


def profile(folder: Path, env: dict[str, str], work: Path) -> None:
    """cProfile an import into a fresh store, then the same import again (nothing
    changed); the top 25 functions of each by cumulative and by own time."""
    import pstats

    store = work / "profiled"
    fresh_store(store, env, work)
    for name in ("import into a fresh store", "import again, nothing changed"):
        stats = work / "import.prof"
        subprocess.run([sys.executable, "-c", _PROFILED, str(stats), "import", "markdown",
                        str(folder), "--store", str(store)],
                       env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for key in ("cumulative", "tottime"):
            print(f"\ncProfile, {name}: top 25 by {key}")
            pstats.Stats(str(stats)).sort_stats(key).print_stats(25)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--notes", type=int, default=NOTES,
                        help="how many notes to generate (another size shows how the "
                             "import scales)")
    parser.add_argument("--profile", action="store_true",
                        help="also cProfile one import of the whole folder")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout whose src/ is measured (default: this one, "
                             "with whatever is uncommitted in it)")
    args = parser.parse_args()
    source = args.tree.resolve() / "src"
    env = {**os.environ, "PYTHONPATH": str(source)}
    # Compiled once here, so no timed process pays for compiling the sources.
    compiled(args.tree.resolve())
    where = subprocess.run([sys.executable, "-c", "import memhtml; print(memhtml.__file__)"],
                           check=True, capture_output=True, text=True, env=env).stdout
    print(f"memhtml from {Path(where.strip()).parent.parent}")
    work = Path(tempfile.mkdtemp(prefix="memhtml-bench-mdimport-"))
    try:
        folder, alone = work / "notes", work / "big"
        size = generate(folder, args.notes)
        write_big(folder / "archive" / "huge.md")
        write_big(alone / "huge.md")
        print(f"folder: {args.notes} notes + MEMORY.md ({size / 1e6:.1f} MB) and one "
              f"{BIG_BYTES / 2**20:.0f} MiB file; load average {loadavg()}")
        inits, firsts, seconds, bigs = [], [], [], []
        for run in range(args.runs):
            store = work / f"store-{run}"
            inits.append(fresh_store(store, env, work))
            firsts.append(measure(memhtml(store, "import", "markdown", str(folder)), env, work))
            seconds.append(measure(memhtml(store, "import", "markdown", str(folder)), env, work))
            big_store = work / f"big-{run}"
            fresh_store(big_store, env, work)
            bigs.append(measure(memhtml(big_store, "import", "markdown", str(alone)), env, work))
            shutil.rmtree(store, ignore_errors=True)
            shutil.rmtree(big_store, ignore_errors=True)
        row("memhtml init (the floor)", inits)
        row("import, fresh store", firsts)
        print(f"{'':34s} notes/s, whole process: "
              f"{args.notes / statistics.median(m.wall for m in firsts):.0f} by wall, "
              f"{args.notes / statistics.median(m.cpu for m in firsts):.0f} by CPU "
              "(target: 1,000)")
        row("import again, nothing changed", seconds)
        row("import of the 50 MiB file alone", bigs)
        print(f"load average at the end {loadavg()}")
        if args.profile:
            profile(folder, env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
