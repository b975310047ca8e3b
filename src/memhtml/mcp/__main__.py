"""``python -m memhtml.mcp [--store DIR] [--branch NAME]``: the server on its own.

The store is found the way the CLI finds it: the flag, else ``MEMHTML_STORE``, else
the git repository around the working directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from returns.result import Failure, Success

from memhtml.compose import discover_store, load_settings
from memhtml.mcp.server import serve


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m memhtml.mcp",
        description="Serve a memhtml store to an MCP client over stdio.")
    parser.add_argument("--store", help="the store directory (default: MEMHTML_STORE, "
                                        "else the git repository around the cwd)")
    parser.add_argument("--branch", help="the branch to read and write (default: main)")
    args = parser.parse_args(argv)
    root = discover_store(args.store, os.environ, Path.cwd())
    if root is None:
        raise SystemExit("memhtml mcp: no store found; pass --store or set MEMHTML_STORE")
    overrides = {"branch": args.branch} if args.branch else {}
    match load_settings(root, overrides=overrides):
        case Success(settings):
            serve(settings)
        case Failure(error):
            raise SystemExit(f"memhtml mcp: {error.reason}")
        case _:
            raise AssertionError("unreachable")


if __name__ == "__main__":
    main(sys.argv[1:])
