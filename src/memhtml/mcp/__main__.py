"""``python -m memhtml.mcp [--store DIR] [--branch NAME]``: the same as ``memhtml mcp``.

One parser serves both spellings: this module hands its arguments to the CLI's
``mcp`` command, so the store is found, configured and wired exactly as there.
"""

from __future__ import annotations

import sys

from memhtml.cli.app import main

if __name__ == "__main__":
    main(["mcp", *sys.argv[1:]])
