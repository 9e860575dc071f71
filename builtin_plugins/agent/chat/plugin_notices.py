"""One line per plugin that failed: at chat start (it did not load) and after a turn (it
was unloaded for trying to stop hermes). Each names the plugin and what to run next."""

from __future__ import annotations

from typing import Any


def load_failures(kernel: Any) -> list[str]:
    """Plugins that failed to load in this kernel (builtins aside: they cannot be fixed here)."""
    lines = []
    for status in kernel.plugins.values():
        if status.state != "failed" or status.record.source == "builtin" or status in kernel.faults:
            continue
        why = status.cause or (status.reason.strip().splitlines() or [""])[0]
        lines.append(f"plugin {status.name} failed to load ({why}); "
                     f"see `hermes plugins doctor {status.name}`")
    return lines


class FaultNotices:
    """Reports, once each, the plugins the kernel unloaded since the last call."""

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.seen = len(kernel.faults)

    def new(self) -> list[str]:
        faults = self.kernel.faults[self.seen:]
        self.seen += len(faults)
        return [f"plugin {s.name} was unloaded: it raised {s.cause or 'an exit'} while hermes "
                f"ran; disable it with `hermes plugins disable {s.name}`, or update it"
                for s in faults]
