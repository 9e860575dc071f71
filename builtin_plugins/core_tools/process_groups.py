"""The process groups of the commands the terminal tool is running, so none outlives hermes.

Each command runs in its own session (``start_new_session``), which keeps a terminal's Ctrl-C
and hang-up away from it: hermes must stop it itself. Three layers do:

- an interrupted turn (Ctrl-C, and in ``hermes chat`` SIGTERM and SIGHUP, which interrupt the
  turn the same way) kills the command's group at once (:func:`.terminal.run_command`);
- the kernel's close (``on_shutdown``: the end of every ``hermes`` command, the gateway's and
  the cron daemon's stop) and the interpreter's exit (``atexit``) kill every group still
  registered here;
- on Linux the group's leader gets ``PR_SET_PDEATHSIG`` (SIGKILL), so it dies with hermes even
  when hermes is SIGKILLed. Its own children then remain (only the leader gets that signal)
  until they exit; ``docs/tools.md`` says so.

A command that detaches itself on purpose (``setsid``, or ``nohup cmd &`` left running after
the command returned) is not tracked: the tool tracks a group only while its command runs.
Background processes (:mod:`.background`) and shell sessions (:mod:`.shells`) keep a registry
each, and are stopped with :func:`kill_tree`, which also reaches descendants that left the
group while it runs.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc``'s whole process group (its leader at least)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


class ProcessGroups:
    """The groups of the commands running now (one registry per terminal tool, so per
    kernel); :meth:`kill_all` stops them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        _REGISTRIES.add(self)

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running[proc.pid] = proc

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.pop(proc.pid, None)

    def __len__(self) -> int:
        return len(self._running)

    def kill_all(self) -> int:
        """SIGKILL every registered group and reap the leaders; returns how many."""
        with self._lock:
            running, self._running = list(self._running.values()), {}
        for proc in running:
            kill_group(proc)
        for proc in running:
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
        return len(running)


_REGISTRIES: "weakref.WeakSet[ProcessGroups]" = weakref.WeakSet()


@atexit.register
def _kill_everywhere() -> None:
    for registry in list(_REGISTRIES):
        registry.kill_all()


def die_with_hermes() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when hermes dies (Linux); None
    elsewhere. (The signal comes when the thread that started the child ends; the terminal
    tool's thread waits for its command, so that is when hermes dies.)"""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: nothing that locks
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # hermes died before the call: follow it now
            os._exit(137)

    return preexec


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux: from /proc; elsewhere none)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid``'s process group and to each of its descendants (those that
    made a group or session of their own too)."""
    for target in (pid, *descendants(pid)):
        for send in (os.killpg, os.kill):
            try:
                send(target, sig)
            except (ProcessLookupError, PermissionError, OSError):
                pass
