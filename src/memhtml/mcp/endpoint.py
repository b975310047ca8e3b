"""Where ``memhtml mcp --http`` listens and the token it takes: checked before anything runs.

Apart from the server (``memhtml.mcp.http``) so that a refusal (a remote address, a
short token) is given without loading the MCP SDK and the web server.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from returns.result import Failure, Result, Success

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
