"""What the sandbox of the agent's commands is on this machine, for ``hermes sandbox status``
and ``hermes doctor``: :func:`sandbox_status` (a stable signature: callers outside this
package use it) and :func:`status_lines`, its text.

A status never pretends: with no working mechanism it says that commands are NOT confined
(``confined`` false, ``statement`` says why and the fix), with a configured mechanism that
does not work here it says that commands are refused (``error``), and ``limits`` lists what
the mechanism in use does not confine compared with bubblewrap.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .bwrap import PRIVATE_TMP, daemon_sockets
from .policy import SandboxPolicy, policy_for
from .runner import Mechanism, mechanism_for


class SandboxStatus(BaseModel):
    """The sandbox a session started in one folder gets (JSON: ``hermes sandbox status
    --json``; every field is there on every platform)."""

    platform: str  # sys.platform: linux, darwin, ...
    mechanism: str  # bubblewrap | landlock | none | off (sandbox.mode: off)
    requested: str  # sandbox.mechanism: auto | bubblewrap | landlock
    why: str  # why this mechanism: "bubblewrap not found; Landlock ABI 7"
    confined: bool  # whether commands run confined
    statement: str  # one sentence for people: what is confined, or that nothing is and why
    error: str = ""  # the configured mechanism does not work here: commands are refused
    why_none: str = ""  # for "none": what is missing and how to fix it
    version: str = ""  # bubblewrap's version, or "Landlock ABI N"
    landlock_abi: int = 0  # the Landlock ABI in use (0: not Landlock)
    mode: str  # sandbox.mode
    workspace: str  # "" when there is none
    why_no_workspace: str = ""
    writable: list[str] = Field(default_factory=list)
    private_tmp: str  # "/tmp" (bubblewrap), "$TMPDIR" (Landlock), "" (none)
    hidden: list[str] = Field(default_factory=list)
    hidden_enforced: bool  # commands cannot read what is in the hidden paths
    hidden_listable: bool  # ... but can list the names in a hidden folder (Landlock)
    network: bool  # the network setting in effect (strict: off)
    network_enforced: str  # how "off" is enforced; what stays open ("" when on)
    limits: list[str] = Field(default_factory=list)  # what this mechanism does not confine


def sandbox_status(config: Any, cwd: Path, home: Path) -> SandboxStatus:
    """The sandbox of a session started in ``cwd`` under ``config`` (anything with
    ``config.get(dotted, default)``, as the kernel's config) with hermes's home ``home``
    (``$HERMES_HOME``, ``kernel.home``). Probes the machine once per process."""
    return status_of(policy_for(config, cwd, home))


def status_of(policy: SandboxPolicy) -> SandboxStatus:
    found = mechanism_for(policy)
    name = found.name if policy.confined else "off"
    confined = policy.confined and found.works
    base: dict[str, Any] = dict(
        platform=sys.platform, mechanism=name, requested=policy.mechanism,
        why=found.why or found.why_none, confined=confined, error=found.error,
        why_none=found.why_none, version=found.version, landlock_abi=found.abi,
        mode=policy.mode, workspace=str(policy.workspace or ""),
        why_no_workspace=policy.why_no_workspace,
        writable=[str(path) for path in policy.writable], hidden=[str(p) for p in policy.hidden],
        network=policy.network)
    if not policy.confined:
        return SandboxStatus(**base, statement=(
            "off (sandbox.mode: off in config.yaml): commands run unconfined"), private_tmp="",
            hidden_enforced=False, hidden_listable=True, network_enforced="")
    if not found.works:
        statement = (f"commands are REFUSED: {found.error}" if found.error else
                     f"commands are NOT confined: {found.why_none}")
        return SandboxStatus(**base, statement=statement, private_tmp="",
                             hidden_enforced=False, hidden_listable=True,
                             network_enforced="" if policy.network else "not enforced")
    if found.name == "bubblewrap":
        return SandboxStatus(**base, statement=(
            f"commands run under bubblewrap ({found.path}): writes only in the writable roots "
            "and a private /tmp, hidden paths invisible"), private_tmp=PRIVATE_TMP,
            hidden_enforced=True, hidden_listable=False,
            network_enforced="" if policy.network else "no interface but a private loopback",
            limits=["services on the host's loopback stay reachable while the network is on"])
    exposed = hidden_in_writable(policy)
    return SandboxStatus(**base, statement=(
        f"commands run under Landlock (ABI {found.abi}): writes only in the writable roots and "
        "a private $TMPDIR, hidden paths unreadable; weaker than bubblewrap (see limits)"),
        private_tmp="$TMPDIR", hidden_enforced=not exposed, hidden_listable=True,
        network_enforced="" if policy.network else _landlock_network(found),
        limits=landlock_limits(found, policy))


def hidden_in_writable(policy: SandboxPolicy) -> list[str]:
    """The hidden paths (present) inside a writable root: under Landlock a command can move
    them out of their folder (a rename needs only write rights) and read them next time."""
    return [str(path) for path in policy.hidden if os.path.lexists(path)
            and any(root in path.parents for root in policy.writable)]


def _landlock_network(found: Mechanism) -> str:
    if found.abi < 4:
        return f"NOT enforced: Landlock ABI {found.abi} has no network rules (ABI 4 has)"
    return "TCP only: no TCP connect or bind; UDP (DNS, QUIC) and Unix sockets stay open"


def landlock_limits(found: Mechanism, policy: SandboxPolicy) -> list[str]:
    """What Landlock (at ``found.abi``) does not do that bubblewrap does."""
    limits = [
        "the names in a hidden folder can be listed (`ls ~/.ssh`); what is in its files "
        "cannot be read",
        "no private /tmp: the host's /tmp cannot be read or written; commands get a private "
        "$TMPDIR (a command that writes to /tmp by name fails)",
        "hermes's and the user's processes are visible in /proc (no PID namespace); ptrace "
        "and /proc/PID/environ of them are refused",
        "no /dev/shm (POSIX shared memory: multiprocessing's locks fail)",
    ]
    exposed = hidden_in_writable(policy)
    limits.append("a hidden path inside a writable root is NOT protected: a command can "
                  "overwrite, delete or move it (and read it once moved); keep secrets outside "
                  "the workspace, or install bubblewrap"
                  f"{': ' + ', '.join(exposed) if exposed else ''}")
    if found.abi < 6:
        limits.append(f"signals to the user's processes are not stopped (Landlock ABI "
                      f"{found.abi}; ABI 6 scopes them)")
    reachable = [str(path) for path in daemon_sockets() if os.path.exists(path)]
    limits.append("Unix sockets on disk stay reachable (hermes does not use Landlock's ABI 9 "
                  f"socket rule yet){': ' + ', '.join(reachable) if reachable else ''}")
    return limits


def status_lines(status: SandboxStatus | SandboxPolicy) -> list[str]:
    """``hermes sandbox status``'s text."""
    if isinstance(status, SandboxPolicy):
        status = status_of(status)
    if status.mechanism == "off":
        used = status.statement
    elif status.mechanism == "none":
        used = f"NONE, {status.statement}"
    else:
        used = f"{status.mechanism} ({status.why})"
    lines = [f"mechanism: {used}", f"mode: {status.mode}", f"platform: {status.platform}",
             f"workspace: {status.workspace or 'none: ' + status.why_no_workspace}",
             "writable:"]
    lines += [f"  {root}{'' if Path(root).exists() else ' (missing)'}"
              for root in status.writable]
    if status.private_tmp == PRIVATE_TMP:
        lines.append(f"  {PRIVATE_TMP} (private, empty at each command)")
    elif status.private_tmp:
        lines.append(f"  {status.private_tmp} (a private folder, removed after each command)")
    reads = ("" if not status.confined else " (not visible)" if not status.hidden_listable
             else " (contents unreadable, names listable)" if status.hidden_enforced
             else " (contents unreadable, names listable; NOT protected inside a writable root)")
    lines.append(f"hidden{reads}:")
    lines += [f"  {path}{'' if Path(path).exists() else ' (absent)'}" for path in status.hidden]
    network = "on" if status.network else "off"
    lines.append(f"network: {network}"
                 f"{' (' + status.network_enforced + ')' if status.network_enforced else ''}")
    if status.confined and status.limits:
        lines.append("limits:")
        lines += [f"  {limit}" for limit in status.limits]
    return lines
