"""Laws of ``redact_credentials``: a URL's user information never survives it, in any
message around it, and redacting twice is redacting once."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from memhtml.contracts.credentials import REDACTED, redact_credentials, url_password

UNRESERVED = string.ascii_letters + string.digits + "-._~"
ESCAPED = st.sampled_from(["%40", "%2F", "%3A", "%23", "%25"])
secrets = st.lists(st.one_of(st.sampled_from(UNRESERVED), ESCAPED),
                   min_size=8, max_size=30).map("".join)
schemes = st.sampled_from(["http", "https", "ssh", "git+ssh", "HTTPS", "ftp"])
hosts = st.sampled_from(["example.org", "127.0.0.1:8080", "[::1]:9418", "git.example"])
around = st.text(alphabet=string.printable.replace("@", ""), max_size=40)


@given(secrets, secrets, schemes, hosts, around, around)
def test_no_user_information_survives(user: str, secret: str, scheme: str, host: str,
                                      before: str, after: str) -> None:
    url = f"{scheme}://{user}:{secret}@{host}/team/memory.git"
    line = f"{before}'{url}'{after}"
    shown = redact_credentials(line)
    assert secret not in shown.replace(before, "").replace(after, "")
    assert f"{scheme}://{REDACTED}@{host}/team/memory.git" in shown
    assert redact_credentials(shown) == shown


@given(secrets, hosts)
def test_a_token_as_the_user_name_is_taken_out_too(token: str, host: str) -> None:
    assert token not in redact_credentials(f"fatal: https://{token}@{host}/m.git/ failed")


@given(secrets, secrets, hosts)
def test_the_password_is_found(user: str, secret: str, host: str) -> None:
    assert url_password(f"https://{user}:{secret}@{host}/m.git") == secret
    assert url_password(f"https://{user}@{host}/m.git") is None
