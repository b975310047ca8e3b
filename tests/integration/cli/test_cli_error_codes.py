"""Every failure carries a stable code in ``--json`` output, and reads as plain words.

The JSON shape of a failure is one: ``{"ok": false, "code": "ERR_...", "error": ...,
"violations": [...]}``; a typed error's code is ``memhtml.compose.error_code`` of it,
so an agent can match on the code while the wording improves. A failing head gate is
the spec's ``HeadGateFailed``, ``ERR_DISCRIMINATION_FAILED``, with its report beside.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.compose import error_code, explain
from memhtml.compose.run import merge_refusal_code
from memhtml.contracts import errors as contract_errors
from memhtml.head import HeadGateFailed
from memhtml.mdindex import errors as md_errors
from memhtml.sleep import errors as sleep_errors
from memhtml.store import errors as store_errors
from tests.integration.cli.cli_support import call, call_text, git_log

CODE = re.compile(r"ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*")

ERROR_TYPES = sorted(
    {value for module in (contract_errors, md_errors, sleep_errors, store_errors)
     for value in vars(module).values()
     if isinstance(value, type) and dataclasses.is_dataclass(value)
     and value.__module__ == module.__name__},
    key=lambda kind: kind.__name__)


def failure(answer: object) -> dict[str, object]:
    """The JSON failure, checked to have the one shape."""
    assert isinstance(answer, dict), answer
    assert answer["ok"] is False, answer
    assert isinstance(answer["code"], str) and CODE.fullmatch(answer["code"]), answer
    assert isinstance(answer["error"], str) and answer["error"], answer
    assert isinstance(answer["violations"], list), answer
    return answer


def test_every_error_type_is_found() -> None:
    names = {kind.__name__ for kind in ERROR_TYPES}
    assert {"NotFound", "Refused", "GitFailure", "RunNotFound", "EmptyCorpus"} <= names


@pytest.mark.parametrize("kind", ERROR_TYPES, ids=lambda kind: kind.__name__)
@given(data=st.data())
def test_every_error_has_a_code_and_a_plain_line(kind: type, data: st.DataObject) -> None:
    """Whatever an error holds, its code is stable (a function of its type alone) and
    its line never reads as the class name."""
    error = data.draw(st.builds(kind))
    code = error_code(error)
    assert CODE.fullmatch(code), code
    assert code == error_code(data.draw(st.builds(kind)))
    line = explain(error)
    assert isinstance(line, str)
    assert not line.startswith(f"{kind.__name__}:"), line
    assert not line.startswith(f"{kind.__name__}("), line


@pytest.mark.parametrize(("name", "code"), [
    ("NotFound", "ERR_NOT_FOUND"),
    ("RefMoved", "ERR_REF_MOVED"),
    ("NotAStore", "ERR_NOT_A_STORE"),
    ("HTTPError", "ERR_HTTP_ERROR"),
    ("Embed2Failure", "ERR_EMBED2_FAILURE"),
    ("HeadGateFailed", "ERR_DISCRIMINATION_FAILED"),
])
def test_how_a_code_is_spelled(name: str, code: str) -> None:
    assert error_code(type(name, (), {})()) == code


def test_a_bare_message_is_err_failed() -> None:
    assert error_code("disk full") == "ERR_FAILED"


def test_codes_differ_between_error_types() -> None:
    codes = {kind.__name__: error_code(object.__new__(kind)) for kind in ERROR_TYPES}
    assert len(set(codes.values())) == len(codes), codes
    assert codes["NotFound"] == "ERR_NOT_FOUND"


def test_a_missing_memory_reads_one_way(store: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A read, a door and a link target all say "no memory at PATH"."""
    s = ("--store", str(store), "--json")
    code, landed = call(capsys, "write", "--title", "Deploys", "--claim",
                        "We deploy on Tuesdays.", *s)
    assert code == 0, landed
    missing = "areas/inbox/never-written.html"
    for tokens in (("read", missing), ("archive", missing), ("label", missing, "team:ops"),
                   ("link", landed["path"], "relates_to", f"/{missing}")):
        code, answer = call(capsys, *tokens, *s)
        assert code == 1
        error = str(failure(answer)["error"])
        assert "no memory at " in error and missing in error, (tokens, answer)
        assert "not found:" not in str(answer["error"])
    code, answer = call(capsys, "read", missing, *s)
    assert failure(answer)["code"] == "ERR_NOT_FOUND"
    assert "search" in str(answer["error"]), "the fix is named"


