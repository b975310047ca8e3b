"""``memhtml import markdown`` on the three folder shapes agents keep, against golden
files; the bad inputs a folder can hold; and a re-import that keeps a folder in step."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader
from memhtml.mdindex.globs import exclusion
from memhtml.store.inputs import BWrite
from memhtml.store.markdown_import import ImportPlan, plan_import
from memhtml.store.markdown_source import Walked, gather_markdown
from tests.integration.cli.cli_support import call, git_log


def walk_markdown(root: Path) -> Walked:
    """The folder as the import reads it: the indexer's walk, the default exclusion."""
    return unsafe_perform_io(
        gather_markdown(DirectoryReader(root), exclusion(()).unwrap()).unwrap())


def files_of(plan: ImportPlan) -> dict[str, str]:
    """Each new memory's store path and the whole file the import would write."""
    return {op.data.path or "": op.data.file_html or "" for op in plan.ops
            if isinstance(op, BWrite)}

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "markdown_import"
AT = "2025-06-01T12:00:00Z"

AGENT = {
    "MEMORY.md": "# Memory index\n\n- [Deploy window](deploy_window.md) \u2014 when we ship\n"
                 "- [User role](user_role.md) \u2014 who they are\n"
                 "- [Testing](feedback_testing.md)\n",
    "deploy_window.md": "---\nname: Deploy window\ndescription: Deploys to checkout-api happen "
                        "on Tuesdays.\ntype: project\ntags: [ops, release]\ncreated: 2024-03-01\n"
                        "updated: 2024-04-02T09:30:00Z\nowner: priya\n---\n\nNever on a "
                        "**Friday**; see [the tests](feedback_testing.md).\n\n## Steps\n\n"
                        "1. Freeze `main`\n2. Run *smoke* checks\n\n```bash\nmake deploy\n```\n",
    "user_role.md": "---\nname: User role\ndescription: The user is a data scientist.\n"
                    "type: user\n---\n\nPrefers short answers.\n",
    "feedback_testing.md": "---\nname: Testing\ndescription: Integration tests hit a real "
                           "database.\ntype: feedback\n---\n\n> We got burned by mocks.\n\n"
                           "| case | db |\n|---|---|\n| unit | none |\n| integration | real |\n",
}
VAULT = {
    "Projects/Checkout.md": "---\naliases: [checkout-api]\ntags: project\n---\n# Checkout\n\n"
                            "The checkout service takes payments. It runs on #kubernetes.\n\n"
                            "Owned by [[People/Priya|Priya]]; see [[Runbook#Rollback]].\n",
    "People/Priya.md": "# Priya\n\nPriya leads the payments team.\n",
    "Runbook.md": "# Runbook\n\n## Rollback\n\nRoll back with `kubectl rollout undo`. Then "
                  "tell [[checkout-api]].\n",
}
BASIC = {
    "coffee-brewing.md": "---\ntitle: Coffee Brewing Methods\ntype: note\npermalink: "
                         "coffee-brewing\ntags:\n- coffee\n---\n\n# Coffee Brewing Methods\n\n"
                         "## Observations\n- [method] Pour over gives a clean cup #brewing\n"
                         "- [tip] Grind just before brewing\n\n## Relations\n"
                         "- relates_to [[Coffee Bean Origins]]\n- part_of [[Morning Routine]]\n",
    "coffee-bean-origins.md": "---\ntitle: Coffee Bean Origins\n---\n\nEthiopian beans taste "
                              "of berries. Colombian beans are nuttier.\n",
}
CORPORA = {"agent": AGENT, "vault": VAULT, "basic": BASIC}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _golden_text(plan: ImportPlan) -> str:
    parts = []
    for op in plan.ops:
        data = getattr(op, "data", None)
        if data is not None:
            parts.append(f"== {data.path}\n{data.file_html}")
    parts += [f"== page {path}\n{data.decode()}" for path, data in sorted(plan.pages.items())]
    text = "\n".join(parts)
    return re.sub(r"[0-9a-f]{64}", "<sha256>", text)


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_golden_import(tmp_path: Path, name: str) -> None:
    walked = walk_markdown(_folder(tmp_path / name, CORPORA[name]))
    plan = plan_import(walked.files, "areas/imported/", ("imported",), at=AT)
    got = _golden_text(plan)
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("MEMHTML_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")
    assert not plan.refused


