"""The tool registry and toolsets.

A handler is ``handler(args: dict, **kwargs) -> str`` (JSON); one marked :data:`TAKES_CONTEXT`
gets the call's context object as its second argument instead. :meth:`ToolRegistry.dispatch`
turns an exception or a non-string result into a JSON error, so one bad tool never breaks
the agent loop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .containment import describe, halts, reraise_shutdown
from .errors import ToolError
from .hooks import _run_awaitable
from .hookspecs.tool_contract import TAKES_CONTEXT, tool_error
from .records import ToolSpec, ToolsetSpec

log = logging.getLogger("hermes_agent.tools")
@dataclass
class ToolRegistry:
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    toolsets: dict[str, ToolsetSpec] = field(default_factory=dict)
    on_halt: Callable[[str, str, BaseException], Any] | None = None  # (plugin, where, exc)
    # Bumped by every change, so a caller that cached a selection knows to make it again
    # (tools a plugin adds or removes while hermes runs, e.g. those of MCP servers).
    generation: int = 0

    # Edits replace the dicts instead of changing them, so a thread reading the registry
    # (another agent selecting its tools) never sees one change size under it.
    def add(self, spec: ToolSpec) -> None:
        self.tools = {**self.tools, spec.name: spec}
        self.generation += 1

    def add_toolset(self, spec: ToolsetSpec) -> None:
        self.toolsets = {**self.toolsets, spec.name: spec}
        self.generation += 1

    def discard(self, name: str) -> None:
        """Remove one tool (a runtime tool its plugin withdraws); unknown names are ignored."""
        if name in self.tools:
            self.tools = {n: t for n, t in self.tools.items() if n != name}
            self.generation += 1

    def discard_toolset(self, name: str) -> None:
        if name in self.toolsets:
            self.toolsets = {n: t for n, t in self.toolsets.items() if n != name}
            self.generation += 1

    def remove_plugin(self, plugin: str) -> None:
        self.tools = {n: t for n, t in self.tools.items() if t.plugin != plugin}
        self.toolsets = {n: t for n, t in self.toolsets.items() if t.plugin != plugin}
        self.generation += 1

    def get(self, name: str) -> ToolSpec:
        if name not in self.tools:
            raise ToolError(f"unknown tool {name!r}; known tools: "
                            f"{', '.join(sorted(self.tools)) or '(none)'}")
        return self.tools[name]

    def is_available(self, name: str) -> bool:
        """False when the tool is unknown, or its check_fn says so or raises (logged)."""
        spec = self.tools.get(name)
        try:
            return spec is not None and (spec.check_fn is None or bool(spec.check_fn()))
        except BaseException as exc:
            self._plugin_raised(spec, "check_fn", exc)  # type: ignore[arg-type]
            return False

    def _plugin_raised(self, spec: ToolSpec, part: str, exc: BaseException) -> None:
        reraise_shutdown(exc)
        log.warning("tool %r: its %s raised %s", spec.name, part, describe(exc))
        if halts(exc) and self.on_halt is not None:
            self.on_halt(spec.plugin, f"the {part} of its tool '{spec.name}'", exc)

    def leaf_toolsets(self) -> dict[str, list[str]]:
        """Toolsets as the tools declare them (each tool's ``toolset``)."""
        leaves: dict[str, list[str]] = {}
        for spec in self.tools.values():
            leaves.setdefault(spec.toolset, []).append(spec.name)
        return leaves

    def known_toolsets(self) -> list[str]:
        return sorted(set(self.leaf_toolsets()) | set(self.toolsets))

    def unknown_toolsets(self, names: Iterable[str]) -> str | None:
        """None when every name is a registered toolset; else the problem, naming each
        unknown one (with the closest known name) and the known ones."""
        import difflib

        known = self.known_toolsets()
        problems = []
        for name in dict.fromkeys(names):
            if name in known:
                continue
            close = difflib.get_close_matches(name, known, 1)
            problems.append(repr(name) + (f" (did you mean {close[0]!r}?)" if close else ""))
        if not problems:
            return None
        return (f"unknown toolset{'s' if len(problems) > 1 else ''} {', '.join(problems)}; "
                f"known toolsets: {', '.join(known) or '(none)'} (plugins add more once "
                "enabled: `hermes plugins list`)")

    def resolve_toolsets(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Expand toolset names (leaf, composite or platform) into ``(tools, notes)``; each
        note says why something named was dropped."""
        leaves = self.leaf_toolsets()
        tools: dict[str, None] = {}
        notes: list[str] = []
        seen: set[str] = set()

        def expand(name: str, via: str) -> None:
            if name in seen:
                return
            seen.add(name)
            spec = self.toolsets.get(name)
            for tool in spec.tools if spec else ():
                if tool in self.tools:
                    tools[tool] = None
                else:
                    notes.append(f"toolset {name!r} lists tool {tool!r}, which no loaded "
                                 "plugin provides")
            for include in spec.includes if spec else ():
                expand(include, name)
            tools.update(dict.fromkeys(leaves.get(name, ())))
            if spec is None and name not in leaves:
                notes.append(f"unknown toolset {name!r}{f' (included by {via!r})' if via else ''}; "
                             f"known: {', '.join(self.known_toolsets()) or '(none)'}")

        for name in names:
            expand(name, "")
        return list(tools), notes

    def definitions(self, names: Iterable[str]) -> list[dict[str, Any]]:
        """Tool definitions in the OpenAI function format."""
        return [{"type": "function", "function": self.tools[n].schema}
                for n in names if n in self.tools]

    def dispatch(self, name: str, args: dict[str, Any] | None, context: Any = None,
                 **kwargs: Any) -> str:
        """Run a tool; always return a string (a JSON error result on failure). ``context``
        (the call's ``hermes_agent.api.ToolCallContext``) goes to a handler marked
        :data:`TAKES_CONTEXT` as is, to any other as ``context.as_kwargs()``."""
        spec = self.tools.get(name)
        if spec is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            if context is not None and getattr(spec.handler, TAKES_CONTEXT, False):
                result = spec.handler(args or {}, context, **kwargs)
            else:
                if context is not None:
                    kwargs = {**context.as_kwargs(), **kwargs}
                result = spec.handler(args or {}, **kwargs)
            if spec.is_async or hasattr(result, "__await__"):
                result = _run_awaitable(result)
        except BaseException as exc:
            self._plugin_raised(spec, "handler", exc)
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")
        if isinstance(result, str):
            return result
        if isinstance(result, dict) and result.get("_multimodal"):
            return json.dumps(result)
        return tool_error(f"Tool {name!r} returned {type(result).__name__}, not a JSON string "
                          "(handlers must return json.dumps(...))")
