"""The approval gate used by ``terminal`` (detection lives in :mod:`.danger`).

Order of checks for a command:

1. **Hard floor**: commands that would wreck the machine (deleting or moving away ``/``, the
   home directory or a system directory, formatting or overwriting a disk, a fork bomb), also
   when spelled indirectly, are always refused.
2. ``approvals.mode: off`` runs everything else.
3. Commands with no finding run.
4. Findings already approved for this session, or listed in ``command_allowlist``, run.
5. Otherwise a human decides through the call's ``approval_callback``. Without one (cron,
   subagents, scripts) the command is **denied**. ``pre_approval_request`` fires before asking
   and ``post_approval_response`` after. A command the detector cannot read
   (``indirect_command``) goes the same way: asked, or denied with nobody to ask.

The gate is generic (:meth:`ApprovalGate.decide`), so the agent loop can route a
``pre_tool_call`` ``{"action": "approve"}`` directive through the same path.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import APPROVAL_CHOICES, APPROVAL_GATE, ApprovalRequest, ToolCallContext

from .danger import DESCRIPTIONS, HARD_KEYS, Finding, analyse, dangerous, hardline, judge

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.approvals")

__all__ = ["DESCRIPTIONS", "HARD_KEYS", "ApprovalGate", "Finding", "Verdict", "analyse",
           "approval_gate", "dangerous", "hardline"]


@dataclass
class Verdict:
    allowed: bool
    choice: str = ""  # once | session | always | deny | timeout | off | allowlist | safe | hardline
    message: str = ""
    pattern_keys: tuple[str, ...] = ()


@dataclass
class ApprovalGate:
    """Approval state for one kernel: per-session approvals and the persistent allowlist."""

    kernel: "Kernel"
    session_approved: dict[str, set[str]] = field(default_factory=dict)
    _allow_added: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def mode(self) -> str:
        return str(self.kernel.config.get("approvals.mode") or "manual")

    def allowlist(self) -> set[str]:
        configured = self.kernel.config.get("command_allowlist") or []
        return {str(k) for k in configured} | self._allow_added

    def check_command(self, command: str, ctx: ToolCallContext,
                      cwd: Path | None = None) -> Verdict:
        """The verdict for running ``command`` in ``cwd`` (default: the call's directory)."""
        floor, finding = judge(command, str(cwd or ctx.cwd))
        if floor is not None:
            return Verdict(False, "hardline", (
                f"Refused: this command is never run by the agent ({floor.description}). If it "
                "is really intended, the user must run it themselves."), floor.keys)
        if self.mode == "off":
            return Verdict(True, "off")
        if finding is None:
            return Verdict(True, "safe")
        return self.decide(command, finding.description, finding.keys, ctx)

    def decide(self, subject: str, description: str, keys: tuple[str, ...],
               ctx: ToolCallContext) -> Verdict:
        """Ask for a decision about ``subject`` (unless its keys are already approved)."""
        with self._lock:
            known = self.session_approved.get(ctx.state_key, set()) | self.allowlist()
        if keys and all(k in known for k in keys):
            return Verdict(True, "allowlist", pattern_keys=keys)
        timeout = float(self.kernel.config.get("approvals.timeout") or 60)
        request = ApprovalRequest(subject, description, keys, ctx.session_id, ctx.surface, timeout)
        payload: dict[str, Any] = {
            "command": subject, "description": description, "pattern_key": request.pattern_key,
            "pattern_keys": list(keys), "session_key": ctx.state_key, "surface": ctx.surface,
            "turn_id": ctx.turn_id, "tool_call_id": ctx.tool_call_id}
        self.kernel.hooks.fire("pre_approval_request", **payload)
        if ctx.approval_callback is None:
            choice = "deny"
        else:
            choice = _ask(ctx.approval_callback, request, ctx.interrupt_event)
        self.kernel.hooks.fire("post_approval_response", **payload,
                               choice="deny" if choice == "interrupted" else choice,
                               decided_by=None)
        if choice in ("once", "session", "always"):
            self._remember(choice, keys, ctx)
            return Verdict(True, choice, pattern_keys=keys)
        if ctx.approval_callback is None:
            message = (f"Denied: this command needs approval ({description}) and nobody can "
                       "approve it here. Do not retry it; use a safer command or ask the user "
                       "to run it. (The operator can allow such commands with "
                       "`hermes config set approvals.mode off`.)")
        elif choice == "interrupted":
            message = (f"Not run: the user interrupted instead of approving ({description}).")
        elif choice == "timeout":
            message = (f"Denied: nobody answered the approval request ({description}) within "
                       f"{timeout:g} s. Do not retry it without asking the user.")
        else:
            message = (f"Denied by the user: {description}. Do not retry it; ask the user how "
                       "to proceed or find another way.")
        return Verdict(False, choice, message, keys)

    def _remember(self, choice: str, keys: tuple[str, ...], ctx: ToolCallContext) -> None:
        if choice == "once" or not keys:
            return
        with self._lock:
            self.session_approved.setdefault(ctx.state_key, set()).update(keys)
            if choice != "always":
                return
            new = sorted(set(keys) - self.allowlist())
            self._allow_added.update(keys)
        if new:
            self._persist(new)

    def _persist(self, keys: list[str]) -> None:
        from hermes_agent import write_config_value
        from hermes_agent import ConfigError

        current = [str(k) for k in self.kernel.config.get("command_allowlist") or []]
        try:
            write_config_value(self.kernel.home, "command_allowlist",
                               sorted(set(current) | self._allow_added))
        except (ConfigError, OSError) as exc:
            log.warning("could not save approvals %s to config.yaml: %s (kept for this run)",
                        ", ".join(keys), exc)


def approval_gate(kernel: "Kernel") -> ApprovalGate:
    """The approval gate of ``kernel``: the ``approval_gate`` service this plugin offers (one
    per kernel, shared by every caller), as this plugin's own class."""
    gate = kernel.service(APPROVAL_GATE)
    if not isinstance(gate, ApprovalGate):
        raise TypeError(f"the approval_gate service is {type(gate).__name__}, not core_tools'")
    return gate


def _ask(callback: Any, request: ApprovalRequest,
         interrupt: threading.Event | None = None) -> str:
    """Run the callback with the request's timeout; anything but a known choice is a denial.
    Returns ``"timeout"`` when nobody answered in time and ``"interrupted"`` as soon as the
    run is interrupted while waiting."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["answer"] = callback(request)
        except Exception as exc:  # a broken prompt must not approve anything
            log.warning("approval callback raised %s: %s (treated as deny)", type(exc).__name__, exc)
            box["answer"] = "deny"

    worker = threading.Thread(target=run, name="hermes-approval", daemon=True)
    worker.start()
    deadline = time.monotonic() + request.timeout
    while worker.is_alive():
        if interrupt is not None and interrupt.is_set():
            return "interrupted"
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        worker.join(min(left, 0.05))
    answer = str(box.get("answer") or "deny").strip().lower()
    if answer == "interrupted" or interrupt is not None and interrupt.is_set():
        return "interrupted"  # the prompt was given up by a Ctrl-C
    # a callback that gave up waiting itself says "timeout": a denial, reported as such
    return answer if answer in (*APPROVAL_CHOICES, "timeout") else "deny"
