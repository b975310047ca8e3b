"""Building the corpus from real directories through the adapter."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader, MappingReader
from memhtml.mdindex import (
    MIN_TERMS,
    Corpus,
    EmptyCorpus,
    ReadFailure,
    build,
    corpus_to_json,
    format_receipt,
    make_channels,
    retrieve,
    to_json,
)

TreeWriter = Callable[..., DirectoryReader]
T = TypeVar("T")
E = TypeVar("E")


def ok(result: IOResult[T, E]) -> T:
    """The value of a successful IOResult; a failure raises."""
    return unsafe_perform_io(result.unwrap())


def err(result: IOResult[T, E]) -> E:
    """The error of a failed IOResult; a success raises."""
    return unsafe_perform_io(result.failure())


QUERIES = (
    "instrument reading measurement",
    "diaphone compressor pressure",
    "salt haze glazing daylight",
    "somebody awake and watching",
    "anemometers glazing",
)


def receipts(corpus: Corpus) -> str:
    channels = make_channels(corpus, ["bm25", "trigram"]).unwrap()
    return "\n".join(
        f"{format_receipt(hit)}\n{to_json(hit)}"
        for query in QUERIES
        for hit in retrieve(corpus, channels, query, 5)
    )


def test_files_sorted_classes_and_frontmatter(
    corpus: Corpus, lighthouse_files: dict[str, str]
) -> None:
    assert corpus.files == tuple(sorted(lighthouse_files))
    wind = [c for c in corpus.chunks if c.file == "notes/wind.md"]
    assert wind, "notes/wind.md produced no chunk"
    assert {(c.class_, c.fm_name, c.fm_type) for c in wind} == {("notes", "wind-log", "measured")}
    assert {c.class_ for c in corpus.chunks if "/" not in c.file} == {"."}
    assert corpus.by_class == {".": 4, "log": 1, "notes": 6}
    assert corpus.bytes == sum(len(v.encode()) for v in lighthouse_files.values())


def test_chunks_are_normalized_paragraphs_over_the_term_floor(corpus: Corpus) -> None:
    for chunk in corpus.chunks:
        assert chunk.length >= MIN_TERMS
        assert chunk.length == sum(chunk.terms.values())
    paras = [c.para for c in corpus.chunks if c.file == "HANDBOOK.md"]
    assert paras == [0, 1]  # "# Handbook" is below the floor and takes no ordinal


def test_postings_ascend_and_agree_with_df(corpus: Corpus) -> None:
    for term, df in corpus.df.items():
        ids = corpus.postings.chunk_ids(term).tolist()
        assert ids == sorted(set(ids))
        assert len(ids) == df
        tfs = corpus.postings.term_frequencies(term).tolist()
        assert tfs == [corpus.chunks[i].terms[term] for i in ids]
    assert corpus.postings.chunk_ids("zzqq").size == 0


def test_build_twice_gives_identical_bytes(
    tree: TreeWriter, lighthouse_files: dict[str, str]
) -> None:
    first = ok(build(tree(lighthouse_files, "a")))
    second = ok(build(tree(lighthouse_files, "b")))
    assert corpus_to_json(first) == corpus_to_json(second)
    assert receipts(first) == receipts(second)


_CHILD = """
import sys
from pathlib import Path
from collections.abc import Callable
from typing import TypeVar
from returns.unsafe import unsafe_perform_io
from memhtml.adapters.mdfs import DirectoryReader
from memhtml.mdindex import build, corpus_to_json
sys.path.insert(0, sys.argv[2])
from test_mdindex_build import receipts
corpus = unsafe_perform_io(build(DirectoryReader(Path(sys.argv[1]))).unwrap())
sys.stdout.write(corpus_to_json(corpus) + receipts(corpus))
"""


def test_output_does_not_depend_on_hash_seed(lighthouse: DirectoryReader) -> None:
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(lighthouse.root), str(Path(__file__).parent)],
            env=env,
            capture_output=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_crlf_file_chunks_like_its_lf_twin(tree: TreeWriter) -> None:
    body = (
        "---\nname: crlf-twin\ntype: measured\n---\n\n"
        "the first paragraph names the compressor and the eleven minutes it needs.\n\n"
        "the second paragraph names the jetty and the eighteen minutes it runs late.\n"
    )
    lf = ok(build(tree({"twin.md": body}, "lf")))
    crlf = ok(build(tree({"twin.md": body.replace("\n", "\r\n")}, "crlf")))
    # The frontmatter block is itself a paragraph over the floor.
    assert len(lf.chunks) == 3
    assert [(c.para, c.text) for c in lf.chunks] == [(c.para, c.text) for c in crlf.chunks]
    assert crlf.chunks[0].fm_name == "crlf-twin"


def test_empty_corpus_is_refused(tree: TreeWriter) -> None:
    error = err(build(tree({"a.txt": "no markdown here at all"})))
    assert isinstance(error, EmptyCorpus)
    assert error.markdown_files == 0
    assert "no markdown files" in error.reason


def test_corpus_with_no_indexable_paragraph_is_refused(tree: TreeWriter) -> None:
    error = err(build(tree({"a.md": "# h\n\nok\n"})))
    assert error == EmptyCorpus(
        1, f"1 markdown file(s) but no paragraph of {MIN_TERMS} or more terms"
    )


def test_excluding_everything_is_refused_not_empty(lighthouse: DirectoryReader) -> None:
    assert isinstance(err(build(lighthouse, lambda _: True)), EmptyCorpus)


def test_exclude_is_asked_about_directories_and_files(lighthouse: DirectoryReader) -> None:
    asked: list[str] = []

    def exclude(path: str) -> bool:
        asked.append(path)
        return path in {"notes", "CHARTER.md"}

    corpus = ok(build(lighthouse, exclude))
    assert corpus.files == ("HANDBOOK.md", "log/1974-03-11.md")
    assert "notes" in asked
    assert not any(p.startswith("notes/") for p in asked), "an excluded directory is not walked"


def test_git_is_never_a_corpus(tree: TreeWriter, lighthouse_files: dict[str, str]) -> None:
    files = {
        **lighthouse_files,
        ".git/notes.md": "git keeps words here that must never be indexed",
        "sub/.git/x.md": "nested git words here too that must never be indexed",
    }
    corpus = ok(build(tree(files)))
    assert not any(".git" in f for f in corpus.files)


def test_a_reader_that_ignores_prune_still_cannot_leak_git() -> None:
    files = {"a.md": b"three plain words here", ".git/b.md": b"three hidden words here"}
    corpus = ok(build(MappingReader(files), None))
    assert corpus.files == ("a.md",)


def test_links_and_special_files_are_never_listed_or_read(tree: TreeWriter) -> None:
    reader = tree({"a.md": "three plain words here"})
    (reader.root / "b.md").mkdir()  # listed as a directory, so skipped: not an error
    assert ok(build(reader)).files == ("a.md",)
    outside = reader.root.parent / "outside.md"
    outside.write_text("a secret from outside the root")
    (reader.root / "c.md").symlink_to(outside)
    (reader.root / "d.md").symlink_to(reader.root / "missing-target")
    os.mkfifo(reader.root / "e.md")
    assert ok(build(reader)).files == ("a.md",)
    for path in ("c.md", "d.md", "e.md"):
        assert isinstance(err(reader.read_files([path])), ReadFailure), path


def test_missing_root_is_a_read_failure(tmp_path: Path) -> None:
    assert isinstance(err(build(DirectoryReader(tmp_path / "absent"))), ReadFailure)


def test_directory_reader_refuses_paths_leaving_the_root(tree: TreeWriter) -> None:
    reader = tree({"a.md": "x"}, "root")
    (reader.root.parent / "secret.md").write_text("s")
    for path in ("../secret.md", "/etc/passwd", "a/../../secret.md", ""):
        assert isinstance(err(reader.read_files([path])), ReadFailure)
