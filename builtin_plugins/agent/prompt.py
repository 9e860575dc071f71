"""System prompt assembly. Built once per session, then frozen (stored with the session and
reused every turn), so it must be deterministic: the same inputs give the same bytes.

Layers, in order (absent layers leave no trace):

 1. identity: ``$HERMES_HOME/SOUL.md`` (created on first run) or the built-in identity
 2. tool-aware guidance, for the tools this session offers (with what a ``/steer`` block is),
    and what the session's fences around untrusted text mean (when it has a fence nonce)
 3. static blocks of the active memory providers
 4. the configured system message (``agent.system_prompt``) and the caller's ``system_message``
 5. the frozen MEMORY snapshot
 6. the frozen USER profile snapshot
 7. the skills index
 8. one project context file kind (see context_files.py)
 9. the date the conversation started (date only) and the session id
10. the platform hint

Layers 3, 5, 6 and 7 come from other plugins through :mod:`.layers`. Turn-varying text (plugin
context from ``pre_llm_call``, ephemeral prompts) never goes here.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import ProjectTrust
from hermes_agent.api import LAYER_SEPARATOR, LayerRequest
from hermes_agent.kits.fence import notice as fence_notice

from . import context_files
from .layers import collect
from .soul import load_identity
from .truncation import DEFAULT_MAX_CHARS

if TYPE_CHECKING:
    from hermes_agent import Kernel

#: (tool that must be offered, guidance). Order is the prompt order.
TOOL_GUIDANCE: tuple[tuple[str, str], ...] = (
    ("read_file", "Prefer read_file, patch and search_files to shell commands for reading, "
                  "editing and finding files."),
    ("todo", "For work with several steps, keep a todo list and update it as items finish."),
    ("clarify", "If a request is ambiguous in a way that changes the outcome, ask with clarify; "
                "otherwise choose a sensible reading and say which one you chose."),
    ("memory", "You have persistent memory (the memory tool). Save lasting facts: the user's "
               "preferences, details of their environment, conventions and lessons learned. "
               "Keep entries short. The memory shown below was captured when this session "
               "started; what you save now appears from the next session on."),
    ("session_search", "When the user refers to an earlier conversation, search it with "
                       "session_search before asking them to repeat themselves."),
    ("skill_view", "Before starting a task, check the skills index below; if a skill fits, load "
                   "it with skill_view and follow it."),
    ("delegate_task", "Hand large, independent subtasks to delegate_task. A subagent knows only "
                      "what you tell it, so pass the goal and the context it needs."),
)

TOOLS_PREAMBLE = (
    "# Using your tools\nAct through your tools instead of describing what you would do. Never "
    "invent tool output, file contents or command results: if a tool fails, say so and try "
    "another way. Calls that do not depend on each other can be made together in one step.")

STEER_NOTE = (
    "A tool result may end with a block between [OUT-OF-BAND USER MESSAGE ...] and "
    "[/OUT-OF-BAND USER MESSAGE]: the user typed it while you worked. It is not tool output; "
    "follow it as guidance from the user for the rest of the task.")

PLATFORM_HINTS: dict[str, str] = {
    "cli": "You are talking to the user in a terminal. Write plain text that reads well "
           "without markdown rendering; short code blocks are fine.",
    "tui": "You are talking to the user in a terminal interface that renders markdown.",
    "telegram": "You are chatting on Telegram. Keep messages short; simple markdown works.",
    "discord": "You are chatting on Discord. Keep messages short; Discord markdown works.",
    "slack": "You are chatting on Slack. Keep messages short and use Slack-style formatting.",
    "whatsapp": "You are chatting on WhatsApp. Use short plain-text messages.",
    "signal": "You are chatting on Signal. Use short plain-text messages.",
    "sms": "You are replying by SMS. Use very short plain text without formatting.",
    "email": "You are replying by email. Write complete, well-structured plain text.",
    "cron": "You are running a scheduled task with nobody watching. Do not ask questions; "
            "finish the task and report the result.",
    "api_server": "You are answering through an API. Return exactly what was asked for.",
    "subagent": "You are a subagent working on one delegated task. Finish it, then reply with a "
                "short summary of what you did, what you found and any problems.",
}


@dataclass
class SystemPrompt:
    text: str
    layers: tuple[tuple[str, str], ...]  # (layer name, text) in order
    notices: list[str] = field(default_factory=list)  # for the user: blocked or truncated files

    def __str__(self) -> str:
        return self.text

    def layer(self, name: str) -> str | None:
        return next((text for layer, text in self.layers if layer == name), None)


def tool_guidance(tool_names: Iterable[str]) -> str:
    names = set(tool_names)
    if not names:
        return ""
    lines = [text for tool, text in TOOL_GUIDANCE if tool in names]
    return "\n\n".join([TOOLS_PREAMBLE, *lines, STEER_NOTE])


def platform_hint(kernel: Kernel, platform: str) -> str:
    """The platform plugin's own hint (``platform_hint``, as 0.19 plugins register it, or
    ``prompt_hint``), else the built-in one for that platform."""
    entry = kernel.slots.providers.get("platform", {}).get(platform) if platform else None
    for field_name in ("platform_hint", "prompt_hint"):
        hint = getattr(entry.obj, field_name, "") if entry is not None else ""
        if isinstance(hint, str) and hint.strip():
            return hint
    return PLATFORM_HINTS.get(platform, "")


def started_line(now: _dt.datetime | _dt.date, session_id: str) -> str:
    day = now.date() if isinstance(now, _dt.datetime) else now
    line = f"Conversation started: {day:%A, %B} {day.day}, {day.year}"
    return f"{line}\nSession ID: {session_id}" if session_id else line


def build_system_prompt(kernel: Kernel, *, session_id: str = "", platform: str = "cli",
                        tool_names: Iterable[str] = (), cwd: Path | str | None = None,
                        system_message: str = "", now: _dt.datetime | _dt.date | None = None,
                        skip_context_files: bool = False, fence_nonce: str = "") -> SystemPrompt:
    """The system prompt for a new session of ``kernel``'s agent.

    ``tool_names`` are the tools the session offers (they select the guidance); ``cwd`` is
    where project context files are looked up (default: the kernel's working directory, else
    the process's); ``now`` defaults to the current local time. ``fence_nonce`` is the
    session's delimiter for untrusted text (a fresh one when empty): context files of a
    folder ``projects.trusted`` does not cover are fenced with it.
    """
    home = Path(kernel.home)
    tools = tuple(sorted(set(tool_names)))
    work = Path(cwd or kernel.cwd or Path.cwd()).resolve()
    max_chars = int(kernel.config.get("context_file_max_chars") or DEFAULT_MAX_CHARS)
    cache = getattr(kernel, "cache", None)  # the kernel's validation cache (remembers scans)
    cache = cache if callable(getattr(cache, "key", None)) else None
    identity = load_identity(home, max_chars=max_chars, cache=cache)
    notices = list(identity.notices)
    request = LayerRequest(session_id, platform, tools, home, work, fence_nonce=fence_nonce)
    extra, layer_notices = collect(kernel, request)
    notices += layer_notices
    configured = kernel.config.get("agent.system_prompt") or ""
    messages = [m.strip() for m in (configured, system_message) if isinstance(m, str) and m.strip()]
    context = ""
    if not skip_context_files:
        found = context_files.load(work, max_chars, hermes_home=home, cache=cache)
        # An untrusted folder's files are fenced with the session's nonce; without one, with a
        # nonce of this prompt's own, whose meaning the layer then states itself.
        context = found.render(ProjectTrust(kernel.config, kernel.env).covers, fence_nonce,
                               explain=not fence_nonce)
        notices += found.notices
    if cache is not None:
        cache.save()  # the scan results of new text
    moment = now or _dt.datetime.now().astimezone()
    layers = [
        ("identity", identity.text),
        ("tool_guidance", tool_guidance(tools)),
        ("untrusted_data", fence_notice(fence_nonce) if fence_nonce else ""),
        ("memory_blocks", LAYER_SEPARATOR.join(extra["memory_blocks"])),
        ("system_message", LAYER_SEPARATOR.join(messages)),
        ("memory_snapshot", LAYER_SEPARATOR.join(extra["memory_snapshot"])),
        ("user_snapshot", LAYER_SEPARATOR.join(extra["user_snapshot"])),
        ("skills_index", LAYER_SEPARATOR.join(extra["skills_index"])),
        ("context_files", context),
        ("session", started_line(moment, session_id)),
        ("platform_hint", platform_hint(kernel, platform)),
    ]
    present = tuple((name, text) for name, text in layers if text)
    return SystemPrompt(LAYER_SEPARATOR.join(text for _, text in present), present, notices)
