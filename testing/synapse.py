"""A real Matrix homeserver for tests: Synapse (``matrix-synapse`` from PyPI) on 127.0.0.1 with
SQLite, users registered through its shared-secret admin API, and a small client-server API
client (httpx2) for the test's human users.

    with Synapse.start(tmp_dir) as synapse:   # raises SynapseUnavailable, saying why
        alice = synapse.register("alice")      # a MatrixUser, logged in
        room = alice.create_room(invite=[bot.user_id])
        alice.say(room, "hello")

Synapse is looked for, in order: the interpreter named by ``HERMES_SYNAPSE_PYTHON``, this
interpreter (``matrix-synapse`` installed here), then the venv ``.ci/run`` makes:
``~/.cache/hermes-agent-runtime/synapse-venv`` (``$XDG_CACHE_HOME`` instead of ``~/.cache``
when set)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import importlib.util
import itertools
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2

SERVER_NAME = "localhost"
START_TIMEOUT = 120.0  # a cold Synapse creates its SQLite schema first: slow on a busy machine
_names = itertools.count(1)


class SynapseUnavailable(RuntimeError):
    """Synapse is not installed or did not start; the message says why (tests skip with it)."""


class SynapseExited(SynapseUnavailable):
    """Synapse stopped while starting (the message has the end of its log)."""


def synapse_python() -> str:
    """An interpreter that can run Synapse, or :class:`SynapseUnavailable`."""
    named = os.environ.get("HERMES_SYNAPSE_PYTHON", "").strip()
    if named:
        return named
    if importlib.util.find_spec("synapse") is not None:
        return sys.executable
    venv = synapse_venv()
    if (venv / "bin" / "python").exists():
        return str(venv / "bin" / "python")
    raise SynapseUnavailable(
        f"Synapse is not installed: python3 -m venv {venv} && {venv}/bin/pip install "
        "matrix-synapse (.ci/run does it), or set HERMES_SYNAPSE_PYTHON to a Python that has it")


def synapse_venv() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hermes-agent-runtime" / "synapse-venv"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _signing_key() -> str:
    """A Synapse signing key file's line: an ed25519 key is any 32 random bytes (its seed)."""
    seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    return f"ed25519 a_{secrets.token_hex(2)} {seed}\n"


def _config(folder: Path, port: int, shared_secret: str) -> str:
    fast = "{per_second: 10000, burst_count: 10000}"
    return f"""\
server_name: "{SERVER_NAME}"
pid_file: "{folder}/homeserver.pid"
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{folder}/homeserver.db"
log_config: "{folder}/log.yaml"
media_store_path: "{folder}/media"
signing_key_path: "{folder}/signing.key"
registration_shared_secret: "{shared_secret}"
enable_registration: false
report_stats: false
bcrypt_rounds: 4  # cheap password hashes: registering and logging in test users is fast
trusted_key_servers: []
suppress_key_server_warning: true
enable_metrics: false
url_preview_enabled: false
presence:
  enabled: false
rc_message: {fast}
rc_registration: {fast}
rc_login:
  address: {fast}
  account: {fast}
  failed_attempts: {fast}
rc_joins:
  local: {fast}
  remote: {fast}
rc_invites:
  per_room: {fast}
  per_user: {fast}
  per_issuer: {fast}
rc_media_create: {fast}
rc_room_creation: {fast}
rc_admin_redaction: {fast}
"""


