"""``memhtml brief``, ``recall`` and ``capture``: memory in an agent's loop without the
agent having to remember to call it.

Each prints plain text (or ``--json``) for any agent or script. With ``--hook
claude-code`` each reads Claude Code's hook input (JSON on stdin) and answers in its
hook output: ``brief`` and ``recall`` as ``hookSpecificOutput.additionalContext``
(nothing at all when recall finds nothing relevant), ``capture`` silently. A hook
never exits 2, which Claude Code reads as "block this prompt": a failure is one line
on stderr and exit 1, so a store that cannot be read costs the person a notice, not
their prompt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from cyclopts import App, Parameter

from memhtml.cli.common import Common, no_scope, open_common
from memhtml.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    Reply,
    UsageError,
    print_err,
    print_out,
    respond,
    store_value,
    unwrap_io,
)

_COMMON = Common()
Hook = Literal["claude-code"]
HOOK_INPUT_MAX: Final = 4 * 1024 * 1024
"""The most hook input read from stdin (a prompt, ids and paths)."""


def _hook_input() -> dict[str, Any]:
    if sys.stdin is None:
        raise CliError("there is no stdin to read the hook input from")
    data = sys.stdin.buffer.read(HOOK_INPUT_MAX + 1)
    if len(data) > HOOK_INPUT_MAX:
        raise CliError(f"the hook input is larger than {HOOK_INPUT_MAX} bytes")
    try:
        found = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CliError(f"the hook input is not JSON: {exc}") from None
    if not isinstance(found, dict):
        raise CliError("the hook input is not a JSON object")
    return found


ANSWERS: Final = {"SessionStart": frozenset({"SessionStart"}),
                  "UserPromptSubmit": frozenset({"UserPromptSubmit", "BeforeAgent"})}
"""The events whose name a hook's output may echo, by the event the door answers:
Gemini CLI's BeforeAgent reads the same output as Claude Code's UserPromptSubmit."""


def _as_hook(event: str, body: Callable[[dict[str, Any]], str | None]) -> int:
    """Run a hook body: its context as Claude Code's hook output (none: print
    nothing), any failure one line on stderr and exit 1, never 2."""
    try:
        given = _hook_input()
        context = body(given)
    except CliError as failure:
        print_err(f"memhtml {event} hook: {failure}")
        return EXIT_FAILED
    named = given.get("hook_event_name")
    if context:
        # The event the input names (Gemini CLI's BeforeAgent reads the same output
        # shape as Claude Code's UserPromptSubmit), else the one this door answers.
        print_out(json.dumps({"hookSpecificOutput": {
            "hookEventName": (named if isinstance(named, str)
                              and named in ANSWERS.get(event, ()) else event),
            "additionalContext": context}}, ensure_ascii=False))
    return EXIT_OK


def _warn(skipped: Any) -> None:
    """A scope that could not answer, on stderr (a hook's stdout is its answer)."""
    for skip in skipped:
        print_err(f"warning: {skip.note}")


def brief(*, budget: int = 1_500, items: int = 10,
          hook: Annotated[Hook | None, Parameter(name="--hook")] = None,
          common: Common = _COMMON) -> int:
    """A briefing for a new session: open tasks (overdue first), the memories changed
    last and read most, the top folders, each memory with its path, within a token
    budget (tokens counted as words and marks: memhtml.agent.tokens). With scopes
    configured, each scope briefs in an equal share of the budget, its lines naming it.

    Parameters
    ----------
    budget
        The most tokens the briefing takes.
    items
        The most lines of each part.
    hook
        Read Claude Code's SessionStart hook input on stdin and answer in its output.
    """
    from memhtml.cli.common import open_spanning
    from memhtml.compose.scoped import brief_scopes

    def made() -> Any:
        if budget < 1 or items < 1:
            raise UsageError("--budget and --items are at least 1")
        scopes, broken = open_spanning(common)
        spanned = store_value(brief_scopes(scopes, budget=budget, items=items,
                                           broken=broken))
        _warn(spanned.skipped)
        return spanned.brief

    if hook is not None:
        return _as_hook("SessionStart", lambda _input: made().text)

    def body() -> Reply:
        found = made()
        return Reply(found, found.text)

    return respond(common.json, body)


def recall(*prompt: str, limit: int = 5, budget: int = 800,
           hook: Annotated[Hook | None, Parameter(name="--hook")] = None,
           common: Common = _COMMON) -> int:
    """The few memories a prompt has evidence for (its rare terms, or most of it, in
    the memory), with their paths; nothing when none has. The prompt is the words
    given, else stdin. With scopes configured, each scope is recalled on its own and
    the memories merged by rank, each naming its scope.

    Parameters
    ----------
    prompt
        The prompt (default: read from stdin).
    limit
        The most memories.
    budget
        The most tokens the answer takes.
    hook
        Read Claude Code's UserPromptSubmit hook input on stdin (its prompt) and
        answer in its output; nothing when nothing is relevant.
    """
    from memhtml.cli.common import open_spanning
    from memhtml.compose.scoped import recall_scopes

    def made(text: str) -> Any:
        if budget < 1 or limit < 1:
            raise UsageError("--budget and --limit are at least 1")
        scopes, broken = open_spanning(common)
        spanned = store_value(recall_scopes(scopes, text, limit=limit, budget=budget,
                                            broken=broken))
        _warn(spanned.skipped)
        return spanned.recall

    if hook is not None:
        def answer(given: dict[str, Any]) -> str | None:
            text = given.get("prompt")
            if not isinstance(text, str):
                raise CliError("the hook input has no prompt")
            return str(made(text).text) or None

        return _as_hook("UserPromptSubmit", answer)

    def body() -> Reply:
        if not prompt and sys.stdin is None:
            raise UsageError("give a prompt: memhtml recall WORDS..., or on stdin")
        text = " ".join(prompt) if prompt else sys.stdin.read(HOOK_INPUT_MAX)
        if not text.strip():
            raise UsageError("give a prompt: memhtml recall WORDS..., or on stdin")
        found = made(text)
        return Reply(found, found.text or "(nothing relevant)")

    return respond(common.json, body)


def capture(transcript: Path | None = None, /, *, session: str | None = None,
            end: bool = False,
            hook: Annotated[Hook | None, Parameter(name="--hook")] = None,
            common: Common = _COMMON) -> int:
    """Copy a session's transcript (JSON lines) into transcripts_dir for the nightly
    run, secrets redacted (keys, tokens, passwords: memhtml.agent.redact lists the
    rules). The same session captured again is the same file.

    Parameters
    ----------
    transcript
        The transcript file (with --hook: the hook input's transcript_path).
    session
        The session id (default: the file's name without .jsonl).
    end
        Mark the session over, so the night need not wait for the file to settle.
    hook
        Read Claude Code's Stop, PreCompact or SessionEnd hook input on stdin; at
        SessionEnd the session is marked over.
    """
    from memhtml.cli.common import open_cli_services
    from memhtml.compose.agent import capture_session

    def made(source: Path, name: str, ended: bool) -> Any:
        services = open_cli_services(common)
        return unwrap_io(capture_session(services, source, name, end=ended))

    if hook is not None:
        def captured(given: dict[str, Any]) -> None:
            path, name = given.get("transcript_path"), given.get("session_id")
            if not isinstance(path, str) or not isinstance(name, str):
                raise CliError("the hook input has no transcript_path or session_id")
            try:
                source = Path(path).expanduser()
            except RuntimeError as exc:  # ~user with no such user
                raise CliError(f"transcript_path {path!r}: {exc}") from None
            made(source, name, end or given.get("hook_event_name") == "SessionEnd")

        return _as_hook("capture", captured)

    def body() -> Reply:
        if transcript is None:
            raise UsageError("name the transcript: memhtml capture FILE [--session ID]")
        name = session or transcript.name.removesuffix(".jsonl")
        done = made(transcript, name, end)
        said = ("captured" if done.written else "already captured, unchanged")
        return Reply(done, f"{said}: {done.session} -> {done.path} ({done.lines} lines, "
                           f"{done.redacted} secret(s) redacted)")

    return respond(common.json, body)




hooks_app = App(name="hooks", help="Put memhtml in a coding agent's loop: brief at session "
                                   "start, recall on each prompt, capture the session.")
Agent = Literal["claude-code"]


def _settings_file(project: Path | None, user: bool) -> Path:
    """Claude Code's settings file memhtml edits: the user's ``~/.claude/settings.json``,
    or a project's ``.claude/settings.local.json`` (the project file that is not
    committed: a store's absolute path is this machine's, not the team's)."""
    if user and project is not None:
        raise UsageError("give --user or --project DIR, not both")
    if user:
        return Path.home() / ".claude" / "settings.json"
    return (project or Path.cwd()) / ".claude" / "settings.local.json"


def _read_settings(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"{path}: cannot read it: {exc}") from None
    try:
        found = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{path} is not JSON ({exc}); left as it is") from None
    if not isinstance(found, dict):
        raise CliError(f"{path} is not a JSON object; left as it is")
    return found


def _write_settings(path: Path, settings: dict[str, Any]) -> None:
    """The whole file at once: a temporary file beside it, then renamed over it. A
    settings file that is a link (a dotfiles checkout) is written where it points, and
    the file keeps its permissions (it may hold keys under ``env``); a new one is
    readable by its owner alone."""
    import os
    import stat

    try:
        target = path.resolve() if path.is_symlink() else path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o600
        scratch = target.with_name(f".{target.name}.{os.getpid()}.memhtml")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
        os.chmod(scratch, mode)
        os.replace(scratch, target)
    except OSError as exc:
        raise CliError(f"{path}: cannot write it: {exc}") from None


@hooks_app.command(name="install")
def hooks_install(agent: Agent, /, *, project: Path | None = None, user: bool = False,
                  common: Common = _COMMON) -> int:
    """Add memhtml's hooks to Claude Code's settings (SessionStart: brief;
    UserPromptSubmit: recall; PreCompact, Stop, SessionEnd: capture), each naming this
    store by its absolute path. Every other setting and hook is kept; installing again
    replaces memhtml's own entries, never adds a second set.

    Parameters
    ----------
    agent
        The coding agent (claude-code).
    project
        The project whose .claude/settings.local.json to edit (default: the current
        directory).
    user
        Edit ~/.claude/settings.json instead: every project.
    """
    from memhtml.agent.hooks import SettingsShapeError, install
    from memhtml.cli.common import store_root

    def body() -> Reply:
        no_scope(common)
        path = _settings_file(project, user)
        store = str(store_root(common).resolve())
        executable = _executable()
        try:
            change = install(_read_settings(path), executable, store)
        except SettingsShapeError as exc:
            raise CliError(f"{path}: {exc}; left as it is") from None
        _write_settings(path, change.settings)
        notes = _transcripts_note(common)
        return Reply({"ok": True, "agent": agent, "settings": str(path), "store": store,
                      "events": list(change.added), "replaced": change.removed},
                     f"installed memhtml's {agent} hooks in {path} for {store}: "
                     + ", ".join(change.added)
                     + (f" (replacing {change.removed} earlier entries)" if change.removed
                        else ""), notes=notes)

    return respond(common.json, body)


@hooks_app.command(name="uninstall")
def hooks_uninstall(agent: Agent, /, *, project: Path | None = None, user: bool = False,
                    common: Common = _COMMON) -> int:
    """Take memhtml's hook entries out of Claude Code's settings, and nothing else.

    Parameters
    ----------
    agent
        The coding agent (claude-code).
    project
        The project whose .claude/settings.local.json to edit (default: the current
        directory).
    user
        Edit ~/.claude/settings.json instead.
    """
    from memhtml.agent.hooks import SettingsShapeError, uninstall

    def body() -> Reply:
        no_scope(common)
        path = _settings_file(project, user)
        try:
            change = uninstall(_read_settings(path))
        except SettingsShapeError as exc:
            raise CliError(f"{path}: {exc}; left as it is") from None
        if change.removed:
            _write_settings(path, change.settings)
        return Reply({"ok": True, "agent": agent, "settings": str(path),
                      "removed": change.removed},
                     f"removed {change.removed} memhtml hook entries from {path}"
                     if change.removed else f"no memhtml hooks in {path}; left as it is")

    return respond(common.json, body)


@hooks_app.command(name="show")
def hooks_show(agent: Agent, /, *, project: Path | None = None,
               common: Common = _COMMON) -> int:
    """The memhtml hook entries installed for Claude Code: the user's settings and the
    project's (local and committed).

    Parameters
    ----------
    agent
        The coding agent (claude-code).
    project
        The project to look in (default: the current directory).
    """
    from memhtml.agent.hooks import installed

    def body() -> Reply:
        no_scope(common)
        where = project or Path.cwd()
        files = [Path.home() / ".claude" / "settings.json",
                 where / ".claude" / "settings.json", where / ".claude" / "settings.local.json"]
        found = {str(path): installed(_read_settings(path)) for path in files}
        lines = []
        for path, entries in found.items():
            lines.append(f"{path}: " + ("none" if not entries else ""))
            lines += [f"  {event}: {command}" for event, command in entries]
        return Reply({"ok": True, "agent": agent,
                      "files": {p: [{"event": e, "command": c} for e, c in entries]
                                for p, entries in found.items()}}, "\n".join(lines))

    return respond(common.json, body)


def _executable() -> tuple[str, ...]:
    """The memhtml command to put in a hook, as words: this process's own console
    script when it runs as one, else this interpreter with ``-m memhtml`` (the same
    installation either way, whatever PATH the agent runs hooks with)."""
    script = Path(sys.argv[0])
    if script.name == "memhtml" and script.exists():
        return (str(script.resolve()),)
    return (sys.executable, "-m", "memhtml")


def _transcripts_note(common: Common) -> tuple[str, ...]:
    from memhtml.cli.common import settings_for

    if settings_for(common).transcripts_dir:
        return ()
    return ("note: transcripts_dir is not set, so capture will refuse until it is: add "
            'transcripts_dir = "~/.local/share/memhtml/transcripts" to '
            "~/.config/memhtml/config.toml",)




def import_mcp_memory(graph: Path, /, *, common: Common = _COMMON) -> int:
    """Bring in the official MCP memory server's knowledge graph (its memory.jsonl):
    each entity a memory in resources/mcp-memory/ (its observations the claim and
    body, labelled <entityType>:<name>), each relation an edge (its type when the
    format has it, else relates_to, its words kept in the body), all in one commit or
    none. A line that is not the server's shape refuses the whole file, each problem
    named. Run again, entities already imported are left as they are.

    Parameters
    ----------
    graph
        The graph file (JSON lines of entities and relations).
    """
    from memhtml.compose.agent import import_mcp_memory as run_import

    def body() -> Reply:
        _services, store = open_common(common)
        done = unwrap_io(run_import(store, graph))
        text = (f"imported {len(done.written)} entities and {done.links} relations from "
                f"{graph}" + (f" at {done.commit[:10]}" if done.commit else " (nothing new)")
                + (f"; {len(done.kept)} already there, left as they are" if done.kept else "")
                + (f"; {done.relations_as_text} relation(s) to entities the file does not "
                   "hold kept as body lines" if done.relations_as_text else ""))
        return Reply(done, text)

    return respond(common.json, body)




def _import_chats(kind: str, export: Path, common: Common) -> int:
    from memhtml.cli.common import open_cli_services
    from memhtml.compose.agent import import_chats

    def body() -> Reply:
        services = open_cli_services(common)
        store = services.store()
        done = unwrap_io(import_chats(services, store, export, kind))
        text = (f"imported {len(done.memories)} {kind} conversation(s) from {export}"
                + (f" at {done.commit[:10]}" if done.commit else " (nothing new)")
                + f"; {done.sessions} transcript(s) written for the nightly run"
                + (f"; {done.kept} already there" if done.kept else "")
                + (f"; {done.empty} with no text left out" if done.empty else "")
                + (f"; {done.duplicates} duplicate id(s) taken once" if done.duplicates
                   else "")
                + (f"; {done.cut} turn(s) cut at 100,000 characters" if done.cut else ""))
        return Reply(done, text)

    return respond(common.json, body)


def import_chatgpt(export: Path, /, *, common: Common = _COMMON) -> int:
    """Bring in a ChatGPT data export (the zip, or its conversations.json): one episodic
    memory per conversation in resources/chats/chatgpt/ (its title, the day it began,
    its first message) in one commit, and each conversation's transcript (the branch
    last shown) in transcripts_dir for the nightly run to distil. Refused whole when
    the file is not that shape; run again, what is there is left.

    Parameters
    ----------
    export
        The export zip or conversations.json.
    """
    return _import_chats("chatgpt", export, common)


def import_claude(export: Path, /, *, common: Common = _COMMON) -> int:
    """Bring in a Claude data export (the zip, or its conversations.json): one episodic
    memory per conversation in resources/chats/claude/ and each transcript in
    transcripts_dir, as import chatgpt does.

    Parameters
    ----------
    export
        The export zip or conversations.json.
    """
    return _import_chats("claude", export, common)


__all__ = ["brief", "capture", "hooks_app", "import_chatgpt", "import_claude",
           "import_mcp_memory", "recall"]
