"""Who may talk to ``memhtml serve``: this machine's browser, holding the start token.

The app listens on one loopback address only (a random one of 127.0.0.0/8 where the
system routes them all, as Linux does, else 127.0.0.1), but a loopback port is
reachable from every web page the person has open (a page can post a form to it, or
rebind a domain name of its own to a loopback address). So every request passes
three checks before a route sees it:

- **Host**: the header must name this server as the start URL does
  (``ADDRESS:PORT``, or ``localhost:PORT`` on 127.0.0.1). A rebound name arrives with the
  attacker's host name in it and is refused, so no page of theirs can read ours.
- **Token**: the start URL carries a random token (``?token=``); the first request
  with it gets the token back as an HttpOnly, SameSite=Strict cookie and is sent on to
  the same page without it in the address. Every other request must carry the cookie.
  A cross-site request never carries a SameSite=Strict cookie, so it is refused here
  whatever it asks.
- **Same origin, for a change**: a request that is not GET or HEAD must also name
  this origin in ``Origin`` (which browsers send with every cross-origin and every
  non-GET fetch), and carry ``X-Memhtml-Csrf``, a value derived from the token that
  only a page this server rendered holds (a ``<meta>`` the app's script reads).

Every answer carries a strict Content-Security-Policy (scripts, styles and requests
from this origin only, no inline script, no frames), ``nosniff``, no referrer and no
caching, whatever route made it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE: Final = "memhtml_session"
CSRF_HEADER: Final = "x-memhtml-csrf"
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""Nothing from elsewhere, nothing inline: a memory's markup that slipped past every
check still could not run a script, load one, or send what it read anywhere."""
_SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
_HEADERS: Final = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


def new_token() -> str:
    """A start token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Guard:
    """The checks for one server: its port, its token and the loopback address it
    listens on.

    A browser keeps cookies per host name, not per port: every server on 127.0.0.1
    would be sent this app's cookie, token and all, whenever the person visited it.
    On an address of its own (``127.x.y.z``, which Linux routes to loopback like
    127.0.0.1) the cookie goes to this server alone."""

    port: int
    token: str
    address: str = "127.0.0.1"

    @property
    def cookie(self) -> str:
        """The cookie's name, with the port in it: a browser keeps cookies per host,
        not per port, so two stores served at once must not share one."""
        return f"{COOKIE}_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        own = f"{self.address}:{self.port}"
        if self.address == "127.0.0.1":
            return frozenset({own, f"localhost:{self.port}"})
        return frozenset({own})

    @property
    def csrf(self) -> str:
        """The value a changing request must send in ``X-Memhtml-Csrf``: a keyed digest
        of the token, so the page holds it without holding the token itself."""
        return hmac.new(self.token.encode(), b"memhtml-csrf", hashlib.sha256).hexdigest()

    def start_url(self) -> str:
        return f"http://{self.address}:{self.port}/?token={self.token}"

    def host_ok(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def token_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def origin_ok(self, origin: str | None, host: str) -> bool:
        return origin is not None and origin.lower() == f"http://{host.lower()}"

    def csrf_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.csrf.encode())


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        out.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _cookies(headers: dict[str, str], name: str) -> list[str]:
    """Every value the ``Cookie`` header gives ``name``, split as browsers write it
    (``a=b; c=d``), nothing else read.

    Not ``http.cookies.SimpleCookie``: it stops at the first cookie it finds untidy
    (a JSON value, a space, non-ASCII, a name like ``Path``) and drops the rest, and
    browsers keep cookies per host, not per port, so any other program served on
    127.0.0.1 could set one and lock the person out of this app. A name may come twice
    (another path, an earlier run on this port), so each value is a candidate."""
    out = []
    for part in headers.get("cookie", "").split(";"):
        key, eq, value = part.partition("=")
        if eq and key.strip() == name:
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            out.append(value)
    return out


_PATH_SAFE: Final = "/:@!$&'()*+,;="
"""Characters a path segment may carry unescaped (RFC 3986 pchar, less ``%``)."""


def _back_here(scope: Scope, query: list[tuple[str, str]]) -> str:
    """Where the start URL's redirect sends the browser: the page it was opened at, as
    a path on this origin, every query field but the token kept in order.

    Built from the decoded path and escaped again, so a CR, LF or non-ASCII character
    cannot reach the header raw (h11 refuses the answer, and non-ASCII bytes are read
    as Latin-1 by browsers); leading slashes are collapsed to one and an absolute-form
    target (``GET http://host/``) comes back as ``/``, so the redirect never names
    another host (``//evil.example``, ``/\\evil.example``)."""
    path = str(scope.get("path") or "/")
    if not path.startswith("/"):
        path = "/"
    location = "/" + quote(path, safe=_PATH_SAFE).lstrip("/")
    rest = urlencode([(k, v) for k, v in query if k != "token"])
    return location + (f"?{rest}" if rest else "")


async def _plain(send: Send, status: int, text: str,
                 extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *_HEADERS, *extra]})
    await send({"type": "http.response.body", "body": body})


def guarded(app: ASGIApp, guard: Guard) -> ASGIApp:
    """``app`` behind the checks above; what it answers gets the security headers."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        headers = _headers(scope)
        host = headers.get("host")
        if not guard.host_ok(host):
            await _plain(send, 421, "This server answers only to the address memhtml serve "
                                    f"printed ({guard.address}:{guard.port}); the Host header "
                                    "named another.")
            return
        assert host is not None
        fields = parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                           keep_blank_values=True)
        tokens = [v for k, v in fields if k == "token"]
        method = scope["method"]
        if method in _SAFE_METHODS and tokens:
            if not all(guard.token_ok(t) for t in tokens):
                await _plain(send, 403, "That start token is not this server's: open the "
                                        "address memhtml serve printed.")
                return
            location = _back_here(scope, fields)
            cookie = f"{guard.cookie}={guard.token}; HttpOnly; SameSite=Strict; Path=/"
            await _plain(send, 303, "Signed in; on to the page.", (
                (b"location", location.encode()), (b"set-cookie", cookie.encode())))
            return
        if not any(guard.token_ok(v) for v in _cookies(headers, guard.cookie)):
            await _plain(send, 403, "Open the address memhtml serve printed (it carries "
                                    "this server's start token).")
            return
        if method not in _SAFE_METHODS and not (
                guard.origin_ok(headers.get("origin"), host)
                and guard.csrf_ok(headers.get(CSRF_HEADER))):
            await _plain(send, 403, "A change must come from this app's own pages.")
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *_HEADERS]
            await send(message)

        await app(scope, receive, with_headers)

    return checked


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "COOKIE",
    "CSRF_HEADER",
    "Guard",
    "guarded",
    "new_token",
]
