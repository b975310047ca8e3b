"""Whether the real small model can run here, and what a test does when it cannot.

The ``model`` extra (llama-cpp-python's server and the packaged Gemma 3 270M) is
part of the README's test command and of CI, where ``just test`` sets
``MEMHTML_REAL_MODEL=required``: there a missing extra fails the test instead of
skipping it, so a broken install cannot pass as a green run. Elsewhere (a checkout
installed without the extra) the tests skip and say how to install it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.llama_server import missing

REQUIRED_ENV = "MEMHTML_REAL_MODEL"


def need_real_model() -> None:
    """Skip (or, where required, fail) when the real server cannot run here."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get(REQUIRED_ENV) == "required":
        pytest.fail(f"{REQUIRED_ENV}=required but {reason}")
    pytest.skip(reason)


def weights_cache(factory: pytest.TempPathFactory) -> Path:
    """Where the assembled weights live for this test run: one file shared by every
    worker (``bench.llama_server.model_file`` writes it atomically)."""
    return factory.getbasetemp().parent / "gemma-weights"