def test_agent_folder_faithfully(tmp_path: Path) -> None:
    plan = plan_import(walk_markdown(_folder(tmp_path, AGENT)).files, "areas/imported/",
                       at=AT)
    assert plan.indexes == (("MEMORY.md", "areas/imported/MEMORY.md"),), \
        "an index of links becomes no memory but a page"
    assert plan.pages["areas/imported/MEMORY.md"].decode() == (
        "# Memory index\n\n- [Deploy window](deploy-window.html) \u2014 when we ship\n"
        "- [User role](user-role.html) \u2014 who they are\n"
        "- [Testing](feedback-testing.html)\n"), "its links reach the memories"
    assert [p for _, p in plan.added] == ["areas/imported/deploy-window.html",
                                          "areas/imported/feedback-testing.html",
                                          "areas/imported/user-role.html"]
    html = files_of(plan)
    deploy = html["areas/imported/deploy-window.html"]
    assert 'content="2024-03-01T00:00:00Z"' in deploy and 'content="2024-04-02T09:30:00Z"' in deploy
    assert 'href="/areas/imported/feedback-testing.html"' in deploy
    assert "<dt>owner</dt><dd>priya</dd>" in deploy and "<dt>type</dt><dd>project</dd>" in deploy
    assert '<code data-lang="bash">' in deploy and "<ol>" in deploy
    types = {p: re.search(r'memhtml-type" content="(\w+)"', h).group(1)  # type: ignore[union-attr]
             for p, h in html.items()}
    assert len(set(types.values())) == 3, "user, feedback and project stay distinct types"
    assert not plan.unresolved


def test_vault_links_tags_and_aliases(tmp_path: Path) -> None:
    plan = plan_import(walk_markdown(_folder(tmp_path, VAULT)).files, "areas/v/", at=AT)
    html = files_of(plan)
    checkout = html["areas/v/projects/checkout.html"]
    assert '<meta name="memhtml-alias" content="checkout-api">' in checkout
    assert 'content="kubernetes"' in checkout and 'content="project"' in checkout
    assert 'href="/areas/v/people/priya.html"' in checkout
    assert 'href="/areas/v/runbook.html"' in checkout
    assert "<mark>The checkout service takes payments.</mark>" in checkout
    assert 'href="/areas/v/projects/checkout.html"' in html["areas/v/runbook.html"], \
        "a wikilink to an alias resolves"


def test_basic_memory_claim_observations_relations(tmp_path: Path) -> None:
    plan = plan_import(walk_markdown(_folder(tmp_path, BASIC)).files, "areas/b/", at=AT)
    html = files_of(plan)
    note = html["areas/b/coffee-brewing.html"]
    assert "<mark>Pour over gives a clean cup #brewing</mark>" in note, \
        "the claim is prose, never '## Observations - [method]'"
    assert "<li>[method] Pour over" in note, "an observation keeps its text as written"
    assert 'content="brewing"' in note and 'content="coffee"' in note
    assert 'rel="memhtml-relates-to" href="/areas/b/coffee-bean-origins.html"' in note
    assert plan.unresolved == (("coffee-brewing.md", "Morning Routine"),)


def test_bad_inputs_are_refused_with_reasons(tmp_path: Path) -> None:
    root = _folder(tmp_path / "bad", {"ok.md": "A fine note.\n",
                                      "broken.md": "---\ntitle: broken\n",
                                      ".trash/gone.md": "Deleted.\n"})
    (root / "bin.md").write_bytes(b"abc\x00def")
    (root / "latin.md").write_bytes("caf\u00e9 note".encode("latin-1"))
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf---\nname: Bom\n---\nRead through a BOM.\n")
    os.mkfifo(root / "pipe.md")
    (root / "passwd.md").symlink_to("/etc/passwd")
    (root / "inner.md").symlink_to(root / "ok.md")
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    (root / "outside").symlink_to("/etc", target_is_directory=True)
    with open(root / "huge.md", "wb") as huge:
        huge.truncate(50 * 1024 * 1024)
    walked = walk_markdown(root)
    plan = plan_import(walked.files, "areas/x/", at=AT, refused=walked.refused)
    reasons = {r.source: r.reason for r in plan.refused}
    assert set(reasons) == {"bin.md", "broken.md", "latin.md", "pipe.md", "passwd.md",
                            "outside", "huge.md"}
    assert "never closes" in reasons["broken.md"] and "named pipe" in reasons["pipe.md"]
    assert "outside the root" in reasons["passwd.md"] and "cap" in reasons["huge.md"]
    assert "binary" in reasons["bin.md"] and "UTF-8" in reasons["latin.md"]
    assert sorted(s for s, _ in plan.added) == ["bom.md", "ok.md"], \
        "a symlink to a note inside the folder is the same note: imported once"
    assert {s for s, _ in walked.passed} == {"inner.md", "sub/loop"}


