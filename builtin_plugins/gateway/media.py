"""Media a turn made, delivered to its chat: the files the turn's tools name in their
``media_tag`` (``text_to_speech``, ``image_generate``) and the ``MEDIA:<path>`` lines of
the reply, sent with the adapter's ``send_media`` as photos, voice messages or files after
the reply's text. Only files under ``$HERMES_HOME/cache`` are sent: a reply naming any other
path (a prompt injection asking for ``MEDIA:~/.ssh/id_rsa``) sends nothing. Then, with
``voice.reply_mode`` ``all`` (or ``voice_only`` for a message transcribed from a voice
note), the reply itself is spoken (the ``SPEECH`` service) and sent as a voice message."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from hermes_agent.api import InboundMessage, PlatformAdapter
from hermes_agent.api.services import SPEECH
from hermes_agent.kits.media import MediaRef, deliverable, media_in_result, split_media

log = logging.getLogger("hermes_agent.gateway")


class TurnMedia:
    """The media a turn's tools reported (``tool_end`` events, from the agent's thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.refs: list[MediaRef] = []

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") != "tool_end" or event.get("status") != "ok":
            return
        refs = media_in_result(str(event.get("result") or ""))
        if refs:
            with self._lock:
                self.refs.extend(refs)

    def take(self, text: str, adapter: PlatformAdapter) -> tuple[str, list[MediaRef]]:
        """``text`` without its ``MEDIA:`` lines, and every file to send (tools' first);
        ``text`` as it is, and nothing, for a platform that cannot send files (the api-server
        client reads the paths)."""
        if not sends_media(adapter):
            return text, []
        clean, named = split_media(text)
        with self._lock:
            refs = list(self.refs)
        seen: dict[Path, MediaRef] = {}
        for ref in [*refs, *named]:
            seen.setdefault(ref.path, ref)
        return clean, list(seen.values())


def sends_media(adapter: PlatformAdapter) -> bool:
    return type(adapter).send_media is not PlatformAdapter.send_media


async def deliver(runner: Any, chat: Any, message: InboundMessage, text: str,
                  refs: list[MediaRef]) -> None:
    """Send ``refs`` (those that may be sent), then the spoken reply when the mode asks.
    ``runner``, ``chat``: the chat module's ``TurnRunner`` and ``Chat`` (typed ``Any``: that
    module imports this one, and no import circle is allowed)."""
    adapter = runner.adapters[chat.platform]
    if not sends_media(adapter):
        return
    roots = [runner.kernel.home / "cache"]
    spoken = False
    for ref in refs:
        if not deliverable(ref, roots):
            log.warning("gateway: not sending %s to %s: only files under %s are sent",
                        ref.path, chat.key, roots[0])
            continue
        await _send(adapter, chat, ref.path, ref.kind)
        spoken = spoken or ref.kind in ("voice", "audio")
    if spoken or not text.strip() or runner.kernel.service_owner(SPEECH) is None:
        return
    speech = runner.kernel.service(SPEECH)
    mode = speech.reply_mode()
    if mode == "off" or (mode == "voice_only" and not message.transcribed):
        return
    try:
        audio = await runner.in_thread(speech.speak, text, chat.platform)
    except Exception as exc:  # the text reply is out: a missing voice only costs the voice
        log.warning("gateway: the voice reply to %s failed: %s", chat.key, exc)
        return
    await _send(adapter, chat, audio.path, "voice" if audio.voice_compatible else "audio")


async def _send(adapter: Any, chat: Any, path: Path, kind: str) -> None:
    try:
        result = await adapter.send_media(chat.chat_id, str(path), kind,
                                          metadata=chat.metadata)
    except Exception as exc:
        log.warning("gateway: sending %s to %s failed: %s", path.name, chat.key, exc)
        return
    if not getattr(result, "success", False):
        log.info("gateway: %s could not send %s (%s); naming it instead", chat.platform,
                 path.name, getattr(result, "error", ""))
        await adapter.send(chat.chat_id, f"({kind}: {path})", None, chat.metadata)
