"""``memhtml mcp``: serve the store to an MCP client over stdio."""

from __future__ import annotations

from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import Reply, UsageError, respond

_COMMON = Common()


def mcp(*, branch: str | None = None, common: Common = _COMMON) -> int:
    """Serve the store as an MCP server on stdin/stdout, for an agent's MCP client.
    --json only changes how a start-up failure is reported. With the local setting
    sync_remote (MEMHTML_SYNC_REMOTE=origin, or the user's config), the server pulls
    when its last pull is older than sync_seconds (default 30) and pushes each write
    that long after it, batched; a failed sync is told in the reply and retried.

    Parameters
    ----------
    branch
        The branch to read and write (default: the one this clone recorded, git config
        memhtml.branch). Never a sleep run's.
    """

    def body() -> Reply:
        from returns.pipeline import is_successful

        from memhtml.compose import sync_policy
        from memhtml.mcp.server import serve

        services = open_cli_services(common, overrides={"branch": branch} if branch else None)
        policy = sync_policy(services.settings)
        if not is_successful(policy):
            raise UsageError(policy.failure().reason)
        serve(services, answer_hooks=branch is None)
        return Reply({"ok": True, "served": str(services.settings.store)}, "")

    return respond(common.json, body)