def test_reimport_keeps_the_folder_in_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    notes = _folder(tmp_path / "notes", AGENT)
    s = ("--store", str(store), "--json")
    code, first = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0, first
    assert len(first["added"]) == 3
    assert first["indexes"] == [{"file": "MEMORY.md", "page": "areas/imported/MEMORY.md"}]
    assert call(capsys, "read", "areas/imported/MEMORY.md", *s)[0] != 0, \
        "the index page is no memory"
    again = call(capsys, "import", "markdown", str(notes), *s)[1]
    assert again["commit"] is None and len(again["unchanged"]) == 3
    (notes / "user_role.md").write_text(AGENT["user_role.md"].replace(
        "data scientist", "data engineer"), encoding="utf-8")
    (notes / "feedback_testing.md").unlink()
    (notes / "new_fact.md").write_text("Lunch is at noon. See [[deploy_window]].\n",
                                       encoding="utf-8")
    before = len(git_log(store))
    code, step = call(capsys, "import", "markdown", str(notes), *s)
    assert len(git_log(store)) == before + 1, "one commit for every change"
    assert code == 0, step
    assert [a["file"] for a in step["added"]] == ["new_fact.md"]
    assert [(c["file"], c["from"]) for c in step["changed"]] == [
        ("user_role.md", "areas/imported/user-role.html")]
    assert [a["file"] for a in step["archived"]] == ["feedback_testing.md"]
    assert step["unchanged"] == ["deploy_window.md"]
    new_path = step["changed"][0]["path"]
    gist = call(capsys, "read", new_path, "--tier", "gist", *s)[1]["text"]
    assert gist == "The user is a data engineer."
    related = call(capsys, "related", "areas/imported/deploy-window.html", *s)[1]
    assert "areas/imported/new-fact.html" in str(related)


def test_an_index_page_round_trips_through_export(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """MEMORY.md becomes a page whose links open the memories; export writes it back
    with links to the exported files, and importing that export gives the same page."""
    first, second = tmp_path / "one", tmp_path / "two"
    for store in (first, second):
        assert call(capsys, "init", str(store), "--json")[0] == 0
    notes = _folder(tmp_path / "notes", AGENT)
    assert call(capsys, "import", "markdown", str(notes), "--store", str(first),
                "--json")[0] == 0
    page = git_show(first, "areas/imported/MEMORY.md")
    for target in re.findall(r"\]\(([^)]+)\)", page):
        assert git_show(first, f"areas/imported/{target}").startswith("<!doctype html>")
    import subprocess

    (first / "README.md").write_text("# Our memory\n\nNotes kept by the team.\n",
                                     encoding="utf-8")
    who = ("-c", "user.name=Test Person", "-c", "user.email=person@example.org")
    subprocess.run(["git", *who, "-C", str(first), "add", "README.md"], check=True)
    subprocess.run(["git", *who, "-C", str(first), "commit", "-qm", "a readme"], check=True)
    out = tmp_path / "out"
    code, exported = call(capsys, "export", "markdown", str(out), "--store", str(first),
                          "--json")
    assert code == 0 and exported["pages"] == 1, exported
    assert not (out / "README.md").exists(), "only index pages go out, never a README"
    written = (out / "areas/imported/MEMORY.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)]+)\)", written):
        assert (out / "areas/imported" / target).is_file(), target
    code, again = call(capsys, "import", "markdown", str(out / "areas/imported"),
                       "--store", str(second), "--json")
    assert code == 0 and not again["unresolved"], again
    assert git_show(second, "areas/imported/MEMORY.md") == page
    before = len(git_log(second))
    assert call(capsys, "import", "markdown", str(out / "areas/imported"),
                "--store", str(second), "--json")[1]["commit"] is None
    assert len(git_log(second)) == before, "an index page in step commits nothing"


def git_show(store: Path, path: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(store), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def test_a_persons_edit_of_the_index_page_is_never_written_over(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page is a file of the person's checkout like any other: a re-import that
    would change it while the person has edited it, uncommitted, is refused and
    commits nothing; their edit stays."""
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    notes = _folder(tmp_path / "notes", AGENT)
    assert call(capsys, "import", "markdown", str(notes), "--store", str(store),
                "--json")[0] == 0
    page = store / "areas/imported/MEMORY.md"
    page.write_text(page.read_text(encoding="utf-8") + "- my own line\n", encoding="utf-8")
    (notes / "MEMORY.md").write_text(AGENT["MEMORY.md"] + "- [Gone](gone.md)\n",
                                     encoding="utf-8")
    before = len(git_log(store))
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 1 and answer["code"] == "ERR_UNCOMMITTED_EDITS", answer
    assert len(git_log(store)) == before
    assert page.read_text(encoding="utf-8").endswith("- my own line\n")
