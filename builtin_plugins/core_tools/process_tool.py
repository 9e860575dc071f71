"""``terminal`` with ``background: true`` or ``session: NAME``, and the ``process`` tool.

Nothing here sends the model more than ``tool_output.max_bytes`` characters at once: ``poll``
and ``wait`` give the new output's tail and say how much they skipped, ``log`` pages the log
kept on disk by lines.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import ToolCallContext, tool_error

from .background import Proc, Processes
from .sandbox.runner import Launch, SandboxUnavailable, mechanism_for, sandbox_note
from .shells import NAME, Shells
from .terminal import Prepared, TerminalTool, command_launch, shorten, strip_ansi

if TYPE_CHECKING:
    from hermes_agent import Kernel

    from .approval import ApprovalGate
    from .terminal import RemoteBackend

ACTIONS = ("list", "poll", "log", "wait", "kill", "write", "submit", "close")
START_GLANCE = 0.3  # seconds the start waits for a command that fails at once
WAIT_DEFAULT, WAIT_MAX = 30.0, 600.0
LOG_LINES, LOG_MAX_LINES = 200, 2000
SHELL_PREFIX = "shell:"
MAX_RUNNING = 64  # background processes running at once, per kernel
DEFAULT_LOG_BYTES = 10 * 1024 * 1024  # terminal.background_max_log_bytes


class Terminal(TerminalTool):
    """The terminal tool with ``background: true`` (:mod:`.background`) and ``session: NAME``
    (:mod:`.shells`); the foreground path is :class:`.terminal.TerminalTool`'s."""

    def __init__(self, kernel: "Kernel", gate: "ApprovalGate",
                 remote: "RemoteBackend | None" = None):
        super().__init__(kernel, gate, remote)
        cap = lambda: int(kernel.config.get("terminal.background_max_log_bytes")  # noqa: E731
                          or DEFAULT_LOG_BYTES)
        self.processes = Processes(Path(kernel.home), cap, self._compressed_from)
        self.shells = Shells()

    def __call__(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        if ((args.get("background") is True or args.get("session") is not None)
                and self.remote is not None):
            return tool_error(f"background processes and shell sessions run on this machine "
                              f"only; terminal.backend is {self.remote.name}: run the command "
                              "in the foreground (with nohup and a log file for a server).")
        return super().__call__(args, ctx)

    def _run(self, ready: Prepared, args: dict[str, Any], ctx: ToolCallContext) -> str:
        if args.get("background") is True:
            return start_background(self, ready, args, ctx)
        if args.get("session") is not None:
            return run_in_shell(self, ready, args, ctx)
        return super()._run(ready, args, ctx)

    def _compressed_from(self, session: str) -> list[str]:
        """The sessions ``session`` continues after compression, newest first (a subagent's
        parent is no such session: it did not end with ``compression``)."""
        from hermes_agent.api.sessions import session_store

        chain = []
        for row in session_store(self.kernel).get_ancestors(session):
            if row.get("end_reason") != "compression":
                break
            chain.append(row["id"])
        return chain

    def owners(self, session: str) -> set[str]:
        return {session, *self.processes.ancestors(session)} if session else set()

    def end_session(self, session: str) -> None:
        """The session is over: kill its background processes (but kept ones) and shells."""
        owners = self.owners(session)
        self.processes.end_session(session)
        self.shells.end_session(owners)

    def kill_all(self) -> None:
        """hermes exits: every command, background process (but kept ones) and shell."""
        super().kill_all()
        self.processes.kill_all()
        self.shells.kill_all()


def _dump(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def _confinement(ready: Prepared) -> str:
    policy = ready.policy
    if policy is not None and policy.confined and mechanism_for(policy).works:
        return "sandboxed"
    return "unconfined"


def start_background(tool: Terminal, ready: Prepared, args: dict[str, Any],
                     ctx: ToolCallContext) -> str:
    keep = args.get("keep") is True
    processes = tool.processes
    running = [proc for proc in processes.visible("") if proc.running]
    if len(running) >= MAX_RUNNING:
        return tool_error(f"{len(running)} background processes are running already (at most "
                          f"{MAX_RUNNING}); kill the ones no longer needed (process list).")
    try:
        how = command_launch(["-c", ready.command], ready.cwd, ready.policy, ready.env)
        proc = processes.start(ready.command, how, ready.cwd, ctx.session_id, keep)
    except (SandboxUnavailable, subprocess.SubprocessError) as exc:  # incl. a failed pre-exec
        return tool_error(f"Not run: {exc}.")
    proc.sandbox = _confinement(ready)
    deadline = time.monotonic() + START_GLANCE
    while proc.running and time.monotonic() < deadline:
        time.sleep(0.01)
    body: dict[str, Any] = {"session_id": proc.id, "pid": proc.pid, "status": proc.status(),
                            "exit_code": proc.exit_code}
    body.update(_new_output(proc, ready.max_chars))
    lifetime = ("It keeps running after this session and hermes end (`hermes processes` "
                "lists it, `hermes processes kill ID` stops it); it has no stdin."
                if keep else "It is killed when this session ends.")
    body["note"] = (f"Started in the background. process(action='poll', session_id='{proc.id}')"
                    " shows new output, 'wait' waits for the end, 'log' pages the whole log, "
                    f"'write'/'submit' feed stdin, 'kill' stops it. {lifetime}")
    if ready.verdict.choice in ("once", "session", "always", "allowlist"):
        body["approval"] = ready.verdict.choice
    notes = list(ready.notes)
    if not proc.running and proc.exit_code not in (0, None) and ready.policy is not None:
        notes.append(sandbox_note(ready.policy, ready.command, body.get("output", "")))
    if any(notes):
        body["sandbox"] = " ".join(note for note in notes if note)
    return _dump(body)


def run_in_shell(tool: Terminal, ready: Prepared, args: dict[str, Any],
                 ctx: ToolCallContext) -> str:
    name = args.get("session")
    if not isinstance(name, str) or not NAME.match(name):
        return tool_error("session must be a name of letters, digits, '.', '_' or '-' (at most "
                          "64), e.g. 'main'.")
    if ready.policy is None and args.get("unconfined") is True:
        return tool_error("unconfined commands cannot run in a shell session; drop `session` "
                          "to run this one command outside the sandbox.")
    command = ready.command
    if ready.workdir and ready.workdir.strip():
        command = f"cd {json.dumps(str(ready.cwd))} && {command}"
    def launcher() -> Launch:
        return command_launch(["-s"], ready.cwd, ready.policy, ready.env)

    keep = max(ready.max_chars * 10, 1_000_000)
    def lineage() -> tuple[str, ...]:
        return tool.processes.ancestors(ctx.session_id) if ctx.session_id else ()

    try:
        result, note = tool.shells.run(ctx.session_id, lineage, name, command, launcher,
                                       ready.cwd, ready.timeout, keep, ctx.interrupt_event)
    except (SandboxUnavailable, subprocess.SubprocessError) as exc:
        return tool_error(f"Not run: {exc}.")
    output = strip_ansi(shorten(result.output, ready.max_chars)).strip()
    body: dict[str, Any] = {"output": output, "exit_code": result.returncode, "error": None,
                            "session": name}
    if result.timed_out:
        body["error"] = (f"Command timed out after {ready.timeout:g} s; the shell session was "
                         f"killed. Run servers and long jobs with background: true.")
    elif result.interrupted:
        body["error"] = "Command interrupted; the shell session was killed."
    if note:
        body["note"] = note
    if ready.verdict.choice in ("once", "session", "always", "allowlist"):
        body["approval"] = ready.verdict.choice
    notes = list(ready.notes)
    if ready.policy is not None and result.returncode not in (0, None):
        notes.append(sandbox_note(ready.policy, ready.command, result.output))
    if any(notes):
        body["sandbox"] = " ".join(note for note in notes if note)
    return _dump(body)


def _new_output(proc: Proc, limit: int) -> dict[str, Any]:
    """The output since the last poll, at most ``limit`` characters of its tail; moves the
    poll cursor."""
    data, skipped, end = proc.ring.since(proc.cursor, limit)
    new = end - proc.cursor
    proc.cursor = end
    text = strip_ansi(data.decode("utf-8", errors="replace"))
    if len(text) > limit:
        skipped += len(text[:-limit].encode())
        text = text[-limit:]
    cut = text.find("\n", 0, max(len(text) // 10, 1)) if skipped else -1
    if cut >= 0:  # start the tail at a whole line
        skipped += len(text[:cut + 1].encode())
        text = text[cut + 1:]
    body: dict[str, Any] = {"output": text, "new_bytes": new}
    if skipped:
        body["skipped_bytes"] = skipped
        body["summary"] = (f"{new} bytes of new output; the first {skipped} are not shown, "
                           f"only the last {len(text)} characters. process(action='log') "
                           "pages the whole log.")
    return body


def _fit(lines: list[str], limit: int, from_end: bool) -> list[str]:
    """The most whole lines (at least one) that fit in ``limit`` characters, taken from the
    start of ``lines`` or from their end."""
    order = reversed(lines) if from_end else iter(lines)
    kept: list[str] = []
    size = 0
    for line in order:
        size += len(line) + 1
        if kept and size > limit:
            break
        kept.append(line)
    return kept[::-1] if from_end else kept


class ProcessTool:
    """The ``process`` tool of one terminal tool's processes and shells."""

    def __init__(self, terminal: Terminal):
        self.terminal = terminal

    def __call__(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        action = args.get("action")
        if action not in ACTIONS:
            return tool_error(f"action must be one of {', '.join(ACTIONS)}.")
        if action == "list":
            return self._list(ctx)
        proc_id = args.get("session_id")
        if not isinstance(proc_id, str) or not proc_id:
            return tool_error(f"process {action} needs the session_id terminal returned "
                              "(process(action='list') shows them).")
        if proc_id.startswith(SHELL_PREFIX):
            return self._shell(action, proc_id, ctx)
        proc = self.terminal.processes.get(proc_id, ctx.session_id)
        if proc is None:
            return tool_error(f"No background process {proc_id!r} in this session; "
                              "process(action='list') shows the running ones.")
        limit = self.terminal._limits()[1]
        if action == "poll":
            return _dump(self._state(proc) | _new_output(proc, limit))
        if action == "log":
            return self._log(proc, args, limit)
        if action == "wait":
            return self._wait(proc, args, ctx, limit)
        if action == "kill":
            self.terminal.processes.kill(proc)
            return _dump(self._state(proc) | _new_output(proc, limit))
        return self._stdin(proc, action, args, ctx)

    @staticmethod
    def _state(proc: Proc) -> dict[str, Any]:
        body: dict[str, Any] = {"session_id": proc.id, "status": proc.status(),
                                "exit_code": proc.exit_code}
        if proc.killed_by:
            body["killed_by"] = proc.killed_by
        return body

    def _list(self, ctx: ToolCallContext) -> str:
        now = time.time()
        rows = [{"session_id": proc.id, "command": shorten(proc.command, 200), "pid": proc.pid,
                 "status": proc.status(), "exit_code": proc.exit_code,
                 "uptime_s": round((proc.ended or now) - proc.started, 1),
                 "output_bytes": proc.ring.total, "keep": proc.keep, "sandbox": proc.sandbox}
                for proc in self.terminal.processes.visible(ctx.session_id)]
        owners = self.terminal.owners(ctx.session_id) or None
        shells = [SHELL_PREFIX + shell.name for shell in self.terminal.shells.names(owners)
                  if shell.alive]
        return _dump({"processes": rows, "shells": shells})

    def _log(self, proc: Proc, args: dict[str, Any], limit: int) -> str:
        try:
            count = min(max(int(args.get("limit") or LOG_LINES), 1), LOG_MAX_LINES)
            offset = None if args.get("offset") is None else max(int(args["offset"]), 0)
        except (TypeError, ValueError):
            return tool_error("offset and limit are numbers of lines.")
        lines = strip_ansi(proc.log.read().decode("utf-8", errors="replace")).splitlines()
        tail = offset is None  # the last lines: drop from the front to fit the bound
        start = max(len(lines) - count, 0) if offset is None else offset
        window = _fit(lines[start:start + count], limit, from_end=tail)
        if tail:
            start = len(lines) - len(window)
        shown = len(window)
        text = shorten("\n".join(window), limit)  # one line longer than the bound
        body = self._state(proc) | {"output": text, "offset": start, "lines": shown,
                                    "total_lines": len(lines)}
        if start + shown < len(lines):
            body["next_offset"] = start + shown
        if proc.log.rotated:
            body["rotated_bytes"] = proc.log.rotated
            body["note"] = (f"The oldest {proc.log.rotated} bytes were rotated out of the log "
                            "(terminal.background_max_log_bytes).")
        return _dump(body)

    def _wait(self, proc: Proc, args: dict[str, Any], ctx: ToolCallContext,
              limit: int) -> str:
        try:
            timeout = float(args.get("timeout") or WAIT_DEFAULT)
        except (TypeError, ValueError):
            return tool_error("timeout must be a number of seconds.")
        timeout = min(max(timeout, 0.0), WAIT_MAX)
        started = time.monotonic()
        deadline = started + timeout
        interrupt = ctx.interrupt_event
        while proc.running and time.monotonic() < deadline:
            if interrupt is not None and interrupt.is_set():
                break
            with proc.ring.changed:
                proc.ring.changed.wait(min(0.05, max(deadline - time.monotonic(), 0)))
        if not proc.running and not proc.ring.closed:  # the last output, when it comes soon
            with proc.ring.changed:
                proc.ring.changed.wait_for(lambda: proc.ring.closed, timeout=0.5)
        body = self._state(proc) | _new_output(proc, limit)
        body["waited_s"] = round(time.monotonic() - started, 2)
        if proc.running:
            body["timed_out"] = True
            body["note"] = (f"Still running after {timeout:g} s (wait takes at most "
                            f"{WAIT_MAX:g} s per call); wait again, poll, or kill it.")
        return _dump(body)

    def _stdin(self, proc: Proc, action: str, args: dict[str, Any],
               ctx: ToolCallContext) -> str:
        if action == "close":
            self.terminal.processes.close_stdin(proc)
            return _dump(self._state(proc) | {"stdin": "closed"})
        data = args.get("data")
        if not isinstance(data, str):
            return tool_error(f"process {action} needs `data`, the text to send.")
        if proc.keep:
            return tool_error("a kept process (keep: true) has no stdin.")
        stream = proc.popen.stdin
        if not proc.stdin_open or stream is None or not proc.running:
            return tool_error(f"{proc.id}'s stdin is closed (the process "
                              f"{'ended' if not proc.running else 'had close called'}).")
        # what goes into a shell's stdin runs like a command: the same approval gate
        verdict = self.terminal.gate.check_command(data, ctx, Path(proc.cwd))
        if not verdict.allowed:
            state = self._state(proc)
            return _dump({**state, "error": verdict.message, "status": "blocked",
                          "process_status": state["status"], "approval": verdict.choice})
        payload = (data + "\n" if action == "submit" else data).encode()
        try:
            stream.write(payload)
            stream.flush()
        except (BrokenPipeError, OSError) as exc:
            return tool_error(f"Could not write to {proc.id}: {exc}.")
        return _dump(self._state(proc) | {"written_bytes": len(payload)})

    def _shell(self, action: str, ident: str, ctx: ToolCallContext) -> str:
        name = ident[len(SHELL_PREFIX):]
        owners = self.terminal.owners(ctx.session_id) or None
        shell = next((s for s in self.terminal.shells.names(owners) if s.name == name), None)
        if shell is None:
            return tool_error(f"No shell session {name!r}; terminal with session: {name!r} "
                              "starts one.")
        if action not in ("kill", "close"):
            return tool_error("a shell session takes terminal calls with `session`; process "
                              "kill or close ends it.")
        self.terminal.shells.close(shell)
        return _dump({"session_id": ident, "status": "killed"})


