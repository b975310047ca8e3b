"""``memhtml serve``: the store in a browser, on this machine only."""

from __future__ import annotations

import secrets
import socket
import sys

from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import CliError, Reply, respond

_COMMON = Common()


ADDRESS_TRIES = 3


def _own_address() -> str:
    """A random loopback address, 127.x.y.z with no part 0 or 255 (Debian names the
    machine 127.0.1.1, and 127.0.0.1 is every other local server's)."""
    return "127." + ".".join(str(1 + secrets.randbelow(254)) for _ in range(3))


def _bound(port: int) -> socket.socket:
    """A listening socket on a loopback address of the server's own at ``port`` (0:
    any free port), bound before the start URL is printed, so the URL names the
    address and port the server has. Where the system does not route all of
    127.0.0.0/8 to loopback (macOS configures 127.0.0.1 alone), 127.0.0.1."""
    for address in [*(_own_address() for _ in range(ADDRESS_TRIES)), "127.0.0.1"]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((address, port))
        except OSError as exc:
            sock.close()
            if address == "127.0.0.1":
                raise CliError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; "
                               "pass another --port (0 picks a free one)",
                               code="ERR_REFUSED") from exc
            continue
        sock.listen(64)
        return sock
    raise AssertionError("unreachable")  # pragma: no cover


def serve(*, port: int = 8421, branch: str | None = None, common: Common = _COMMON) -> int:
    """Serve the store as a web app on a loopback address, until interrupted: browse
    folders,
    read memories with their links and history, search as you type, tasks and recent
    activity. Open the address it prints: it carries a token this run made, and only
    a browser that opened it may use the app. Changes go through the same tools an
    agent calls over MCP, each one commit.

    Parameters
    ----------
    port
        The port (0: any free one), on a loopback address of the server's own
        (127.x.y.z), so no other local server is sent its cookie.
    branch
        The branch to read and write (default: the one this clone recorded).
    """

    def body() -> Reply:
        import uvicorn

        from memhtml.mcp.http import StoppedBySignal
        from memhtml.mcp.warm import WarmAnswers
        from memhtml.web.app import build_app
        from memhtml.web.guard import new_token

        if not 0 <= port <= 65535:
            raise CliError(f"--port {port} is not a port (0-65535)", code="ERR_REFUSED")
        services = open_cli_services(common, overrides={"branch": branch} if branch else None)
        sock = _bound(port)
        address, bound = sock.getsockname()[:2]
        app = build_app(services, bound, new_token(), address)
        print(f"memhtml serve: {services.settings.store} ({services.settings.branch})\n"
              f"open {app.guard.start_url()}", file=sys.stderr, flush=True)
        config = uvicorn.Config(app.asgi, log_level="warning", access_log=False,
                                lifespan="off", server_header=False)
        # Stopped by SIGTERM or Ctrl-C without the signal raised again afterwards, so
        # the gate's close below runs and a write waiting to be pushed is pushed.
        server = StoppedBySignal(config)
        # A hook's recall and brief are answered from this process's head (not on
        # another branch than the clone's): memhtml.mcp.warm.
        answers = WarmAnswers(services, app.gate)
        if branch is None:
            answers.start()
        try:
            server.run(sockets=[sock])
        finally:
            answers.close()
            app.gate.close()
            sock.close()
        return Reply({"ok": True, "served": str(services.settings.store)}, "")

    return respond(common.json, body)
