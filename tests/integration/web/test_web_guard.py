"""The app refuses what a hostile page or a rebound name would send it, on a real server.

Each request is sent with ``http.client`` so every header is the test's to choose: a
wrong ``Host`` (DNS rebinding), no token, a wrong token, a cross-origin POST carrying
the cookie (as a browser would not, but a test can), a POST without the CSRF value.
Each is refused and nothing is committed; the one request with everything right
lands its write.
"""

from __future__ import annotations

import http.client
import json
import subprocess

from memhtml.web.guard import CONTENT_SECURITY_POLICY
from tests.integration.web.conftest import Served


def request(served: Served, method: str, path: str, *, host: str | None = None,
            headers: dict[str, str] | None = None, body: bytes | None = None
            ) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(served.address, served.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        own = f"{served.address}:{served.port}"
        connection.putheader("Host", host if host is not None else own)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def cookie(served: Served) -> str:
    return f"{served.guard.cookie}={served.token}"


def csrf(served: Served) -> str:
    return served.guard.csrf


def tip(served: Served) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=served.store, check=True,
                          capture_output=True, text=True).stdout.strip()


WRITE = json.dumps({"title": "Posted", "claim": "A claim posted through the app.",
                    "type": "semantic", "dir": "areas/inbox"}).encode()


def test_the_start_url_sets_a_strict_cookie_and_drops_the_token(served: Served) -> None:
    status, headers, _ = request(served, "GET", f"/?token={served.token}")
    assert status == 303
    assert headers["location"] == "/"
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(cookie(served) + ";")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    status, headers, page = request(served, "GET", "/", headers={"Cookie": cookie(served)})
    assert status == 200
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert served.token.encode() not in page, "the token never appears in a page"


def test_a_wrong_host_is_refused_whatever_it_carries(served: Served) -> None:
    wrong = ["evil.example", f"evil.example:{served.port}", served.address,
             f"{served.address}:{served.port + 1}", f"localhost.evil.example:{served.port}", ""]
    if served.address != "127.0.0.1":
        # Its own loopback address: the 127.0.0.1 every other local server shares,
        # and localhost, which names that one, are not this server's.
        wrong += [f"127.0.0.1:{served.port}", f"localhost:{served.port}"]
    for host in wrong:
        status, _, body = request(served, "GET", "/", host=host,
                                  headers={"Cookie": cookie(served)})
        assert status == 421, (host, status)
        assert b"Host" in body
    status, _, _ = request(served, "GET", "/", host=f"{served.address}:{served.port}",
                           headers={"Cookie": cookie(served)})
    assert status == 200


def test_the_server_listens_on_a_loopback_address_of_its_own(served: Served) -> None:
    """Linux routes all of 127.0.0.0/8 to loopback; a browser keeps cookies per host,
    so on an address of its own no other local server is sent the token's cookie."""
    assert served.address.startswith("127.") and served.address != "127.0.0.1"
    import socket

    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", served.port)) != 0, "not on 127.0.0.1"


def test_no_token_and_a_wrong_token_are_refused(served: Served) -> None:
    for path in ("/", "/browse/", "/memory/areas/checkout/sakura-auth-timeout-8s.html",
                 "/search?q=deploy", "/events", "/static/app.js"):
        status, _, _ = request(served, "GET", path)
        assert status == 403, path
        status, _, _ = request(served, "GET", path, headers={
            "Cookie": f"{served.guard.cookie}=guess"})
        assert status == 403, path
    status, headers, _ = request(served, "GET", "/?token=guess")
    assert status == 403 and "set-cookie" not in headers


def test_a_change_from_another_origin_or_without_the_csrf_value_commits_nothing(
        served: Served) -> None:
    before = tip(served)
    attempts = [
        {"Cookie": cookie(served), "X-Memhtml-Csrf": csrf(served),
         "Origin": "http://evil.example"},
        {"Cookie": cookie(served), "X-Memhtml-Csrf": csrf(served), "Origin": "null"},
        {"Cookie": cookie(served), "X-Memhtml-Csrf": csrf(served)},
        {"Cookie": cookie(served), "Origin": served.origin},
        {"Cookie": cookie(served), "Origin": served.origin, "X-Memhtml-Csrf": "0" * 64},
        {"Origin": served.origin, "X-Memhtml-Csrf": csrf(served)},
    ]
    for headers in attempts:
        status, _, _ = request(served, "POST", "/api/tool/memory_write", body=WRITE,
                               headers={"Content-Type": "application/json", **headers})
        assert status == 403, headers
    # A form post, as a hostile page's <form> would send one.
    status, _, _ = request(served, "POST", "/api/tool/memory_write",
                           body=b"title=x&claim=y", headers={
                               "Cookie": cookie(served), "Origin": "http://evil.example",
                               "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403
    assert tip(served) == before
    status, _, body = request(served, "POST", "/api/tool/memory_write", body=WRITE, headers={
        "Cookie": cookie(served), "Origin": served.origin, "X-Memhtml-Csrf": csrf(served),
        "Content-Type": "application/json"})
    assert status == 200, body
    answer = json.loads(body)
    assert answer["ok"] is True and answer["result"]["path"].startswith("areas/inbox/")
    assert tip(served) != before


def test_a_refusal_comes_back_with_the_tools_code(served: Served) -> None:
    headers = {"Cookie": cookie(served), "Origin": served.origin,
               "X-Memhtml-Csrf": csrf(served), "Content-Type": "application/json"}
    for name, arguments, code in (
            ("memory_read", {"path": "areas/nowhere.html"}, "ERR_NOT_FOUND"),
            ("memory_read", {"path": "../../etc/passwd"}, None),
            ("memory_search", {"query": "x", "bogus": 1}, "ERR_UNKNOWN_ARGUMENT"),
            ("no_such_tool", {}, "ERR_UNKNOWN_TOOL")):
        status, _, body = request(served, "POST", f"/api/tool/{name}",
                                  body=json.dumps(arguments).encode(), headers=headers)
        answer = json.loads(body)
        assert status == 422 and answer["ok"] is False, answer
        assert answer["error"]
        if code is not None:
            assert answer["code"] == code, answer
    status, _, body = request(served, "POST", "/api/tool/memory_read", body=b"[1, 2]",
                              headers=headers)
    assert status == 400 and json.loads(body)["ok"] is False
