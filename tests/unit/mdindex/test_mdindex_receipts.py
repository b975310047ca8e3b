"""Receipt lines a person reads and a script splits; the JSON form."""

from __future__ import annotations

import json

from memhtml.mdindex import Corpus, FileHit, format_receipt, make_channels, retrieve, to_json
from memhtml.mdindex.receipts import split_receipt


def parse(line: str) -> dict[str, str]:
    """What a script does with a receipt line: each field, a quoted one read as JSON."""
    return split_receipt(line)


def test_receipt_line_reads_back() -> None:
    hit = FileHit(
        file="notes/wind log.md",
        class_="notes",
        fm_name="wind-log",
        fm_type=None,
        para=3,
        line=14,
        snippet='the "anemometer" is reliable…',
        fused=0.0163934,
        native=7.42139,
        native_channel="bm25",
    )
    line = format_receipt(hit)
    assert line == (
        "score=7.4214 score-channel=bm25 fused=0.016393 class=notes name=wind-log type=-"
        ' at="notes/wind log.md:14" snippet="the \\"anemometer\\" is reliable…"'
    )
    fields = parse(line)
    assert fields["at"] == "notes/wind log.md:14"
    assert fields["snippet"] == hit.snippet


def test_a_name_prints_as_written() -> None:
    """A frontmatter name with a space prints as the person wrote it, quoted, never
    as ``Deploy\\x20checklist``; a plain one prints bare."""
    hit = FileHit("ops/deploy.md", "ops", "Deploy checklist", "procedure", 0, 3, "Steps.",
                  0.5, 1.0, "bm25")
    line = format_receipt(hit)
    assert 'name="Deploy checklist" type=procedure at=ops/deploy.md:3' in line
    assert "\\x20" not in line
    assert parse(line)["name"] == "Deploy checklist"


def test_unscored_hit_prints_dashes_not_zero() -> None:
    hit = FileHit("a.md", ".", None, None, 0, 1, "text", 0.01, None, None)
    fields = parse(format_receipt(hit))
    assert fields["score"] == "-"
    assert fields["score-channel"] == "-"


def test_every_real_receipt_parses(corpus: Corpus) -> None:
    channels = make_channels(corpus, ["bm25", "trigram"]).unwrap()
    hits = retrieve(corpus, channels, "salt haze on the glazing, and the station's coast", 10)
    assert hits
    for hit in hits:
        fields = parse(format_receipt(hit))
        assert fields["at"] == f"{hit.file}:{hit.line}"
        assert fields["snippet"] == hit.snippet
        document = json.loads(to_json(hit))
        assert document["file"] == hit.file
        assert document["class"] == hit.class_
        assert document["native_channel"] == hit.native_channel
        assert document["fused"] == hit.fused
