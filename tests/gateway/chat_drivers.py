"""One driver per chat platform on a fake of its service (WhatsApp Cloud API, signal-cli's
HTTP daemon, Mattermost), so the same scenarios run against each: the platform's settings,
how a user writes (with an attachment), what the bot sent, and when a message counts as
acknowledged to its sender (WhatsApp: the webhook's 200; Signal: the read receipt;
Mattermost: the channel marked viewed)."""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.request
from pathlib import Path
from typing import Any

from hermes_agent.testing.fake_chat import FakeChat

WAIT = 30.0
USERS = ("alice", "bob", "mallory")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Driver:
    platform: str
    limit: int
    fake: FakeChat
    ids: dict[str, str]  # user name -> the platform's user id

    def section(self) -> dict[str, Any]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def allowed(self) -> str:
        return f"{self.ids['alice']},{self.ids['bob']}"

    def chat_of(self, user: str) -> str:
        """The chat ``user`` writes in (each user has their own)."""
        raise NotImplementedError

    def say(self, user: str, text: str, attachment: tuple[bytes, str, str] | None = None
            ) -> Any:
        """``user`` writes ``text`` (blocking: call it in a thread from async code)."""
        raise NotImplementedError

    def acks(self) -> int:
        """How many messages the bot acknowledged to their senders so far."""
        return len(self.fake.receipts)

    def connections(self) -> int:
        """How many times the bot connected to receive (0 for a webhook)."""
        return 0

    async def ready(self, count: int = 1) -> None:
        """Until the bot's ``count``-th receiving connection is up."""
        await asyncio.to_thread(self.wait_ready, count)

    def wait_ready(self, count: int = 1, timeout: float = WAIT) -> None:
        self.fake.wait_until(lambda: self.connections() >= count, timeout)

    def texts(self, user: str) -> list[str]:
        return self.fake.texts(self.chat_of(user))


class WhatsAppDriver(Driver):
    platform, limit = "whatsapp_cloud", 4096

    def __init__(self, fake: Any, home: Path):
        self.fake, self.port = fake, free_port()
        self.ids = {"alice": "15550001001", "bob": "15550001002", "mallory": "15550006666"}
        self.verify_token = "verify-me-0123456789"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/whatsapp/webhook"

    def section(self) -> dict[str, Any]:
        return {"graph_url": self.fake.base_url, "port": self.port,
                "phone_number_id": self.fake.phone_number_id}

    def env(self) -> dict[str, str]:
        return {"WHATSAPP_CLOUD_ACCESS_TOKEN": self.fake.token,
                "WHATSAPP_CLOUD_APP_SECRET": self.fake.app_secret,
                "WHATSAPP_CLOUD_VERIFY_TOKEN": self.verify_token,
                "WHATSAPP_CLOUD_ALLOWED_USERS": self.allowed()}

    def chat_of(self, user: str) -> str:
        return self.ids[user]

    async def ready(self, count: int = 1) -> None:
        """The webhook listens once the platform connected."""

    def wait_ready(self, count: int = 1, timeout: float = WAIT) -> None:
        """Until the webhook answers (a gateway started in another process)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"the webhook did not listen within {timeout}s")

    def say(self, user: str, text: str, attachment: tuple[bytes, str, str] | None = None
            ) -> int:
        media = None
        if attachment is not None:
            kind = "image" if attachment[1].startswith("image/") else "document"
            media = (kind, self.fake.add_file(*attachment))
        status = self.fake.deliver(self.url, self.fake.notification(
            self.ids[user], text, name=user.title(), media=media))
        assert status == 200, status
        return status


class SignalDriver(Driver):
    platform, limit = "signal", 8000
    group = "Z3JvdXAtb2YtYm9i+/="  # base64, as signal-cli names groups

    def __init__(self, fake: Any, home: Path):
        self.fake = fake
        self.ids = {"alice": "+15550001001", "bob": "+15550001002", "mallory": "+15550006666"}

    def section(self) -> dict[str, Any]:
        return {"reconnect_delay": 0.05}

    def env(self) -> dict[str, str]:
        return {"SIGNAL_HTTP_URL": self.fake.base_url, "SIGNAL_ACCOUNT": self.fake.account,
                "SIGNAL_ALLOWED_USERS": self.allowed(), "SIGNAL_GROUP_ALLOWED_USERS": self.group}

    def chat_of(self, user: str) -> str:
        return f"group.{self.group}" if user == "bob" else self.ids[user]

    def say(self, user: str, text: str, attachment: tuple[bytes, str, str] | None = None
            ) -> Any:
        file_id = self.fake.add_file(*attachment) if attachment is not None else None
        return self.fake.user_message(self.ids[user], text, name=user.title(),
                                      group=self.group if user == "bob" else None,
                                      attachment=file_id)

    def connections(self) -> int:
        return len(self.fake.event_requests()) if self.fake.streams else 0


class MattermostDriver(Driver):
    platform, limit = "mattermost", 16383

    def __init__(self, fake: Any, home: Path):
        self.fake = fake
        self.ids = {name: f"{name}{'0' * (26 - len(name))}" for name in USERS}
        for name, user_id in self.ids.items():
            fake.add_user(user_id, name)

    def section(self) -> dict[str, Any]:
        return {"websocket_url": self.fake.websocket_url, "reconnect_delay": 0.05}

    def env(self) -> dict[str, str]:
        return {"MATTERMOST_URL": self.fake.base_url, "MATTERMOST_TOKEN": self.fake.token,
                "MATTERMOST_ALLOWED_USERS": self.allowed()}

    def chat_of(self, user: str) -> str:
        return "townsquare0000000000000000" if user == "bob" else f"dm-{user}"

    def say(self, user: str, text: str, attachment: tuple[bytes, str, str] | None = None
            ) -> Any:
        files = [self.fake.add_file(*attachment)] if attachment is not None else None
        if user == "bob":  # in a public channel: the bot answers when mentioned
            return self.fake.user_posts(self.chat_of(user), self.ids[user], f"@hermes {text}",
                                        kind="O", files=files)
        return self.fake.user_posts(self.chat_of(user), self.ids[user], text, kind="D",
                                    files=files)

    def connections(self) -> int:
        return self.fake.hellos


def fakes() -> dict[str, tuple[Any, type[Driver]]]:
    from hermes_agent.testing.fake_mattermost import FakeMattermost
    from hermes_agent.testing.fake_signal import FakeSignal
    from hermes_agent.testing.fake_whatsapp import FakeWhatsApp

    return {"whatsapp": (FakeWhatsApp, WhatsAppDriver), "signal": (FakeSignal, SignalDriver),
            "mattermost": (FakeMattermost, MattermostDriver)}
