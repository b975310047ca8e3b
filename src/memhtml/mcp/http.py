"""The MCP server over streamable HTTP: one server that several agents share.

``memhtml mcp --http ADDRESS:PORT`` serves the very ``MemoryServer`` the stdio
command serves (same tools, same argument checks, same refusal codes) through the
SDK's own streamable-HTTP pieces: ``MCPServer.streamable_http_app`` (its session
manager, one MCP session per client) behind uvicorn, on one socket the command
bound itself. Every client's calls go through the process's one ``StoreGate``, so
writes from several agents are serialised there, each one commit, and git's
compare-and-swap still guards against writers in other processes.

Three checks stand before a request reaches the SDK:

- **A bearer token** (``bearer_guarded``): every request, whatever its path or
  method, carries ``Authorization: Bearer TOKEN`` or is answered 401 before anything
  else runs, so a request without it opens no session and touches no store. The
  token is compared in constant time (``hmac.compare_digest``) and never written to
  a log: uvicorn's access log is off, and nothing here prints a header.
- **Host and Origin** (DNS rebinding): a page on another site can rebind a name of
  its own to a loopback address; its requests then carry that name in ``Host`` and
  its origin in ``Origin``. The SDK's transport security (``security_for``) accepts
  only the host names that name the address bound, and an Origin (when one is sent)
  of those hosts; anything else is refused (421, 403) before a message is read.
- **The address** (``memhtml.mcp.endpoint``): loopback only unless the command is told
  otherwise, because over plain HTTP the token and every memory cross the network
  readable by anyone on the path. The wildcard addresses are refused outright: a
  Host check needs the one address clients use.

Where the token comes from is decided by ``memhtml.cli.mcp_cmd``: ``MEMHTML_MCP_TOKEN``
in the server's environment (``endpoint.token_of``), else one made at start and
written to a file only the user can read (docs/design.md says why not the config
file).
"""

from __future__ import annotations

import hmac
import signal
import threading
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from memhtml.mcp.endpoint import ENDPOINT_PATH, Endpoint
from memhtml.mcp.warm import WarmAnswers

if TYPE_CHECKING:
    import socket

    from memhtml.compose import Services
    from memhtml.mcp.gate import StoreGate

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SHUTDOWN_GRACE_SECONDS: Final = 5
"""How long a stop (SIGTERM, SIGINT) waits for requests in flight before it cancels
them. A client's open event stream never ends by itself, so without a bound a stop
would wait for every agent to hang up. A write already handed to the store thread
lands either way: the stop waits for it (``StoreGate.drain``)."""
_REALM: Final = b'Bearer realm="memhtml"'


def security_for(endpoint: Endpoint) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding checks for ``endpoint``: ``Host`` must be one of its
    names, and ``Origin``, when a client sends one (browsers do), one of those
    names' origins."""
    hosts = list(endpoint.hosts)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{host}" for host in hosts])


def bearer_ok(header: bytes, token: bytes) -> bool:
    """Whether an ``Authorization`` value is ``Bearer`` and ``token``, compared in
    constant time (the scheme's case does not matter, as RFC 7235 says).

    >>> bearer_ok(b"Bearer abc", b"abc"), bearer_ok(b"bearer abd", b"abc")
    (True, False)
    """
    scheme, _, credential = header.strip().partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), token)


async def _unauthorized(send: Send) -> None:
    body = (b"A bearer token is required: send Authorization: Bearer TOKEN, the token "
            b"memhtml mcp --http was started with.")
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", _REALM), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


def bearer_guarded(app: ASGIApp, token: str) -> ASGIApp:
    """``app`` behind the token: an HTTP request with exactly one ``Authorization``
    header carrying it goes on; any other is answered 401 and reaches nothing. The
    lifespan goes on (it starts the SDK's session manager); a websocket is not served."""
    expected = token.encode("ascii")

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        given = [value for name, value in scope.get("headers", ())
                 if name.lower() == b"authorization"]
        if len(given) != 1 or not bearer_ok(given[0], expected):
            await _unauthorized(send)
            return
        await app(scope, receive, send)

    return checked


def http_app(services: Services, endpoint: Endpoint, token: str
             ) -> tuple[ASGIApp, StoreGate]:
    """The guarded ASGI application serving ``services``' store at ``endpoint`` (bound,
    its real port), and the gate its tools run through, to drain and close once
    serving has ended."""
    from memhtml.mcp.server import started

    server, gate = started(services)
    inner = server.streamable_http_app(streamable_http_path=ENDPOINT_PATH,
                                       transport_security=security_for(endpoint),
                                       host=endpoint.address)
    return bearer_guarded(inner, token), gate


def serve_http(services: Services, sock: socket.socket, endpoint: Endpoint, token: str, *,
               answer_hooks: bool = True) -> None:
    """Serve on the listening ``sock`` until SIGTERM or SIGINT, then stop cleanly: no
    new connection, requests in flight given ``SHUTDOWN_GRACE_SECONDS``, the sessions
    closed, the doors already on the store thread run to their end, a write waiting
    to be pushed pushed (the gate's close). With ``answer_hooks``, a hook's ``memhtml
    recall`` and ``brief`` on this machine are answered from this process's head
    (``memhtml.mcp.warm``), as the stdio server's are."""
    app, gate = http_app(services, endpoint, token)
    answers = WarmAnswers(services, gate)
    if answer_hooks:
        answers.start()
    # No access log (it would carry each request line) and no proxy headers: a
    # client's claimed address is never used here, so nothing should rewrite it.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            server_header=False, proxy_headers=False,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS)
    try:
        StoppedBySignal(config).run(sockets=[sock])
    finally:
        answers.close()
        gate.drain()
        gate.close()


class StoppedBySignal(uvicorn.Server):
    """uvicorn's server, stopping on SIGTERM or SIGINT without raising the signal
    again afterwards. uvicorn re-raises it once it has shut down, so that a program
    embedding it dies as the signal would have it; here that would end the process
    (SIGTERM's default) before the gate's close pushed a waiting write. A stop asked
    for is a clean exit."""

    @contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        before = {number: signal.signal(number, self.handle_exit) for number in stops}
        try:
            yield
        finally:
            for number, handler in before.items():
                signal.signal(number, handler)
