"""The installed ``memhtml`` command: a running server's answer when one can give it,
else the whole command line.

Kept to the standard library until it knows the cold command must run, so a hook's
``memhtml recall`` that a server answers (``memhtml.cli.warm``) never pays for
importing the CLI, git or numpy.
"""

from __future__ import annotations

import os
import sys


def console() -> None:
    """``memhtml``: the warm answer if there is one, else ``memhtml.cli.app.console``."""
    from memhtml.cli.warm import answer

    code = answer(sys.argv[1:])
    if code is not None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            code = 1
        os._exit(code)
    from memhtml.cli.app import console as cold

    cold()
