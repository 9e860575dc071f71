"""The Slack adapter: events arrive over Socket Mode (slack-sdk's websocket client; no public
URL) or the Events API over HTTP (signed requests, :mod:`.events_api`); replies go out with
``chat.postMessage`` and grow in place with ``chat.update``. An event is acknowledged to Slack
(the Socket Mode envelope's ack, the HTTP 200) only once the gateway stored its message in the
inbox, so a gateway killed at any moment loses nothing Slack was told arrived; Slack sends an
unacknowledged event again, and the event's id (and the message's channel and ``ts``) make
sure it is answered once."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from hermes_agent import private_dir
from hermes_agent.api import ChatInfo, InboundMessage, PlatformAdapter, SendResult
from hermes_agent.kits.chat_media import image_parts
from hermes_agent.kits.platform_config import http_url

from .events import Addressed, addressed, message_key
from .formatting import to_mrkdwn
from .settings import Settings
from .web import SlackAuthError, SlackWeb, guess_type

log = logging.getLogger("hermes_agent.gateway.slack")
PLATFORM = "slack"
LIMIT = 39000  # Slack cuts a message's text at 40,000 characters; this leaves room
GATEWAY_COMMANDS = ("new", "reset", "stop", "status")  # the chat commands the gateway answers
REMEMBERED = 2000  # event ids, messages and threads remembered (duplicates, engaged threads)


class _Recent(collections.OrderedDict):  # type: ignore[type-arg]
    """A bounded set that forgets the oldest first."""

    def add(self, key: Any) -> None:
        self[key] = None
        self.move_to_end(key)
        if len(self) > REMEMBERED:
            self.popitem(last=False)


class _Threads(_Recent):
    """The threads the bot talks in, kept in ``$HERMES_HOME/gateway/slack_threads.json`` so
    a restarted gateway still follows them without a mention."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        try:
            for channel, thread in json.loads(path.read_text(encoding="utf-8")):
                super().add((str(channel), str(thread)))
        except (OSError, ValueError, TypeError):
            pass  # none yet, or unreadable: start afresh

    def add(self, key: Any) -> None:
        if key in self:
            return
        super().add(key)
        try:
            folder = private_dir(self.path.parent)
            partial = folder / f".{self.path.name}.{os.getpid()}"
            partial.write_text(json.dumps(list(self)), encoding="utf-8")
            os.chmod(partial, 0o600)
            os.replace(partial, self.path)
        except OSError as exc:
            log.warning("slack: cannot keep the threads the bot talks in (%s): %s",
                        self.path, exc)


