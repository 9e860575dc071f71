"""``execute_code``: the model's Python script calls hermes tools as functions.

The script runs in the OS sandbox through the ``sandbox`` service, exactly as a ``terminal``
command (bubblewrap or Landlock, the environment without hermes's secrets, its process group
killed at ``code_execution.timeout`` seconds, default 300; stdout and stderr each kept to
``tool_output.max_bytes``). The interpreter is the base one (``sys._base_executable``, stdlib
only, ``-I``): a venv may live where the sandbox hides it.

No files: a socketpair, the child's end left open in it (``HERMES_RPC_FD``). The child runs
``python -c BOOTSTRAP``, which reads the first line (the code and the tools offered), builds
the module ``hermes_tools`` (one function per tool) and runs the code. Each call is a JSON
line ``{"id", "tool", "args"}`` answered by ``{"id", "result"}`` (the result parsed from JSON
when it is JSON). Every inner call goes through :meth:`ToolExecutor.run_one` with a
:class:`ToolTurn` built from this call's context: approval gate, the turn's taint policy,
middleware, ``pre_tool_call`` / ``post_tool_call``. When any inner result was untrusted, the
whole result is too (:func:`~hermes_agent.api.tools.untrusted_result`), and the script's later calls
are judged as a tainted turn's.
"""

from __future__ import annotations

import json
import shlex
import socket
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ProjectTrust
from hermes_agent.api import ToolCallContext, tool_error, with_context
from hermes_agent.api.services import SANDBOX
from hermes_agent.api.tools import untrusted_result

from .subagents import BLOCKED

if TYPE_CHECKING:
    from .loop import Agent

NAME = "execute_code"
# Not offered to scripts: itself, agent-level tools that need the conversation.
NOT_OFFERED = BLOCKED | {NAME, "delegate_task", "clarify"}
DEFAULT_TIMEOUT = 300.0
MAX_LINE = 16 * 1024 * 1024  # one request from the script

SCHEMA: dict[str, Any] = {
    "name": NAME,
    "description": (
        "Run a Python script that calls hermes tools as functions, to do several tool steps "
        "in one: `from hermes_tools import read_file, search_files, terminal` (every tool "
        "you have, except execute_code, delegate_task and clarify). Each function takes the "
        "tool's arguments as keywords (or in order) and returns its result, parsed from "
        "JSON. Only what the script prints comes back to you, so print a short summary. "
        "Standard library only; it runs in the sandbox with a time limit."),
    "parameters": {
        "type": "object",
        "properties": {"code": {"type": "string",
                                "description": "The Python script to run."}},
        "required": ["code"],
    },
}

# Runs in the sandbox as `python -I -c BOOTSTRAP`: stdlib only, no hermes import.
BOOTSTRAP = r'''
import json, os, socket, sys, threading, types
_sock = socket.socket(fileno=int(os.environ.pop("HERMES_RPC_FD")))
_sock.set_inheritable(False)  # not for the commands the script starts
_io = _sock.makefile("rwb")
def _read():
    line = _io.readline()
    if not line:
        raise SystemExit("hermes closed the tool connection")
    return json.loads(line)
_hello = _read()
_count = [0]
_lock = threading.Lock()  # one call at a time: a reply belongs to the request before it
def _call(tool, params, args, kwargs):
    if len(args) > len(params):
        raise TypeError(f"{tool}() takes at most {len(params)} positional arguments")
    for key, value in zip(params, args):
        if key in kwargs:
            raise TypeError(f"{tool}() got two values for {key!r}")
        kwargs[key] = value
    with _lock:
        _count[0] += 1
        _io.write((json.dumps({"id": _count[0], "tool": tool, "args": kwargs}) + "\n").encode())
        _io.flush()
        result = _read().get("result")
    try:
        return json.loads(result)
    except (TypeError, ValueError):
        return result
def _make(tool, params):
    def function(*args, **kwargs):
        return _call(tool, params, args, kwargs)
    function.__name__ = tool
    function.__doc__ = f"The hermes tool {tool}({', '.join(params)})."
    return function
_module = types.ModuleType("hermes_tools")
for _tool, _params in _hello["tools"].items():
    setattr(_module, _tool, _make(_tool, _params))
_module.__all__ = sorted(_hello["tools"])
sys.modules["hermes_tools"] = _module
_code = compile(_hello["code"], "<execute_code>", "exec")
del _hello, _tool, _params, _module
exec(_code, {"__name__": "__main__", "__builtins__": __builtins__})
'''


@dataclass
class InnerCall:
    """One call from the script, shaped like a model's tool call for the executor."""

    id: str
    name: str
    arguments: dict[str, Any]


def interpreter() -> str:
    """The base Python (not a venv's, which may sit under a path the sandbox hides)."""
    return getattr(sys, "_base_executable", "") or sys.executable or "/usr/bin/python3"


def offered(agent: "Agent") -> dict[str, list[str]]:
    """The tools a script may call: name -> its parameter names, required first."""
    params: dict[str, list[str]] = {}
    for name, definition in zip(agent.tool_names, agent.tool_defs):
        if name in NOT_OFFERED:
            continue
        schema = definition.get("function", definition) if isinstance(definition, dict) else {}
        parameters = schema.get("parameters") or {}
        names = list((parameters.get("properties") or {}).keys())
        required = [n for n in parameters.get("required") or () if n in names]
        params[name] = required + [n for n in names if n not in required]
    return params