def test_typed_errors_carry_their_code(store: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    code, answer = call(capsys, "read", "areas/inbox/x.html", "--at", "no-such-ref", *s)
    assert code == 1
    assert failure(answer)["code"] == "ERR_NOT_FOUND"
    assert str(answer["error"]).startswith("no commit 'no-such-ref' in this store"), answer
    code, answer = call(capsys, "sleep", "merge", *s)
    assert code == 1 and failure(answer)["code"] == "ERR_SLEEP_REFUSED", answer
    code, answer = call(capsys, "sleep", "merge", "2026-01-01", *s)
    assert code == 1 and failure(answer)["code"] == "ERR_MERGE_NO_RUN", answer
    assert answer["refusal"] == "no-run", "the outcome's fields stay beside the failure"
    empty = tmp_path / "empty-notes"
    empty.mkdir()
    code, answer = call(capsys, "md", "stats", "--root", str(empty), "--json")
    assert code == 1 and failure(answer)["code"] == "ERR_EMPTY_CORPUS", answer
    code, answer = call(capsys, "eval", "beir", str(tmp_path / "absent.jsonl"),
                        str(tmp_path / "q.jsonl"), str(tmp_path / "r.tsv"), "--json")
    assert code == 1 and failure(answer)["code"] == "ERR_INPUT", answer
    assert "absent.jsonl" in str(answer["error"])


def test_a_partial_import_succeeds_and_names_what_it_skipped(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What could be imported landed, so the run succeeded (exit 0); each file left
    out is listed with its own code. Before, two skipped files made such a run exit
    1, which a script could not tell from a run that committed nothing."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kept.md").write_text("---\nname: kept\n---\nThe kept note says enough.\n",
                                   encoding="utf-8")
    (notes / "empty.md").write_text("---\nname: empty\n---\n", encoding="utf-8")
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert answer["ok"] is True and "code" not in answer, answer
    assert [c["file"] for c in answer["converted"]] == ["kept.md"]
    assert [(s["file"], s["code"]) for s in answer["skipped"]] == [
        ("empty.md", "ERR_NOT_CONVERTED")]


def test_text_mode_prints_the_line_not_json(store: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call_text(capsys, "read", "areas/inbox/never-written.html",
                               "--store", str(store))
    assert code == 1 and out == ""
    assert err.startswith("error: no memory at areas/inbox/never-written.html"), err
    assert "{" not in err


def test_merge_refusals_have_codes() -> None:
    assert merge_refusal_code("gate-failed") == "ERR_DISCRIMINATION_FAILED"
    assert merge_refusal_code("main-advanced") == "ERR_MERGE_MAIN_ADVANCED"
    assert merge_refusal_code("lost") == "ERR_MERGE_LOST"
    assert merge_refusal_code("conflict") == "ERR_MERGE_CONFLICT"
    assert merge_refusal_code("unrecorded") == "ERR_MERGE_UNRECORDED"
    assert merge_refusal_code("over-archived") == "ERR_MERGE_OVER_ARCHIVED"


def crowd(root: Path, titles: list[str], copies: int) -> Path:
    """Markdown notes that each say a title's words more often than the memory it
    titles: imported in one commit, they push that memory out of its own search."""
    root.mkdir()
    for n, title in enumerate(titles):
        for i in range(copies):
            words = title.lower()
            (root / f"crowd-{n}-{i}.md").write_text(
                f"---\nname: {title} {i}\ndescription: {title}, {words}.\n---\n"
                f"{title}: {words}, {words}, {words}.\n", encoding="utf-8")
    return root


def test_a_failing_gate_is_head_gate_failed(store: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store))
    titles = ["Fact 0 about deploys", "Fact 1 about deploys"]
    for n, title in enumerate(titles):
        code, _ = call(capsys, "write", "--title", title, "--claim",
                       f"Deploy fact number {n}.", *s, "--json")
        assert code == 0
    base = git_log(store)[0].split()[0]
    code, _ = call(capsys, "import", "markdown", str(crowd(tmp_path / "crowd", titles, 12)),
                   *s, "--json")
    assert code == 0
    code, answer = call(capsys, "eval", "gate", base, "main", *s, "--json")
    assert code == 1
    failed = failure(answer)
    report = answer["report"]
    assert failed["code"] == "ERR_DISCRIMINATION_FAILED"
    assert failed["code"] == error_code(HeadGateFailed.__new__(HeadGateFailed))
    assert report["passed"] is False and report["base"] == base
    # Two memories, each probed by its title and by its claim.
    assert str(failed["error"]).startswith("head gate failed: 4 probes; MRR"), failed
    assert any("below the floor" in str(v) for v in answer["violations"]), answer
    assert {i["kind"] for i in report["inversions"]} == {"fell-out"}
    code, out, err = call_text(capsys, "eval", "gate", base, "main", *s)
    assert code == 1
    assert out.splitlines()[-1].endswith("FAILED"), out
    assert err.startswith("error: head gate failed: "), err


def test_a_passing_gate_answers_its_report(store: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    for n in range(3):
        call(capsys, "write", "--title", f"Fact {n} about deploys", "--claim",
             f"Deploy fact number {n}.", *s)
    base = git_log(store)[0].split()[0]
    call(capsys, "write", "--title", "Unrelated", "--claim", "Coffee is on floor two.", *s)
    code, answer = call(capsys, "eval", "gate", base, "main", *s)
    assert code == 0 and answer["passed"] is True and "code" not in answer
    assert json.dumps(answer)  # plain JSON data
