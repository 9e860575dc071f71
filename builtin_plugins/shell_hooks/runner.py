"""Running one shell hook: the event as JSON on stdin, the command in the OS sandbox (the
``sandbox`` service of core-tools, as the agent's ``terminal``), its answer on stdout read as
the hook allows.

The payload (Hermes Agent 0.19's shape): ``{"hook_event_name", "tool_name", "tool_input",
"session_id", "cwd", "extra"}``; ``tool_name``/``tool_input`` are null for hooks that are not
about a tool; ``extra`` holds the hook's other arguments, made JSON-safe.

Answers (a JSON object on stdout; anything else is no answer):

- ``pre_tool_call``: ``{"action": "block", "message": "..."}`` (or ``{"decision": "block",
  "reason": "..."}``), or exit status 2 with the reason on stderr, blocks the call;
  ``{"action": "approve", "message"?, "rule_key"?}`` sends it to the approval gate;
- ``pre_llm_call``: ``{"context": "..."}`` adds context to the turn;
- ``transform_tool_result``, ``transform_terminal_output``, ``transform_llm_output``:
  ``{"replace": "..."}`` replaces the text;
- every other hook: the answer is ignored.

A hook that fails (exit status other than 0 and 2, no sandbox, bad JSON) or times out is
logged and changes nothing: it never breaks the turn.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("hermes_agent.shell_hooks")

#: hooks whose payload names a tool: ``matcher`` is matched against its name
TOOL_HOOKS = frozenset({"pre_tool_call", "post_tool_call", "transform_tool_result"})
TRANSFORMS = {"transform_tool_result": "result", "transform_terminal_output": "output",
              "transform_llm_output": "response_text"}
#: the hooks a shell hook may subscribe to: Hermes Agent 0.19's, but for
#: ``pre_gateway_dispatch`` (its arguments are the live gateway and session store)
SHELL_HOOKS = (
    "pre_tool_call", "post_tool_call", "transform_tool_result", "transform_terminal_output",
    "pre_llm_call", "post_llm_call", "transform_llm_output", "pre_api_request",
    "post_api_request", "api_request_error", "on_session_start", "on_session_end",
    "on_session_finalize", "on_session_reset", "subagent_start", "subagent_stop",
    "on_memory_write", "pre_approval_request", "post_approval_response", "pre_verify",
    "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked")
MAX_OUTPUT = 64 * 1024
BLOCK_EXIT = 2


@dataclass(frozen=True)
class ShellHook:
    event: str
    command: str
    matcher: str | None = None
    timeout: float = 60.0
    pattern: re.Pattern[str] | None = field(default=None, compare=False)

    def matches(self, tool_name: Any) -> bool:
        if self.matcher is None or self.event not in TOOL_HOOKS:
            return True
        return self.pattern is not None and isinstance(tool_name, str) \
            and self.pattern.fullmatch(tool_name) is not None


def configured(config: Any) -> tuple[list[ShellHook], list[str]]:
    """The hooks of config.yaml's ``hooks:``, and what is wrong with the rest."""
    hooks: list[ShellHook] = []
    problems: list[str] = []
    for event, specs in (config.get("hooks") or {}).items():
        if event not in SHELL_HOOKS:
            import difflib

            close = difflib.get_close_matches(event, SHELL_HOOKS, 1)
            problems.append(f"hooks.{event}: not a hook shell hooks can use"
                            + (f" (did you mean {close[0]}?)" if close else ""))
            continue
        for spec in specs or ():
            matcher = spec.get("matcher")
            pattern = None
            if matcher is not None:
                try:
                    pattern = re.compile(str(matcher))
                except re.error as exc:
                    problems.append(f"hooks.{event}: matcher {matcher!r} is not a regular "
                                    f"expression ({exc}); the hook is skipped")
                    continue
            hooks.append(ShellHook(event, str(spec["command"]), matcher,
                                   float(spec.get("timeout") or 60), pattern))
    return hooks, problems


def payload(event: str, arguments: dict[str, Any], cwd: str) -> str:
    extra = {k: v for k, v in arguments.items()
             if k not in ("tool_name", "args", "session_id", "telemetry_schema_version")}
    body = {"hook_event_name": event, "tool_name": arguments.get("tool_name"),
            "tool_input": arguments.get("args") if event in TOOL_HOOKS else None,
            "session_id": arguments.get("session_id"), "cwd": cwd, "extra": extra}
    return json.dumps(body, default=_plain, ensure_ascii=False)


def _plain(value: Any) -> Any:
    for attr in ("model_dump", "to_dict", "_asdict"):
        method = getattr(value, attr, None)
        if callable(method):
            try:
                return method()
            except Exception:  # noqa: BLE001 - falls back to its text
                break
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def answer(hook: ShellHook, run: Any) -> Any:
    """What the hook's run means for its hook (None: nothing)."""
    label = f"shell hook {hook.event} `{hook.command}`"
    if run.timed_out:
        log.warning("%s timed out after %g s and was killed; it changed nothing (raise its "
                    "timeout: in config.yaml)", label, hook.timeout)
        return None
    if hook.event == "pre_tool_call" and run.returncode == BLOCK_EXIT:
        reason = run.stderr.strip() or run.stdout.strip() or f"blocked by {label}"
        return {"action": "block", "message": reason[:4000]}
    if run.returncode != 0:
        log.warning("%s failed (exit %s): %s", label, run.returncode,
                    (run.stderr.strip() or run.stdout.strip())[-500:] or "no output")
        return None
    data = _json_object(run.stdout)
    if data is None:
        return None
    if hook.event == "pre_tool_call":
        return _directive(data, label)
    if hook.event == "pre_llm_call":
        context = data.get("context")
        return {"context": context} if isinstance(context, str) and context.strip() else None
    if hook.event in TRANSFORMS:
        replace = data.get("replace")
        return replace if isinstance(replace, str) else None
    return None


def _directive(data: dict[str, Any], label: str) -> dict[str, Any] | None:
    action = data.get("action") or data.get("decision")
    if action == "block":
        message = data.get("message") or data.get("reason")
        if isinstance(message, str) and message.strip():
            return {"action": "block", "message": message}
        log.warning("%s answered block without a message: ignored (add \"message\")", label)
        return None
    if action == "approve":
        out: dict[str, Any] = {"action": "approve"}
        for key in ("message", "rule_key"):
            if isinstance(data.get(key), str):
                out[key] = data[key]
        return out
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text:
        return None
    for candidate in (text, text.splitlines()[-1]):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        return data if isinstance(data, dict) else None
    return None
