"""The room's own refusal: a request that is not sent.

An answer that is off its contract is ``ModelMalformed`` (contracts); a request this
room will not put on the wire (a schema outside the subset, a tool name a provider
rejects, an ``extra_body`` that would replace a field) is ``RequestRefused``. The
difference matters to the caller: a refused request is a fault of the phase or of the
settings, found before any call is spent, and retrying it can never help.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RequestRefused:
    """A request refused before it was sent, and every reason why (joined)."""

    reason: str
