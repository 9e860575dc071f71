"""The running gateway's control socket: how other processes of the same home (``hermes
send``, a ``send_message`` call in ``hermes chat``, ``hermes cron daemon``) have it deliver a
message through its adapters.

A Unix socket, ``$HERMES_HOME/gateway/control.sock`` (or, when that path is too long for a
socket, one in a private folder of ``$XDG_RUNTIME_DIR`` or the temp dir), mode 0600 in a
0700 folder; on Linux a peer of another user is refused too. Its path is in
``gateway/state.json``. One JSON line in, one JSON line out:

- ``{"op": "send", "target": ..., "text": ...}`` -> the delivery's result (the gateway
  resolves and checks the target itself);
- ``{"op": "platforms"}`` -> ``{"platforms": [the connected ones]}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import socket
import struct
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hermes_agent import private_dir

from .state import StateFile

log = logging.getLogger("hermes_agent.gateway")
MAX_REQUEST = 4 * 1024 * 1024  # bytes of one request line
MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes, depending on the OS


def socket_path(home: Path) -> Path:
    path = Path(home) / "gateway" / "control.sock"
    if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(os.fsencode(str(Path(home).resolve()))).hexdigest()[:16]
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = private_dir(Path(base) / f"hermes-{os.getuid()}")
    info = folder.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or folder.is_symlink():
        raise OSError(f"{folder} is not a private folder of this user; remove it")
    return folder / f"gw-{digest}.sock"


class ControlServer:
    def __init__(self, runner: Any, path: Path, server: asyncio.AbstractServer):
        self.runner, self.path, self.server = runner, path, server

    async def close(self) -> None:
        self.server.close()
        await self.server.wait_closed()
        try:
            self.path.unlink()
        except OSError:
            pass


Answer = Callable[[Any], Awaitable[dict[str, Any]]]


async def start_control(runner: Any, answer: Answer) -> ControlServer | None:
    """Serve the control socket for ``runner``, each request answered by ``answer(request)``
    (:func:`.delivery.control_answer`); None where Unix sockets are missing or the socket
    cannot be made (the gateway runs on; other processes cannot reach it)."""
    if not hasattr(socket, "AF_UNIX"):
        return None
    home = Path(runner.kernel.home)
    private_dir(home / "gateway")
    try:
        path = socket_path(home)
        path.unlink()  # one left by a gateway that was killed (this one owns the home now)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("gateway: no control socket (%s)", exc)
        return None
    try:  # its folder is 0700 (no umask change: other threads may be creating files)
        server = await asyncio.start_unix_server(
            lambda r, w: _serve(answer, r, w), path=str(path), limit=MAX_REQUEST)
        os.chmod(path, 0o600)
    except OSError as exc:
        log.warning("gateway: no control socket at %s (%s): `hermes send` and cron in other "
                    "processes cannot deliver through this gateway", path, exc)
        return None
    return ControlServer(runner, path, server)


async def _serve(answer_with: Answer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
    try:
        if not _same_user(writer):
            answer: dict[str, Any] = {"success": False, "error": "refused: another user"}
        else:
            try:
                line = await asyncio.wait_for(reader.readline(), 30.0)
                answer = await answer_with(json.loads(line))
            except (ValueError, asyncio.LimitOverrunError, asyncio.TimeoutError) as exc:
                answer = {"success": False, "error": f"bad request: {type(exc).__name__}"}
        writer.write(json.dumps(answer).encode() + b"\n")
        await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def _same_user(writer: asyncio.StreamWriter) -> bool:
    sock = writer.get_extra_info("socket")
    peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or peercred is None:
        return True  # the socket's 0600 mode and 0700 folder keep other users out
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def request(home: Path, req: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Ask the gateway running for ``home``; None when none is running (or reachable)."""
    state = StateFile(Path(home)).read()
    if state is None or not hasattr(socket, "AF_UNIX"):
        return None
    path = state.get("control")
    if not path:
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(timeout)
    try:
        client.connect(str(path))
        client.sendall(json.dumps(req).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        return {"success": False, "error": f"the gateway did not answer within {timeout:.0f} s"}
    except OSError as exc:
        log.debug("gateway: control socket %s: %s", path, exc)
        return None
    finally:
        client.close()
    try:
        answer = json.loads(data)
    except ValueError:
        return {"success": False, "error": "the gateway's answer was cut short"}
    return answer if isinstance(answer, dict) else None