class Rpc:
    """Serves one script's tool calls over the parent's end of the socketpair."""

    def __init__(self, agent: "Agent", ctx: ToolCallContext, sock: socket.socket,
                 code: str, tools: dict[str, list[str]]):
        from .tool_exec import ToolTurn

        self.agent, self.sock, self.tools = agent, sock, tools
        self.hello = {"code": code, "tools": tools}
        # The running turn's events and request id; no fence: the results go to the script.
        outer = agent.tool_turn
        self.turn = ToolTurn(ctx, allowed=frozenset(tools), routes=agent.tool_routes,
                             fence_nonce="", taint=agent.taint.policy(),
                             on_event=outer.on_event if outer else None,
                             api_request_id=outer.api_request_id if outer else None)
        self.calls = 0
        self.sources: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True,
                                       name="hermes-execute-code")

    def start(self) -> None:
        self.thread.start()

    def _serve(self) -> None:
        stream = self.sock.makefile("rwb")
        try:
            self._send(stream, self.hello)
            while line := stream.readline(MAX_LINE):
                self._send(stream, self._answer(line))
        except (OSError, ValueError):
            pass  # the script ended (or broke the connection): its output says what happened

    @staticmethod
    def _send(stream: Any, message: dict[str, Any]) -> None:
        stream.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
        stream.flush()

    def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
            tool, args, rid = request["tool"], request.get("args") or {}, request.get("id")
            if not isinstance(args, dict):
                raise TypeError("args must be an object")
        except (ValueError, KeyError, TypeError):
            return {"id": None, "result": tool_error("malformed request from the script")}
        if tool not in self.tools:
            return {"id": rid, "result": tool_error(
                f"{tool!r} is not offered to scripts; offered: {', '.join(sorted(self.tools))}")}
        self.calls += 1
        call_id = f"{self.turn.context.tool_call_id or NAME}:{self.calls}"
        outcome = self.agent.executor.run_one(InnerCall(call_id, str(tool), args), self.turn)
        if outcome.source is not None:
            self.sources.append(outcome.source)
            if self.turn.taint is None:  # what the script does next may follow that text
                self.turn.taint = self.agent.taint.policy(outcome.source)
        return {"id": rid, "result": outcome.result}


@with_context
def execute_code(args: dict[str, Any], ctx: ToolCallContext) -> str:
    from .loop import Agent

    agent = ctx.extra.get("agent")
    if not isinstance(agent, Agent):
        return tool_error("execute_code runs only inside the agent loop (no agent here)")
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return tool_error("execute_code needs `code`: the Python script to run")
    if agent.kernel.service_owner(SANDBOX) is None:
        return tool_error("execute_code needs the sandbox service (the core_tools plugin); "
                          "enable it or run the steps as separate tool calls")
    config = agent.kernel.config
    timeout = float(config.get("code_execution.timeout") or DEFAULT_TIMEOUT)
    max_output = int(config.get("tool_output.max_bytes") or 50_000)
    parent, child = socket.socketpair()
    rpc = Rpc(agent, ctx, parent, code, offered(agent))
    started = time.monotonic()
    try:
        rpc.start()
        command = f"exec {shlex.quote(interpreter())} -I -c {shlex.quote(BOOTSTRAP)}"
        run = agent.kernel.service(SANDBOX).run(
            command, cwd=Path(ctx.cwd), timeout=timeout, max_output=max_output,
            env={"HERMES_RPC_FD": str(child.fileno())}, pass_fds=(child.fileno(),),
            interrupt=ctx.interrupt_event)
    finally:
        child.close()
        parent.shutdown(socket.SHUT_RDWR)
        rpc.thread.join(timeout=5)
        parent.close()
    body: dict[str, Any] = {
        "status": "success" if run.returncode == 0 else "error", "output": run.stdout,
        "tool_calls_made": rpc.calls, "duration_seconds": round(time.monotonic() - started, 2)}
    if run.stderr.strip():
        body["error"] = run.stderr.strip()
    if run.timed_out:
        body["status"] = "timeout"
        body["error"] = (f"The script was stopped after {timeout:g} s (code_execution.timeout) "
                         "with its processes. Do less per script, or raise the limit.")
    elif run.returncode is None and ctx.interrupt_event is not None \
            and ctx.interrupt_event.is_set():
        body["status"] = "interrupted"
        body["error"] = "The script was interrupted (Ctrl-C, or hermes was stopped) and killed."
    if not run.confined:
        body["sandbox"] = "The script ran unconfined: " + agent.kernel.service(SANDBOX).describe()
    text = json.dumps(body, ensure_ascii=False)
    sources = list(dict.fromkeys(rpc.sources))
    # the script may have read its folder's files itself
    folder = ProjectTrust(agent.kernel.config, agent.kernel.env).untrusted_project(ctx.cwd)
    if folder is not None:
        sources.append(f"{folder} (untrusted project)")
    if sources:
        return untrusted_result(text, f"{NAME} ({', '.join(sources)})")
    return text


def register(ctx: Any) -> None:
    """Register ``execute_code`` (toolset ``code_execution``)."""
    ctx.register_tool(name=NAME, toolset="code_execution", schema=SCHEMA,
                      handler=execute_code, description="Run a Python script that calls tools")
