"""memhtml in a coding agent's loop, through real processes: the hooks fed Claude
Code's recorded hook inputs on stdin, their outputs' shape and budgets; capture into
the directory the nightly run reads; install, show and uninstall on a settings file
that already holds a person's own hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memhtml.adapters.transcripts import DirectoryTranscripts
from memhtml.agent.tokens import count_tokens
from memhtml.sleep.phases.trace_sessions import parse_transcript
from tests.integration.warm_cli import memhtml

SESSION = "3f1c9a2e-7b4d-4e8a-9c1f-2a6b8d0e5f71"
KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


def run(env: dict[str, str], *tokens: str, stdin: str = "", cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``python -m memhtml`` as a hook runs it: a process of its own, input on stdin."""
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens], input=stdin, env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("agent-loop")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHTML_")}
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
               MEMHTML_EMBEDDER="none", MEMHTML_TRANSCRIPTS_DIR=str(root / "transcripts"),
               GIT_AUTHOR_NAME="Ada Person", GIT_AUTHOR_EMAIL="ada@example.org",
               GIT_COMMITTER_NAME="Ada Person", GIT_COMMITTER_EMAIL="ada@example.org")
    store = root / "store"
    done = memhtml("demo", "--dir", str(store), env=env)
    assert done.returncode == 0, done.stderr
    return {"root": root, "env": env, "store": store}


def hook_input(event: str, root: Path, **more: Any) -> str:
    return json.dumps({"session_id": SESSION, "transcript_path": str(root / "t.jsonl"),
                       "cwd": str(root), "hook_event_name": event, **more})


