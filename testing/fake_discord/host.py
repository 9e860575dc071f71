"""The fake as its parts see it: what :mod:`.gateway` and :mod:`.rest` use of
:class:`.server.FakeDiscord`, which builds them and hands itself to them (so they need not
import :mod:`.server`)."""

from __future__ import annotations

from typing import Any, Protocol


class DiscordHost(Protocol):
    token: str
    bot_user: dict[str, Any]
    gateway_url: str
    channels: dict[str, dict[str, Any]]
    files: dict[str, bytes]  # attachment path -> bytes (the CDN)
    refuse_voice: bool

    def _record(self, kind: str, value: Any) -> None: ...

    def _take_failure(self) -> tuple[int, float | None] | None: ...

    def _bot_message(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def _edit(self, message_id: str, content: str) -> dict[str, Any] | None: ...
