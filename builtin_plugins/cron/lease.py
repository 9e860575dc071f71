"""One run of a job at a time, across processes: the runner holds an exclusive ``flock`` on
``$HERMES_HOME/cron/locks/<job id>.lock`` for the whole run and writes its pid there. The
kernel drops the lock when the process ends, however it ends, so a crashed run never leaves
a job blocked. Locks are per open file, so two schedulers in one process exclude each other
too."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from hermes_agent import private_dir


class JobLease:
    def __init__(self, home: Path, job_id: str):
        self.path = Path(home) / "cron" / "locks" / f"{job_id}.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lease without waiting; False when another runner holds it."""
        if self._fd is not None:
            return True
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {time.time():.0f}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> int | None:
        """The pid of the process running the job now, or None when nobody does."""
        probe = JobLease(self.path.parent.parent.parent, self.path.stem)
        if probe.acquire():
            probe.release()
            return None
        try:
            return int(self.path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return -1  # held by a runner that has not written its pid yet
