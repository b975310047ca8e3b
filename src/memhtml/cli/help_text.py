"""How ``--help`` shows a docstring: its words as written, its paragraphs reflowed.

The docstrings talk about markup: ``--body`` stores ``<div>`` as text, a ``--body-html``
fragment marks its claim in a ``<mark>``, a paragraph can be a fenced code block,
``sleep run`` cuts ``sleep/<YYYY-MM-DD>``. Read as markdown (cyclopts' default),
those words are markup and vanish from the help; read as plain text they stay, but
the docstring's own line breaks and indentation would be printed as they are in the
source. So the help is plain text, and this formatter joins each paragraph's lines
into one before the panel wraps it to the terminal: the words and their order are
the docstring's, only the whitespace between them changes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from cyclopts.help import HelpEntry, HelpPanel
    from cyclopts.help.formatters import DefaultFormatter
    from rich.console import Console, ConsoleOptions

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
HELP_FORMAT: Final = "plaintext"
"""The help format the app renders with: text as written (see the module's docstring)."""


def reflow(text: str) -> str:
    """Each paragraph (blank lines part them) on one line, its words single-spaced."""
    paragraphs = (" ".join(block.split()) for block in _BLANK_LINE.split(text))
    return "\n\n".join(paragraph for paragraph in paragraphs if paragraph)


def _reflowed(description: Any) -> Any:
    """A description cyclopts built from plain text, reflowed; anything else as it is."""
    from cyclopts.help import InlineText
    from rich.text import Text

    if not isinstance(description, InlineText):
        return description
    primary = description.primary_renderable
    if not isinstance(primary, Text):
        return description
    again = InlineText(Text(reflow(primary.plain)), force_empty_end=description.force_empty_end)
    again.texts = list(description.texts)  # the [default: ...] and [choices: ...] notes
    return again


def _entry(entry: HelpEntry) -> HelpEntry:
    return entry.copy(description=_reflowed(entry.description))


class ReflowingFormatter:
    """cyclopts' default help formatter over reflowed descriptions: the command's own
    and each panel's and option's."""

    def __init__(self) -> None:
        self._inner: DefaultFormatter | None = None

    def _formatter(self) -> DefaultFormatter:
        # Built on first use, so a command that shows no help never imports it.
        if self._inner is None:
            from cyclopts.help.formatters import DefaultFormatter

            self._inner = DefaultFormatter()
        return self._inner

    def __call__(self, console: Console, options: ConsoleOptions, panel: HelpPanel) -> None:
        self._formatter()(console, options, panel.copy(
            description=_reflowed(panel.description),
            entries=[_entry(entry) for entry in panel.entries]))

    def render_usage(self, console: Console, options: ConsoleOptions, usage: Any) -> None:
        self._formatter().render_usage(console, options, usage)

    def render_description(self, console: Console, options: ConsoleOptions,
                           description: Any) -> None:
        self._formatter().render_description(console, options, _reflowed(description))
