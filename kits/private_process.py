"""Owner: the builtin plugin `agent`.

Keeping the hermes process's own secrets from the commands its agent runs.

The commands the agent runs are children of hermes and run as the same user, so on Linux
they may read hermes's ``/proc/<pid>/environ`` (its environment as it started: the API keys
exported in the shell before ``hermes`` ran, which :func:`~.secrets.command_env` leaves out
of their own environment), its memory, or attach a debugger to it. A process marked not
dumpable (``prctl(PR_SET_DUMPABLE, 0)``, as ssh-agent does) refuses all three to processes
of the same user; a child is dumpable again once it runs another program, so the commands
themselves behave as before. Root may still read any process.

``HERMES_DEBUGGABLE=1`` leaves the process as it is (for a profiler or a debugger).
Standard library only.
"""

from __future__ import annotations

import os
import sys
import threading

PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
_lock = threading.Lock()
_done: list[bool] = []  # the outcome, once decided


def keep_process_private() -> bool:
    """Mark this process not dumpable (Linux, once per process); True when it now is."""
    if _done:
        return _done[0]
    with _lock:
        if not _done:
            _done.append(_make_private())
    return _done[0]


def _make_private() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    if os.environ.get("HERMES_DEBUGGABLE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return False
        return libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no prctl in this libc
        return False
