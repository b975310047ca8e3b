"""An inline link to a memory (what an imported ``[[wikilink]]`` becomes) follows the
memory when it is archived, corrected or moved, as its head edge does, and the
article's text and content hash stay as they were."""

from __future__ import annotations

from tests.integration.store.store_support import make_memory_store, ok

from memhtml.contracts.record import Link
from memhtml.format import content_hash
from memhtml.format.anchors import retarget_anchors
from memhtml.store import WriteInput, archive, correct, move, write


def _linking(target: str) -> str:
    return (f'<p><mark>The rotation is in <a data-wikilink="Rotation" href="/{target}">'
            "the rotation note</a>.</mark></p>")


def test_an_anchor_follows_its_memory_through_archive_correct_and_move() -> None:
    store, _ = make_memory_store()
    target = ok(write(store, WriteInput(title="Rotation", claim="On-call rotates weekly.",
                                        directory="areas/oncall/"))).primary or ""
    source = ok(write(store, WriteInput(
        title="Pointer", claim="", article_html=_linking(target),
        links=(Link("relates_to", "/" + target),), directory="areas/oncall/"))).primary or ""
    before = ok(store.head()).get(source)
    assert before is not None

    corrected = ok(correct(store, target, WriteInput(
        title="Rotation", claim="On-call rotates every Tuesday."))).primary or ""
    after = ok(store.head()).get(source)
    assert after is not None
    assert f'href="/{corrected}"' in after.html, "the anchor follows to the correction"
    assert {link.href for link in after.links} == {"/" + corrected}
    assert after.content_hash == before.content_hash, "an href is no content"

    ok(move(store, corrected, "areas/rota/rotation.html"))
    moved = "areas/rota/rotation.html"
    after = ok(store.head()).get(source)
    assert after is not None and f'href="/{moved}"' in after.html

    ok(archive(store, moved))
    after = ok(store.head()).get(source)
    assert after is not None
    archived = next(link.href for link in after.links)
    assert archived.startswith("/archive/") and f'href="{archived}"' in after.html


def test_only_anchors_to_that_address_change() -> None:
    html = ('<p><a href="/a.html">a</a> <a title="t" href=\'/a.html\'>b</a> '
            '<a href="/ab.html">c</a> <abbr title="/a.html">d</abbr></p>')
    out = retarget_anchors(html, "/a.html", "/z.html")
    assert out == ('<p><a href="/z.html">a</a> <a title="t" href="/z.html">b</a> '
                   '<a href="/ab.html">c</a> <abbr title="/a.html">d</abbr></p>')
    assert content_hash(out) == content_hash(html)
    assert retarget_anchors(html, "/none.html", "/z.html") is html
