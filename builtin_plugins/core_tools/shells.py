"""Persistent shells: ``terminal`` with ``session: NAME`` runs the command in a bash that
stays alive between calls, so ``cd``, variables, functions and an activated virtualenv carry
over. The shell is confined like every command (its argv comes from
:func:`.terminal.command_argv`) and starts from the long-lived spawner thread.

Each call sends one line: ``eval 'CMD' </dev/null 2>&1; printf '\\nMARK %s\\n' "$?"`` (the
command quoted, so a syntax error fails that call only and never leaves the shell waiting for
more input; stdin is ``/dev/null`` so a command cannot read the next call's line). The output
up to the marker is the call's; the number after it, the exit status. A timeout or an
interrupt kills the shell (the next call starts a fresh one and says so); so does ``exit``.
"""

from __future__ import annotations

import re
import secrets
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .background import SPAWNER
from .process_groups import ProcessGroups, kill_tree
from .sandbox.runner import Launch
from .terminal import CHUNK, BoundedCapture, RunResult, watch

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")


@dataclass
class Shell:
    name: str
    owner: str
    popen: subprocess.Popen[bytes]
    launched: Launch | None = None  # closed with the shell (Landlock's temporary folder)
    mark: str = field(default_factory=lambda: "__hermes_done_" + secrets.token_hex(8))
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None


class Shells:
    """The persistent shells of one kernel, by (session, name)."""

    def __init__(self) -> None:
        self._shells: dict[tuple[str, str], Shell] = {}
        self._lock = threading.Lock()
        self.groups = ProcessGroups()  # killed with hermes

    def names(self, owners: set[str] | None) -> list[Shell]:
        with self._lock:
            return [shell for (owner, _), shell in self._shells.items()
                    if owners is None or owner in owners]

    def _shell(self, owner: str, lineage: Callable[[], tuple[str, ...]], name: str,
               launcher: Callable[[], Launch], cwd: Path) -> tuple[Shell, bool]:
        with self._lock:
            mine = self._shells.get((owner, name))
            earlier_owners = () if mine is not None and mine.alive else lineage()
            for earlier in (owner, *earlier_owners):  # after compression: the same talk's
                shell = self._shells.get((earlier, name))
                if shell is not None and shell.alive:
                    if earlier != owner:
                        del self._shells[(earlier, name)]
                        shell.owner = owner
                        self._shells[(owner, name)] = shell
                    return shell, False
            how = launcher()
            try:
                popen = SPAWNER.run(lambda: subprocess.Popen(
                    how.argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, start_new_session=True, env=how.env,
                    preexec_fn=how.preexec_fn))
            except BaseException:
                how.close()
                raise
            self.groups.add(popen)
            shell = Shell(name, owner, popen, how)
            self._shells[(owner, name)] = shell
            return shell, True

    def run(self, owner: str, lineage: Callable[[], tuple[str, ...]], name: str, command: str,
            launcher: Callable[[], Launch], cwd: Path, timeout: float, keep: int,
            interrupt: threading.Event | None) -> tuple[RunResult, str]:
        """Run ``command`` in the shell ``name`` of session ``owner`` (or of a session it
        continues, ``lineage``), started with ``launcher()`` (``bash -s`` confined) when none is
        running; returns the result and a note for the model."""
        shell, fresh = self._shell(owner, lineage, name, launcher, cwd)
        with shell.lock:
            result = _call(shell, command, timeout, keep, interrupt)
        note = (f"New shell session {name!r}: cd, variables and an activated virtualenv "
                "carry over to its next calls. " if fresh else "")
        if result.timed_out or result.interrupted or not shell.alive:
            self.close(shell)
            why = ("timed out" if result.timed_out else "was interrupted"
                   if result.interrupted else "exited")
            note += (f"The command {why}; shell session {name!r} is gone (its directory and "
                     "variables too): the next call with it starts a fresh shell.")
        return result, note.strip()

    def close(self, shell: Shell) -> None:
        with self._lock:
            if self._shells.get((shell.owner, shell.name)) is shell:
                del self._shells[(shell.owner, shell.name)]
        kill_tree(shell.popen.pid, 9)
        try:
            shell.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.groups.discard(shell.popen)
        if shell.launched is not None:
            shell.launched.close()
        for stream in (shell.popen.stdin, shell.popen.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def end_session(self, owners: set[str]) -> int:
        ended = self.names(owners)
        for shell in ended:
            self.close(shell)
        return len(ended)

    def kill_all(self) -> None:
        for shell in self.names(None):
            self.close(shell)


def _call(shell: Shell, command: str, timeout: float, keep: int,
          interrupt: threading.Event | None) -> RunResult:
    shell.calls += 1
    mark = f"{shell.mark}_{shell.calls}"
    line = f"eval {shlex.quote(command)} </dev/null 2>&1; printf '\\n{mark} %s\\n' \"$?\"\n"
    started = time.monotonic()
    assert shell.popen.stdin is not None and shell.popen.stdout is not None
    try:
        shell.popen.stdin.write(line.encode())
        shell.popen.stdin.flush()
    except OSError:
        return RunResult("", shell.popen.poll(), duration_s=0.0)
    capture = BoundedCapture(keep)
    window = bytearray()
    done = threading.Event()
    status: list[int] = []
    ending = re.compile(rb"\n" + re.escape(mark.encode()) + rb" (\d+)\n")

    def read() -> None:
        stream = shell.popen.stdout
        assert stream is not None
        read1 = getattr(stream, "read1", stream.read)
        keep_tail = len(mark) + 24  # bytes held back: maybe the marker's start
        try:
            while chunk := read1(CHUNK):
                window.extend(chunk)
                found = ending.search(window)
                if found:
                    capture.feed(bytes(window[:found.start()]))
                    status.append(int(found.group(1)))
                    window.clear()
                    break
                if len(window) > keep_tail:
                    cut = len(window) - keep_tail
                    capture.feed(bytes(window[:cut]))
                    del window[:cut]
        except (OSError, ValueError):
            pass
        finally:
            if not status and window:
                capture.feed(bytes(window))
            done.set()

    reader = threading.Thread(target=read, daemon=True, name=f"hermes-shell-{shell.name}")
    reader.start()
    stop = watch(done, started + timeout, interrupt)
    timed_out, interrupted = stop == "timeout", stop == "interrupt"
    if stop:
        kill_tree(shell.popen.pid, 9)
        done.wait(2.0)
    code: int | None = status[0] if status else None
    if code is None and not (timed_out or interrupted):
        code = shell.popen.wait()
    return RunResult(capture.text(), code, timed_out, interrupted, time.monotonic() - started)
