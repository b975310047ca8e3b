"""The markdown index cache: reused when files are unchanged, rebuilt when they move,
ignored (and replaced) when the file on disk is damaged, foreign or hostile."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from memhtml.adapters.mdcache import CACHE_FILE, IndexCacheFile
from memhtml.compose import markdown_reader, value_of
from memhtml.compose.mdcache import ENV_CACHE_DIR, MarkdownIndex, index_cache_dir, index_markdown
from memhtml.mdindex import build, corpus_to_json, make_channels, retrieve
from memhtml.mdindex.cache import RACY_NS, FileEntry, Stamp

OLD_NS = 1_600_000_000 * 10**9
"""A modification time long past, so the cache trusts a matching stat."""

FILES = {
    "a.md": "---\nname: alpha\ntype: note\n---\n\nthe harbour light burns all night long\n",
    "notes/b.md": "the keeper writes the log at dawn\n\nwind from the west at force six\n",
    "notes/c.md": "a [link to the log](b.md) and **bold words** in a row\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(OLD_NS, OLD_NS))


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    root = tmp_path / "tree"
    root.mkdir()
    _write(root, FILES)
    return root


def _index(root: Path, cache: bool = True) -> MarkdownIndex:
    reader = value_of(markdown_reader(root))
    return value_of(index_markdown(reader, root, cache=cache))


def _full(root: Path) -> str:
    return corpus_to_json(value_of(build(value_of(markdown_reader(root)))))


def _cache_file(root: Path) -> Path:
    return index_cache_dir(root) / CACHE_FILE


def test_a_second_build_reuses_every_file(tree: Path) -> None:
    first = _index(tree)
    assert first.reuse is not None and first.reuse.cache == "miss"
    assert _cache_file(tree).is_file()
    second = _index(tree)
    assert second.reuse is not None
    assert (second.reuse.cache, second.reuse.kept, second.reuse.read) == ("hit", 3, 0)
    assert corpus_to_json(second.corpus) == _full(tree)


def test_only_the_changed_file_is_read_again(tree: Path) -> None:
    _index(tree)
    _write(tree, {"notes/b.md": "the keeper writes the log at noon\n\nsquall from the north\n"})
    again = _index(tree)
    assert again.reuse is not None
    assert (again.reuse.cache, again.reuse.kept, again.reuse.read) == ("partial", 2, 1)
    assert corpus_to_json(again.corpus) == _full(tree)


def test_added_and_removed_files_match_a_full_build(tree: Path) -> None:
    _index(tree)
    (tree / "a.md").unlink()
    _write(tree, {"z/new.md": "a brand new page about the harbour light\n"})
    again = _index(tree)
    assert corpus_to_json(again.corpus) == _full(tree)
    assert "a.md" not in again.corpus.files


def test_an_edit_keeping_size_and_mtime_is_seen(tree: Path) -> None:
    """Same length, modification time put back: the change time still moves."""
    _index(tree)
    path = tree / "notes/b.md"
    text = path.read_text().replace("dawn", "dusk")
    path.write_text(text)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    again = _index(tree)
    assert again.reuse is not None and again.reuse.read == 1
    assert corpus_to_json(again.corpus) == _full(tree)


def test_a_recent_file_is_checked_by_content(tree: Path) -> None:
    """Files just written have a change time within RACY_NS of the read: their bytes
    are compared, found equal, and their paragraphs kept without indexing them again."""
    _index(tree)
    again = _index(tree)
    assert again.reuse is not None
    assert (again.reuse.kept, again.reuse.read, again.reuse.verified) == (3, 0, 3)


def test_a_stat_is_trusted_only_when_the_file_had_settled() -> None:
    stamp = Stamp(10, OLD_NS, OLD_NS, 7, 1)
    settled = FileEntry("a.md", stamp, "d", OLD_NS + 2 * RACY_NS, 10, 0, 1)
    assert settled.trusted(stamp)
    assert not settled.trusted(Stamp(10, OLD_NS, OLD_NS + 1, 7, 1))
    assert not settled.trusted(Stamp(10, OLD_NS, OLD_NS, 8, 1))
    recent = FileEntry("a.md", stamp, "d", OLD_NS + RACY_NS // 2, 10, 0, 1)
    assert not recent.trusted(stamp)


def test_no_cache_neither_reads_nor_writes(tree: Path) -> None:
    built = _index(tree, cache=False)
    assert built.reuse is None
    assert not _cache_file(tree).exists()
    assert corpus_to_json(built.corpus) == _full(tree)


def test_the_cache_lives_under_the_override_and_names_the_folder(tree: Path) -> None:
    folder = index_cache_dir(tree)
    assert folder.is_relative_to(Path(os.environ[ENV_CACHE_DIR]))
    assert index_cache_dir(tree / ".") == folder
    assert index_cache_dir(tree.parent) != folder


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:-40] + bytes(40), id="zeroed-tail"),
        pytest.param(lambda b: b"not a cache at all", id="garbage"),
        pytest.param(lambda b: b"", id="empty"),
        pytest.param(lambda b: b + b"trailing", id="trailing-bytes"),
    ],
)
def test_a_damaged_cache_is_ignored_and_rebuilt(tree: Path, damage: object) -> None:
    _index(tree)
    path = _cache_file(tree)
    assert callable(damage)
    path.write_bytes(damage(path.read_bytes()))
    again = _index(tree)
    assert again.reuse is not None and again.reuse.cache not in {"hit", "partial"}
    assert corpus_to_json(again.corpus) == _full(tree)
    healed = _index(tree).reuse
    assert healed is not None and (healed.kept, healed.read, healed.cache) == (3, 0, "hit")


def _rewrite(path: Path, edit: object) -> None:
    """Load the cache's header and arrays, change them, save them with fresh checksums:
    a file that passes the framing and must be caught by the content checks."""
    store = IndexCacheFile(path.parent)
    meta, arrays = store.load().unwrap()
    assert callable(edit)
    edit(meta, arrays)
    store.save(meta, arrays).unwrap()


def _shift_ids(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    arrays["postings.ids"] = arrays["postings.ids"] + 1000


def _foreign_root(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    meta["root"] = "/somewhere/else"


def _old_code(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    meta["code"] = "0" * 64


def _lying_lengths(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    arrays["chunk.length"] = arrays["chunk.length"] * 2


def _bad_table(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    files = meta["files"]
    assert isinstance(files, list)
    files[0][9] = 5


@pytest.mark.parametrize(
    "edit",
    [_shift_ids, _foreign_root, _old_code, _lying_lengths, _bad_table],
    ids=["ids-out-of-range", "foreign-root", "old-code", "lying-lengths", "bad-file-table"],
)
def test_a_well_framed_but_wrong_cache_is_refused(tree: Path, edit: object) -> None:
    _index(tree)
    _rewrite(_cache_file(tree), edit)
    again = _index(tree)
    assert again.reuse is not None and again.reuse.kept == 0
    assert corpus_to_json(again.corpus) == _full(tree)


def test_a_hostile_pickle_is_never_loaded(tree: Path) -> None:
    """An object array (what a pickle payload needs) is refused by np.load, never run."""
    _index(tree)
    path = _cache_file(tree)
    marker = tree.parent / "pwned"
    header = {"magic": "memhtml-mdindex-cache", "format": 1, "arrays": [["x", 8, 0]],
              "meta": {}}
    with path.open("wb") as stream:
        text = json.dumps(header).encode()
        np.save(stream, np.frombuffer(text, dtype=np.uint8), allow_pickle=False)
        np.save(stream, np.array([os.system], dtype=object), allow_pickle=True)
    again = _index(tree)
    assert not marker.exists()
    assert again.reuse is not None and again.reuse.cache.startswith("unreadable")
    assert corpus_to_json(again.corpus) == _full(tree)
    refused = IndexCacheFile(path.parent).save({}, {"df": np.array([{}], dtype=object)})
    assert "pickle" in refused.swap().value_or("")


def test_rankings_from_the_cache_equal_a_fresh_build(tree: Path) -> None:
    _index(tree)
    _write(tree, {"notes/c.md": "the harbour log and the keeper's light\n"})
    cached = _index(tree).corpus
    fresh = value_of(build(value_of(markdown_reader(tree))))
    for text in ("harbour light", "keeper log", "wind west", "link bold"):
        got = retrieve(cached, make_channels(cached, ("bm25",)).unwrap(), text, 5)
        want = retrieve(fresh, make_channels(fresh, ("bm25",)).unwrap(), text, 5)
        assert got == want
