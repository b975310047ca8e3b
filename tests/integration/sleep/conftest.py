"""The browser fixtures of the published-site tests, shared: one Chromium per module."""

from __future__ import annotations

from tests.integration.publish.conftest import (  # noqa: F401 - fixtures and the marker
    browser,
    pytest_configure,
    watched,
)