_LOG_CONFIG = """\
version: 1
formatters:
  plain: {format: "%(asctime)s %(name)s %(levelname)s %(message)s"}
handlers:
  file: {class: logging.FileHandler, filename: "LOGFILE", formatter: plain}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


class Synapse:
    """A running Synapse; :meth:`start` makes one in ``folder`` and waits until it answers."""

    def __init__(self, folder: Path, port: int, shared_secret: str,
                 process: subprocess.Popen[bytes]):
        self.folder, self.port, self.shared_secret, self.process = (
            folder, port, shared_secret, process)
        self.url = f"http://127.0.0.1:{port}"

    @classmethod
    def start(cls, folder: Path, timeout: float = START_TIMEOUT, tries: int = 3) -> "Synapse":
        """Started and answering; a Synapse that exits at once (its free port was taken
        meanwhile, say) is started again on another port, ``tries`` times in all."""
        for attempt in range(1, tries + 1):
            try:
                return cls._start(folder / f"try{attempt}", timeout)
            except SynapseExited:
                if attempt == tries:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _start(cls, folder: Path, timeout: float) -> "Synapse":
        python = synapse_python()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "media").mkdir(exist_ok=True)
        (folder / "signing.key").write_text(_signing_key())
        (folder / "log.yaml").write_text(_LOG_CONFIG.replace("LOGFILE", str(folder / "synapse.log")))
        shared_secret = secrets.token_hex(16)
        port = _free_port()
        (folder / "homeserver.yaml").write_text(_config(folder, port, shared_secret))
        with open(folder / "stderr.log", "wb") as stderr:
            process = subprocess.Popen(
                [python, "-m", "synapse.app.homeserver", "-c", str(folder / "homeserver.yaml")],
                cwd=folder, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                env={**os.environ, "SYNAPSE_CACHE_FACTOR": "0.1"})
        server = cls(folder, port, shared_secret, process)
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with httpx2.Client(timeout=2.0) as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise SynapseExited(f"Synapse exited with {self.process.returncode}: "
                                             f"{self.log_tail()}")
                with contextlib.suppress(httpx2.HTTPError):
                    if http.get(f"{self.url}/_matrix/client/versions").status_code == 200:
                        return
                time.sleep(0.2)  # polling a server that is starting, not a sync
        raise SynapseUnavailable(f"Synapse did not answer within {timeout:.0f}s: "
                                 f"{self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        text = ""
        for name in ("stderr.log", "synapse.log"):
            path = self.folder / name
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def __enter__(self) -> "Synapse":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- users ---------------------------------------------------------------------------
    def register(self, name: str = "", password: str = "", admin: bool = False) -> "MatrixUser":
        """A new user (``name`` plus a unique suffix), registered with the shared secret and
        logged in."""
        localpart = f"{name or 'user'}{next(_names)}_{uuid.uuid4().hex[:6]}"
        password = password or secrets.token_hex(12)
        with httpx2.Client(timeout=30.0) as http:
            path = f"{self.url}/_synapse/admin/v1/register"
            nonce = http.get(path).json()["nonce"]
            mac = hmac.new(self.shared_secret.encode(), b"\x00".join((
                nonce.encode(), localpart.encode(), password.encode(),
                b"admin" if admin else b"notadmin")), hashlib.sha1).hexdigest()
            answer = http.post(path, json={"nonce": nonce, "username": localpart,
                                           "password": password, "admin": admin, "mac": mac})
            answer.raise_for_status()
            body = answer.json()
        return MatrixUser(self.url, body["user_id"], body["access_token"], password)


class MatrixUser:
    """A person on the homeserver, through the client-server API."""

    def __init__(self, url: str, user_id: str, access_token: str, password: str):
        self.url, self.user_id, self.access_token, self.password = (
            url, user_id, access_token, password)
        self.http = httpx2.Client(base_url=f"{url}/_matrix/client/v3", timeout=60.0,
                                  headers={"Authorization": f"Bearer {access_token}"})
        self._since: str | None = None
        self.timeline: dict[str, list[dict[str, Any]]] = {}  # room id -> events seen by sync

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        answer = self.http.request(method, path, **kwargs)
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text}")
        return answer.json()  # type: ignore[no-any-return]

    def create_room(self, invite: list[str] = (), direct: bool = False,  # type: ignore[assignment]
                    name: str = "", encrypted: bool = False) -> str:
        body: dict[str, Any] = {"invite": list(invite), "is_direct": direct,
                                "preset": "trusted_private_chat" if direct else "private_chat"}
        if name:
            body["name"] = name
        if encrypted:
            body["initial_state"] = [{"type": "m.room.encryption", "state_key": "",
                                      "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]
        return str(self._call("POST", "/createRoom", json=body)["room_id"])

    def invite(self, room_id: str, user_id: str) -> None:
        self._call("POST", f"/rooms/{room_id}/invite", json={"user_id": user_id})

    def send(self, room_id: str, content: dict[str, Any],
             event_type: str = "m.room.message") -> str:
        txn = uuid.uuid4().hex
        return str(self._call("PUT", f"/rooms/{room_id}/send/{event_type}/{txn}",
                              json=content)["event_id"])

    def say(self, room_id: str, text: str) -> str:
        return self.send(room_id, {"msgtype": "m.text", "body": text})

    def upload(self, data: bytes, content_type: str, filename: str) -> str:
        answer = self.http.post(f"{self.url}/_matrix/media/v3/upload", content=data,
                                params={"filename": filename},
                                headers={"Content-Type": content_type})
        answer.raise_for_status()
        return str(answer.json()["content_uri"])

    def members(self, room_id: str) -> dict[str, str]:
        """user id -> membership (join, invite, leave, ...)."""
        state = self._call("GET", f"/rooms/{room_id}/members")["chunk"]
        return {e["state_key"]: e["content"]["membership"] for e in state}

    def sync(self, timeout_ms: int = 1000) -> None:
        params: dict[str, Any] = {"timeout": timeout_ms}
        if self._since:
            params["since"] = self._since
        body = self._call("GET", "/sync", params=params, timeout=timeout_ms / 1000 + 30)
        self._since = body["next_batch"]
        for room_id, room in (body.get("rooms", {}).get("join") or {}).items():
            self.timeline.setdefault(room_id, []).extend(room.get("timeline", {}).get("events")
                                                         or [])

    def wait(self, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
        """Sync (long-polling the homeserver) until ``predicate()`` is truthy; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.user_id}: condition not met within {timeout}s")
            self.sync(timeout_ms=int(min(left, 5.0) * 1000))

    def messages_from(self, room_id: str, sender: str) -> list[dict[str, Any]]:
        """The ``m.room.message`` events ``sender`` sent in the room, as this user saw them."""
        return [e for e in self.timeline.get(room_id, [])
                if e.get("type") == "m.room.message" and e.get("sender") == sender]

    def close(self) -> None:
        self.http.close()


@contextlib.contextmanager
def running_synapse(folder: Path) -> Iterator[Synapse]:
    server = Synapse.start(folder)
    try:
        yield server
    finally:
        server.stop()
