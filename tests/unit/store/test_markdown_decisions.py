"""The re-import's reading of the store: which archived version ends a note's chain,
what a memory says its note linked, and which links are carried or left out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memhtml.contracts.record import FacetValue, Link, MemoryRecord
from memhtml.contracts.vocabulary import MemoryStatus
from memhtml.head.record import record_from
from memhtml.store.markdown_decisions import (
    DIGEST_FACET,
    LINKS_FACET,
    SOURCE_FACET,
    Known,
    LinkKey,
    carried_links,
    source_of,
    targets_facet,
    targets_of,
)
from memhtml.store.markdown_history import ImportHistory
from memhtml.store.markdown_import import convert_markdown, render_file

AT = "2026-01-01T00:00:00Z"


def _record(path: str, note: str, *, links: tuple[Link, ...] = (), status: MemoryStatus = "active",
            superseded_by: str | None = None, archived_at: str | None = None,
            targets: str | None = None) -> MemoryRecord:
    converted = convert_markdown(note, f"The fact of {note}.\n".encode()).unwrap()
    base = record_from(render_file(converted, links, AT), path).unwrap()
    return replace(base, status=status, archived=path.startswith("archive/"),
                   superseded_by=superseded_by, archived_at=archived_at, source_links=targets)


def test_the_chain_ends_at_the_version_nothing_supersedes() -> None:
    """The import corrected a.html to a-2.html, then the person archived a-2.html in
    the same second: the note's decision is the archive, not the correction."""
    records = [
        _record("archive/2026/areas/imported/a.html", "a.md", status="archived",
                superseded_by="/archive/2026/areas/imported/a-2.html", archived_at=AT),
        _record("archive/2026/areas/imported/a-2.html", "a.md", status="archived",
                archived_at=AT),
    ]
    known = Known.of(records, "areas/imported/")
    kept = known.decided("a.md", "digest", None)
    assert kept is not None and kept.decision == "archived"
    assert kept.path == "archive/2026/areas/imported/a-2.html"
    assert known.decided("a.md", "digest", ImportHistory(frozenset({kept.path}))) is None, \
        "an archive the import made (the note had gone) is no decision to keep"


def test_a_live_memory_is_no_decision() -> None:
    records = [_record("areas/imported/a.html", "a.md"),
               _record("archive/2026/areas/imported/a.html", "a.md", status="archived")]
    assert Known.of(records, "areas/imported/").decided("a.md", "x", None) is None


def test_another_folders_memories_are_not_this_imports() -> None:
    records = [_record("areas/other/a.html", "a.md"),
               _record("archive/2026/areas/other/b.html", "b.md", status="archived")]
    known = Known.of(records, "areas/imported/")
    assert not known.live and not known.gone


@pytest.mark.parametrize("value", ["not json", "{}", '[["relates_to","x",true]]',
                                   '[["relates_to",1,true,null]]'])
def test_an_edited_targets_facet_says_nothing(value: str) -> None:
    assert targets_of(_record("areas/imported/a.html", "a.md", targets=value)) is None


def test_the_targets_facet_reads_back() -> None:
    rows = [("relates_to", "b", False, "b.md"), ("part_of", "Missing", False, None)]
    record = _record("areas/imported/a.html", "a.md", targets=targets_facet(rows))
    assert targets_of(record) == tuple(sorted(rows))


def test_an_earlier_imports_provenance_facets_still_read() -> None:
    """Before the source metas, an import wrote the same values as facets of the
    article; a re-import reads a memory written that way as its note's."""
    rows = [("relates_to", "b", False, "b.md")]
    base = _record("areas/imported/a.html", "a.md")
    legacy = replace(base, source=None, source_sha256=None, source_links=None, facets=(
        FacetValue(SOURCE_FACET, "a.md"), FacetValue(DIGEST_FACET, "abc"),
        FacetValue(LINKS_FACET, targets_facet(rows))))
    assert source_of(legacy) == ("a.md", "abc")
    assert targets_of(legacy) == tuple(rows)
    assert source_of(base) == ("a.md", base.source_sha256), "the metas, when there are"


def _key(link: Link) -> LinkKey:
    return (link.rel, {"/areas/imported/b.html": "b.md", "/areas/imported/b-2.html": "b.md",
                       "/areas/imported/c.html": "c.md"}.get(link.href, link.href))


def test_links_carried_and_left_out() -> None:
    """The note named b and c; the person removed the link to c and added one to an
    outside memory; b is corrected in the same import."""
    current = _record("areas/imported/a.html", "a.md", links=(
        Link("relates_to", "/areas/imported/b.html"),
        Link("supports", "/areas/inbox/x.html")))
    note = (Link("relates_to", "/areas/imported/b-2.html"),
            Link("relates_to", "/areas/imported/c.html"))
    before = frozenset({("relates_to", "b.md"), ("relates_to", "c.md")})
    links, carried, dropped = carried_links(
        current, note, before, set(), _key,
        {"/areas/imported/b.html": "/areas/imported/b-2.html"}, "/areas/imported/a-2.html")
    assert set(links) == {Link("relates_to", "/areas/imported/b-2.html"),
                          Link("supports", "/areas/inbox/x.html")}
    assert carried == (Link("supports", "/areas/inbox/x.html"),)
    assert dropped == (Link("relates_to", "/areas/imported/c.html"),)


def test_with_nothing_known_every_live_link_is_kept() -> None:
    current = _record("areas/imported/a.html", "a.md", links=(
        Link("relates_to", "/areas/imported/c.html"),))
    links, carried, dropped = carried_links(
        current, (), None, set(), _key, {}, "/areas/imported/a-2.html")
    assert links == carried == (Link("relates_to", "/areas/imported/c.html"),)
    assert dropped == ()


def test_a_target_written_anew_is_never_counted_removed() -> None:
    current = _record("areas/imported/a.html", "a.md")
    note = (Link("relates_to", "/areas/imported/c.html"),)
    links, _, dropped = carried_links(current, note, frozenset({("relates_to", "c.md")}),
                                      {"c.md"}, _key, {}, "/areas/imported/a-2.html")
    assert links == note and dropped == ()
