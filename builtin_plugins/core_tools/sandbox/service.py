"""The ``sandbox`` service (``hermes_agent.api.services.SANDBOX``): a command other plugins
run for the agent (shell hooks, skills' scripts) is confined exactly as a ``terminal`` command
is: the session's :class:`~.policy.SandboxPolicy` for its working directory, the
environment without hermes's secrets, its own process group (killed at the timeout, on
interrupt and when hermes stops), stdin written from a thread, stdout and stderr kept
apart and each bounded.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import IO, TYPE_CHECKING

from hermes_agent.kits.secrets import command_env

from ..process_groups import ProcessGroups, kill_group
from ..terminal import COMMAND_VARS, BoundedCapture, command_launch, shorten, spawn, watch
from .policy import policy_for
from .runner import SandboxUnavailable, command_cwd_visible, mechanism_for, warn_if_unconfined

if TYPE_CHECKING:
    from hermes_agent import Kernel


@dataclass
class CommandRun:
    """A :class:`hermes_agent.api.services.SandboxedRun`."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool = False
    confined: bool = True
    duration_s: float = 0.0


class SandboxService:
    """The sandbox of one kernel (its config, home and environment)."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self.groups = ProcessGroups()  # killed with the terminal's at on_shutdown

    def describe(self) -> str:
        cwd = Path(self.kernel.cwd) if self.kernel.cwd else Path.cwd()
        policy = policy_for(self.kernel.config, cwd, Path(self.kernel.home))
        found = mechanism_for(policy)
        if not policy.confined:
            return "off (sandbox.mode: off in config.yaml): commands run unconfined"
        if not found.works:
            return f"NONE, commands are NOT confined: {found.why_none}"
        return f"{found.name} ({found.path or found.version})"

    def run(self, command: str, *, cwd: str | PathLike[str], timeout: float, stdin: str = "",
            max_output: int = 65536, env: Mapping[str, str] | None = None,
            pass_fds: Sequence[int] = (),
            interrupt: threading.Event | None = None) -> CommandRun:
        where = Path(cwd).resolve()
        policy = policy_for(self.kernel.config, where, Path(self.kernel.home))
        confined = policy.confined and mechanism_for(policy).works
        warn_if_unconfined(policy)
        if not where.is_dir() or not command_cwd_visible(policy, where):
            return CommandRun("", f"{where} is not a folder the sandbox shows; run the command "
                              "in the workspace", None, confined=confined)
        opted_in = self.kernel.config.get("terminal.env_passthrough") or ()
        environment = command_env(self.kernel, {**COMMAND_VARS, **(env or {})}, opted_in)
        started = time.monotonic()
        try:
            how = command_launch(["-c", command], where, policy, environment)
        except SandboxUnavailable as exc:
            return CommandRun("", f"not run: {exc}", 126, confined=False)
        with how:
            try:
                proc = spawn(how, where, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, pass_fds=tuple(pass_fds))
            except SandboxUnavailable as exc:
                return CommandRun("", f"not run: {exc}", 126, confined=False)
            self.groups.add(proc)
            try:
                out, err, stop = _communicate(proc, stdin.encode(), timeout, max_output,
                                              interrupt)
            finally:
                if how.kill_leftovers:
                    kill_group(proc)
                self.groups.discard(proc)
        return CommandRun(out, err, None if stop else proc.returncode, stop == "timeout", confined,
                          time.monotonic() - started)


def _communicate(proc: subprocess.Popen[bytes], data: bytes, timeout: float, keep: int,
                 interrupt: threading.Event | None = None) -> tuple[str, str, str]:
    """Feed ``data``, read both streams (each cut to ``keep`` characters and a marker of
    what was left out in the middle), kill the group at ``timeout`` or when ``interrupt``
    is set; (stdout, stderr, "" or "timeout" or "interrupt")."""
    captures = (BoundedCapture(keep), BoundedCapture(keep))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    threads = [threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True),
               *(threading.Thread(target=_drain, args=(stream, capture), daemon=True)
                 for stream, capture in zip((proc.stdout, proc.stderr), captures))]
    for thread in threads:
        thread.start()
    exited = threading.Event()
    threading.Thread(target=lambda: (proc.wait(), exited.set()), daemon=True).start()
    stop = watch(exited, time.monotonic() + max(timeout, 0.1), interrupt)
    if stop:
        kill_group(proc)
        proc.wait()
    for thread in threads[1:]:  # a child left in the background may hold the pipes open
        thread.join(timeout=0.2 if stop else 1.0)
    out, err = (shorten(capture.text(), keep) for capture in captures)
    return out, err, stop


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        if data:
            stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):  # the command did not read it all: its business
        pass


def _drain(stream: IO[bytes], capture: BoundedCapture) -> None:
    read = getattr(stream, "read1", stream.read)
    try:
        while chunk := read(65536):
            capture.feed(chunk)
    except (OSError, ValueError):
        pass
