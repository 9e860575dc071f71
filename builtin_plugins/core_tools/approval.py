"""Dangerous-command detection and the approval gate used by ``terminal``.

Order of checks for a command:

1. **Hard floor**: a few commands that would wreck the machine (deleting ``/`` or the home
   directory, formatting a disk, writing to a raw disk, a fork bomb) are always refused.
2. ``approvals.mode: off`` runs everything else.
3. Commands matching no dangerous pattern run.
4. Patterns already approved for this session, or listed in ``command_allowlist``, run.
5. Otherwise a human decides through the call's ``approval_callback``. Without one (cron,
   subagents, scripts) the command is **denied**. ``pre_approval_request`` fires before asking
   and ``post_approval_response`` after.

The gate is generic (:meth:`ApprovalGate.decide`), so the agent loop can route a
``pre_tool_call`` ``{"action": "approve"}`` directive through the same path.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .context import APPROVAL_CHOICES, ApprovalRequest, ToolCallContext

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.approvals")

_RM_RECURSIVE = (r"\brm\s+(?:-[-\w]*\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b")
_RECURSIVE_FLAG = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?=\s|$|[;&|)])"
#: commands that run the command after them (with their options and VAR=value settings)
_PREFIX = r"\b(?:sudo|doas|exec|xargs|time|nohup|nice|env)\s+(?:-\S+\s+|\w+=\S*\s+)*"
#: where a command word starts: the line's start, after an operator, or after a prefix command
_CMD = r"(?:^|[;&|(`{]\s*|\$\(\s*|" + _PREFIX + ")"
_SHELLS = r"(?:(?:ba|z|da|k|fi|c|tc)?sh|python[\d.]*|perl|ruby|node|php)\b"
_SYSTEM_DIRS = r"(?:/|/\*|~/?|\$HOME/?|/(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|sbin|srv|sys|usr|var)/?)"

#: (key, description, regex). Matched against a normalised command line.
HARDLINE: tuple[tuple[str, str, str], ...] = (
    ("delete_root", "recursive delete of the root, home or a system directory",
     _RM_RECURSIVE + r"(?:\s+-[-\w]+)*\s+(?:--\s+)?['\"]?" + _SYSTEM_DIRS + r"['\"]?(?:\s|$|;|&|\|)"
     r"|\brm\s+(?:--\s+)?['\"]?" + _SYSTEM_DIRS + r"['\"]?\s+(?:-\S+\s+)*" + _RECURSIVE_FLAG),
    ("format_disk", "formatting a disk", r"\bmkfs(?:\.\w+)?\b|\bmke2fs\b|\bwipefs\b"),
    ("dd_device", "dd writing to a raw disk", r"\bdd\b[^;|&]*\bof=/dev/(?:sd|hd|nvme|vd|xvd|mmcblk|disk)"),
    ("redirect_device", "writing to a raw disk", r">\s*/dev/(?:sd|hd|nvme|vd|xvd|mmcblk|disk)\w*"),
    ("fork_bomb", "a fork bomb", r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
)

DANGEROUS: tuple[tuple[str, str, str], ...] = (
    ("recursive_delete", "recursive delete",
     _RM_RECURSIVE + r"|\brm\s+[^;&|\n]*?\s" + _RECURSIVE_FLAG),
    ("find_delete", "deleting files found by find/xargs",
     r"\bfind\b.*\s-(?:delete|exec\s+rm)\b|\bxargs\s+(?:-\S+\s+)*rm\b"),
    ("disk_tool", "a disk or partition tool", _CMD + r"(?:dd|fdisk|parted|sfdisk|shred)\b(?!-)"),
    ("world_writable", "making files world-writable",
     r"\bchmod\s+(?:-[-\w]+\s+)*(?:0?777|a\+rwx|o\+w|ugo\+rwx)\b"),
    ("chown_root", "recursive change of ownership", r"\bchown\s+(?:-[-\w]*\s+)*-[a-zA-Z]*R"),
    ("pipe_to_shell", "running a downloaded script",
     r"\b(?:curl|wget|fetch)\b[^|;&]*\|\s*(?:" + _PREFIX + ")*" + _SHELLS +
     r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\b(?:ba|z)?sh\s+-c\s+['\"]?\$\(\s*(?:curl|wget)\b"
     r"|\bbase64\s+(?:-d|--decode)\b[^;&]*\|\s*(?:ba|z)?sh\b"),
    ("service_control", "stopping or restarting a system service",
     r"\bsystemctl\s+(?:\S+\s+)*(?:restart|stop|disable|mask|kill|poweroff|reboot|halt)\b"
     r"|\bservice\s+\S+\s+(?:restart|stop)\b|\blaunchctl\s+(?:unload|stop|remove|bootout)\b"),
    ("shutdown", "shutting down or rebooting",
     _CMD + r"(?:shutdown|reboot|halt|poweroff)\b|" + _CMD + r"init\s+[06]\b"),
    ("kill_all", "killing many processes",
     r"\bkill\s+(?:-\S+\s+)*-1\b|\bkillall\b|\bpkill\b|\bkill\s+-9\b"),
    ("sql_destroy", "destroying database data",
     r"(?i:\bdrop\s+(?:table|database|schema)\b|\btruncate\s+table\b"
     r"|\bdelete\s+from\s+[\w.]+\s*(?:;|$|\"|'))"),
    ("system_config_write", "overwriting system configuration",
     r"(?:>|\btee\b(?:\s+-a)?)\s*/etc/|\b(?:sed|perl)\s+-i\S*\s[^;|&]*/etc/"),
    ("git_destroy", "discarding git history or work",
     r"\bgit\s+(?:reset\s+--hard|clean\s+-[a-zA-Z]*f|push\s+(?:\S+\s+)*(?:-f|--force)\b"
     r"|branch\s+-D)"),
)

_HARD = [(k, d, re.compile(r)) for k, d, r in HARDLINE]
_DANGER = [(k, d, re.compile(r)) for k, d, r in DANGEROUS]


def normalise(command: str) -> str:
    """Fold line continuations, quotes around words and runs of whitespace; drop comments."""
    text = command.replace("\\\n", " ")
    text = re.sub(r"(?m)(^|\s)#[^\n]*", r"\1", text)
    text = re.sub(r"""(?<![\w=])(['"])([\w./~$*-]+)\1""", r"\2", text)  # 'rm' -> rm
    text = re.sub(r"\\(?=[a-z])", "", text)  # \rm -> rm
    text = re.sub(r"(?<![\w.-])/(?:usr/)?s?bin/(?=\w)", "", text)  # /bin/rm -> rm
    return re.sub(r"[ \t]+", " ", text).strip()


@dataclass(frozen=True)
class Finding:
    keys: tuple[str, ...]
    descriptions: tuple[str, ...]

    @property
    def description(self) -> str:
        return "; ".join(self.descriptions)


def _unquoted(text: str) -> str:
    """``text`` with the insides of quoted strings blanked, so an ``&`` or ``|`` in a quoted URL
    does not hide the pipe after it."""
    return re.sub(r""""[^"]*"|'[^']*'""", "_", text)


def _scan(command: str, table: list[tuple[str, str, re.Pattern[str]]]) -> Finding | None:
    text = normalise(command)
    bare = _unquoted(text)
    hits = [(k, d) for k, d, rx in table if rx.search(text) or rx.search(bare)]
    return Finding(tuple(k for k, _ in hits), tuple(d for _, d in hits)) if hits else None


def hardline(command: str) -> Finding | None:
    return _scan(command, _HARD)


def dangerous(command: str) -> Finding | None:
    return _scan(command, _DANGER)


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

    def check_command(self, command: str, ctx: ToolCallContext) -> Verdict:
        floor = hardline(command)
        if floor is not None:
            return Verdict(False, "hardline", (
                f"Refused: this command is never run by the agent ({floor.description}). If it "
                "is really intended, the user must run it themselves."), floor.keys)
        if self.mode == "off":
            return Verdict(True, "off")
        finding = dangerous(command)
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
        from hermes_agent import ConfigError, write_config_value

        current = [str(k) for k in self.kernel.config.get("command_allowlist") or []]
        try:
            write_config_value(self.kernel.home, "command_allowlist",
                               sorted(set(current) | self._allow_added))
        except (ConfigError, OSError) as exc:
            log.warning("could not save approvals %s to config.yaml: %s (kept for this run)",
                        ", ".join(keys), exc)


def approval_gate(kernel: "Kernel") -> ApprovalGate:
    """The approval gate of ``kernel`` (one per kernel, shared by every caller)."""
    return kernel.service("approval_gate", lambda: ApprovalGate(kernel))


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
    return answer if answer in APPROVAL_CHOICES else "deny"
