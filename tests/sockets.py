"""A Unix socket file at any path, for tests that plant one where a file is expected."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path


def socket_at(path: Path) -> None:
    """A socket file (nothing listening) at ``path``, however long the path.

    A socket's path has a length limit (about 107 bytes) a test's temporary folder can
    pass, so it is bound at a short name and renamed into place; the short name is on
    the file system ``path`` is on, since a rename cannot cross file systems (the
    suite's folders may be in memory, ``tests/conftest.py``)."""
    short = Path(tempfile.mkdtemp(prefix="s", dir=_short_root(path.parent)))
    try:
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(short / "s"))
            os.rename(short / "s", path)
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _short_root(where: Path) -> Path:
    """The system's temporary folder when it is on ``where``'s file system, else the
    top of that file system (``/dev/shm``)."""
    device = where.stat().st_dev
    temporary = Path(tempfile.gettempdir())
    if temporary.stat().st_dev == device:
        return temporary
    top = where.resolve()
    while top.parent != top and top.parent.stat().st_dev == device:
        top = top.parent
    return top
