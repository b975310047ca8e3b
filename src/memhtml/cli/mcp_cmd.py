"""``memhtml mcp``: serve the store to an MCP client over stdio, or to several over HTTP."""

from __future__ import annotations

import os
import socket
import sys
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import CliError, Reply, UsageError, respond

if TYPE_CHECKING:
    from memhtml.compose import Services
    from memhtml.mcp.endpoint import Endpoint

_COMMON = Common()


def mcp(*, branch: str | None = None, http: str | None = None, allow_remote: bool = False,
        common: Common = _COMMON) -> int:
    """Serve the store as an MCP server on stdin/stdout, for an agent's MCP client, or
    with --http over streamable HTTP, one server for several agents at once.
    --json only changes how a start-up failure is reported. With the local setting
    sync_remote (MEMHTML_SYNC_REMOTE=origin, or the user's config), the server pulls
    when its last pull is older than sync_seconds (default 30) and pushes each write
    that long after it, batched; a failed sync is told in the reply and retried.

    Over HTTP every request must carry Authorization: Bearer TOKEN. The token is
    MEMHTML_MCP_TOKEN when that is set (32 characters or more), else one made at start
    and written to a file only you can read, under the git directory
    (memhtml/mcp-http-PORT.token); the start line names which. The endpoint is
    http://ADDRESS:PORT/mcp. SIGTERM or Ctrl-C stops it cleanly.

    Parameters
    ----------
    branch
        The branch to read and write (default: the one this clone recorded, git config
        memhtml.branch). Never a sleep run's.
    http
        Serve over HTTP at ADDRESS:PORT (127.0.0.1:8765; [::1]:8765; a bare PORT means
        127.0.0.1; port 0 picks a free one) instead of stdio.
    allow_remote
        With --http, allow an address that is not loopback. The token and every memory
        then cross the network in clear text: put a TLS proxy in front instead where
        you can.
    """

    def body() -> Reply:
        from returns.pipeline import is_successful

        from memhtml.compose import sync_policy

        if allow_remote and http is None:
            raise UsageError("--allow-remote goes with --http ADDRESS:PORT")
        endpoint = None if http is None else _endpoint(http, allow_remote)
        token = None if http is None else _fixed_token()
        services = open_cli_services(common, overrides={"branch": branch} if branch else None)
        policy = sync_policy(services.settings)
        if not is_successful(policy):
            raise UsageError(policy.failure().reason)
        if endpoint is None:
            from memhtml.mcp.server import serve

            serve(services, answer_hooks=branch is None)
        else:
            _serve_http(services, endpoint, token, answer_hooks=branch is None)
        return Reply({"ok": True, "served": str(services.settings.store)}, "")

    return respond(common.json, body)


def _endpoint(text: str, allow_remote: bool) -> Endpoint:
    from returns.result import Failure, Success

    from memhtml.mcp.endpoint import Endpoint, endpoint_of

    match endpoint_of(text, allow_remote=allow_remote):
        case Success(Endpoint() as endpoint):
            return endpoint
        case Failure(refusal):
            raise UsageError(refusal.reason)
    raise AssertionError("unreachable")  # pragma: no cover


def _fixed_token() -> str | None:
    """``MEMHTML_MCP_TOKEN``, None when unset; refused (never quoted) when unusable."""
    from returns.result import Failure, Success

    from memhtml.mcp.endpoint import TOKEN_ENV, token_of

    match token_of(os.environ):
        case Success(str() as token):
            # Out of the environment once read, so no process the server starts (git,
            # a sync's ssh) inherits the secret.
            del os.environ[TOKEN_ENV]
            return token
        case Success(None):
            return None
        case Failure(refusal):
            raise UsageError(refusal.reason)
    raise AssertionError("unreachable")  # pragma: no cover


def _serve_http(services: Services, endpoint: Endpoint, token: str | None, *,
                answer_hooks: bool) -> None:
    """Bind, settle the token, say where, serve; the token file made here goes when
    serving ends."""
    from dataclasses import replace

    from memhtml.mcp.http import serve_http
    from memhtml.mcp.server import serving_line

    sock = _bound(endpoint)
    bound = replace(endpoint, port=int(sock.getsockname()[1]))
    token_file: Path | None = None
    try:
        if token is None:
            token, token_file = _token_file(services, bound.port)
            source = f"; bearer token in {token_file}"
        else:
            source = "; bearer token from MEMHTML_MCP_TOKEN"
        print(serving_line(services, f" at {bound.url}{source}"), file=sys.stderr, flush=True)
        serve_http(services, sock, bound, token, answer_hooks=answer_hooks)
    finally:
        sock.close()
        if token_file is not None:
            with suppress(OSError):
                token_file.unlink()


def _bound(endpoint: Endpoint) -> socket.socket:
    """A listening socket on the one address asked for, bound before the start line
    is printed, so the line names the port the server has."""
    family = socket.AF_INET6 if endpoint.ipv6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # A restart may find the last run's connections in TIME_WAIT on this port; on
        # Linux this never lets two servers listen on one port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if endpoint.ipv6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((endpoint.address, endpoint.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {endpoint.authority}: {exc.strerror or exc}; pass "
                       "another port (0 picks a free one)", code="ERR_REFUSED") from exc
    return sock


def _token_file(services: Services, port: int) -> tuple[str, Path]:
    """A new token, written to ``<git-dir>/memhtml/mcp-http-PORT.token`` readable by its
    owner alone (replacing, never writing through, whatever stood at that name)."""
    from returns.pipeline import is_successful
    from returns.unsafe import unsafe_perform_io

    from memhtml.contracts.local_files import write_replacing
    from memhtml.mcp.endpoint import new_token

    local = services.local_state()
    if local is None:
        raise CliError("this store has no local state directory to keep a token in; set "
                       "MEMHTML_MCP_TOKEN (32 characters or more) in the server's environment",
                       code="ERR_REFUSED")
    prepared = local.prepare()
    if not is_successful(prepared):
        raise CliError(f"cannot keep a token under {local.root}: "
                       f"{unsafe_perform_io(prepared.failure())}", code="ERR_REFUSED")
    token = new_token()
    path = local.root / f"mcp-http-{port}.token"
    try:
        write_replacing(path, (token + "\n").encode("ascii"),
                        path.with_name(f".{path.name}.{os.getpid()}.tmp"), mode=0o600)
    except OSError as exc:
        raise CliError(f"cannot write the token to {path}: {exc.strerror or exc}; set "
                       "MEMHTML_MCP_TOKEN instead", code="ERR_REFUSED") from exc
    return token, path
