"""The ``memhtml`` command line: one cyclopts App, its commands, and ``main``.

Command modules import only the parser's types at module level; the library
(numpy, pygit2, the head) is imported inside each command, so ``memhtml --help``
and the markdown commands start without it.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cyclopts import App, CycloptsError, Parameter

from memhtml import __version__
from memhtml.cli import agent_cmds, read_cmds, store_cmds
from memhtml.cli.command_line import read_command_line
from memhtml.cli.demo import demo
from memhtml.cli.eval_cmds import eval_app
from memhtml.cli.help_text import HELP_FORMAT, ReflowingFormatter
from memhtml.cli.mcp_cmd import mcp
from memhtml.cli.md_cmds import import_app, md_app
from memhtml.cli.output import EXIT_USAGE, report_usage
from memhtml.cli.serve_cmd import serve
from memhtml.cli.sleep_cmds import sleep_app
from memhtml.cli.sync_cmds import clone, sync
from memhtml.cli.task_cmds import task_app
from memhtml.cli.vector_cmds import embed

if TYPE_CHECKING:
    from rich.console import Group


def _usage_error(error: CycloptsError) -> Group:
    """The parser's usage errors read like every other failure: ``error: ...`` on
    stderr, or the JSON failure (code ``ERR_USAGE``) on stdout under ``--json``, with
    the command's help named. The parser then exits 2; what it prints itself is the
    empty group returned here, which renders as nothing."""
    from rich.console import Group

    report_usage(str(error), tuple(error.command_chain or ()),
                 tuple(error.root_input_tokens or ()))
    return Group()


app = App(
    name="memhtml",
    help="Long-term memory for AI agents, kept in a git repository as one semantic-HTML5 "
         "file per fact. Every write is one commit; every command takes --store and --json, "
         "before or after its name.",
    version=__version__,
    default_parameter=Parameter(negative_iterable=()),
    error_formatter=_usage_error,
    help_format=HELP_FORMAT,
    help_formatter=ReflowingFormatter(),
)

_COMMANDS: tuple[Callable[..., int], ...] = (
    store_cmds.init, store_cmds.write, store_cmds.correct, store_cmds.archive,
    store_cmds.link, store_cmds.unlink, store_cmds.label, store_cmds.unlabel, store_cmds.move,
    store_cmds.restore,
    read_cmds.read, read_cmds.search, read_cmds.related, read_cmds.status, read_cmds.doctor,
    read_cmds.log, agent_cmds.brief, agent_cmds.recall, agent_cmds.capture,
)
for _command in _COMMANDS:
    app.command(_command)
app.command(read_cmds.list_folder, name="list")
app.command(task_app)
app.command(store_cmds.publish)
app.command(sync)
app.command(clone)
app.command(md_app)
app.command(import_app)
app.command("memhtml.cli.export_cmds:export_app", name="export", help="Write memories out.")
app.command(embed)
app.command(eval_app)
app.command(sleep_app)
app.command(demo)
app.command(mcp)
app.command(serve)
app.command(agent_cmds.hooks_app)
import_app.command(agent_cmds.import_mcp_memory, name="mcp-memory")
import_app.command(agent_cmds.import_chatgpt, name="chatgpt")
import_app.command(agent_cmds.import_claude, name="claude")


def run(tokens: Sequence[str]) -> object:
    """One command line, as typed: global options (``--store``, ``--json``) may come
    before the command as well as after it (see ``command_line``). The command's
    return value; a usage error exits 2, as the parser's own do."""
    line = read_command_line(app, tokens)
    if line.lacks_command:
        given = " ".join(line.moved)
        report_usage(f"A command is needed with {given}: "
                     f"`{' '.join(('memhtml', *line.path))} COMMAND {given}`.", line.path, tokens)
        raise SystemExit(EXIT_USAGE)
    return app(line.tokens(), result_action="return_value")


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: run one command and exit with its code: 0 done, 1 refused
    or failed, 2 a usage error (the parser exits 2 itself; a command's own usage
    check returns it)."""
    # numpy's BLAS starts a thread per core on import, which costs a cold command
    # about 70 ms on these machines; a command's matrix work is a single small
    # product, so one thread loses nothing. A caller's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # A command is one short process that builds a large, long-lived version and
    # drops it at exit: the cyclic collector's passes over it (while loading, and a
    # full one at exit) cost about 60 ms of a cold command and free nothing.
    # Only here, in the console entry point: a library caller keeps its collector.
    gc.disable()
    tokens = list(sys.argv[1:] if argv is None else argv)
    code = run(tokens)
    gc.freeze()
    sys.exit(code if isinstance(code, int) else 0)


def console() -> None:
    """The installed ``memhtml`` command: ``main``, then end the process at once.

    Everything a command writes is committed, renamed into place or flushed before its
    body returns; what is left at that point is freeing the loaded version (held by
    ``hold_until_exit``) and tearing the interpreter down, which cost a cold command
    at 100,000 memories about half a second and change nothing on disk. So the
    command's output is flushed and the process exits with ``os._exit``, as
    ``sys.exit`` would have (``None`` 0, an int itself, anything else printed and 1).
    Output that cannot be written (a closed pipe, a full device) is one line on stderr
    and exit code 1; any other crash ends the usual way, with its traceback.
    """
    from memhtml.cli.common import hold_until_exit

    hold_until_exit()
    try:
        main()
        code = 0
    except SystemExit as done:
        code = _exit_status(done.code)
    except OSError as error:
        if not _is_output_error(error):
            raise
        code = _output_failed(error)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError) as error:  # a closed pipe (| head), a full device
            code = code or _output_failed(error)
    os._exit(code)


def _is_output_error(error: OSError) -> bool:
    """Whether ``error`` is the command's output meeting a reader that went away or a
    device with no room: not a failure of the command's work, which was done."""
    return isinstance(error, BrokenPipeError) or error.errno in (errno.EPIPE, errno.ENOSPC)


def _output_failed(error: BaseException) -> int:
    """One line on stderr (if it can take it) instead of a traceback; exit code 1."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"memhtml: the output could not be written: {error}\n")
        sys.stderr.flush()
    return 1


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    console()
