"""The ``ssh`` terminal backend: each command runs on a host the user names, over OpenSSH.

The local ``ssh`` client runs with ``BatchMode=yes`` (never a prompt) and an environment of
only ``HOME``, ``PATH``, ``USER``, ``LOGNAME`` and ``SSH_AUTH_SOCK``: no local variable (no
key from ``.env``) can be forwarded, whatever ``SendEnv`` says. The remote command gets the
terminal's fixed variables (``PAGER``, ``TERM``, ...) and the names ``terminal.env_passthrough``
opts in, set on its command line; everything else comes from the remote login.

One connection is shared by the calls (a ControlMaster in a private folder, kept 60 s idle).
The remote side runs the command in its own process group and kills that group when the ssh
channel's stdin closes (hermes killed its ``ssh`` on a timeout or an interrupt) or, as a
backstop, a few seconds after the timeout.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..process_groups import ProcessGroups, die_with_hermes
from ..terminal import COMMAND_VARS, RunResult, _wait

if TYPE_CHECKING:
    from hermes_agent import Kernel

CONNECT_TIMEOUT = 10
PERSIST = "60s"
BACKSTOP = 5.0  # seconds after the timeout the remote side kills the command on its own
CLIENT_ENV = ("HOME", "PATH", "USER", "LOGNAME", "SSH_AUTH_SOCK")

# Runs on the remote host under bash: $1 cwd, $2 workdir, $3 deadline, $4 the command.
WRAPPER = r"""
here() { case $1 in "~") printf %s "$HOME";; "~/"*) printf %s "$HOME/${1#"~/"}";; *) printf %s "$1";; esac; }
cd -- "$(here "$1")" 2>/dev/null || { echo "hermes: no directory $1 on ${HOSTNAME:-this host} (set terminal.cwd)" >&2; exit 126; }
if [ -n "$2" ]; then cd -- "$(here "$2")" || exit 126; fi
exec 3<&0 </dev/null
set -m
bash -c "$4" 3<&- 2>&1 &
pid=$!
set +m
{ read -r -t "$3" _ <&3; kill -KILL -- "-$pid" 2>/dev/null; } &
guard=$!
exec 3<&-
wait "$pid"; rc=$?
kill "$guard" 2>/dev/null
exit "$rc"
"""

# What ssh itself prints when it cannot connect or log in (its exit code is then 255).
_SSH_FAILURE = re.compile(r"^(ssh: |.*Permission denied \(|Host key verification failed|"
                          r"Connection (closed|reset|timed out)|kex_exchange_identification|"
                          r"Warning: Identity file|Load key |no such identity)", re.M)
_TARGET = re.compile(r"^[A-Za-z0-9_.:%\[\]@-]+\Z")


class SSHError(RuntimeError):
    """The ssh backend is misconfigured or cannot reach its host; the message says the fix."""


@dataclass(frozen=True)
class SSHSettings:
    host: str
    user: str | None = None
    port: int = 22
    key: str | None = None
    cwd: str = "~"  # on the remote host
    options: tuple[str, ...] = ()  # more `-o` options (terminal.ssh_options)
    forward: tuple[str, ...] = tuple(COMMAND_VARS)  # variables the remote command gets
    client_env: tuple[tuple[str, str], ...] = ()

    @property
    def target(self) -> str:
        return f"{self.user + '@' if self.user else ''}{self.host}:{self.port}"

    @classmethod
    def from_kernel(cls, kernel: "Kernel") -> "SSHSettings":
        """terminal.ssh_* of config.yaml, else the original's TERMINAL_SSH_* variables."""
        config, env = kernel.config, kernel.env

        def setting(key: str, var: str) -> str | None:
            value = config.get(f"terminal.{key}")
            value = env.get(var) if value in (None, "") else value
            return None if value in (None, "") else str(value).strip()

        host = setting("ssh_host", "TERMINAL_SSH_HOST")
        if not host:
            raise SSHError("terminal.backend is ssh but no host is set: set terminal.ssh_host "
                           "(and ssh_user, ssh_port, ssh_key) in config.yaml, or "
                           "TERMINAL_SSH_HOST in $HERMES_HOME/.env.")
        user = setting("ssh_user", "TERMINAL_SSH_USER")
        for name, value in (("ssh_host", host), ("ssh_user", user)):
            if value is not None and (value.startswith("-") or not _TARGET.match(value)):
                raise SSHError(f"terminal.{name} {value!r} is not a host or user name.")
        port_text = setting("ssh_port", "TERMINAL_SSH_PORT") or "22"
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise SSHError(f"terminal.ssh_port {port_text!r} is not a port number (1-65535).")
        key = setting("ssh_key", "TERMINAL_SSH_KEY")
        cwd = setting("cwd", "TERMINAL_CWD")
        passthrough = config.get("terminal.env_passthrough") or ()
        return cls(host=host, user=user, port=int(port_text),
                   key=str(Path(key).expanduser()) if key else None,
                   cwd="~" if cwd in (None, ".") else cwd,
                   options=tuple(config.get("terminal.ssh_options") or ()),
                   forward=(*COMMAND_VARS, *passthrough),
                   client_env=tuple((name, env[name]) for name in CLIENT_ENV if env.get(name)))


