"""``hermes doctor``'s check of memory (``doctor_checks``): MEMORY.md and USER.md are usable
(readable UTF-8 text within their limits; else memory writes are refused), and the external
provider ``memory.provider`` selects, once loaded, is available and not failing, from what
``hermes memory status`` shows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.api import Finding

if TYPE_CHECKING:
    from hermes_agent import Kernel

FIXED = " until it is fixed: "


def memory_findings(kernel: "Kernel") -> list[Finding]:
    from .cli import status_data

    data = status_data(kernel)
    out = []
    for name, info in sorted(data["builtin"].items()):
        problem = " ".join(str(info["problem"]).split())
        if problem:
            what, _, fix = problem.partition(FIXED)
            out.append(Finding(f"memory {Path(info['file']).name}", "problem", what,
                               fix.rstrip(".") or f"hermes memory edit {name}"))
    external = data["provider"]
    if external is not None:
        out.extend(_external(external))
    if not out:
        out.append(Finding("memory", "ok", "MEMORY.md and USER.md are usable" + (
            f"; provider {external['name']} is available" if external else "")))
    return out


def _external(external: dict) -> list[Finding]:  # type: ignore[type-arg]
    name = external["name"]
    check = f"memory provider {name}"
    if external["state"] != "loaded":
        return []  # not loaded: the plugins' and the slots' checks say why
    if external["available"] is not True:
        why = f": {external['reason']}" if external["reason"] else ""
        return [Finding(check, "problem", f"{name} says it is not available{why}",
                        "check its key and server (`hermes memory status`), or `hermes memory "
                        "setup`")]
    health = external["health"] or {}
    failed = int(health.get("failures", 0)) + int(health.get("timeouts", 0))
    if failed:
        return [Finding(check, "warn", f"{failed} of {health.get('calls', 0)} calls failed or "
                        f"timed out; the last: {health.get('last_error', '')}",
                        "see `hermes memory status`; check the provider's key and server")]
    return []
