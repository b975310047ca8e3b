"""``python -m memhtml``: the same as the ``memhtml`` command."""

from memhtml.cli.entry import console

console()
