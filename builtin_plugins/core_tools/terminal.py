"""The terminal tool: one foreground shell command with a timeout and an output limit.

Steps: approval gate, the sandbox (:mod:`.sandbox`: the session's policy; leaving it with
``unconfined: true`` is a second approval), run ``bash -c`` in its own process group (stdin
closed, stderr merged into stdout; registered while it runs, see :mod:`.process_groups`, so it
never outlives hermes), kill the group on timeout or interrupt, let
``transform_terminal_output`` replace the captured output, shorten it to the limit (40% head,
60% tail), strip ANSI escapes, add a ``sandbox`` note when the sandbox stopped something.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from hermes_agent.api import ToolCallContext, tool_error
from hermes_agent.kits.secrets import command_env

from .approval import ApprovalGate
from .process_groups import ProcessGroups, die_with_hermes, kill_group
from .sandbox.policy import SandboxPolicy, policy_for
from .sandbox.runner import (Launch, SandboxUnavailable, command_cwd_visible, launch,
                             sandbox_note, warn_if_unconfined)

if TYPE_CHECKING:
    from hermes_agent import Kernel

MAX_TIMEOUT = 3600
CHUNK = 65536
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters: 40% head, 60% tail and a marker in between."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.4)
    tail = limit - head
    omitted = len(text) - head - tail
    return (f"{text[:head]}\n\n... [output shortened: {omitted} of {len(text)} characters "
            f"omitted] ...\n\n{text[-tail:]}")


class BoundedCapture:
    """Keeps the first and last ``keep`` bytes of a stream and counts the rest."""

    def __init__(self, keep: int):
        self.keep = keep
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail_size - len(self.tail[0]) >= self.keep:
            self.dropped += len(self.tail[0])
            self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)
        middle = (f"\n... [{self.dropped} bytes of output not kept] ...\n".encode()
                  if self.dropped else b"")
        return (bytes(self.head) + middle + tail).decode("utf-8", errors="replace")


def _drain(stream: IO[bytes], capture: BoundedCapture) -> None:
    read = getattr(stream, "read1", stream.read)
    while chunk := read(CHUNK):
        capture.feed(chunk)


@dataclass
class RunResult:
    output: str
    returncode: int | None
    timed_out: bool = False
    interrupted: bool = False
    duration_s: float = 0.0


# Set for every command: no pager waits for a keypress, no colour codes.
COMMAND_VARS = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}


def command_launch(shell_args: list[str], cwd: Path, policy: SandboxPolicy | None,
                   env: Mapping[str, str] | None) -> Launch:
    """How to start ``bash SHELL_ARGS`` in the sandbox of ``policy`` (None: unconfined): the
    one place foreground commands, background processes and persistent shells get their argv,
    environment and pre-exec step (Landlock is applied there); it dies with hermes. Raises
    :class:`SandboxUnavailable` when the configured mechanism does not work here."""
    argv = [shutil.which("bash") or "/bin/sh", *shell_args]
    if policy is None:
        return Launch(argv, None if env is None else dict(env), die_with_hermes())
    return launch(policy, argv, cwd, env, die_with_hermes())


def spawn(how: Launch, cwd: Path, **streams: Any) -> subprocess.Popen[bytes]:
    """``Popen`` of ``how`` in ``cwd``, in a session of its own; a child that could not
    confine itself (Landlock's pre-exec step failed) raises :class:`SandboxUnavailable`."""
    try:
        return subprocess.Popen(how.argv, cwd=cwd, start_new_session=True, env=how.env,
                                preexec_fn=how.preexec_fn, **streams)
    except subprocess.SubprocessError as exc:
        raise SandboxUnavailable(f"the {how.mechanism} sandbox could not be applied to the "
                                 f"command ({exc}); it did not run") from exc


def run_command(command: str, cwd: Path, timeout: float, keep: int, env: dict[str, str],
                interrupt: threading.Event | None = None,
                groups: ProcessGroups | None = None, *,
                policy: SandboxPolicy | None) -> RunResult:
    """Run ``command`` with exactly ``env`` (callers pass ``command_env(kernel, ...)``),
    confined by ``policy`` (required, so that no caller runs unconfined by forgetting it;
    None: unconfined, for ``sandbox.mode: off`` or an approved ``unconfined`` call); its
    group is in ``groups`` while it runs."""
    how = command_launch(["-c", command], cwd, policy, env)
    with how:
        started = time.monotonic()
        proc = spawn(how, cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT)
        if groups is not None:
            groups.add(proc)
        try:
            return _wait(proc, started, timeout, keep, interrupt, how.kill_leftovers)
        finally:
            if groups is not None:
                groups.discard(proc)


def watch(done: threading.Event, deadline: float, interrupt: threading.Event | None) -> str:
    """Wait for ``done``: "" once it is set, "timeout" at ``deadline`` or "interrupt" when
    ``interrupt`` is set first (the caller then stops the command)."""
    while not done.wait(0.05):
        if interrupt is not None and interrupt.is_set():
            return "interrupt"
        if time.monotonic() >= deadline:
            return "timeout"
    return ""


def _wait(proc: subprocess.Popen[bytes], started: float, timeout: float, keep: int,
          interrupt: threading.Event | None, kill_leftovers: bool = False) -> RunResult:
    capture = BoundedCapture(keep)
    assert proc.stdout is not None
    reader = threading.Thread(target=_drain, args=(proc.stdout, capture), daemon=True)
    reader.start()
    # A blocking wait in a thread sees the exit at once (Popen.wait(timeout) polls with
    # sleeps growing to 50 ms, which would add up to that much to every command).
    exited = threading.Event()
    threading.Thread(target=lambda: (proc.wait(), exited.set()), daemon=True).start()
    stop = watch(exited, started + timeout, interrupt)
    timed_out, interrupted = stop == "timeout", stop == "interrupt"
    if stop:
        kill_group(proc)
        exited.wait()
    if kill_leftovers and not (timed_out or interrupted):
        kill_group(proc)  # what it left in the background ends with it, as in bubblewrap
    # Background children may keep the pipe open; do not wait for them forever.
    reader.join(timeout=0.2 if (timed_out or interrupted) else 1.0)
    if not reader.is_alive():
        proc.stdout.close()
    return RunResult(capture.text(), None if (timed_out or interrupted) else proc.returncode,
                     timed_out, interrupted, time.monotonic() - started)


@dataclass
class Prepared:
    """A terminal call that passed its checks and the approval gate."""

    command: str
    cwd: Path
    workdir: str | None
    timeout: float
    max_chars: int
    policy: SandboxPolicy | None  # None: unconfined (or a remote host's)
    verdict: Any  # the approval gate's verdict
    notes: list[str]
    env: dict[str, str]


class RemoteBackend(Protocol):
    """A host the commands run on instead of this machine (``terminal.backend``, see
    :mod:`.backends`); ``workdir`` is taken on that host."""

    name: str

    def run(self, command: str, workdir: str | None, timeout: float, keep: int,
            env: dict[str, str], interrupt: threading.Event | None,
            groups: ProcessGroups | None) -> RunResult: ...


class TerminalTool:
    def __init__(self, kernel: "Kernel", gate: ApprovalGate, remote: RemoteBackend | None = None):
        self.kernel = kernel
        self.gate = gate
        self.remote = remote  # None: commands run here (the local backend)
        self.groups = ProcessGroups()  # killed when the kernel closes

    def kill_all(self) -> None:
        """hermes exits: kill every command still running."""
        self.groups.kill_all()

    def _limits(self) -> tuple[float, int]:
        timeout = float(self.kernel.config.get("terminal.timeout") or 180)
        max_chars = int(self.kernel.config.get("tool_output.max_bytes") or 50_000)
        return timeout, max_chars

    def __call__(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        ready = self._prepare(args, ctx)
        if isinstance(ready, str):
            return ready
        return self._run(ready, args, ctx)

    def _run(self, ready: "Prepared", args: dict[str, Any], ctx: ToolCallContext) -> str:
        """Run a prepared call (the process tool's subclass adds background and sessions)."""
        return self._foreground(ready, ctx)

    def _prepare(self, args: dict[str, Any], ctx: ToolCallContext) -> "Prepared | str":
        """What every way of running a command shares: its arguments checked, the approval
        gate, the sandbox policy (None: unconfined) and notes, the environment."""
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return tool_error("terminal needs a 'command' to run.")
        default_timeout, max_chars = self._limits()
        timeout = default_timeout
        if args.get("timeout") is not None:
            try:
                timeout = float(args["timeout"])
            except (TypeError, ValueError):
                return tool_error("timeout must be a number of seconds.")
            timeout = min(max(timeout, 1.0), MAX_TIMEOUT)
        cwd = ctx.cwd
        workdir = args["workdir"] if isinstance(args.get("workdir"), str) else None
        if self.remote is None and workdir and workdir.strip():
            cwd = ctx.resolve(workdir)
        if self.remote is None and not cwd.is_dir():
            return tool_error(f"Working directory does not exist: {cwd}.")
        verdict = self.gate.check_command(command, ctx, cwd)
        if not verdict.allowed:
            return _blocked(verdict.message, verdict.choice)
        policy: SandboxPolicy | None = None  # a remote host's commands are not wrapped here
        notes: list[str] = []
        if self.remote is None:
            session_policy = policy_for(self.kernel.config, ctx.cwd, Path(self.kernel.home))
            policy = session_policy
            notes.append(warn_if_unconfined(session_policy))
            if args.get("unconfined") is True and session_policy.confined:
                leave = self.gate.decide(
                    command, "run this command outside the sandbox (it may write anywhere and "
                    "read hermes's home and credentials)", (f"unconfined:{command}",), ctx)
                if not leave.allowed:
                    return _blocked(leave.message, leave.choice)
                policy, verdict = None, leave
                notes.append("Ran unconfined (approved by the user).")
            elif not command_cwd_visible(session_policy, cwd):
                return tool_error(f"{cwd} is not visible inside the sandbox (hidden, or under the "
                                  "private /tmp); run the command in the workspace.")
            if policy is not None and policy.confined and policy.workspace is None:
                notes.append(f"No writable workspace: {policy.why_no_workspace}; only a private "
                             "/tmp is writable.")
        opted_in = self.kernel.config.get("terminal.env_passthrough") or ()
        env = command_env(self.kernel, COMMAND_VARS, opted_in)
        return Prepared(command, cwd, workdir, timeout, max_chars, policy, verdict, notes, env)

    def _foreground(self, ready: "Prepared", ctx: ToolCallContext) -> str:
        command, policy, timeout, max_chars = (ready.command, ready.policy, ready.timeout,
                                               ready.max_chars)
        verdict, notes, env = ready.verdict, ready.notes, ready.env
        keep = max(max_chars * 10, 1_000_000)
        if self.remote is not None:  # the host runs it: the local sandbox does not wrap it
            result = self.remote.run(command, ready.workdir, timeout, keep, env,
                                     ctx.interrupt_event, self.groups)
        else:
            try:
                result = run_command(command, ready.cwd, timeout, keep=keep, env=env,
                                     interrupt=ctx.interrupt_event, groups=self.groups,
                                     policy=policy)
            except SandboxUnavailable as exc:
                return tool_error(f"Not run: {exc}.")
        output = result.output
        replaced = self.kernel.hooks.fire("transform_terminal_output", command=command,
                                          output=output, returncode=result.returncode,
                                          task_id=ctx.task_id or None,
                                          env_type=self.remote.name if self.remote else "local")
        if isinstance(replaced, str):
            output = replaced
        output = strip_ansi(shorten(output, max_chars)).strip()
        body: dict[str, Any] = {"output": output, "exit_code": result.returncode, "error": None}
        if result.timed_out:
            later = ("run servers and watchers with background: true and follow them with the "
                     "process tool" if self.remote is None else "or in the background with "
                     "nohup and a log file you can read later")
            body["error"] = (f"Command timed out after {timeout:g} s and was killed. Run long "
                             f"jobs with a larger timeout (up to {MAX_TIMEOUT} s), {later}.")
        elif result.interrupted:
            body["error"] = ("Command interrupted (Ctrl-C, or hermes was stopped) and killed with "
                             "its process group.")
        if verdict.choice in ("once", "session", "always", "allowlist"):
            body["approval"] = verdict.choice
        if policy is not None and result.returncode not in (0, None):
            notes.append(sandbox_note(policy, command, result.output))
        if any(notes):
            body["sandbox"] = " ".join(note for note in notes if note)
        return json.dumps(body, ensure_ascii=False)


def _blocked(message: str, choice: str) -> str:
    return json.dumps({"output": "", "exit_code": None, "error": message, "status": "blocked",
                       "approval": choice})
