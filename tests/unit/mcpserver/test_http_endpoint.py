"""``--http``'s address, the token it takes, and the bearer check, as laws and cases.

The server itself runs in tests/integration/mcp/test_mcp_http.py; these are the
decisions it makes before a request reaches the SDK, stated on every input shape.
(The folder is not named ``mcp``: it would stand for the SDK's package on the path.)
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from memhtml.mcp.endpoint import TOKEN_ENV, TOKEN_MIN_CHARS, Endpoint, endpoint_of, token_of
from memhtml.mcp.http import bearer_ok, security_for

B64TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/="
tokens = st.text(alphabet=B64TOKEN, min_size=TOKEN_MIN_CHARS, max_size=80)


@given(tokens, st.sampled_from(["Bearer", "bearer", "BEARER"]))
def test_the_token_passes_under_any_case_of_the_scheme(token: str, scheme: str) -> None:
    assert bearer_ok(f"{scheme} {token}".encode(), token.encode())


@given(tokens, st.binary(max_size=90))
def test_any_other_credential_fails(token: str, other: bytes) -> None:
    expected = token.encode()
    assert bearer_ok(b"Bearer " + other, expected) == (other.strip() == expected)


@given(tokens)
def test_the_token_under_another_scheme_fails(token: str) -> None:
    for header in (f"Basic {token}", token, f"Bearer{token}", f"Token {token}"):
        assert not bearer_ok(header.encode(), token.encode())


@given(st.ip_addresses())
def test_only_a_loopback_address_is_served_unless_remote_is_allowed(
        address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    spec = f"[{address}]:8765" if address.version == 6 else f"{address}:8765"
    plain = endpoint_of(spec)
    remote = endpoint_of(spec, allow_remote=True)
    assert is_successful(plain) == (address.is_loopback and not address.is_unspecified)
    assert is_successful(remote) == (not address.is_unspecified)
    if is_successful(remote):
        assert remote.unwrap() == Endpoint(str(address), 8765)


@pytest.mark.parametrize(("spec", "endpoint"), [
    ("8765", Endpoint("127.0.0.1", 8765)),
    ("localhost:0", Endpoint("127.0.0.1", 0)),
    (" 127.0.0.1:65535 ", Endpoint("127.0.0.1", 65535)),
    ("[::1]:8765", Endpoint("::1", 8765)),
    ("127.4.5.6:80", Endpoint("127.4.5.6", 80)),
])
def test_addresses_as_written(spec: str, endpoint: Endpoint) -> None:
    assert endpoint_of(spec).unwrap() == endpoint


@pytest.mark.parametrize("spec", ["", ":", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:65536",
                                  "127.0.0.1:\uff18\uff10", "::1:8765", "[::1]",
                                  "host.example:80", "127.0.0.1:80:80", "[127.0.0.1]:80x"])
def test_what_is_not_an_address_is_refused(spec: str) -> None:
    assert not is_successful(endpoint_of(spec))


@pytest.mark.parametrize(("endpoint", "hosts"), [
    (Endpoint("127.0.0.1", 9), ["127.0.0.1:9", "localhost:9"]),
    (Endpoint("::1", 9), ["[::1]:9", "localhost:9"]),
    (Endpoint("127.8.8.8", 9), ["127.8.8.8:9"]),
    (Endpoint("192.0.2.1", 9), ["192.0.2.1:9"]),
])
def test_host_and_origin_name_the_address_bound(endpoint: Endpoint, hosts: list[str]) -> None:
    security = security_for(endpoint)
    assert security.enable_dns_rebinding_protection
    assert security.allowed_hosts == hosts
    assert security.allowed_origins == [f"http://{host}" for host in hosts]


@given(tokens)
def test_a_usable_token_is_taken_as_it_is(token: str) -> None:
    assert token_of({TOKEN_ENV: token}).unwrap() == token


@given(st.text(min_size=1, max_size=80))
def test_a_refused_token_is_never_quoted(value: str) -> None:
    """The refusal says the same of any value as long (spaces are never taken): it
    cannot carry the value itself."""
    taken = token_of({TOKEN_ENV: value})
    usable = len(value) >= TOKEN_MIN_CHARS and set(value) <= set(B64TOKEN)
    assert is_successful(taken) == usable
    if not usable:
        assert taken.failure() == token_of({TOKEN_ENV: " " * len(value)}).failure()