def context_of(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def test_session_start_gets_the_brief_within_its_budget(loop: dict[str, Any]) -> None:
    done = run(loop["env"], "brief", "--hook", "claude-code", "--store", str(loop["store"]),
               stdin=hook_input("SessionStart", loop["root"], source="startup"))
    text = context_of(done, "SessionStart")
    assert count_tokens(text) <= 1_500
    assert "OVERDUE" in text and "areas/tasks/" in text
    assert text.splitlines()[0].startswith("memhtml brief: 52 live memories")
    small = run(loop["env"], "brief", "--budget", "120", "--json", "--store",
                str(loop["store"]))
    assert small.returncode == 0, small.stderr
    assert json.loads(small.stdout)["tokens"] <= 120


def test_a_prompt_gets_what_bears_on_it_and_an_unrelated_one_gets_nothing(
        loop: dict[str, Any]) -> None:
    asked = run(loop["env"], "recall", "--hook", "claude-code", "--store", str(loop["store"]),
                stdin=hook_input("UserPromptSubmit", loop["root"], prompt=(
                    "a customer got charged twice, what do I do")))
    text = context_of(asked, "UserPromptSubmit")
    assert "areas/checkout/precedent-same-day-refund.html" in text
    assert count_tokens(text) <= 800
    unrelated = run(loop["env"], "recall", "--hook", "claude-code", "--store",
                    str(loop["store"]), stdin=hook_input(
                        "UserPromptSubmit", loop["root"], prompt="make the button blue"))
    assert unrelated.returncode == 0 and unrelated.stdout == "", unrelated.stdout
    plain = run(loop["env"], "recall", "--json", "--store", str(loop["store"]),
                stdin="when do carts expire in cart-redis?")
    found = json.loads(plain.stdout)
    assert "areas/checkout/cart-redis-ttl.html" in [m["path"] for m in found["memories"]]


def test_capture_keeps_the_session_redacted_once_and_ends_it(loop: dict[str, Any]) -> None:
    root, env = loop["root"], loop["env"]
    lines = [{"type": "user", "sessionId": SESSION, "message": {
                "role": "user", "content": f"deploy with ANTHROPIC_API_KEY={KEY} please"}},
             {"type": "assistant", "sessionId": SESSION, "message": {
                "role": "assistant", "content": [{"type": "text", "text": "Deploying now."}]}}]
    (root / "t.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    kept = root / "transcripts" / f"{SESSION}.jsonl"
    for event in ("Stop", "Stop", "PreCompact"):
        done = run(env, "capture", "--hook", "claude-code", "--store", str(loop["store"]),
                   stdin=hook_input(event, root))
        assert done.returncode == 0 and done.stdout == "", done.stderr
    first = kept.read_bytes()
    assert KEY.encode() not in first and b"[REDACTED:" in first
    parsed = parse_transcript(first)
    assert [t.role for t in parsed.turns] == ["user", "assistant"] and not parsed.closed
    ended = run(env, "capture", "--hook", "claude-code", "--store", str(loop["store"]),
                stdin=hook_input("SessionEnd", root, reason="prompt_input_exit"))
    assert ended.returncode == 0, ended.stderr
    assert parse_transcript(kept.read_bytes()).closed
    again = run(env, "capture", "--hook", "claude-code", "--store", str(loop["store"]),
                stdin=hook_input("SessionEnd", root))
    assert again.returncode == 0 and kept.read_bytes().count(b"session_end") == 1
    source = DirectoryTranscripts(root / "transcripts")
    listed = source.sessions()
    assert [e.session for e in listed.unwrap()._inner_value] == [SESSION]


def test_a_hook_that_fails_says_so_and_never_blocks_the_prompt(
        loop: dict[str, Any], tmp_path: Path) -> None:
    env, root = loop["env"], loop["root"]
    no_store = run(env, "brief", "--hook", "claude-code", "--store", str(tmp_path),
                   stdin=hook_input("SessionStart", root))
    garbage = run(env, "recall", "--hook", "claude-code", "--store", str(loop["store"]),
                  stdin="{not json")
    unset = {k: v for k, v in env.items() if k != "MEMHTML_TRANSCRIPTS_DIR"}
    nowhere = run(unset, "capture", "--hook", "claude-code", "--store", str(loop["store"]),
                  stdin=hook_input("Stop", root))
    for done in (no_store, garbage, nowhere):
        assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
        assert done.stderr.startswith("memhtml ") and "Traceback" not in done.stderr
    assert "transcripts_dir" in nowhere.stderr


def test_install_keeps_a_persons_hooks_and_uninstall_takes_out_only_memhtmls(
        loop: dict[str, Any], tmp_path: Path) -> None:
    env, store = loop["env"], str(loop["store"])
    project = tmp_path / "project"
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    theirs: dict[str, Any] = {"permissions": {"allow": ["Bash(npm test)"]}, "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "./check-bash.sh"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]}}
    settings.write_text(json.dumps(theirs, indent=2), "utf-8")
    args = ("--project", str(project), "--store", store)
    done = run(env, "hooks", "install", "claude-code", *args)
    assert done.returncode == 0, done.stderr
    after = json.loads(settings.read_text("utf-8"))
    assert after["permissions"] == theirs["permissions"]
    assert after["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    assert after["hooks"]["UserPromptSubmit"][0] == theirs["hooks"]["UserPromptSubmit"][0]
    commands = {e: [h["command"] for g in after["hooks"][e] for h in g["hooks"]]
                for e in after["hooks"]}
    for event, door in (("SessionStart", "brief"), ("UserPromptSubmit", "recall"),
                        ("PreCompact", "capture"), ("Stop", "capture"),
                        ("SessionEnd", "capture")):
        ours = [c for c in commands[event] if "--hook claude-code" in c]
        assert len(ours) == 1 and f" {door} --hook claude-code --store " in ours[0]
    assert run(env, "hooks", "install", "claude-code", *args).returncode == 0
    assert json.loads(settings.read_text("utf-8")) == after, "installing twice is once"
    shown = run(env, "hooks", "show", "claude-code", "--project", str(project), "--json")
    listed = json.loads(shown.stdout)["files"][str(settings)]
    assert len(listed) == 5
    removed = run(env, "hooks", "uninstall", "claude-code", *args)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings.read_text("utf-8")) == theirs

    # The command installed is one Claude Code can run: it briefs from the store.
    hook = next(h["command"] for g in after["hooks"]["SessionStart"] for h in g["hooks"])
    ran = subprocess.run(hook, shell=True, input=hook_input("SessionStart", loop["root"]),
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "memhtml brief" in context_of(ran, "SessionStart")


def test_a_settings_file_that_is_not_json_is_left_as_it_is(
        loop: dict[str, Any], tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"hooks": [1, 2', "utf-8")
    for text in ('{"hooks": [1, 2', '{"hooks": []}', '{"hooks": {"Stop": {}}}'):
        settings.write_text(text, "utf-8")
        done = run(loop["env"], "hooks", "install", "claude-code", "--project", str(tmp_path),
                   "--store", str(loop["store"]))
        assert done.returncode == 1 and "left as it is" in done.stdout + done.stderr
        assert settings.read_text("utf-8") == text


def test_capture_refuses_what_is_not_a_transcript_and_redacts_named_members(
        loop: dict[str, Any], tmp_path: Path) -> None:
    env, store = loop["env"], str(loop["store"])
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for source in (fifo, tmp_path):
        done = run(env, "capture", str(source), "--session", "odd", "--store", store)
        assert done.returncode == 1 and "not a regular file" in done.stdout + done.stderr
    weird = run(env, "capture", "--hook", "claude-code", "--store", store, stdin=json.dumps(
        {"session_id": "nul", "transcript_path": "/tmp/a\u0000b"}))
    assert weird.returncode == 1 and "Traceback" not in weird.stderr
    named = tmp_path / "named.jsonl"
    named.write_text(json.dumps({"tool_input": {"password": "hunter2 hunter2", "env": {
        "GITHUB_TOKEN": "plain_long_value"}, "author": "ada"}}) + "\n"
        + '{"c":"\\ud800 half a pair"}\n', "utf-8")
    done = run(env, "capture", str(named), "--session", "named", "--store", store)
    assert done.returncode == 0, done.stderr
    kept = (loop["root"] / "transcripts" / "named.jsonl").read_text("utf-8")
    assert "hunter2" not in kept and "plain_long_value" not in kept and '"ada"' in kept
    assert [json.loads(line) for line in kept.splitlines()][1] == {"c": "\ud800 half a pair"}


def test_install_writes_through_a_link_and_keeps_the_files_permissions(
        loop: dict[str, Any], tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"env": {"SOME_KEY": "x"}}', "utf-8")
    dotfiles.chmod(0o600)
    settings = tmp_path / "project" / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.symlink_to(dotfiles)
    done = run(loop["env"], "hooks", "install", "claude-code", "--project",
               str(tmp_path / "project"), "--store", str(loop["store"]))
    assert done.returncode == 0, done.stderr
    assert settings.is_symlink() and (dotfiles.stat().st_mode & 0o777) == 0o600
    assert json.loads(dotfiles.read_text("utf-8"))["env"] == {"SOME_KEY": "x"}
    assert len(json.loads(dotfiles.read_text("utf-8"))["hooks"]) == 5
