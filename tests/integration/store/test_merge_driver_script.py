"""The generated pages' merge driver, run exactly as git runs it, on any path and content.

git expands the driver's command line (``%O %A %B`` its temporary files, ``%P`` the
path shell-quoted, ``%L`` the marker size) and runs it through ``sh``; the driver's exit
status says whether the path conflicts and ``%A`` holds the result. The law: the driver
keeps this side only of a path ``publish`` owns (and of an ``index.html`` only when both
sides are publish's pages); for every other path, a memory's above all, the result and
the status are git's own text merge (``git merge-file``). A path is never a word of the
command, whatever it holds.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.store.merge_driver import DRIVER_COMMAND
from memhtml.store.site import is_generated_path

GENERATOR = '<meta name="generator" content="memhtml publish">'
BASE = "".join(f"line {n}\n" for n in range(12))


def sq_quote(text: str) -> str:
    """git's ``sq_quote_buf``: single quotes, with ``'`` and ``!`` escaped."""
    return "'" + text.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def run_driver(folder: Path, path: str, base: str, ours: str, theirs: str
               ) -> tuple[int, str]:
    """The driver's exit status and the result it leaves in ``%A``."""
    files = {}
    for name, text in (("O", base), ("A", ours), ("B", theirs)):
        files[name] = folder / f".merge_file_{name}"
        files[name].write_text(text, encoding="utf-8")
    command = (DRIVER_COMMAND.replace("%O", files["O"].name).replace("%A", files["A"].name)
               .replace("%B", files["B"].name).replace("%L", "7")
               .replace("%P", sq_quote(path)))
    done = subprocess.run(["sh", "-c", command], cwd=folder, capture_output=True, text=True,
                          timeout=60, check=False)
    return done.returncode, files["A"].read_text(encoding="utf-8")


def text_merge(folder: Path, base: str, ours: str, theirs: str) -> tuple[int, str]:
    """git's own three-way text merge, with the driver's labels."""
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (folder / name).write_text(text, encoding="utf-8")
    done = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                           "ours", "base", "theirs"], cwd=folder, capture_output=True,
                          text=True, timeout=60, check=False)
    return done.returncode, (folder / "ours").read_text(encoding="utf-8")


SEGMENT = st.text(alphabet=st.sampled_from(list("abz09-_. '\"$`!;|&*()\\")), min_size=1,
                  max_size=8).filter(lambda s: s not in (".", ".."))
PATHS = st.one_of(
    st.sampled_from(["index.html", "areas/index.html", "memhtml-site/view/a/b.html/index.html",
                     "sitemap.xml", "_headers", "memhtml-site/memhtml.css",
                     ".site/memhtml.css", ".memhtml/index.html", ".memhtml/sleep/index.html",
                     "areas/inbox/a.html", "areas/sitemap.xml", "x/_headers",
                     "index.html.bak", "areas/inbox/index.htm"]),
    st.lists(SEGMENT, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".html"),
    st.lists(SEGMENT, min_size=0, max_size=2).map(
        lambda parts: "/".join([*parts, "index.html"])),
)


def _edit(line: int, who: str) -> str:
    return BASE.replace(f"line {line}\n", f"line {line}, as {who} has it\n")


@settings(max_examples=40)
@given(path=PATHS, ours_line=st.integers(0, 11), theirs_line=st.integers(0, 11),
       ours_page=st.booleans(), theirs_page=st.booleans())
def test_the_driver_keeps_this_side_only_of_a_generated_page(
        path: str, ours_line: int, theirs_line: int, ours_page: bool, theirs_page: bool
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        base = BASE
        ours = (GENERATOR + "\n" if ours_page else "") + _edit(ours_line, "ours")
        theirs = (GENERATOR + "\n" if theirs_page else "") + _edit(theirs_line, "theirs")
        status, result = run_driver(folder, path, base, ours, theirs)
        name = path.rsplit("/", 1)[-1]
        keeps = is_generated_path(path) and (name != "index.html" or (ours_page and
                                                                        theirs_page))
        if keeps:
            assert (status, result) == (0, ours)
        else:
            expected_status, expected = text_merge(folder, base, ours, theirs)
            assert result == expected
            assert (status == 0) == (expected_status == 0)
        # Nothing but %A was written: a path is never run as a command.
        assert sorted(p.name for p in folder.iterdir()) in (
            [".merge_file_A", ".merge_file_B", ".merge_file_O"],
            [".merge_file_A", ".merge_file_B", ".merge_file_O", "base", "ours", "theirs"])
