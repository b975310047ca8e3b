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
- **The address** (``endpoint_of``): loopback only unless the command is told
  otherwise, because over plain HTTP the token and every memory cross the network
  readable by anyone on the path. The wildcard addresses are refused outright: a
  Host check needs the one address clients use.

Where the token comes from is decided by ``memhtml.cli.mcp_cmd``: ``MEMHTML_MCP_TOKEN``
in the server's environment, else one made at start and written to a file only the
user can read (docs/design.md says why not the config file).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import signal
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from returns.result import Failure, Result, Success

if TYPE_CHECKING:
    import socket

    from memhtml.compose import Services

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ENDPOINT_PATH: Final = "/mcp"
"""Where the MCP endpoint answers (the SDK's default path)."""
TOKEN_ENV: Final = "MEMHTML_MCP_TOKEN"
"""The variable a fixed token comes from (a secret: never a config file's key)."""
TOKEN_MIN_CHARS: Final = 32
"""The shortest token taken: a short one can be guessed by a client that keeps
trying, since nothing here limits attempts. ``new_token`` makes 43 characters."""
_TOKEN_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
"""RFC 6750's ``b64token`` characters: what a bearer token may be made of, so any
client can send it in a header unchanged."""
SHUTDOWN_GRACE_SECONDS: Final = 5
"""How long a stop (SIGTERM, SIGINT) waits for requests in flight before it cancels
them. A client's open event stream never ends by itself, so without a bound a stop
would wait for every agent to hang up. A write already on the store thread finishes
either way: that thread is not cancelled, and the process waits for it."""
_REALM: Final = b'Bearer realm="memhtml"'


@dataclass(frozen=True, slots=True)
class HttpRefusal:
    """Why ``--http`` (its address) or ``MEMHTML_MCP_TOKEN`` cannot be used."""

    reason: str


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The address and port to serve on (port 0 until the socket is bound)."""

    address: str
    """An IP address literal (``127.0.0.1``, ``::1``): the one address bound."""
    port: int

    @property
    def ipv6(self) -> bool:
        return ":" in self.address

    @property
    def authority(self) -> str:
        """``ADDRESS:PORT`` as a URL and a ``Host`` header write it."""
        return f"[{self.address}]:{self.port}" if self.ipv6 else f"{self.address}:{self.port}"

    @property
    def hosts(self) -> tuple[str, ...]:
        """Every ``Host`` value that names this server: its address, and ``localhost``
        where the address is the one that name resolves to."""
        own = self.authority
        if self.address in ("127.0.0.1", "::1"):
            return (own, f"localhost:{self.port}")
        return (own,)

    @property
    def url(self) -> str:
        return f"http://{self.authority}{ENDPOINT_PATH}"


def endpoint_of(text: str, *, allow_remote: bool = False) -> Result[Endpoint, HttpRefusal]:
    """The endpoint ``--http`` names: ``ADDRESS:PORT`` (an IPv6 address in brackets,
    ``localhost`` for 127.0.0.1), or a bare ``PORT`` on 127.0.0.1.

    >>> endpoint_of("127.0.0.1:8765").unwrap()
    Endpoint(address='127.0.0.1', port=8765)
    >>> endpoint_of("[::1]:0").unwrap().authority
    '[::1]:0'
    >>> endpoint_of("192.0.2.7:8765").failure().reason.startswith("192.0.2.7 is not")
    True
    """
    spec = text.strip()
    host, colon, port_text = spec.rpartition(":")
    if not colon:
        host, port_text = "127.0.0.1", spec
    if not port_text.isascii() or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        return Failure(HttpRefusal(
            f"--http {text!r}: {port_text!r} is not a port (0-65535); give ADDRESS:PORT, "
            "such as 127.0.0.1:8765 (port 0 picks a free one)"))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        return Failure(HttpRefusal(
            f"--http {text!r}: write an IPv6 address in brackets, as [::1]:8765"))
    if host.lower() == "localhost":
        host = "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return Failure(HttpRefusal(
            f"--http {text!r}: {host!r} is not an IP address; give the address to bind "
            "(127.0.0.1, [::1]), not a name, so the server listens where it says"))
    if address.is_unspecified:
        return Failure(HttpRefusal(
            f"--http {text!r}: {address} listens on every interface; name the one address "
            "clients connect to (the Host check against DNS rebinding needs it)"))
    if not address.is_loopback and not allow_remote:
        return Failure(HttpRefusal(
            f"{address} is not a loopback address: over plain HTTP the bearer token and "
            "every memory would cross the network readable by anyone on the way. Serve on "
            "127.0.0.1 (behind a TLS proxy for other machines), or pass --allow-remote to "
            "bind it anyway"))
    return Success(Endpoint(str(address), int(port_text)))


def token_of(env: Mapping[str, str]) -> Result[str | None, HttpRefusal]:
    """The token ``MEMHTML_MCP_TOKEN`` fixes, None when it is unset or empty, or why
    it cannot be used (too short to resist guessing, or not sendable in a header).
    The refusal never quotes the value.

    >>> token_of({}).unwrap() is None
    True
    >>> token_of({"MEMHTML_MCP_TOKEN": "short"}).failure().reason[:36]
    'MEMHTML_MCP_TOKEN is 5 characters lo'
    """
    value = env.get(TOKEN_ENV, "")
    if not value:
        return Success(None)
    if len(value) < TOKEN_MIN_CHARS:
        return Failure(HttpRefusal(
            f"{TOKEN_ENV} is {len(value)} characters long; a bearer token needs at least "
            f"{TOKEN_MIN_CHARS} (python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' makes one), or unset it to have one made"))
    if not set(value) <= _TOKEN_CHARS:
        return Failure(HttpRefusal(
            f"{TOKEN_ENV} holds characters a bearer token cannot carry; use letters, "
            "digits and - . _ ~ + / = only"))
    return Success(value)


def new_token() -> str:
    """A token for one run: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


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
             ) -> tuple[ASGIApp, Callable[[], None]]:
    """The guarded ASGI application serving ``services``' store at ``endpoint`` (bound,
    its real port), and what to call once serving has ended (the gate's close)."""
    from memhtml.mcp.server import started

    server, gate = started(services)
    inner = server.streamable_http_app(streamable_http_path=ENDPOINT_PATH,
                                       transport_security=security_for(endpoint),
                                       host=endpoint.address)
    return bearer_guarded(inner, token), gate.close


def serve_http(services: Services, sock: socket.socket, endpoint: Endpoint, token: str) -> None:
    """Serve on the listening ``sock`` until SIGTERM or SIGINT, then stop cleanly: no
    new connection, requests in flight given ``SHUTDOWN_GRACE_SECONDS``, the sessions
    closed, a write waiting to be pushed pushed (the gate's close)."""
    app, close = http_app(services, endpoint, token)
    # No access log (it would carry each request line) and no proxy headers: a
    # client's claimed address is never used here, so nothing should rewrite it.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            server_header=False, proxy_headers=False,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS)
    try:
        _StoppedBySignal(config).run(sockets=[sock])
    finally:
        close()


class _StoppedBySignal(uvicorn.Server):
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
