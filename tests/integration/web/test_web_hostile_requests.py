"""Requests a hostile or merely careless client sends a running ``memhtml serve``: a
body that claims more than it sends, JSON nested past the parser's depth, and the
live stream held open by every tab. Each is answered, promptly, with a 4xx or the
answer it asked for; none leaves a connection or a worker held.
"""

from __future__ import annotations

import http.client
import json
import socket
import time

from tests.integration.web.conftest import Served
from tests.integration.web.test_web_guard import cookie, csrf, request, tip


def _changing(served: Served) -> dict[str, str]:
    return {"Cookie": cookie(served), "Origin": served.origin,
            "X-Memhtml-Csrf": csrf(served), "Content-Type": "application/json"}


def test_json_nested_past_the_parsers_depth_is_a_refusal_not_a_crash(served: Served) -> None:
    before = tip(served)
    for body in (b"[" * 100_000, b'{"a":' * 100_000):
        status, _, answer = request(served, "POST", "/api/tool/memory_write", body=body,
                                    headers=_changing(served))
        assert status == 400, (status, answer[:200])
        assert b"JSON object" in answer
    assert tip(served) == before


def test_a_body_claiming_more_than_the_cap_is_refused_before_it_is_read(served: Served) -> None:
    """The cap is checked against ``Content-Length`` and as the body arrives, so a
    client announcing (or sending) gigabytes is answered 413 at once, and the server
    never holds more than the cap of it."""
    with socket.create_connection((served.address, served.port), timeout=10) as sock:
        head = (f"POST /api/tool/memory_search HTTP/1.1\r\nHost: {served.address}:{served.port}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in _changing(served).items())
                + "Content-Length: 4000000000\r\n\r\n")
        sock.sendall(head.encode() + b"{" + b" " * 1000)
        started = time.monotonic()
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert time.monotonic() - started < 5
    connection = http.client.HTTPConnection(served.address, served.port, timeout=30)
    try:  # chunked, no length given: cut off once past the cap
        connection.putrequest("POST", "/api/tool/memory_search", skip_host=True)
        connection.putheader("Host", f"{served.address}:{served.port}")
        for name, value in _changing(served).items():
            connection.putheader(name, value)
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        chunk = b" " * 65536
        try:
            for _ in range(64):  # 4 MB, four times the cap
                connection.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            connection.send(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed before the end: that is the point
        response = connection.getresponse()
        assert response.status == 413
    finally:
        connection.close()


def test_the_live_stream_does_not_hold_a_connection(served: Served) -> None:
    """A browser opens at most six connections to one host over HTTP/1.1; an event
    stream held open by each tab would leave the seventh tab's pages waiting forever.
    So ``/events`` answers the tip and ends, and the page's EventSource asks again
    after the ``retry`` it names."""
    started = time.monotonic()
    status, headers, body = request(served, "GET", "/events",
                                    headers={"Cookie": cookie(served)})
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert b"retry: " in body
    assert f"event: tip\ndata: {tip(served)}\n\n".encode() in body
    assert time.monotonic() - started < 5


def test_a_reject_with_malformed_arguments_or_no_run_is_refused_and_moves_nothing(
        served: Served) -> None:
    """``/api/sleep/reject`` takes a run id and a non-empty list of paths; anything
    else is refused before the store is read, and a run that is not there is refused
    by the door itself. No ref moves."""
    before = tip(served)
    malformed = [{}, {"run": "2026-12-01"}, {"run": "2026-12-01", "paths": []},
                 {"run": "2026-12-01", "paths": "areas/a.html"},
                 {"run": "2026-12-01", "paths": [7]}, {"run": "2026-12-01", "paths": [""]},
                 {"run": ["x"], "paths": ["a"]}, {"run": "2026-12-01", "paths": ["a"], "x": 1}]
    for arguments in malformed:
        status, _, answer = request(served, "POST", "/api/sleep/reject",
                                    body=json.dumps(arguments).encode(),
                                    headers=_changing(served))
        assert status == 422 and b"ERR_INVALID_ARGUMENTS" in answer, (arguments, answer)
    for run in ("2026-12-01", "../../main", "sleep/2026-12-01"):
        status, _, answer = request(served, "POST", "/api/sleep/reject",
                                    body=json.dumps({"run": run, "paths": ["../x.html"]})
                                    .encode(), headers=_changing(served))
        assert status == 422 and json.loads(answer)["ok"] is False, (run, answer)
    assert tip(served) == before
