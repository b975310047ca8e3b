"""``python -m memhtml``: the same as the ``memhtml`` command."""

from memhtml.cli.app import console

console()
