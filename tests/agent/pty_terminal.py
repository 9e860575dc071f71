"""A child process on a real pseudo-terminal, read and typed into like a person would."""

from __future__ import annotations

import os
import pty
import select
import signal
import time
from pathlib import Path


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
            if cwd is not None:
                os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.buffer = ""

    def read_until(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {text!r}; screen:\n{self.buffer}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"terminal closed before {text!r}; screen:\n{self.buffer}")
                self.buffer += data.decode("utf-8", "replace")
        index = self.buffer.index(text) + len(text)
        seen, self.buffer = self.buffer[:index], self.buffer[index:]
        return seen

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:  # keep draining so the child never blocks on a full pty
                if select.select([self.fd], [], [], 0.05)[0]:
                    os.read(self.fd, 4096)
            except OSError:
                pass
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("hermes chat did not exit")
