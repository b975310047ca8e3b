"""``memhtml mcp``: serve the store to an MCP client over stdio."""

from __future__ import annotations

from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import Reply, respond

_COMMON = Common()


def mcp(*, branch: str | None = None, common: Common = _COMMON) -> int:
    """Serve the store as an MCP server on stdin/stdout, for an agent's MCP client.
    --json only changes how a start-up failure is reported.

    Parameters
    ----------
    branch
        The branch to read and write (default: the store's configured branch).
    """

    def body() -> Reply:
        from memhtml.mcp.server import serve

        services = open_cli_services(common, overrides={"branch": branch} if branch else None)
        serve(services)
        return Reply({"ok": True, "served": str(services.settings.store)}, "")

    return respond(common.json, body)
