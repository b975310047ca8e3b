"""Law: after any sequence of file edits, additions and deletions, the index built
from the cache equals a full build of the tree: the same paragraphs, postings,
frequencies and sizes, and the same ranking for every query."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memhtml.compose import markdown_reader, value_of
from memhtml.compose.mdcache import ENV_CACHE_DIR, index_markdown
from memhtml.mdindex import Corpus, FileHit, build, corpus_to_json, make_channels, retrieve

NAMES = ("a.md", "b.md", "notes/c.md", "notes/deep/d.md", "z.md")
WORDS = ("harbour", "light", "keeper", "log", "wind", "west", "tide", "rope", "the", "of")
CONSTRUCTS = ("{} {}", "**{}** {}", "[{}]({}.md)", "[[{}|{}]]", "> {}\n> {}", "`{}` {}",
              "# {} {}", "| {} | {} |", "- {}\n- {}", "{}_{}")
QUERIES = ("harbour light", "keeper", "wind west tide", "rope of the log")

paragraph = st.lists(
    st.tuples(st.sampled_from(CONSTRUCTS), st.sampled_from(WORDS), st.sampled_from(WORDS)),
    min_size=1, max_size=6,
).map(lambda parts: " ".join(c.format(a, b) for c, a, b in parts))
document = st.lists(paragraph, min_size=0, max_size=4).map(lambda ps: "\n\n".join(ps) + "\n")
operation = st.tuples(st.sampled_from(NAMES), st.one_of(st.none(), document))
"""(name, text): write the text to the file, or delete it when the text is None."""


def _apply(root: Path, name: str, text: str | None) -> None:
    path = root / name
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _view(corpus: Corpus) -> tuple[str, list[tuple[FileHit, ...]]]:
    """Everything the law compares: the canonical JSON and each query's ranking."""
    channels = make_channels(corpus, ("bm25",)).unwrap()
    return corpus_to_json(corpus), [retrieve(corpus, channels, q, 5) for q in QUERIES]


@given(start=st.lists(operation, max_size=5), steps=st.lists(st.lists(operation, max_size=3),
                                                               min_size=1, max_size=4))
def test_incremental_build_equals_a_full_build(
    start: list[tuple[str, str | None]], steps: list[list[tuple[str, str | None]]]
) -> None:
    with tempfile.TemporaryDirectory(prefix="mdindex-law-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        environ = {ENV_CACHE_DIR: str(Path(tmp) / "cache")}
        for name, text in start:
            _apply(root, name, text)
        for step in [[], *steps]:
            for name, text in step:
                _apply(root, name, text)
            reader = value_of(markdown_reader(root))
            full = build(reader).map(_view)
            cached = index_markdown(reader, root, environ=environ).map(lambda m: _view(m.corpus))
            assert cached == full
