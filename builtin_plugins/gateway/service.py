"""The ``gateway`` service: the one running gateway of this process, if any."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


class GatewayService:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.runner: Any = None  # set by GatewayRunner.start, cleared by stop

    def adapter(self, name: str) -> Any:
        """The connected adapter of platform ``name``, or None (the ``platform_adapter`` hook,
        which ``ctx.get_platform_adapter`` asks)."""
        return None if self.runner is None else self.runner.live.get(name)
