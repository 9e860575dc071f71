"""Builtin plugin: the core tools and their toolsets.

Handlers take ``(args, **kwargs)``; the keyword arguments the agent loop passes are documented
in :mod:`.context` (``tool_kwargs`` builds them). State (todo lists, approvals given for a
session) belongs to the kernel that loaded the plugin, never to the module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl

from . import schemas

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .approval import ApprovalGate
    from .todo import TodoStore


class CoreTools:
    """The handlers, bound to one kernel (its config, hook bus and per-session state)."""

    def __init__(self, kernel: "Kernel"):
        from .approval import approval_gate
        from .terminal import TerminalTool
        from .todo import TodoStore

        self.kernel = kernel
        self.gate: ApprovalGate = approval_gate(kernel)
        self.todos: TodoStore = TodoStore()
        self.terminal = TerminalTool(kernel, self.gate)

    def _ctx(self, kwargs: dict[str, Any]) -> Any:
        from .context import ToolCallContext

        cwd = self.kernel.cwd
        return ToolCallContext.from_kwargs(kwargs, Path(cwd) if cwd else None)

    def handlers(self) -> dict[str, Callable[..., str]]:
        from . import clarify, files, search

        config = self.kernel.config

        def read_file(args: dict[str, Any], **kwargs: Any) -> str:
            return files.read_file(args, self._ctx(kwargs),
                                   max_lines=int(config.get("tool_output.max_lines") or 2000),
                                   max_line_length=int(config.get("tool_output.max_line_length")
                                                       or 2000))

        def bind(fn: Callable[[dict[str, Any], Any], str]) -> Callable[..., str]:
            def handler(args: dict[str, Any], **kwargs: Any) -> str:
                return fn(args, self._ctx(kwargs))
            handler.__name__ = getattr(fn, "__name__", "handler")
            return handler

        return {"read_file": read_file, "write_file": bind(files.write_file),
                "patch": bind(files.patch), "search_files": bind(search.search_files),
                "terminal": bind(self.terminal), "todo": bind(self.todos.handle),
                "clarify": bind(clarify.clarify)}


TOOLS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("read_file", "file", schemas.READ_FILE, "📖"),
    ("write_file", "file", schemas.WRITE_FILE, "✍️"),
    ("patch", "file", schemas.PATCH, "🩹"),
    ("search_files", "file", schemas.SEARCH_FILES, "🔎"),
    ("terminal", "terminal", schemas.TERMINAL, "💻"),
    ("todo", "todo", schemas.TODO, "📋"),
    ("clarify", "clarify", schemas.CLARIFY, "❓"),
)


def register(ctx: "PluginContext") -> None:
    core = CoreTools(ctx.kernel)
    handlers = core.handlers()
    for name, toolset, schema, emoji in TOOLS:
        ctx.register_tool(name=name, toolset=toolset, schema=schema, handler=handlers[name],
                          description=schema["description"], emoji=emoji)


@hookimpl
def register_toolsets(register: Any) -> None:
    from .toolsets import register_all

    register_all(register)
