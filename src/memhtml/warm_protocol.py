"""What the warm path's client (``memhtml.cli.warm``) and server (``memhtml.mcp.warm``)
must agree on, in one place: the socket's name and which variables must match.
Standard library only, since the client imports it before anything heavy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

SOCKET_NAME: Final = "warm.sock"
"""The socket's name in this clone's state directory (``<git-dir>/memhtml/``)."""
_OTHER_SETTINGS_ENV: Final = ("HOME", "XDG_CONFIG_HOME")


def settings_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that choose settings (``MEMHTML_*`` but the store and the warm
    path's own switch, the user's config home): a warm answer needs the client's to
    be the server's."""
    return {k: v for k, v in env.items()
            if (k.startswith("MEMHTML_") and k not in ("MEMHTML_STORE", "MEMHTML_WARM"))
            or k in _OTHER_SETTINGS_ENV}
