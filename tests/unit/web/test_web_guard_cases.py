"""The guard's answers to what a browser (or a hostile page) really sends, called as an
ASGI application with no server: cookies set by other programs on this machine, and
start URLs whose path is odd."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

from memhtml.web.guard import Guard, guarded

PORT = 8421
TOKEN = "t0ken-Value_123"
GUARD = Guard(PORT, TOKEN)
OWN = f"{GUARD.cookie}={TOKEN}"


async def _inner(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"inside"})


def call(method: str, path: str, *, query: bytes = b"", cookie: str | None = None,
         raw_path: bytes | None = None) -> tuple[int, dict[bytes, bytes]]:
    headers = [(b"host", f"127.0.0.1:{PORT}".encode())]
    if cookie is not None:
        headers.append((b"cookie", cookie.encode("latin-1")))
    scope = {"type": "http", "method": method, "path": path, "query_string": query,
             "raw_path": raw_path if raw_path is not None else path.encode("utf-8"),
             "headers": headers}
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await guarded(_inner, GUARD)(scope, receive, send)

    asyncio.run(run())
    start = sent[0]
    return int(start["status"]), dict(start["headers"])


def test_other_programs_cookies_on_this_host_do_not_lock_the_person_out() -> None:
    """Browsers keep cookies per host, not per port: every program served on
    127.0.0.1 shares the jar, and what they set is often not RFC 6265 tidy (JSON,
    spaces, non-ASCII, a cookie named like an attribute). None of it may hide ours."""
    for other in ('prefs={"theme":"dark"}', 'x="unterminated', "name=two words",
                  "caf\u00e9=cr\u00e8me", "Path=/", "Domain=x", "a@b=1", "=bare"):
        for jar in (f"{other}; {OWN}", f"{OWN}; {other}"):
            status, _ = call("GET", "/", cookie=jar)
            assert status == 200, jar


def test_any_cookie_of_our_name_holding_the_token_is_enough() -> None:
    """A stale cookie of the same name (another path, an earlier run on this port)
    may come first or last; the one that holds the token lets the person in, and
    none that does not."""
    assert call("GET", "/", cookie=f"{GUARD.cookie}=stale; {OWN}")[0] == 200
    assert call("GET", "/", cookie=f"{OWN}; {GUARD.cookie}=stale")[0] == 200
    assert call("GET", "/", cookie=f"{GUARD.cookie}=stale")[0] == 403
    assert call("GET", "/", cookie=f"{GUARD.cookie}_x={TOKEN}")[0] == 403
    assert call("GET", "/", cookie=f"x{GUARD.cookie}={TOKEN}")[0] == 403


def test_the_start_redirect_stays_on_this_origin_and_is_a_valid_header() -> None:
    """The token's redirect names the page it was opened at: only as a path on this
    origin (never ``//host``, ``/\\host`` or an absolute URL), percent-encoded (no raw
    CR/LF or non-ASCII in a header), with every other query field kept."""
    cases = {
        "//evil.example/": "/evil.example/",
        "///evil.example": "/evil.example",
        "http://evil.example/": "/",
        "/\\evil.example": "/%5Cevil.example",
        "/\r\nX-Evil: 1": "/%0D%0AX-Evil:%201",
        "/memory/caf\u00e9.html": "/memory/caf%C3%A9.html",
        "/entity/a:b": "/entity/a:b",
    }
    for path, location in cases.items():
        status, headers = call("GET", path, query=f"token={TOKEN}".encode())
        assert status == 303, path
        assert headers[b"location"] == location.encode(), (path, headers[b"location"])
    _, headers = call("GET", "/search", query=f"q=a&q=b&token={TOKEN}&type=".encode())
    assert headers[b"location"] == b"/search?q=a&q=b&type="
