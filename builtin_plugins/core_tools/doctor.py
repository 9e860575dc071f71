"""``hermes doctor``'s check of the sandbox (``doctor_checks``): which mechanism confines
the agent's commands here, as ``hermes sandbox status`` shows it, and the fix when none."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding

if TYPE_CHECKING:
    from hermes_agent import Kernel


def sandbox_state(config: Any, cwd: Path, home: Path) -> tuple[Any, Any]:
    """The policy and the mechanism, the same facts ``hermes sandbox status`` prints (the
    one place to change when the sandbox offers them as one status)."""
    from .sandbox.policy import policy_for
    from .sandbox.runner import mechanism

    return policy_for(config, cwd, home), mechanism()


def sandbox_findings(kernel: "Kernel", config: Any, offline: bool) -> list[Finding]:
    cwd = Path(kernel.cwd) if getattr(kernel, "cwd", None) else Path.cwd()
    policy, found = sandbox_state(config, cwd, Path(kernel.home))
    if not policy.confined:
        return [Finding("sandbox", "warn", "sandbox.mode is off in config.yaml: the commands "
                        "the agent runs are not confined (they can change and read anything "
                        "you can)", "hermes config set sandbox.mode workspace")]
    if not found.works:
        if found.path:  # bubblewrap is there but cannot start a sandbox
            fix = ("allow unprivileged user namespaces (sysctl "
                   "kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap)")
        else:
            fix = ("install bubblewrap: `apt-get install bubblewrap` (Debian/Ubuntu), `dnf "
                   "install bubblewrap` (Fedora), or `pip install 'hermes-agent-runtime[sandbox]'`")
        return [Finding("sandbox", "problem", "commands the agent runs are NOT confined: "
                        f"{found.why_none}", f"{fix}; then check with `hermes sandbox status`")]
    version = f", {found.version}" if found.version else ""
    return [Finding("sandbox", "ok", f"{found.name} ({found.path}{version}), mode "
                    f"{policy.mode}, network {'on' if policy.network else 'off'}")]