class SlackAdapter(PlatformAdapter):
    name = PLATFORM
    max_message_length = LIMIT
    supports_streaming = True  # chat.update grows a posted reply in place

    def __init__(self, config: Any, settings: Settings, home: Path,
                 commands: Callable[[], Collection[str]] = lambda: ()):
        """``commands()``: the plugins' chat command names, for the ``!cmd`` prefix."""
        super().__init__(config)
        self.settings = settings
        self.home = Path(home)
        self.commands = commands
        self.web: SlackWeb | None = None
        self.bot_user = ""  # the bot's user id (U...), from auth.test
        self.bot_id = ""  # its bot id (B...)
        self.team = ""
        self.socket: Any = None  # slack-sdk's SocketModeClient in Socket Mode
        self.server: Any = None  # the Events API's AsgiServer in HTTP mode
        # (channel, thread_ts) the bot talks in: no mention needed there
        self.engaged = _Threads(self.home / "gateway" / "slack_threads.json")
        self._events = _Recent()  # event ids handled
        self._messages = _Recent()  # (channel, ts) handled: a mention comes twice
        self._inflight: dict[tuple[str, str], asyncio.Future[bool]] = {}
        self._requests: asyncio.Queue[Any] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._hello: asyncio.Event | None = None

    @property
    def home_channel(self) -> str:
        """Where a message without a chat goes (``SLACK_HOME_CHANNEL``): cron deliveries."""
        return self.settings.home_channel

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        s = self.settings
        self.web = SlackWeb(s)
        try:
            me = await self.web.whoami()
            self.bot_user, self.bot_id = str(me.get("user_id", "")), str(me.get("bot_id", ""))
            self.team = str(me.get("team", "") or me.get("team_id", ""))
            if await (self._serve_events_api() if s.mode == "http" else self._open_socket()):
                return True
        except SlackAuthError as exc:
            log.error("slack: cannot start: %s", exc)
        except Exception as exc:  # unreachable API, refused websocket...
            log.error("slack: cannot start: %s: %s (check platforms.slack.api_base and the "
                      "network)", type(exc).__name__, exc)
        await self.disconnect()
        return False

    async def _open_socket(self) -> bool:
        from slack_sdk.socket_mode.aiohttp import SocketModeClient

        assert self.web is not None
        self._hello = asyncio.Event()
        self.socket = SocketModeClient(
            app_token=self.settings.app_token, web_client=self.web.socket_client,
            ping_interval=self.settings.ping_interval,
            logger=logging.getLogger("hermes_agent.gateway.slack.socket"))
        self.socket.message_listeners.append(self._on_socket_message)
        self.socket.socket_mode_request_listeners.append(self._on_request)
        self.socket.wss_uri = await self.web.socket_url()  # a refused app token fails here
        self._consumer = asyncio.create_task(self._consume())
        await asyncio.wait_for(self.socket.connect(), self.settings.connect_timeout)
        try:
            await asyncio.wait_for(self._hello.wait(), self.settings.connect_timeout)
        except TimeoutError:
            log.error("slack: no hello on the Socket Mode connection within %.0fs",
                      self.settings.connect_timeout)
            return False
        log.info("slack: connected to %s as <@%s> over Socket Mode", self.team or "Slack",
                 self.bot_user)
        return True

    async def _serve_events_api(self) -> bool:
        from hermes_agent.kits.asgi import AsgiServer

        from .events_api import build_app

        s = self.settings
        self.server = AsgiServer(build_app(s.path, s.signing_secret, self._on_payload),
                                 s.host, s.port, name="slack", backlog=128,
                                 port_hint="set platforms.slack.port to a free port",
                                 limits=s.limits)
        if not await self.server.start():
            return False
        self.listen_url = http_url(s.host, self.server.port, s.path)
        log.info("slack: connected to %s as <@%s>; Events API at %s (put its public HTTPS URL "
                 "in Event Subscriptions > Request URL)", self.team or "Slack", self.bot_user,
                 self.listen_url)
        return True

    async def disconnect(self) -> None:
        if self.socket is not None:
            await self.socket.close()
            self.socket = None
        if self._consumer is not None:
            self._consumer.cancel()
            await asyncio.gather(self._consumer, return_exceptions=True)
            self._consumer = None
        if self.server is not None:
            await self.server.stop()
            self.server = None
        if self.web is not None:
            await self.web.close()
            self.web = None

    # --- inbound -----------------------------------------------------------------------------
    async def _on_socket_message(self, _client: Any, message: dict[str, Any],
                                 _raw: str | None) -> None:
        if message.get("type") == "hello" and self._hello is not None:
            self._hello.set()

    async def _on_request(self, client: Any, request: Any) -> None:
        """Each envelope, in the order received; events wait for the consumer, the rest
        (slash commands, interactions) are acknowledged at once and not answered."""
        if request.type == "events_api":
            self._requests.put_nowait((client, request))
        else:
            await self._ack(client, request.envelope_id)

    async def _consume(self) -> None:
        """Envelopes one at a time, in order, without holding up the websocket's reader."""
        while True:
            client, request = await self._requests.get()
            payload = request.payload if isinstance(request.payload, dict) else {}
            try:
                taken = await self._on_payload(payload)
            except Exception:  # one bad event must not stop the others
                log.exception("slack: handling envelope %s failed; Slack sends it again",
                              request.envelope_id)
                continue
            if taken:
                await self._ack(client, request.envelope_id)
            # else: not acknowledged, so Slack sends it again

    async def _ack(self, client: Any, envelope_id: str) -> None:
        from slack_sdk.socket_mode.response import SocketModeResponse

        try:
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))
        except Exception as exc:  # the connection dropped: Slack sends it again, and it is
            log.info("slack: could not acknowledge an envelope (%s); Slack will send it again,"
                     " and it is answered once", type(exc).__name__)

    async def _on_payload(self, payload: Mapping[str, Any]) -> bool:
        """Hand one ``event_callback``'s message to the gateway. True: acknowledge it to Slack
        (taken, or not for the agent); False: the gateway did not take it now (stopping, or the
        chat's queue is full), so Slack must send it again."""
        event = payload.get("event")
        if not isinstance(event, Mapping):
            return True
        event_id = str(payload.get("event_id") or "")
        key = message_key(event)
        if not all(key):  # no message (a channel event, an app home opened...)
            return await self._take(event)
        if (event_id and event_id in self._events) or key in self._messages:
            return True
        running = self._inflight.get(key)
        if running is not None:  # Slack's retry while the first delivery is being taken
            return await asyncio.shield(running)
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._inflight[key] = done
        taken = False
        try:
            taken = await self._take(event)
        finally:
            done.set_result(taken)
            del self._inflight[key]
            if taken:
                if event_id:
                    self._events.add(event_id)
                self._messages.add(key)
        return taken

    async def _take(self, event: Mapping[str, Any]) -> bool:
        try:
            found = addressed(event, self.settings, self.bot_user, self.bot_id, self.engaged)
        except Exception:
            log.exception("slack: a malformed event was skipped")
            return True
        if found is None:
            return True
        attachments, notes = [], []
        if found.files and self.may_talk(found.user):  # a stranger's files are not fetched
            attachments, notes = await self._download(found)
        text = "\n".join(part for part in (self._bang(found.text), *notes) if part)
        if not text and not attachments:
            return True
        message = InboundMessage(
            PLATFORM, found.channel, found.user, text, thread_id=found.thread_ts,
            message_id=found.ts, chat_type=found.chat_type, raw=dict(event),
            attachments=attachments)
        message.images = image_parts(attachments)  # what a model that sees is shown
        try:
            outcome = await self.accept_message(message)
        except Exception:
            log.exception("slack: the gateway could not take message %s; Slack sends it again",
                          found.ts)
            return False
        if outcome in ("closed", "busy"):
            return False
        if found.thread_ts and outcome in ("queued", "answered"):
            self.engaged.add((found.channel, found.thread_ts))
        return True

    def _bang(self, text: str) -> str:
        """``!new``, ``!stop``... as ``/new``, ``/stop``: Slack keeps a message starting with
        ``/`` for its own slash commands (and refuses them in threads). Only a chat command's
        name counts, so ``!nice work`` stays as it is."""
        name, _, rest = text[1:].partition(" ") if text.startswith("!") else ("", "", "")
        if name and (name.lower() in GATEWAY_COMMANDS or name.lower() in self.commands()):
            return f"/{name.lower()}" + (f" {rest}" if rest else "")
        return text

    async def _download(self, found: Addressed) -> tuple[list[dict[str, Any]], list[str]]:
        """The message's files saved under ``$HERMES_HOME/gateway/media/slack``, and a line
        for each telling the model where it is (or why it is not)."""
        assert self.web is not None
        limit = self.settings.max_attachment_bytes
        folder = private_dir(self.home / "gateway" / "media") / PLATFORM / re.sub(
            r"[^A-Za-z0-9_-]+", "_", f"{found.channel}-{found.ts}")
        attachments, notes = [], []
        for index, file in enumerate(found.files):
            name = str(file.get("name") or file.get("title") or f"file-{index}")
            mime = guess_type(name, file.get("mimetype"))
            kind = "image" if mime.startswith("image/") else "file"
            url = str(file.get("url_private_download") or file.get("url_private") or "")
            declared = file.get("size")
            if isinstance(declared, int) and declared > limit:
                notes.append(f"[{kind} {name} ({declared} bytes) not downloaded: larger than "
                             f"platforms.slack.max_attachment_bytes ({limit})]")
                continue
            if not url or not self.web.may_download(url):
                notes.append(f"[{kind} {name}: no download link Slack vouches for]")
                continue
            got = await self.web.download(url, folder, f"{file.get('id') or index}-{name}",
                                          limit)
            if got is None:
                notes.append(f"[{kind} {name} could not be downloaded (over {limit} bytes, or "
                             "refused: is the files:read scope granted?)]")
                continue
            attachments.append({"type": kind, "path": str(got.path), "name": name,
                                "mime_type": mime, "size": got.size,
                                "id": str(file.get("id") or "")})
            notes.append(f"[{kind} attached: {name} ({mime}, {got.size} bytes) saved at "
                         f"{got.path}]")
        return attachments, notes

    # --- outbound ----------------------------------------------------------------------------
    def _target(self, chat_id: str, metadata: Mapping[str, Any] | None) -> tuple[str, str | None]:
        """``chat_id`` may be ``CHANNEL`` or ``CHANNEL:THREAD_TS`` (a cron target); empty is
        the home channel."""
        channel, _, thread = str(chat_id or self.settings.home_channel).partition(":")
        thread = str((metadata or {}).get("thread_id") or thread or "") or None
        return channel, thread

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        if self.web is None:
            return SendResult(False, error="slack is not connected")
        channel, thread = self._target(chat_id, metadata)
        if not channel:
            return SendResult(False, error="no channel to send to: name one, or set "
                                           "SLACK_HOME_CHANNEL")
        result = await self.web.post(channel, content, thread)
        if result.success and thread:
            self.engaged.add((channel, thread))
        return result

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        if self.web is None:
            return SendResult(False, error="slack is not connected")
        channel, _ = self._target(chat_id, metadata)
        return await self.web.update(channel, message_id, content[:LIMIT])

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        channel, _ = self._target(chat_id, None)
        found = await self.web.channel(channel) if self.web is not None else None
        if not found:
            return ChatInfo(name=str(chat_id))
        kind = "dm" if found.get("is_im") else "group"
        return ChatInfo(name=str(found.get("name") or found.get("user") or chat_id), type=kind,
                        extra={k: found[k] for k in ("id", "is_private", "topic") if k in found})

    def format_message(self, content: str) -> str:
        return to_mrkdwn(content)
