"""What a tainted turn may do (``security.tainted_turns: ask | allow | deny``, default ask).

Once untrusted text is in the context, the model may be following someone else's orders, so
a call that could send data out or change what later sessions see needs a human: commands
that can reach the network (every ``terminal`` command and ``execute_code`` script unless
``sandbox.network: false`` or ``sandbox.mode: strict``), an ``unconfined`` command, a ``web_extract`` of a URL that no user
or untrusted message contains (the model built it), ``send_message``-like delivery, writes
to memory, skills and cron jobs, file writes outside the workspace when the sandbox is off,
MCP tools and any tool not known to be read-only (marked ``parallel_safe``, as an MCP server
with ``parallel_safe: true`` is). A URL the model built with data in it
(:mod:`.exfil`) is refused outright. Read-only tools and file writes inside the workspace go
on. With ``ask`` and nobody to approve (``chat -q``, cron, a gateway turn whose sender is not
on the allow-list) the call is refused with a message the model can act on. docs/security.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError
from hermes_agent.api import APPROVAL_GATE, ToolCallContext
from hermes_agent.kits.tool_results import is_parallel_safe

from .exfil import data_urls

if TYPE_CHECKING:
    from hermes_agent import Kernel

MODES = ("ask", "allow", "deny")
READ_ONLY = frozenset({"read_file", "search_files", "web_search", "session_search",
                       "skill_view", "skills_list", "vision_analyze", "todo", "clarify"})
WORKSPACE_WRITES = frozenset({"write_file", "patch"})
DELIVERY = frozenset({"send_message", "send_email", "post_message"})
READ_ACTIONS = {"cronjob": frozenset({"list"}),  # actions of a write tool that only read
                "send_message": frozenset({"list"})}
WRITES = {"memory": "writes memory that every later session sees",
          "skill_manage": "changes skills that later sessions load",
          "cronjob": "schedules a job that runs later without you",
          "config": "changes hermes's configuration"}


@dataclass
class TaintPolicy:
    """One turn's view: the source that tainted it and the text URLs may come from."""

    kernel: "Kernel"
    source: str | None  # None: the turn is not tainted
    known_text: Callable[[], str] = lambda: ""
    mode: str = "ask"
    asker_trusted: bool = True  # False: the turn's sender is untrusted and may not approve
    _known: str | None = field(default=None, repr=False)

    @classmethod
    def for_turn(cls, kernel: "Kernel", source: str | None, known_text: Callable[[], str],
                 asker_trusted: bool = True) -> "TaintPolicy":
        mode = str(kernel.config.get("security.tainted_turns", "ask") or "ask")
        return cls(kernel, source, known_text, mode if mode in MODES else "ask", asker_trusted)

    def known(self, url: str) -> bool:
        if self._known is None:
            self._known = self.known_text()
        return url in self._known

    def check(self, name: str, args: dict[str, Any], ctx: ToolCallContext) -> str | None:
        """None when the call may run; else the refusal the model gets as its result."""
        if self.source is None or self.mode == "allow":
            return None
        leaked = data_urls(json.dumps(args, ensure_ascii=False), self.known)
        if leaked:
            url, why = leaked[0]
            return (f"Refused: this turn read untrusted text (from {self.source}), and {name} "
                    f"would open {url}, which {why}: a link built with data in it can carry "
                    "data out. Do not retry it; tell the user what you wanted to fetch.")
        reason = self.reason(name, args, ctx)
        if reason is None:
            return None
        why = f"this turn read untrusted text (from {self.source}) and {name} {reason}"
        if self.mode == "deny":
            return (f"Refused: {why}; security.tainted_turns is deny. Do not retry it; finish "
                    "without it and tell the user what you would have done.")
        if not self.asker_trusted:  # a stranger approving his own request is no approval
            ctx = replace(ctx, approval_callback=None)
        if self._approved(name, args, why, ctx):  # without a callback the gate says no
            return None
        if ctx.approval_callback is None:
            return (f"Refused: {why}, which needs the user's approval, and nobody can approve "
                    "it here. Do not retry it; finish without it and tell the user what you "
                    f"would have done{self._trust_hint()}.")
        return f"Refused: the user did not approve it ({why}). Do not retry it."

    def _trust_hint(self) -> str:
        """For a turn tainted by a project's own files: how the user makes them trusted."""
        if self.source is None or not self.source.endswith("(untrusted project)"):
            return ""
        return (", and that if the folder is theirs, `hermes trust` run in it (or "
                "projects.trusted in config.yaml) makes its files trusted")

    def _approved(self, name: str, args: dict[str, Any], why: str,
                  ctx: ToolCallContext) -> bool:
        """The approval gate's answer (its hooks fire); no keys, so it is never remembered.
        Without a gate (core_tools not loaded) nobody can approve."""
        try:
            gate = self.kernel.service(APPROVAL_GATE)
        except HermesError:
            return False
        return bool(gate.decide(_subject(name, args), why, (), ctx).allowed)

    def reason(self, name: str, args: dict[str, Any], ctx: ToolCallContext) -> str | None:
        """Why ``name`` needs approval in a tainted turn (None: it may run)."""
        if name in READ_ONLY:
            return None
        if name == "terminal":
            return self._terminal(args)
        if name == "execute_code":  # its calls are judged one by one; the script itself
            found = self._terminal({})  # runs in the sandbox as a command does
            return found and found.replace("a command", "a script")
        if name == "web_extract":
            urls = [str(u) for u in args.get("urls") or [args.get("url", "")] if u]
            built = [u for u in urls if not self.known(u)]
            return (f"would fetch {built[0]}, a URL no user or untrusted message contains"
                    if built else None)
        if name in WORKSPACE_WRITES:
            return self._file_write(args, ctx)
        if str(args.get("action", "")) in READ_ACTIONS.get(name, frozenset()):
            return None
        if name in DELIVERY:
            target = str(args.get("target", "") or "")
            return f"sends a message out{f' (to {target})' if target else ''}"
        if name in WRITES:
            return WRITES[name]
        if name == "delegate_task":
            return "starts a subagent with instructions this turn wrote"
        spec = self.kernel.tools.tools.get(name)
        if spec is not None and is_parallel_safe(spec.handler):
            return None  # declared read-only (``parallel_safe``, an MCP server's setting)
        return "is not known to be read-only"

    def _terminal(self, args: dict[str, Any]) -> str | None:
        config = self.kernel.config
        mode = str(config.get("sandbox.mode", "workspace") or "workspace")
        if args.get("unconfined") or mode == "off":
            return "runs a command outside the sandbox"
        if mode != "strict" and config.get("sandbox.network", True) is not False:
            return "runs a command that can reach the network (sandbox.network is on)"
        return None

    def _file_write(self, args: dict[str, Any], ctx: ToolCallContext) -> str | None:
        if str(self.kernel.config.get("sandbox.mode", "workspace")) != "off":
            return None  # the sandbox keeps file tools inside the workspace
        target = ctx.resolve(str(args.get("path", "")))
        if target.resolve().is_relative_to(ctx.cwd):
            return None
        return f"writes {target}, outside the workspace"


def _subject(name: str, args: dict[str, Any]) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return f"{name} {text if len(text) <= 400 else text[:399] + '…'}"