class SSHBackend:
    """Runs terminal commands on ``settings.host``; :meth:`close` ends the shared connection."""

    name = "ssh"  # env_type of transform_terminal_output

    def __init__(self, settings: SSHSettings):
        self.settings = settings
        self._lock = threading.Lock()
        self._socket_dir: str | None = None
        env = dict(settings.client_env)
        env.setdefault("PATH", os.defpath)
        self.client_env = env
        self.ssh = shutil.which("ssh", path=env["PATH"]) or shutil.which("ssh")
        if self.ssh is None:
            raise SSHError("terminal.backend is ssh but no ssh client is installed here: "
                           "install OpenSSH (apt-get install openssh-client).")

    # --- the local ssh command line -------------------------------------------------------

    def _base(self, *extra: str) -> list[str]:
        s = self.settings
        argv = [self.ssh, "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new",
                "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", "-o", "ServerAliveInterval=15",
                "-o", f"ControlPath={self._control_path()}", "-p", str(s.port), *extra]
        if s.key:
            argv += ["-i", s.key, "-o", "IdentitiesOnly=yes"]
        for option in s.options:
            argv += ["-o", option]
        if s.user:
            argv += ["-l", s.user]
        return [*argv, "--", s.host]

    def _control_path(self) -> str:
        if self._socket_dir is None:  # private (0700), short enough for a unix socket path
            self._socket_dir = tempfile.mkdtemp(prefix="hermes-ssh-",
                                                dir="/tmp" if os.path.isdir("/tmp") else None)
        return os.path.join(self._socket_dir, "%C")

    def remote_command(self, command: str, workdir: str | None, deadline: float,
                       env: dict[str, str]) -> str:
        """The string the remote login shell runs."""
        exports = [f"{name}={env[name]}" for name in dict.fromkeys(self.settings.forward)
                   if name in env]
        return shlex.join(["exec", "env", *exports, "bash", "-c", WRAPPER, "hermes-ssh",
                           self.settings.cwd, workdir or "", f"{deadline:.0f}", command])

    # --- connection -----------------------------------------------------------------------

    def _connected(self) -> bool:
        """Whether the shared connection's master answers; a dead one's socket is removed."""
        if self._socket_dir is None:
            return False
        for path in Path(self._socket_dir).iterdir():
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(str(path))
                    return True
                except OSError:
                    path.unlink(missing_ok=True)  # its master was killed
        return False

    def connect(self) -> None:
        """Start the shared connection (a no-op while it is up); SSHError says why it failed."""
        with self._lock:
            if self._connected():
                return
            with tempfile.TemporaryFile() as errors:
                argv = self._base("-M", "-N", "-f", "-o", f"ControlPersist={PERSIST}")
                try:
                    done = subprocess.run(argv, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=errors,
                                          env=self.client_env, start_new_session=True,
                                          timeout=CONNECT_TIMEOUT * 3)
                except subprocess.TimeoutExpired:
                    raise self._failure("no answer in time") from None
                errors.seek(0)
                message = errors.read().decode("utf-8", "replace").strip()
            if done.returncode != 0:
                raise self._failure(message or f"ssh exited with {done.returncode}")

    def _failure(self, message: str) -> SSHError:
        s = self.settings
        key = f" -i {shlex.quote(s.key)}" if s.key else ""
        user = f"{s.user}@" if s.user else ""
        return SSHError(
            f"ssh backend: cannot run commands on {s.target}: {message.splitlines()[-1]}. "
            f"Check terminal.ssh_host, ssh_port, ssh_user and ssh_key in config.yaml (or "
            f"TERMINAL_SSH_*), that the host's key is in ~/.ssh/known_hosts and that "
            f"`ssh -p {s.port}{key} {user}{s.host} true` works here without a prompt.")

    def close(self) -> None:
        """End the shared connection and remove its folder."""
        with self._lock:
            if self._socket_dir is None:
                return
            if self._connected():
                subprocess.run(self._base("-O", "exit"), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=self.client_env, timeout=CONNECT_TIMEOUT)
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    # --- one command ----------------------------------------------------------------------

    def run(self, command: str, workdir: str | None, timeout: float, keep: int,
            env: dict[str, str], interrupt: threading.Event | None,
            groups: ProcessGroups | None) -> RunResult:
        """Run ``command`` on the host; a timeout or an interrupt kills the local ``ssh``'s
        group, which closes the channel, and the remote side then kills the command's group."""
        self.connect()
        remote = self.remote_command(command, workdir, timeout + BACKSTOP, env)
        started = time.monotonic()
        # stdin stays open and empty: the remote side waits for its end
        proc = subprocess.Popen([*self._base("-o", "ControlMaster=no"), remote],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=self.client_env, preexec_fn=die_with_hermes())
        if groups is not None:
            groups.add(proc)
        try:
            result = _wait(proc, started, timeout, keep, interrupt)
        finally:
            if groups is not None:
                groups.discard(proc)
            if proc.stdin is not None:
                proc.stdin.close()
        if result.returncode == 255 and _SSH_FAILURE.search(result.output):
            raise self._failure(result.output.strip())
        return result
