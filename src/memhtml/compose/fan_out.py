"""The fan-out the CLI hands work that is pure and large enough to share between cores.

Only the composition root picks it: ``adapters.fork_pool`` forks the calling process,
which is safe where one thread runs (a CLI command) and is never offered to the MCP
server, whose threads a fork would not carry.
"""

from __future__ import annotations

from memhtml.contracts.services import FanOut


def fan_out() -> FanOut:
    """A fork pool over the cores this process may use."""
    from memhtml.adapters.fork_pool import fork_pool

    return fork_pool()


__all__ = ["fan_out"]
