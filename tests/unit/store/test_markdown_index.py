"""An index file kept as a page: only its links to notes change, and export turns
them back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.store.markdown_index import exported_index, index_page

NOTES = {"feedback_testing.md": "areas/i/feedback-testing.html",
         "sub/deploy.md": "areas/i/sub/deploy.html",
         "project_alpha": "areas/i/project-alpha.html"}


def resolve(name: str, is_path: bool) -> str | None:
    return NOTES.get(name) if is_path or name in NOTES else None


def test_links_to_notes_reach_their_memories_and_nothing_else_moves() -> None:
    text = ("# Index\n\n- [Testing](feedback_testing.md) \u2014 run them\n"
            "- [Deploy](sub/deploy.md#steps \"the steps\")\n- [[project_alpha|Alpha]]\n"
            "- [[project_alpha#Goals]]\n- [Gone](gone.md) and [site](https://x.org/a.md)\n"
            "- ![pic](feedback_testing.md) `[code](feedback_testing.md)`\n\n"
            "```md\n[fenced](feedback_testing.md)\n```\n")
    page = index_page(text, "MEMORY.md", "areas/i/MEMORY.md", resolve)
    assert page.text == (
        "# Index\n\n- [Testing](feedback-testing.html) \u2014 run them\n"
        "- [Deploy](sub/deploy.html#steps \"the steps\")\n- [Alpha](project-alpha.html)\n"
        "- [project_alpha#Goals](project-alpha.html)\n"
        "- [Gone](gone.md) and [site](https://x.org/a.md)\n"
        "- ![pic](feedback_testing.md) `[code](feedback_testing.md)`\n\n"
        "```md\n[fenced](feedback_testing.md)\n```\n")
    assert page.unresolved == ("gone.md",)


def test_a_page_in_a_subfolder_links_relative_to_itself() -> None:
    page = index_page("- [T](../feedback_testing.md)\n", "sub/INDEX.md", "areas/i/sub/INDEX.md",
                      resolve)
    assert page.text == "- [T](../feedback-testing.html)\n"


_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)


@given(st.lists(st.tuples(_NAME, st.text(st.characters(
    codec="utf-8", exclude_characters="[]\\\n\r`"), max_size=12)), min_size=1, max_size=6,
    unique_by=lambda t: t[0]))
def test_an_exported_index_imports_back_to_the_same_page(entries: list[tuple[str, str]]
                                                          ) -> None:
    """export(import(index)) is the index, when its links are the exported names (what
    an export writes): the links go to the store and come back unchanged."""
    text = "".join(f"- [{label or 'x'}]({name}.md) {label}\n" for name, label in entries)
    placed = {f"{name}.md": f"areas/i/{name}.html" for name, _ in entries}
    page = index_page(text, "MEMORY.md", "areas/i/MEMORY.md",
                      lambda n, is_path: placed.get(n) if is_path else None)
    assert not page.unresolved
    back = exported_index(page.text, "areas/i/MEMORY.md",
                          lambda tree: tree.removesuffix(".html") + ".md"
                          if tree in placed.values() else None)
    assert back == text
