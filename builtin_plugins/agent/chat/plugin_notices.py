"""One line per plugin that failed: at chat start (it did not load) and after a turn (it
was unloaded for trying to stop hermes). Each names the plugin and what to run next."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent import Kernel


def load_failures(kernel: Kernel) -> list[str]:
    """One line per plugin that should be active and is not (the ``plugin_health`` service of
    the plugin-admin plugin), the plugins unloaded for a fault while hermes ran aside
    (FaultNotices reports those). Without that plugin there is nobody to ask: no lines."""
    from hermes_agent import ServiceError
    from hermes_agent.api import PLUGIN_HEALTH

    try:
        health = kernel.service(PLUGIN_HEALTH)
    except ServiceError:
        return []
    faulted = {status.name for status in kernel.faults}
    return [item.line for item in health.inactive() if item.name not in faulted]


class FaultNotices:
    """Reports, once each, the plugins the kernel unloaded since the last call."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.seen = len(kernel.faults)

    def new(self) -> list[str]:
        faults = self.kernel.faults[self.seen:]
        self.seen += len(faults)
        return [f"plugin {s.name} was unloaded: it raised {s.cause or 'an exit'} while hermes "
                f"ran; disable it with `hermes plugins disable {s.name}`, or update it"
                for s in faults]
