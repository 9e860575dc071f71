"""Builtin plugin: the core tools and their toolsets.

Each handler reads the call's ``hermes_agent.api.ToolCallContext`` (it is registered
``with_context``). State (todo lists, approvals given for a session) belongs to the kernel
that loaded the plugin, never to the module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import APPROVAL_GATE, ToolCallContext, with_context
from hermes_agent.api.services import SANDBOX

from . import schemas

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .approval import ApprovalGate
    from .checkpoints.manager import Checkpointer
    from .sandbox.policy import SandboxPolicy
    from .process_tool import Terminal
    from .sandbox.service import SandboxService
    from .todo import TodoStore


Handler = Callable[[dict[str, Any], ToolCallContext], str]
#: the tools the workspace is checkpointed before (docs/checkpoints.md)
CHANGING_TOOLS = frozenset({"write_file", "patch", "terminal", "process"})


class CoreTools:
    """The handlers, bound to one kernel (its config, hook bus and per-session state). Each
    tool's module is imported, and its state created, on the tool's first call, so a turn that
    uses no tool pays nothing for them."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self._lock = threading.Lock()
        self._todos: TodoStore | None = None
        self._terminal: Terminal | None = None
        self._checkpointer: Checkpointer | None = None
        self._sandbox: SandboxService | None = None
        self._warned = False

    @property
    def gate(self) -> "ApprovalGate":
        from .approval import approval_gate

        return approval_gate(self.kernel)

    @property
    def todos(self) -> "TodoStore":
        with self._lock:
            if self._todos is None:
                from .todo import TodoStore

                self._todos = TodoStore()
            return self._todos

    @property
    def terminal(self) -> "Terminal":
        with self._lock:
            if self._terminal is None:
                from .backends import remote_backend
                from .process_tool import Terminal

                self._terminal = Terminal(self.kernel, self.gate, remote_backend(self.kernel))
            return self._terminal

    def checkpoint(self, name: str, ctx: ToolCallContext) -> None:
        """Before a file-changing tool runs: the turn's checkpoint of the workspace, once (a
        command on a remote backend changes no local file)."""
        if name not in CHANGING_TOOLS:
            return
        from .backends import backend_name
        from .checkpoints.manager import Checkpointer

        try:
            if name in ("terminal", "process") and backend_name(self.kernel) != "local":
                return
        except RuntimeError:
            return  # the terminal says what is wrong with terminal.backend
        with self._lock:
            if self._checkpointer is None:
                self._checkpointer = Checkpointer(self.kernel)
        self._checkpointer.before(name, ctx, lambda: self.policy(ctx).workspace)

    def sandbox(self) -> "SandboxService":
        """The ``sandbox`` service: other plugins' commands confined as ``terminal``'s are."""
        with self._lock:
            if self._sandbox is None:
                from .sandbox.service import SandboxService

                self._sandbox = SandboxService(self.kernel)
            return self._sandbox

    def stop_commands(self, **_: Any) -> None:
        """``on_shutdown``: kill the commands still running (their whole process groups) and
        end a remote backend's shared connection."""
        if self._sandbox is not None:
            self._sandbox.groups.kill_all()
        if self._terminal is not None:
            self._terminal.kill_all()
            close = getattr(self._terminal.remote, "close", None)
            if close is not None:
                close()

    def end_session(self, session_id: str = "", **_: Any) -> None:
        """``on_session_finalize``: the session's background processes (but kept ones) and
        shell sessions end with it."""
        if self._terminal is not None and session_id:
            self._terminal.end_session(session_id)

    def process(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        from .process_tool import ProcessTool

        return ProcessTool(self.terminal)(args, ctx)

    def policy(self, ctx: ToolCallContext) -> "SandboxPolicy":
        """What the file tools may reach in this call's session (sandbox.*, its cwd)."""
        from .sandbox.policy import policy_for

        return policy_for(self.kernel.config, Path(ctx.cwd), Path(self.kernel.home))

    def warn_unconfined(self, **_: Any) -> None:
        """``on_session_start``: a loud warning (stderr, once per process) when commands
        should be sandboxed but no mechanism works on this machine."""
        import sys

        from .sandbox.policy import policy_for
        from .sandbox.runner import warn_if_unconfined

        cwd = Path(self.kernel.cwd) if self.kernel.cwd else Path.cwd()
        text = warn_if_unconfined(policy_for(self.kernel.config, cwd, Path(self.kernel.home)))
        if text and not self._warned:
            self._warned = True
            print(text, file=sys.stderr)

    def _read_file(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        from .files import read_file

        config = self.kernel.config
        return read_file(args, ctx, max_lines=int(config.get("tool_output.max_lines") or 2000),
                         max_line_length=int(config.get("tool_output.max_line_length") or 2000),
                         policy=self.policy(ctx))

    def _file_tool(self, module: str, attr: str) -> Handler:
        def handler(args: dict[str, Any], ctx: ToolCallContext) -> str:
            tool = getattr(import_module(f"{__name__}.{module}"), attr)
            result = tool(args, ctx, policy=self.policy(ctx))
            return result if isinstance(result, str) else str(result)
        return handler

    def handlers(self) -> dict[str, Callable[..., str]]:
        # Called without a context (ctx.dispatch_tool, tests), relative paths are taken
        # against the kernel's working directory.
        cwd = Path(self.kernel.cwd) if self.kernel.cwd else None

        def bind(name: str, target: Callable[[], Handler]) -> Callable[..., str]:
            def handler(args: dict[str, Any], ctx: ToolCallContext) -> str:
                from .danger.paths import kernel_home

                from .provenance import mark

                with kernel_home(self.kernel.home):  # its .env and auth.json are secrets
                    self.checkpoint(name, ctx)
                    return mark(self.kernel, name, args, ctx, target()(args, ctx))
            handler.__name__ = handler.__qualname__ = name
            return with_context(handler, default_cwd=cwd)

        def function(module: str, attr: str) -> Callable[[], Handler]:
            return lambda: getattr(import_module(f"{__name__}.{module}"), attr)

        return {"read_file": bind("read_file", lambda: self._read_file),
                "write_file": bind("write_file", lambda: self._file_tool("files", "write_file")),
                "patch": bind("patch", lambda: self._file_tool("files", "patch")),
                "search_files": bind("search_files",
                                     lambda: self._file_tool("search", "search_files")),
                "terminal": bind("terminal", lambda: self.terminal),
                "process": bind("process", lambda: self.process),
                "todo": bind("todo", lambda: self.todos.handle),
                "clarify": bind("clarify", function("clarify", "clarify"))}


TOOLS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("read_file", "file", schemas.READ_FILE, "📖"),
    ("write_file", "file", schemas.WRITE_FILE, "✍️"),
    ("patch", "file", schemas.PATCH, "🩹"),
    ("search_files", "file", schemas.SEARCH_FILES, "🔎"),
    ("terminal", "terminal", schemas.TERMINAL, "💻"),
    ("process", "terminal", schemas.PROCESS, "⚙️"),
    ("todo", "todo", schemas.TODO, "📋"),
    ("clarify", "clarify", schemas.CLARIFY, "❓"),
)


def _approval_gate(kernel: "Kernel") -> "ApprovalGate":
    """The one factory of the ``approval_gate`` service (the terminal tool and the agent's
    hook-requested approvals share its instance)."""
    from .approval import ApprovalGate

    return ApprovalGate(kernel)


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> list[Any]:
    from .doctor import sandbox_findings

    return sandbox_findings(kernel, config, offline)


def register(ctx: "PluginContext") -> None:
    # the agent routes hook-requested approvals through the same gate as ``terminal``
    ctx.register_service(APPROVAL_GATE, _approval_gate)
    core = CoreTools(ctx.kernel)
    ctx.register_service(SANDBOX, lambda _kernel: core.sandbox())  # shell hooks
    handlers = core.handlers()
    for name, toolset, schema, emoji in TOOLS:
        ctx.register_tool(name=name, toolset=toolset, schema=schema, handler=handlers[name],
                          description=schema["description"], emoji=emoji)
    ctx.register_hook("on_shutdown", core.stop_commands,
                      description="kill the terminal commands still running")
    ctx.register_hook("on_session_finalize", core.end_session,
                      description="end the session's background processes and shells")
    ctx.register_hook("on_session_start", core.warn_unconfined,
                      description="warn when commands cannot be sandboxed on this machine")
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the sandbox mechanism")

    def rollback(raw_args: str) -> str:
        from .checkpoints.cli import rollback_command

        return rollback_command(ctx.kernel)(raw_args)

    ctx.register_command("rollback", rollback, "list the workspace's checkpoints, or restore "
                         "checkpoint N (1 = before the latest turn that changed files)",
                         args_hint="[N]")


@hookimpl
def register_toolsets(register: Any) -> None:
    from .toolsets import register_all

    register_all(register)
