"""Notes first: a folder of markdown notes, imported and exported again, is the folder.

Two laws over generated notes (frontmatter with the places a memory has and other
keys in every YAML style, every memory type and the agent types that map onto them;
headings of levels 1 to 6, ordered lists broken by a code fence, nested quotes,
``[[name]]`` and ``[[name|label]]`` links to other notes and to none; file names with
underscores, spaces and slugs that collide):

- ``export(import(x))`` is ``x`` up to formatting (``markdown_support.note_difference``,
  docs/design.md), file for file at the same names;
- export -> import -> export writes the same bytes twice.

Each import lands through the store's own batch door on the in-memory git, as the
command does.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.store import Store
from memhtml.store.markdown_export import export_markdown
from memhtml.store.markdown_run import land_markdown, plan_markdown
from tests.integration.store.store_support import make_memory_store, ok
from tests.property.markdown_support import note_difference

HOME = "areas/imported/"
PATHS = ("user_profile.md", "user-profile.md", "deploy_window.md", "on_call.md",
         "notes/team_lead.md", "notes/team-lead.md", "Work Notes/Weekly Review.md",
         "Work Notes/weekly_review.md")
"""Names whose slugs collide in pairs (``user-profile``, ``team-lead``,
``weekly-review``), with underscores, a space and capitals."""
WORDS = ("deploy", "cache", "review", "rotation", "window", "owner", "queue", "metrics",
         "a_b", "x*y", "the", "of", "on", "every", "Tuesday", "10:00", "5%", "C#")
TYPES = ("reference", "user", "feedback", "project", "semantic", "procedural", "Note",
         "episodic", "task")
OTHER_VALUES = ("priya", "012", "1.10", "true", "NO", '"a: b"', "'quoted'", "[a, \"b\"]",
                "", "~", "[]", "{k: v}")

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def sentences(draw: st.DrawFn, names: tuple[str, ...]) -> str:
    """One sentence: a capital, words, maybe a link, emphasis or code, a period."""
    parts = [draw(st.sampled_from(("Deploys", "The", "Priya", "Cache", "Reviews")))]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(("word", "word", "word", "link", "em", "code", "tag")))
        word = draw(st.sampled_from(WORDS))
        if kind == "link":
            name = draw(st.sampled_from((*names, "missing note")))
            label = draw(st.sampled_from(("", "|the note", "|Priya's list")))
            parts.append(f"[[{name}{label}]]")
        elif kind == "em":
            parts.append(draw(st.sampled_from(("*", "**"))).join(["", "cache", ""]))
        elif kind == "code":
            parts.append(f"`{word}`")
        elif kind == "tag":
            parts.append("#ops")
        else:
            parts.append(word)
    return " ".join(parts) + "."


@st.composite
def bodies(draw: st.DrawFn, names: tuple[str, ...]) -> str:
    blocks: list[str] = []
    if draw(st.booleans()):
        blocks.append(f"# {draw(words)}")
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(("p", "p", "heading", "broken", "bullets", "quote")))
        if kind == "p":
            blocks.append(" ".join(draw(st.lists(sentences(names), min_size=1, max_size=3))))
        elif kind == "heading":
            blocks.append("#" * draw(st.integers(1, 6)) + " " + draw(words))
        elif kind == "broken":
            lang = draw(st.sampled_from(("", "bash", "python")))
            blocks += [f"1. {draw(words)}\n2. {draw(words)}",
                       f"```{lang}\nmake {draw(words)}\n\nmake again\n```",
                       f"3. {draw(words)}\n4. {draw(words)}"]
        elif kind == "bullets":
            blocks.append("\n".join(f"- {draw(words)}" for _ in range(draw(st.integers(1, 3)))))
        else:
            blocks.append(f"> {draw(sentences(names))}\n>\n> > {draw(words)}")
    if not any(b[:1].isupper() for b in blocks):
        blocks.append(draw(sentences(names)))
    return "\n\n".join(blocks) + "\n"


@st.composite
def fronts(draw: st.DrawFn) -> str | None:
    if not draw(st.booleans()):
        return None
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(f"name: {draw(words).replace('*', '')}")
    if draw(st.booleans()):
        lines.append("description: The owner reviews every deploy")
    if draw(st.booleans()):
        lines.append(f"type: {draw(st.sampled_from(TYPES))}")
    if draw(st.booleans()):
        tags = draw(st.lists(st.sampled_from(("ops", "deploy", "people")), unique=True,
                             max_size=3))
        lines.append(f"tags: [{', '.join(tags)}]")
    if draw(st.booleans()):
        lines.append(f"created: 2024-0{draw(st.integers(1, 9))}-1{draw(st.integers(0, 9))}")
    for key in draw(st.lists(st.sampled_from(("owner", "version", "status", "1", "true")),
                             unique=True, max_size=3)):
        lines.append(f"{key}: {draw(st.sampled_from(OTHER_VALUES))}".rstrip())
    draw(st.randoms()).shuffle(lines)
    return "\n".join(lines)


@st.composite
def folders(draw: st.DrawFn) -> dict[str, str]:
    paths = draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=5, unique=True))
    names = tuple(p.removesuffix(".md").rsplit("/", 1)[-1] for p in paths)
    out: dict[str, str] = {}
    for path in paths:
        front = draw(fronts())
        body = draw(bodies(names))
        out[path] = (f"---\n{front}\n---\n\n" if front is not None else "") + body
    return out


def _imported(files: dict[str, str]) -> tuple[dict[str, str], Store]:
    """``files`` imported into a fresh store by the batch door; the store's export."""
    store, _ = make_memory_store()
    raw = sorted((path, text.encode()) for path, text in files.items())
    plan = ok(plan_markdown(store, raw, HOME, ("imported",), at="2026-02-03T04:05:06Z"))
    assert not plan.refused, plan.refused
    ok(land_markdown(store, plan, HOME))
    exported = export_markdown(ok(store.head()).records()).files
    return {path.removeprefix(HOME): text for path, text in exported.items()}, store


@settings(max_examples=40, deadline=None)
@given(folders())
def test_export_of_import_is_the_folder(files: dict[str, str]) -> None:
    exported, _ = _imported(files)
    assert sorted(exported) == sorted(files), "every note comes back at its own name"
    for path, text in files.items():
        difference = note_difference(text, exported[path])
        assert difference is None, (path, text, exported[path], difference)


@settings(max_examples=25, deadline=None)
@given(folders())
def test_export_import_export_is_a_fixed_point(files: dict[str, str]) -> None:
    once, _ = _imported(files)
    twice, _ = _imported(once)
    assert twice == once
