"""A real OpenSSH server on 127.0.0.1 for the ssh backend's tests: ``sshd -D -e`` with a
throwaway host key, one authorized client key and a free port, run as the current user."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/sbin/sshd")
                                     if os.access(p, os.X_OK)), None)
MISSING = ("no sshd here: install Debian's openssh-server (apt-get install openssh-server); "
           "the tests start their own sshd on 127.0.0.1")


@dataclass
class Sshd:
    proc: subprocess.Popen[bytes]
    port: int
    user: str
    key: Path  # the client's private key
    known_hosts: Path
    folder: Path

    def config(self, remote_cwd: Path, **extra: object) -> dict[str, object]:
        """The terminal section that points the ssh backend at this server."""
        return {"backend": "ssh", "ssh_host": "127.0.0.1", "ssh_port": self.port,
                "ssh_user": self.user, "ssh_key": str(self.key), "cwd": str(remote_cwd),
                "ssh_options": [f"UserKnownHostsFile={self.known_hosts}"], **extra}

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, stdin=subprocess.DEVNULL)


def _drain(stream: IO[bytes], path: Path) -> None:
    """Keep reading sshd's log, so it never blocks on a full pipe."""
    with path.open("ab") as log:
        for line in stream:
            log.write(line)
            log.flush()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_sshd(folder: Path) -> Sshd:
    assert SSHD is not None, MISSING
    folder.mkdir(parents=True, exist_ok=True)
    _keygen(folder / "host_key")
    _keygen(folder / "client_key")
    shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
    if os.geteuid() == 0:  # root's sshd wants its privilege separation folder
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    port = _free_port()
    (folder / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
        # as Debian's default sshd_config: a client that sent LC_* variables would set them
        "AcceptEnv LANG LC_* HERMES_* *_API_KEY\nLogLevel VERBOSE\n")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stderr is not None
    seen = []
    for raw in proc.stderr:  # sshd says when it listens: that is the barrier
        line = raw.decode(errors="replace")
        seen.append(line)
        if "Server listening on 127.0.0.1" in line:
            break
    else:
        proc.wait()
        raise AssertionError("sshd did not start:\n" + "".join(seen))
    threading.Thread(target=_drain, args=(proc.stderr, folder / "sshd.log"), daemon=True).start()
    host_line = (folder / "host_key.pub").read_text().split()
    known = folder / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {host_line[0]} {host_line[1]}\n")
    return Sshd(proc, port, getpass.getuser(), folder / "client_key", known, folder)
