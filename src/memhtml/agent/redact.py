"""Redaction: what ``memhtml capture`` takes out of a transcript before it is kept.

A coding session's transcript holds whatever passed through the terminal, keys and
tokens included, and a captured transcript is read by the nightly run and may be
sent to a model. So capture replaces every string that looks like a secret with
``[REDACTED:<kind>]`` before the file is written. The rules (``RULES``), each a
pattern and the kind it names:

- ``private-key``: a PEM block from ``-----BEGIN ... PRIVATE KEY-----`` to its END line;
- ``aws-access-key``: ``AKIA``/``ASIA`` and 16 upper-case letters or digits;
- ``github-token``: ``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` and 36 or more
  letters or digits, or ``github_pat_`` and 22 or more;
- ``gitlab-token``: ``glpat-`` and 20 or more;
- ``slack-token``: ``xoxa-``, ``xoxb-``, ``xoxp-``, ``xoxr-``, ``xoxs-`` and 10 or more;
- ``anthropic-key`` (``sk-ant-``) and ``openai-key`` (``sk-``, ``sk-proj-``), 20 or
  more key characters;
- ``google-api-key``: ``AIza`` and 35 key characters;
- ``stripe-key``: ``sk_live_``/``rk_live_`` and 16 or more;
- ``jwt``: three base64url parts, the first two starting ``eyJ``;
- ``bearer``: the credential after ``Bearer `` or ``Basic `` (an Authorization value);
- ``url-password``: the password of ``scheme://user:password@host``;
- ``bearer`` also takes the credential after ``token `` (``Authorization: token ...``),
  20 or more characters;
- ``assignment``: the value of a name containing ``password``, ``passwd``, ``pwd``,
  ``_pass``, ``secret``, ``token``, ``api_key``/``apikey``/``api-key``, ``access_key``
  or ``credential``, given with ``=`` or ``:`` in text (``API_KEY=...``), 8 or more
  characters up to a space, quote, comma or semicolon;
- ``named``: in a JSON line, the whole string value of a member whose name says it is
  a secret (``SECRET_NAME``: ``"password": "..."``, ``"GITHUB_TOKEN": "..."``), however
  short or spaced.

A private key whose END line never came (a cut tool output) is redacted to the end
of its string.

What it cannot know it leaves: a secret with no recognisable shape (a bare random
string with no name beside it, a passphrase with spaces given in text, one spread
over lines of text, a URL-encoded one) stays, and so does a member name. Rules are
applied to JSON string values one by one (``redact_json``), so the transcript stays
JSON line for line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

_KEYCHARS = r"[A-Za-z0-9_\-]"

RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE "
        r"KEY-----|.*\Z)", re.DOTALL)),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("anthropic-key", re.compile(rf"\bsk-ant-{_KEYCHARS}{{20,}}")),
    ("openai-key", re.compile(rf"\bsk-(?:proj-)?{_KEYCHARS}{{20,}}")),
    ("google-api-key", re.compile(rf"\bAIza{_KEYCHARS}{{35}}")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}")),
    ("bearer", re.compile(r"(?<=\b[Bb]earer )[A-Za-z0-9._~+/\-]{8,}=*"
                          r"|(?<=\b[Bb]asic )[A-Za-z0-9+/]{8,}=*"
                          r"|(?<=\b[Tt]oken )[A-Za-z0-9_\-]{20,}")),
    ("url-password", re.compile(r"(?<=://)(?:[^/\s:@]+):[^/\s@]{3,}(?=@)")),
    ("assignment", re.compile(
        # Led by the keyword (the name's prefix, DB_ in DB_PASSWORD, is left as it is
        # and need not be matched), so the engine does not try every word's start.
        r"(?i)(?P<name>(?:password|passwd|pwd|_pass|secret|token|api[_\-]?key|"
        r"access[_\-]?key|credential)"
        r"[\w.\-]*[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;]{8,})")),
)

MARK: Final = "[REDACTED:{kind}]"


def _replacer(kind: str) -> Callable[[re.Match[str]], str]:
    def replace(found: re.Match[str]) -> str:
        if kind == "assignment":
            value = found.group("value")
            if value.startswith("[REDACTED:"):
                return found.group(0)
            return found.group("name") + MARK.format(kind=kind)
        if kind == "url-password":
            user = found.group(0).split(":", 1)[0]
            return f"{user}:{MARK.format(kind=kind)}"
        return MARK.format(kind=kind)

    return replace


_GATES: Final[dict[str, tuple[str, ...]]] = {
    "private-key": ("private key",), "aws-access-key": ("akia", "asia"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",), "slack-token": ("xox",), "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",), "google-api-key": ("aiza",), "stripe-key": ("k_live_",),
    "jwt": ("eyj",), "bearer": ("bearer ", "basic ", "token "), "url-password": ("://",),
    "assignment": ("pass", "pwd", "secret", "token", "api", "access", "credential"),
}
"""The lower-case text a rule's match always contains: a rule runs only where one is
(the regular expressions cost more than the substring tests that skip them)."""

_REPLACERS: Final = tuple((pattern, _replacer(kind), _GATES[kind]) for kind, pattern in RULES)


_TRIGGERS: Final = (
    "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxa-",
    "xoxb-", "xoxp-", "xoxr-", "xoxs-", "sk-", "sk_live_", "rk_live_", "aiza", "eyj",
    "bearer ", "basic ", "token", "://", "private", "pass", "pwd", "secret", "api",
    "access", "credential", "auth")
"""What every rule's match contains, in lower case: a text holding none of these holds
no secret the rules would find, so it is passed over whole (most of a transcript).
Plain substring tests: many times faster than one alternation over the text."""


def may_hold_secret(text: str) -> bool:
    """Whether any rule could match in ``text`` (or a JSON member name in it could
    be a secret's): False lets a caller keep it as it is."""
    low = text.lower()
    return any(trigger in low for trigger in _TRIGGERS)


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with every secret the rules recognise replaced, and how many were."""
    if not may_hold_secret(text):
        return text, 0
    total = 0
    low = text.lower()
    for pattern, replace, gates in _REPLACERS:
        if any(gate in low for gate in gates):
            text, count = pattern.subn(replace, text)
            total += count
    return text, total


SECRET_NAME: Final = re.compile(
    r"(?i)(?:password|passwd|pwd|(?:^|[_\-])pass$|secret|(?:^|[_\-])token$|api[_\-]?key|"
    r"access[_\-]?key|private[_\-]?key|credential|authorization)")
"""A JSON member name whose string value is a secret whatever it looks like
(``"password": "..."``, ``"GITHUB_TOKEN": "..."``)."""


def redact_json(value: object, name: str | None = None) -> tuple[object, int]:
    """A parsed JSON value with every string in it redacted: a string value of a
    member whose name says it is a secret (``SECRET_NAME``) whole, any other by the
    rules. Member names are kept as they are."""
    if isinstance(value, str):
        if name is not None and SECRET_NAME.search(name) and value.strip() \
                and not value.startswith("[REDACTED:"):
            return MARK.format(kind="named"), 1
        return redact_text(value)
    if isinstance(value, list):
        out: list[object] = []
        total = 0
        for item in value:
            done, count = redact_json(item)
            out.append(done)
            total += count
        return out, total
    if isinstance(value, dict):
        mapped: dict[str, object] = {}
        total = 0
        for key, item in value.items():
            done, count = redact_json(item, key)
            mapped[key] = done
            total += count
        return mapped, total
    return value, 0


__all__ = ["MARK", "RULES", "may_hold_secret", "redact_json", "redact_text"]
