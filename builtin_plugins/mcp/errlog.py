"""A stdio server's stderr, piped into ``$HERMES_HOME/logs/mcp-<server>.log`` and rotated.

The server writes into a pipe, never into hermes's own stderr or straight into the file; a
thread copies what arrives into the log, and once the file reaches ``max_log_bytes`` it
becomes ``mcp-<server>.log.1`` (the one before is dropped) and a new file starts. So a
server that logs without end costs at most twice ``max_log_bytes`` of disk.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import IO

log = logging.getLogger("hermes_agent.mcp")
CHUNK = 65_536


class StderrLog:
    def __init__(self, path: Path, max_bytes: int):
        self.path, self.max_bytes = path, max_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        read_fd, write_fd = os.pipe()
        self.writer: IO[str] = os.fdopen(write_fd, "w", encoding="utf-8")  # the server's end
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), daemon=True,
                                        name=f"hermes-{path.stem}-stderr")
        self._thread.start()

    @property
    def rotated(self) -> Path:
        return self.path.with_name(self.path.name + ".1")

    def _copy(self, read_fd: int) -> None:
        out = None
        try:
            with os.fdopen(read_fd, "rb", buffering=0) as source:
                out = open(self.path, "ab")  # noqa: SIM115 (reopened on rotation)
                size = out.tell()
                while chunk := source.read(CHUNK):
                    while chunk:
                        room = self.max_bytes - size
                        if room <= 0:
                            out.close()
                            os.replace(self.path, self.rotated)
                            out, size = open(self.path, "ab"), 0  # noqa: SIM115
                            continue
                        piece, chunk = chunk[:room], chunk[room:]
                        out.write(piece)
                        size += len(piece)
                    out.flush()
        except OSError as exc:
            log.debug("MCP: copying stderr into %s stopped: %s", self.path, exc)
        finally:
            if out is not None:
                out.close()

    def close(self, wait: float = 1.0) -> None:
        """Close hermes's copy of the write end; the copy ends once the server's closes too
        (waited for at most ``wait`` seconds)."""
        if not self.writer.closed:
            try:
                self.writer.close()
            except OSError:
                pass
        self._thread.join(wait)

    def settle(self, wait: float = 0.3) -> None:
        """Give the copy a moment to catch up with what the server wrote last."""
        self._thread.join(wait)
