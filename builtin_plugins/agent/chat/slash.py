"""Slash commands of ``hermes chat``: the builtin ones and those plugins register with
``ctx.register_command(name, handler, description)`` (``handler(raw_args) -> str | None``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from shlex import quote
from typing import Any

from hermes_agent import HermesError
from hermes_agent.kits.secrets import mask_url
from hermes_agent.kits.text import ellipsize, plural, table

from . import background, session_commands, tool_commands
from .state import ChatState

__all__ = ["ALIASES", "BUILTIN", "QUIT", "ChatState", "run_slash"]

QUIT = object()  # a handler result: leave the chat


def _help(state: ChatState, args: str) -> str:
    rows = [(f"/{name}", text, "builtin") for name, (_, text) in BUILTIN.items()]
    for name, command in sorted(state.kernel.registered("slash_command").items()):
        hint = f" {command.args_hint}" if command.args_hint else ""
        rows.append((f"/{name}{hint}", command.description, command.plugin))
    return "\n".join(table(("COMMAND", "DESCRIPTION", "FROM"), rows, indent="  "))


def _new(state: ChatState, args: str) -> str:
    new = state.agent.new_session("new_session")
    return f"Started a new session {new}."


def _reset(state: ChatState, args: str) -> str:
    new = state.agent.new_session("reset")
    return f"Conversation reset; new session {new}."


def _model(state: ChatState, args: str) -> str:
    agent = state.agent
    parts = args.split()
    if not parts:
        return f"model {agent.model} via {agent.provider} ({mask_url(agent.client.active.base_url)})"
    provider = None
    if ":" in parts[0] and len(parts) == 1 and "/" not in parts[0].split(":", 1)[0]:
        provider, model = parts[0].split(":", 1)
    else:
        model = parts[0]
        provider = parts[1] if len(parts) > 1 else None
    agent.switch_model(model, provider)
    return f"Now using {agent.model} via {agent.provider}."


def _tools(state: ChatState, args: str) -> str:
    agent = state.agent
    action, _, name = args.strip().partition(" ")
    if action in ("enable", "disable"):
        return tool_commands.tools_switch(state, action, name.strip())
    if action:
        return "Usage: /tools [enable|disable NAME]"
    rows = []
    schemas = {d["function"].get("name"): d["function"] for d in agent.tool_defs}
    for name in agent.tool_names:
        toolset, plugin = agent.tool_origin(name)
        description = (schemas.get(name, {}).get("description") or "").split("\n")[0]
        rows.append((name, f"{toolset}, {plugin}", ellipsize(description, 60)))
    lines = [f"{plural(len(rows), 'tool')}:"]
    if rows:
        lines.extend(table(("TOOL", "TOOLSET, PLUGIN", "DESCRIPTION"), rows, indent="  "))
    lines.extend(f"  note: {note}" for note in agent.tool_notes)
    return "\n".join(lines)


def _usage(state: ChatState, args: str) -> str:
    from .usage import usage_report

    return usage_report(state.agent)


def _title(state: ChatState, args: str) -> str:
    agent = state.agent
    title = args.strip()
    if not title:
        current = agent.sessions.title(agent.session_id) if agent.session_stored else None
        return f"title: {current}" if current else "This session has no title; /title TEXT sets one."
    if not agent.session_stored:
        return "Send a message first; the session is created with it."
    agent.sessions.set_title(agent.session_id, title)
    return f"Title set: {title}"


def _compress(state: ChatState, args: str) -> str:
    agent = state.agent
    if agent.context is None:
        return ("No context engine is active: set context.engine in config.yaml (default "
                "compressor, from the builtin context plugin; `hermes plugins list` shows it).")
    if not agent.history:
        return "Nothing to compress yet."
    problems: list[str] = []
    before = len(agent.history)
    done = agent.compress(args.strip(), on_event=lambda e: problems.append(e.get("message", ""))
                          if e.get("type") == "notice" else None)
    if not done:
        return problems[0] if problems else "The conversation was not compressed."
    return (f"Compressed {before} messages to {len(agent.history)}; now in session "
            f"{agent.session_id}.")


def _retry(state: ChatState, args: str) -> str | None:
    from ..history import last_user_index

    index = last_user_index(state.agent.history)
    content = state.agent.history[index].get("content") if index is not None else None
    message = state.agent.rewind(1)
    if message is None:
        return "Nothing to retry."
    state.resend = content if isinstance(content, list) else message  # with its images
    return None


def _undo(state: ChatState, args: str) -> str:
    message = state.agent.rewind(1)
    if message is None:
        return "Nothing to undo."
    return f"Removed the last exchange ({message[:60]!r})."


def _queue(state: ChatState, args: str) -> str | None:
    prompt = args.strip()
    if not prompt:
        return "Usage: /queue PROMPT (sent as the next message when the running turn ends)"
    if not state.turn_running:
        state.resend = prompt  # nothing runs: it is the next message now
        return None
    state.pending.append(prompt)
    return f"Queued for after this turn ({len(state.pending)} waiting): {ellipsize(prompt, 60)}"


def _steer(state: ChatState, args: str) -> str | None:
    text = args.strip()
    if not text:
        return "Usage: /steer TEXT (guidance the running turn reads with its next tool result)"
    if not state.turn_running:
        state.resend = text
        return "No turn is running; sending it as a message."
    state.agent.steer(text)
    return "⏩ Steer queued: the model reads it with the next tool result."


def _quit(state: ChatState, args: str) -> Any:
    state.quit = True
    return QUIT


def _image(state: ChatState, args: str) -> str:
    from .images import attach

    return attach(state, args)


def _agents(state: ChatState, args: str) -> str:
    from ..delegate import subagents_of

    children = subagents_of(state.agent).children
    if not children:
        return "No subagents in this chat yet (the model starts them with delegate_task)."
    rows = [(child.status, "background" if child.background else "foreground",
             f"{child.seconds:.0f}s" if child.status == "running" else "-",
             str(child.api_calls) if child.status != "running" else "-", child.session_id,
             ellipsize(child.goal, 60)) for child in children[-20:]]
    return "\n".join(table(("STATUS", "RUNS", "FOR", "CALLS", "SESSION", "GOAL"), rows,
                           indent="  "))


def _stop(state: ChatState, args: str) -> str:
    from ..delegate import subagents_of

    stopped = subagents_of(state.agent).stop()
    return (f"Stopping {plural(stopped, 'background subagent')}." if stopped
            else "No background subagent is running.")


BUILTIN: dict[str, tuple[Callable[[ChatState, str], Any], str]] = {
    "help": (_help, "this list"),
    "new": (_new, "end this session and start a new one"),
    "reset": (_reset, "clear the conversation (a new session)"),
    "model": (_model, "show or switch the model: /model NAME [PROVIDER]"),
    "tools": (_tools, "the tools the model can call; /tools enable|disable NAME for this chat"),
    "toolsets": (tool_commands.toolsets, "the toolsets; /toolsets enable|disable NAME for this chat"),
    "usage": (_usage, "tokens and estimated cost of this session"),
    "title": (_title, "show or set the session title"),
    "compress": (_compress, "summarise the conversation now: /compress [FOCUS TOPIC]"),
    "retry": (_retry, "send the last message again"),
    "undo": (_undo, "remove the last exchange"),
    "queue": (_queue, "send PROMPT after the running turn: /queue PROMPT (also /q)"),
    "steer": (_steer, "add guidance to the running turn at its next model call: /steer TEXT"),
    "background": (background.start, "run PROMPT on its own, in a new session: "
                                      "/background PROMPT (also /bg)"),
    "branch": (session_commands.branch, "fork the session: go on in a copy, /branch [TITLE]"),
    "resume": (session_commands.resume, "go on in a stored session: /resume [ID|TITLE] "
                                         "(alone: the recent ones)"),
    "personality": (session_commands.personality, "show or set the personality: "
                                                  "/personality [NAME|none]"),
    "verbose": (tool_commands.verbose, "cycle how much of the tool calls is shown: "
                                       "off, new, all, verbose"),
    "reasoning": (tool_commands.reasoning, "/reasoning show|hide the model's reasoning, or "
                                           "low|medium|high its effort"),
    "image": (_image, "attach an image to your next message: /image PATH (/image clear)"),
    "agents": (_agents, "the subagents of this chat: running and finished"),
    "stop": (_stop, "stop the subagents running in the background"),
    "quit": (_quit, "leave (also /exit, Ctrl-D)"),
}
ALIASES = {"exit": "quit", "q": "queue", "bg": "background", "?": "help"}


async def _await(awaitable: Any) -> Any:
    return await awaitable


def run_slash(state: ChatState, line: str) -> Any:
    """Run ``/name args``; returns text to print, :data:`QUIT`, or None. A command that fails
    (builtin or a plugin's) returns its error as text: the chat goes on."""
    name, _, args = line[1:].partition(" ")
    name = ALIASES.get(name.lower(), name.lower())
    plugin: str | None = None
    if name in BUILTIN:
        handler: Callable[[str], Any] = lambda raw: BUILTIN[name][0](state, raw)
    elif name in state.kernel.registered("slash_command"):
        handler = state.kernel.registered("slash_command")[name].handler
        plugin = state.kernel.registered("slash_command")[name].plugin
    else:
        import difflib

        known = [*BUILTIN, *state.kernel.registered("slash_command")]
        close = difflib.get_close_matches(name, known, 1)
        hint = f" Did you mean /{close[0]}?" if close else ""
        return f"Unknown command /{name}.{hint} /help lists the commands."
    try:
        result = handler(args)
        if inspect.isawaitable(result):
            import asyncio

            result = asyncio.run(_await(result))
    except HermesError as exc:  # raised on purpose: its message says what to do
        return f"/{name} failed: {exc}"
    except BaseException as exc:
        from hermes_agent import reraise_shutdown

        reraise_shutdown(exc)  # a real Ctrl-C
        if isinstance(exc, Exception):
            return f"/{name} failed: {type(exc).__name__}: {exc}"
        if plugin is None:  # a builtin command that tried to leave
            return (f"/{name} tried to leave ({type(exc).__name__}); /quit leaves the chat.")
        state.kernel.quarantine(plugin, f"its /{name} command", exc)  # the plugin is unloaded
        return (f"/{name} failed: plugin '{plugin}' raised {type(exc).__name__} and was "
                f"unloaded; see `hermes plugins doctor {quote(plugin)}`")
    return result if result is QUIT or isinstance(result, str) else None
