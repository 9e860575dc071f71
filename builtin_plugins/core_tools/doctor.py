"""``hermes doctor``'s check of the sandbox (``doctor_checks``): which mechanism confines
the agent's commands here, as ``hermes sandbox status`` shows it (:func:`.sandbox.status.
sandbox_status`), and the fix when none does or when it confines less than bubblewrap."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding

if TYPE_CHECKING:
    from hermes_agent import Kernel

INSTALL = ("install bubblewrap: `apt-get install bubblewrap` (Debian/Ubuntu), `dnf install "
           "bubblewrap` (Fedora), or `pip install 'hermes-agent-runtime[sandbox]'`")


def sandbox_findings(kernel: "Kernel", config: Any, offline: bool) -> list[Finding]:
    from .sandbox.status import sandbox_status

    cwd = Path(kernel.cwd) if getattr(kernel, "cwd", None) else Path.cwd()
    status = sandbox_status(config, cwd, Path(kernel.home))
    if status.mechanism == "off":
        return [Finding("sandbox", "warn", "sandbox.mode is off in config.yaml: the commands "
                        "the agent runs are not confined (they can change and read anything "
                        "you can)", "hermes config set sandbox.mode workspace")]
    if status.error:  # a mechanism named in config.yaml that does not work here
        return [Finding("sandbox", "problem", f"commands are refused: {status.error}",
                        "set sandbox.mechanism to auto, or make the named mechanism work; "
                        "then check with `hermes sandbox status`")]
    if not status.confined:
        fix = INSTALL
        if "namespace" in status.why_none or "cannot start" in status.why:
            fix = ("allow unprivileged user namespaces (sysctl "
                   "kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap), "
                   "or run on Linux 6.2+ for Landlock")
        return [Finding("sandbox", "problem", "commands the agent runs are NOT confined: "
                        f"{status.why_none or status.statement}",
                        f"{fix}; then check with `hermes sandbox status`")]
    version = f", {status.version}" if status.version else ""
    line = (f"{status.mechanism}{version}, mode {status.mode}, network "
            f"{'on' if status.network else 'off'}")
    if status.mechanism == "landlock":
        weaker = "; ".join(status.limits[:3]) or "it confines less than bubblewrap"
        return [Finding("sandbox", "warn", f"{line}: Landlock confines less than bubblewrap "
                        f"({weaker})", f"{INSTALL} for the full sandbox")]
    return [Finding("sandbox", "ok", line)]
