"""Plain text is text, markup comes in by its own door, tiers keep code's lines, and
the write and read messages say what happened, all through the real CLI on real
stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES
from memhtml.store.reads import SUMMARY_CHARS, SUMMARY_PARAGRAPHS
from tests.integration.cli.cli_support import call, call_text, git_log

MARKUP_LOOKING = [
    "Tables use the <table> element.",
    "Wrap it in a `<div>`",
    "<script>alert(1)</script>",
    "&amp; stays &amp;, &lt; stays &lt;",
    "<p>a paragraph</p><br/><!-- a comment -->",
    "]]> <![CDATA[ x ]]> </article></body>",
]

YAML = "```yaml\nretries:\n  max: 5\n  backoff: [1, 2, 4]\n```"
YAML_LINES = "retries:\n  max: 5\n  backoff: [1, 2, 4]"


def run(capsys: pytest.CaptureFixture[str], store: Path, *tokens: str) -> tuple[int, Any]:
    return call(capsys, *tokens, "--store", str(store), "--json")


def write(capsys: pytest.CaptureFixture[str], store: Path, *tokens: str) -> str:
    code, answer = run(capsys, store, "write", *tokens)
    assert code == 0, answer
    return str(answer["path"])


def text(capsys: pytest.CaptureFixture[str], store: Path, path: str, *tier: str) -> str:
    code, answer = run(capsys, store, "read", path, *tier)
    assert code == 0, answer
    return str(answer["text"])


@pytest.mark.parametrize("odd", MARKUP_LOOKING)
def test_text_that_looks_like_markup_is_stored_as_text(
        store: Path, odd: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", f"Markup {odd}", "--claim", odd, "--body", odd,
                 "--body", f"second: {odd}")
    assert text(capsys, store, path, "--tier", "gist") == odd
    assert text(capsys, store, path, "--tier", "details") == f"{odd} {odd}\n\nsecond: {odd}"
    whole = text(capsys, store, path, "--tier", "all")
    assert "<mark>" + odd.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
        in whole
    assert f"<title>Markup {odd}".replace("&", "&amp;").replace("<", "&lt;") \
        .replace(">", "&gt;").replace("&lt;title&gt;", "<title>") in whole


def test_markup_goes_in_through_body_html(store: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "Checklist", "--claim", "Deploys need a checklist.",
                 "--body-html", "<ul><li>tests green</li><li>on-call <em>told</em></li></ul>"
                 "<p>Then ship.</p>")
    whole = text(capsys, store, path, "--tier", "all")
    assert "<p><mark>Deploys need a checklist.</mark></p>" in whole
    assert "<li>on-call <em>told</em></li>" in whole
    assert text(capsys, store, path, "--tier", "details") == (
        "Deploys need a checklist.\n\n- tests green\n- on-call told\n\nThen ship.")
    marked = write(capsys, store, "--title", "Marked", "--body-html",
                   "<p><mark>The fragment marks its own claim.</mark> And goes on.</p>")
    assert text(capsys, store, marked, "--tier", "gist") == "The fragment marks its own claim."


def test_refused_markup_and_missing_fields_say_so_in_cli_words(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(store)
    refusals = []
    for tokens, exit_code in [
        (("--title", "No claim", "--body-html", "<p>Nothing marked.</p>"), 2),
        (("--title", "Both", "--claim", "A claim.", "--body", "x", "--body-html", "<p>y</p>"),
         2),
        (("--title", "Script", "--claim", "A claim.", "--body-html", "<script>x()</script>"),
         1),
        (("--title", "Unmarked", "--claim", "", "--body-html", "<p><mark></mark></p>"), 1),
    ]:
        code, answer = run(capsys, store, "write", *tokens)
        assert code == exit_code, (tokens, answer)
        refusals.append(answer["error"])
    assert "--claim required" in refusals[0]
    assert "--body and --body-html" in refusals[1]
    assert "script" in refusals[2]
    assert all("article_html" not in refusal for refusal in refusals), refusals
    assert git_log(store) == before


def test_nul_is_refused_with_the_field_and_offset(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(store)
    code, answer = run(capsys, store, "write", "--title", "Nul", "--claim", "ab\x00c")
    assert code == 1
    assert answer["code"] == "ERR_REFUSED"
    assert any(v.startswith("claim: a NUL character at offset 2") for v in answer["violations"])
    assert git_log(store) == before


def test_code_blocks_keep_their_lines_in_every_tier(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "Retry policy", "--claim", "Retries back off.",
                 "--body", "The policy:", "--body", YAML, "--body", "Reviewed yearly.")
    summary = text(capsys, store, path, "--tier", "summary")
    assert summary == f"Retries back off.\n\nThe policy:\n\n{YAML_LINES}"
    details = text(capsys, store, path, "--tier", "details")
    assert details == f"Retries back off. The policy:\n\n{YAML_LINES}\n\nReviewed yearly."
    assert text(capsys, store, path, "--tier", "gist") == "Retries back off."


def test_summary_is_the_claim_and_the_first_paragraphs_and_the_default(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "Paragraphs", "--claim", "Four paragraphs follow.",
                 "--body", "one", "--body", "two", "--body", "three", "--body", "four")
    assert SUMMARY_PARAGRAPHS == 2
    summary = text(capsys, store, path)
    assert summary == "Four paragraphs follow.\n\none\n\ntwo"
    assert text(capsys, store, path, "--tier", "summary") == summary
    assert text(capsys, store, path, "--tier", "all").startswith("<!doctype html>")
    code, out, _ = call_text(capsys, "read", path, "--store", str(store))
    assert code == 0
    assert out.rstrip("\n") == summary
    long = " ".join(["word"] * SUMMARY_CHARS)
    cut = write(capsys, store, "--title", "Long", "--claim", "A long body.", "--body", long)
    shown = text(capsys, store, cut)
    body = shown.removeprefix("A long body.\n\n")
    assert body.endswith("…")
    assert len(body) <= SUMMARY_CHARS
    assert long.startswith(body.removesuffix("…"))


def test_an_archived_path_says_where_it_went_and_a_missing_one_that_it_never_was(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "Coffee", "--claim", "Coffee is on floor two.")
    code, answer = run(capsys, store, "archive", path)
    assert code == 0
    [move] = answer["archived"]
    assert move["path"] == path
    archived_at = move["archived_at"]
    assert archived_at.startswith("archive/") and archived_at.endswith(path)
    code, answer = run(capsys, store, "read", path)
    assert code == 1
    assert answer["code"] == "ERR_ARCHIVED"
    assert f"{path} was archived at {archived_at} on " in answer["error"]
    assert answer["error"].endswith("read it there")
    assert text(capsys, store, archived_at, "--tier", "gist") == "Coffee is on floor two."
    code, out, err = call_text(capsys, "read", path, "--store", str(store))
    assert code == 1
    assert out == ""
    assert f"was archived at {archived_at}" in err
    code, answer = run(capsys, store, "archive", path)
    assert code == 1
    assert f"{path} was archived at {archived_at}" in answer["error"]
    code, answer = run(capsys, store, "read", "areas/inbox/never-written.html")
    assert code == 1
    assert answer["code"] == "ERR_NOT_FOUND"
    assert "areas/inbox/never-written.html" in answer["error"]
    assert "archived" not in answer["error"]


def test_a_moved_path_says_where_it_went_in_read_and_log(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "Tea", "--claim", "Tea is on floor three.")
    code, answer = run(capsys, store, "move", path, "areas/kitchen/")
    assert code == 0
    first = "areas/kitchen/" + path.rsplit("/", 1)[-1]
    moved = git_log(store)[0].split()[0]
    code, answer = run(capsys, store, "read", path)
    assert code == 1 and answer["code"] == "ERR_MOVED", answer
    assert answer["error"].startswith(f"{path} was moved to {first} on ")
    assert f"(commit {moved[:10]})" in answer["error"]
    # Moved again: the old path follows it to where it is now, naming the first move.
    code, _ = run(capsys, store, "move", first, "areas/pantry/tea.html")
    assert code == 0
    code, answer = run(capsys, store, "read", path)
    assert answer["error"].startswith(f"{path} was moved to areas/pantry/tea.html on "), answer
    assert f"(commit {moved[:10]})" in answer["error"]
    code, answer = run(capsys, store, "log", path)
    assert code == 0 and (answer["went"], answer["now_at"]) == ("moved", "areas/pantry/tea.html")
    assert answer["commits"][0]["commit"] == moved
    code, out, _ = call_text(capsys, "log", path, "--store", str(store))
    assert code == 0 and out.rstrip("\n").endswith("memhtml log areas/pantry/tea.html shows "
                                                    "its whole history)"), out
    # The log where it is now follows it back through both moves to its write.
    code, answer = run(capsys, store, "log", "areas/pantry/tea.html")
    assert code == 0
    assert [(c["subject"].split(":")[0], c["path"]) for c in answer["commits"]] == [
        ("memhtml move", "areas/pantry/tea.html"), ("memhtml move", first),
        ("memhtml write", path)]
    code, out, _ = call_text(capsys, "log", "areas/pantry/tea.html", "--store", str(store))
    assert f"(then at {path})" in out and f"(then at {first})" in out
    # Archived where it stands now: the old path names the archive.
    code, answer = run(capsys, store, "archive", "areas/pantry/tea.html")
    assert code == 0
    [went] = answer["archived"]
    code, answer = run(capsys, store, "read", path)
    assert code == 1 and answer["code"] == "ERR_MOVED"
    assert f"was moved to {went['archived_at']}" in answer["error"]
    # A path that held nothing still never was: its log is not found, as a read is.
    code, answer = run(capsys, store, "log", "areas/inbox/never-written.html")
    assert code == 1 and answer["code"] == "ERR_NOT_FOUND", answer
    assert "no commit on main ever touched it" in answer["error"]


def test_a_corrected_path_names_its_successor(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(capsys, store, "--title", "Deploy day", "--claim", "Deploys are on Tuesdays.")
    code, answer = run(capsys, store, "correct", old, "--title", "Deploy day", "--claim",
                       "Deploys are on Wednesdays.")
    assert code == 0
    new = answer["path"]
    code, answer = run(capsys, store, "read", old)
    assert code == 1
    assert f"{new} superseded it" in answer["error"]


def test_correct_and_done_print_what_is_new_and_what_was_archived(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(capsys, store, "--title", "Deploy day", "--claim", "Deploys are on Tuesdays.")
    code, out, _ = call_text(capsys, "correct", old, "--title", "Deploy day", "--claim",
                             "Deploys are on Wednesdays.", "--store", str(store))
    assert code == 0
    lines = out.splitlines()
    new = "areas/inbox/deploy-day-2.html"
    assert lines[0].endswith(f"memhtml correct: {old}")
    assert lines[1] == f"  new: {new}"
    assert lines[2].startswith(f"  archived: {old} -> archive/")
    assert lines[2].endswith(f"/{old}")
    assert len(lines) == 3
    code, answer = run(capsys, store, "task", "add", "--title", "Rotate", "--claim",
                       "Rotate the key.")
    assert code == 0
    task = answer["path"]
    assert answer["new"] == [task]
    code, out, _ = call_text(capsys, "task", "status", task, "done", "--store", str(store))
    assert code == 0
    assert out.splitlines()[1].startswith(f"  archived: {task} -> archive/")
    code, answer = run(capsys, store, "task", "status", task, "done")
    assert code == 1


def test_an_unknown_rel_lists_the_rels(store: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write(capsys, store, "--title", "One", "--claim", "One fact.")
    code, answer = run(capsys, store, "link", path, "blames", path)
    assert code == 1
    assert answer["error"].startswith("'blames' is not an edge rel; the rels are ")
    assert all(rel in answer["error"] for rel in EDGE_RELS)
    code, answer = run(capsys, store, "write", "--title", "Two", "--claim", "Two facts.",
                       "--link", f"blames=/{path}")
    assert code == 1
    assert any(v.startswith("'blames' is not an edge rel") and "supersedes" in v
               for v in answer["violations"])


def test_a_memory_type_outside_the_ten_is_refused_with_the_ten_listed(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memhtml.cli.app import app
    from memhtml.compose import Settings, open_services, value_of
    from memhtml.store import WriteInput
    from memhtml.store import write as door
    from memhtml.store.errors import Refused
    from tests.integration.store.store_support import err

    services = value_of(open_services(Settings(store=store)))
    refused = err(door(services.store(), WriteInput(title="Fact", claim="A claim.",
                                                   memory_type="fact")))  # type: ignore[arg-type]
    assert isinstance(refused, Refused)
    [violation] = refused.violations
    assert violation.startswith("memory type 'fact' is not one of the ten types: ")
    assert all(kind in violation for kind in MEMORY_TYPES)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        app(["write", "--title", "x", "--claim", "y", "--type", "fact", "--store", str(store)],
            result_action="return_value")
    assert exited.value.code == 2
    shown = " ".join(capsys.readouterr().err.split())
    assert all(kind in shown for kind in MEMORY_TYPES), shown
