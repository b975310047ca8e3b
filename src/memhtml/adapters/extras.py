"""Optional dependencies: which are missing, and the one line that says how to add them.

The local embedder's packages come with an extra (``memhtml[local]``), not with
memhtml itself, so a machine without them must get the pip command, never an
import traceback, whichever door asked for a vector.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence

LOCAL_EXTRA_INSTALL = "pip install 'memhtml[local]'"
"""The command that installs what the local embedder imports."""
LOCAL_RUNTIME_MODULES = ("onnxruntime", "tokenizers")
"""What running the shipped model imports (the model file itself is package data)."""


def absent_modules(names: Sequence[str],
                   find: Callable[[str], object | None] = importlib.util.find_spec
                   ) -> tuple[str, ...]:
    """The modules of ``names`` this interpreter cannot import, found without
    importing them (torch alone takes seconds). A name blocked in ``sys.modules``
    or a finder that refuses it counts as absent."""
    def absent(name: str) -> bool:
        try:
            return find(name) is None
        except (ImportError, ValueError):
            return True

    return tuple(name for name in names if absent(name))


def local_extra_missing(missing: Sequence[str]) -> str:
    """The one line that tells a person what to install, and why."""
    return (f"the local embedder needs the 'local' extra ({', '.join(missing)} not "
            f"installed): {LOCAL_EXTRA_INSTALL}")
