"""Credentials in remote URLs: found, and taken out of every line memhtml shows.

A URL may carry its credentials (``https://user:token@host/repo.git``, or a token as
the user name alone, as some hosts take it). memhtml never writes such a URL into a
file of its own and never lets one reach a message: every error, note and progress
line that may hold a URL goes through ``redact_credentials``, which replaces the
whole user-information part of each URL with ``***``. The user name goes too, since
nothing tells a name from a token. Credentials belong to git's credential helpers.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["REDACTED", "redact_credentials", "url_password"]

REDACTED = "***"

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]*@")
"""A scheme, then everything up to the first ``@`` before the host ends (a ``/``,
``?``, ``#`` or white space): the user information, which an escaped password's
``%40`` or ``%2F`` cannot cut short."""


def redact_credentials(text: str) -> str:
    """``text`` with the user information of every URL in it replaced by ``***``.

    >>> redact_credentials("fatal: unable to access 'https://ann:s3cret@example.org/m.git/'")
    "fatal: unable to access 'https://***@example.org/m.git/'"
    >>> redact_credentials("git@example.org:m.git and /srv/m.git stay as they are")
    'git@example.org:m.git and /srv/m.git stay as they are'
    """
    return _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)


def url_password(url: str) -> str | None:
    """The password a URL with a scheme carries, or None (none, or not such a URL).

    >>> url_password("https://ann:s3cret@example.org/m.git")
    's3cret'
    >>> url_password("https://ann@example.org/m.git") is None
    True
    """
    if "://" not in url:
        return None
    try:
        return urlsplit(url).password or None
    except ValueError:
        # A URL urllib cannot split (a bad port, a stray bracket) is judged by its text.
        match = _USERINFO.match(url)
        userinfo = match.group(0)[len(match.group(1)):-1] if match else ""
        return userinfo.partition(":")[2] or None
