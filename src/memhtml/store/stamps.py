"""Write stamps: the clock's time in the format's sortable instant form."""

from __future__ import annotations

from datetime import UTC, datetime


def now_stamp(at: datetime) -> str:
    """A datetime in the format's sortable instant form, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
