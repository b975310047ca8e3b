"""``memhtml mcp``: serve the store to an MCP client over stdio."""

from __future__ import annotations

import importlib

from memhtml.cli.common import Common, settings_for
from memhtml.cli.output import CliError, Reply, respond

_COMMON = Common()
SERVER_MODULE = "memhtml.mcp.server"


def mcp(*, common: Common = _COMMON) -> int:
    """Serve the store as an MCP server on stdin/stdout, for an agent's MCP client.
    --json only changes how a start-up failure is reported."""

    def body() -> Reply:
        settings = settings_for(common)
        try:
            server = importlib.import_module(SERVER_MODULE)
        except ModuleNotFoundError as exc:
            # Only a missing server module or MCP SDK is an install problem; any other
            # missing import is a bug in the server and should surface as one.
            missing = exc.name or ""
            if missing != SERVER_MODULE and missing.split(".")[0] != "mcp":
                raise
            raise CliError(f"the MCP server is not available in this install ({exc}); "
                             "install a release that ships memhtml.mcp.server") from exc
        serve = getattr(server, "serve", None)
        if not callable(serve):
            raise CliError(f"{SERVER_MODULE} has no serve(settings) function")
        serve(settings)
        return Reply({"ok": True, "served": str(settings.store)}, "")

    return respond(common.json, body)
