"""Global options before the command: ``memhtml --store DIR status`` is
``memhtml status --store DIR``.

Every command takes the options of ``Common`` (``--store``, ``--json``), and the
parser reads a command's options after its name, where the command declares them.
People write global options first as often as last (``git -C DIR status``), so before
parsing, the ones found ahead of the command (or between a group and its
subcommand, ``sleep --json run``) are moved to just after the command's name.

Only that leading stretch is read: it is global options and command names, and the
first token that is neither ends it (as ``--`` does). What follows is the command's
own, left where it is, so a value or a positional word that reads ``--json`` is never
taken for the option. Global options written after the command were already where
the parser reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, get_type_hints

from memhtml.cli.common import Common

if TYPE_CHECKING:
    from cyclopts import App


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _global_options() -> tuple[frozenset[str], frozenset[str]]:
    """The names of ``Common``'s options: those that take a value (``--store DIR``)
    and the flags (``--json``, and its ``--no-json``), as the parser names them."""
    hints = get_type_hints(Common)
    valued, flags = set(), set()
    for field in fields(Common):
        if hints[field.name] is bool:
            flags |= {_option(field.name), _option(f"no_{field.name}")}
        else:
            valued.add(_option(field.name))
    return frozenset(valued), frozenset(flags)


VALUED, FLAGS = _global_options()


def _width(tokens: Sequence[str], at: int) -> int:
    """How many tokens the global option at ``at`` spans (0: it is not one).
    ``--store=DIR`` is one token, ``--store DIR`` two; a ``--store`` with nothing after
    it is one, and the parser says it needs a value."""
    name = tokens[at].partition("=")[0]
    if name in VALUED:
        return 1 if "=" in tokens[at] else min(2, len(tokens) - at)
    return 1 if name in FLAGS else 0


@dataclass(frozen=True)
class CommandLine:
    """A command line read up to the end of its command path."""

    path: tuple[str, ...]
    """The command names, in order (``sleep``, ``run``)."""
    moved: tuple[str, ...]
    """The global options (with their values) found among them or before them."""
    rest: tuple[str, ...]
    """Everything from the first token that is neither: the command's own tokens."""
    runnable: bool
    """Whether the path ends at a command (not at the root or a group)."""

    @property
    def lacks_command(self) -> bool:
        """Global options and no command to take them: ``memhtml --json``, ``memhtml
        sleep --store DIR``."""
        return bool(self.moved) and not self.runnable and not self.rest

    def tokens(self) -> list[str]:
        """The tokens for the parser: global options right after the command's name.
        When the path ends at the root or a group, they go last instead, so what the
        parser names is the token that is not a command (``memhtml --json bogus``
        says ``bogus``) and ``--help`` still shows that group's help."""
        if self.runnable:
            return [*self.path, *self.moved, *self.rest]
        return [*self.path, *self.rest, *self.moved]


def read_command_line(root: App, tokens: Sequence[str]) -> CommandLine:
    """Split ``tokens`` into the command path, the global options met on the way, and
    the rest, walking ``root``'s command tree."""
    node = root
    path: list[str] = []
    moved: list[str] = []
    at = 0
    while at < len(tokens):
        width = _width(tokens, at)
        if width:
            moved += tokens[at:at + width]
            at += width
            continue
        token = tokens[at]
        if token.startswith("-") or token not in node:
            break
        node = node[token]
        path.append(token)
        at += 1
    return CommandLine(tuple(path), tuple(moved), tuple(tokens[at:]),
                       node.default_command is not None)
