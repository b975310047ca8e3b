"""A folder imported with ``memhtml import markdown``, then published: the memory its
``README.md`` (or ``index.md``) became is linked at the top of the folder's listing.

The import keeps each note's path under the folder as the memory's
``memhtml-source``; that is how the site knows which memory describes the folder. An
index file that is only a list of links becomes no memory but a markdown page, which
the site lists by name and does not link, like every file the check never saw.
"""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest

from memhtml.store.site import view_path
from tests.integration.cli.cli_support import call


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _folder_notes(store: Path, listing: str) -> list[tuple[str, str]]:
    page = lxml.html.document_fromstring((store / listing).read_bytes())
    return [(a.text_content(), a.get("href")) for a in page.xpath("//p[@class='folder-note']/a")]


def test_an_imported_folders_readme_and_index_are_linked_from_their_listings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code, answer = call(capsys, "init", str(store), "--embedder", "none", "--json")
    assert code == 0, answer
    notes = tmp_path / "notes"
    _write(notes, {
        "README.md": "# About the payment notes\n\nThese notes describe how payments run.\n",
        "ledger.md": "# Ledger\n\nThe ledger closes at midnight UTC.\n",
        "guides/index.md": "# Deploy guides\n\nThe guides explain each deploy stage.\n",
        "guides/canary.md": "# Canary\n\nThe canary runs for ten minutes.\n",
        "links/Index.md": "- [Canary](../guides/canary.md)\n- [Ledger](../ledger.md)\n",
        "links/retries.md": "# Retries\n\nRetries back off exponentially.\n",
    })
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    placed = {item["file"]: item["path"] for item in answer["added"]}
    readme, index = placed["README.md"], placed["guides/index.md"]
    assert "links/Index.md" not in placed, "a list of links is an index page, not a memory"
    code, answer = call(capsys, "publish", "--store", str(store), "--json")
    assert code == 0, answer

    directory = readme.rsplit("/", 1)[0]
    top = f"{directory}/index.html"
    assert _folder_notes(store, top) == [
        ("About the payment notes", "../../" + view_path(readme))]
    guides = f"{directory}/guides/index.html"
    assert index.rsplit("/", 1)[0] == f"{directory}/guides"
    assert _folder_notes(store, guides) == [("Deploy guides", "../../../" + view_path(index))]
    assert (store / view_path(index)).is_file()
    # The links-only index is kept as a markdown page: listed by name, never linked.
    links = lxml.html.document_fromstring((store / directory / "links" / "index.html")
                                          .read_bytes())
    assert _folder_notes(store, f"{directory}/links/index.html") == []
    assert [li.text_content() for li in links.xpath("//ul[@class='files']/li")] == ["Index.md"]
    assert links.xpath("//ul[@class='files']//a") == []
