"""Requests a hostile or merely careless client sends a running ``memhtml serve``: a
body that claims more than it sends, JSON nested past the parser's depth, and the
live stream held open by every tab. Each is answered, promptly, with a 4xx or the
answer it asked for; none leaves a connection or a worker held.
"""

from __future__ import annotations

import time

from tests.integration.web.conftest import Served
from tests.integration.web.test_web_guard import cookie, csrf, request, tip


def _changing(served: Served) -> dict[str, str]:
    return {"Cookie": cookie(served), "Origin": served.origin,
            "X-Memhtml-Csrf": csrf(served), "Content-Type": "application/json"}


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
