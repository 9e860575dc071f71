"""The webhook acknowledges (202) only what the gateway has made durable. A real
``hermes gateway run`` receives a stream of signed POSTs and is SIGKILLed in the middle of it,
several times: every message that got its 202 is answered after the restarts. A chat with more
messages than may wait gets 429s for those it did not take, never a 202 and then a "busy"."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.local_server import LocalHTTPServer

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

from hermes_agent.plugins.platforms.webhook.signing import sign  # noqa: E402

SECRET = "whsec-durability-5e1b0c"
WAIT = 60.0
LISTENING = re.compile(r"webhook listening on (http://\S+)")


class Replies:
    """The reply_url: records the ``reply_to`` and text of every reply."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.got: list[tuple[str, str]] = []
        replies = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with replies.lock:
                    replies.got.append((body["reply_to"] or "", body["text"]))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = LocalHTTPServer(Handler, None)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/replies"

    def answered(self) -> set[str]:
        with self.lock:
            return {reply_to for reply_to, _ in self.got}

    def texts(self) -> list[str]:
        with self.lock:
            return [text for _, text in self.got]


@pytest.fixture
def replies() -> Iterator[Replies]:
    receiver = Replies()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


class Gateway:
    """``hermes gateway run`` in a subprocess; ``url`` from its start line."""

    def __init__(self, home: Path) -> None:
        hermes = Path(sys.executable).parent / "hermes"
        env = {**os.environ, "HERMES_HOME": str(home), "WEBHOOK_SECRET": SECRET,
               "WEBHOOK_ALLOWED_USERS": "u-7"}
        self.proc = subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.started = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.started.wait(WAIT) or not self.url:
            self.proc.kill()
            raise AssertionError("the gateway gave no URL: " + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if LISTENING.search(line):
                self.started.set()
        self.started.set()

    @property
    def url(self) -> str:
        found = [m.group(1) for line in self.lines if (m := LISTENING.search(line))]
        return found[-1] if found else ""

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(WAIT)


def configure(home: Path, fake_llm: FakeLLMServer, reply_url: str, **gateway: Any) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},
        "gateway": {"stream_replies": False, "run_cron": False, **gateway},
        "platforms": {"webhook": {"enabled": True, "port": 0, "reply_url": reply_url}}}))


def post(url: str, chat: str, message_id: str, text: str) -> int:
    """POST one signed message; its status (0: no answer, the gateway is gone)."""
    body = json.dumps({"chat_id": chat, "user_id": "u-7", "text": text,
                       "message_id": message_id}).encode()
    stamp = str(int(time.time()))
    request = urllib.request.Request(url, body, headers={
        "Content-Type": "application/json", "X-Hermes-Timestamp": stamp,
        "X-Hermes-Signature": sign(SECRET, body, stamp)})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def wait_until(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_every_acknowledged_message_survives_sigkills(home: Path, fake_llm: FakeLLMServer,
                                                      replies: Replies) -> None:
    fake_llm.default_reply = reply_text("ok")
    configure(home, fake_llm, replies.url)
    acknowledged: list[str] = []
    lock = threading.Lock()
    for round_ in range(2):
        gateway = Gateway(home)
        url, stop = gateway.url, threading.Event()

        def send(sender: int) -> None:
            for n in range(10_000):
                if stop.is_set():
                    return
                mid = f"r{round_}-s{sender}-{n}"
                status = post(url, f"chat-{sender}", mid, f"message {mid}")
                if status == 202:
                    with lock:
                        acknowledged.append(mid)
                elif status == 0:
                    return

        senders = [threading.Thread(target=send, args=(s,)) for s in range(4)]
        for thread in senders:
            thread.start()
        before = len(acknowledged)
        wait_until(lambda: len(acknowledged) >= before + 20, "acknowledged messages")
        gateway.kill()  # in the middle of the stream
        stop.set()
        for thread in senders:
            thread.join(WAIT)
    final = Gateway(home)
    try:
        wait_until(lambda: set(acknowledged) <= replies.answered(), "every 202 answered")
    finally:
        final.kill()
    assert len(acknowledged) >= 40
    lost = set(acknowledged) - replies.answered()
    assert not lost, f"{len(lost)} of {len(acknowledged)} acknowledged messages lost"


def test_a_busy_chat_queues_what_it_acknowledged_and_429s_the_rest(
        home: Path, fake_llm: FakeLLMServer, replies: Replies) -> None:
    fake_llm.script(reply_text("answer 0", delay=1.0))  # the first turn holds the chat
    fake_llm.default_reply = reply_text("answer")
    configure(home, fake_llm, replies.url, max_queue_per_chat=5)
    gateway = Gateway(home)
    try:
        statuses = {f"m{n}": post(gateway.url, "busy-chat", f"m{n}", f"message {n}")
                    for n in range(30)}
        taken = [mid for mid, status in statuses.items() if status == 202]
        assert set(statuses.values()) == {202, 429}, statuses
        assert 6 <= len(taken) < 30
        wait_until(lambda: set(taken) <= replies.answered(), "the acknowledged answered")
        time.sleep(0.5)  # nothing more comes: no busy reply to a message it took
        with replies.lock:
            assert [reply_to for reply_to, _ in replies.got] == taken  # in order, once each
        assert not any("Too many messages" in text for text in replies.texts())
        statuses_after = post(gateway.url, "busy-chat", "late", "and now?")
        assert statuses_after == 202  # room again once the queue drained
    finally:
        gateway.kill()
