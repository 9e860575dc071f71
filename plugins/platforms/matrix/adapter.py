"""The Matrix adapter: a matrix-nio client that long-polls ``/sync``, joins the rooms allowed users
invite it to, hands room messages to the gateway and answers with ``m.text`` events. Each room
is a chat (``matrix:<room id>``; a thread: ``matrix:<room id>:<thread root>``), a direct message
included. The sync token is saved only once every message of a sync batch is in the gateway's
inbox, so a gateway killed meanwhile receives those messages again at its next start."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from hermes_agent.api import ChatInfo, InboundMessage, PlatformAdapter, SendResult
from hermes_agent.kits.chat_media import image_parts

from . import events
from .formatting import to_html
from .media import download_part
from .settings import Settings
from .state import SyncState

log = logging.getLogger("hermes_agent.gateway.matrix")
PLATFORM = events.PLATFORM
SEEN = 2000  # event ids remembered, so an event a retried sync brings again is handled once
RECENT = 200  # of them saved with the sync token, for a restart after a kill mid-batch
MAX_BACKOFF = 30.0
RETRY_TXN_FOR = 300.0  # seconds a failed send keeps its transaction id for the gateway's retry
TYPING_MS = 30_000
#: the first sync skips the history (one event a room is enough); later ones bring up to 100
#: events a room, so a gateway that was down a while still sees what came meanwhile
FIRST_SYNC = {"room": {"timeline": {"limit": 1}}}
NEXT_SYNCS = {"room": {"timeline": {"limit": 100}}}


class MatrixAdapter(PlatformAdapter):
    name = PLATFORM
    max_message_length = 4000
    exclusive_receiver = True  # two replicas syncing would both answer every message

    def __init__(self, config: Any, settings: Settings, home: Path):
        super().__init__(config)
        self.settings = settings
        self.state = SyncState(Path(home), settings.homeserver, settings.user_id)
        self.client: Any = None
        self.user_id = settings.user_id
        self.display_name = ""
        self.direct_rooms: set[str] = set()
        self._since: str | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._closing = False
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._warned_encrypted: set[str] = set()
        self._threads: set[tuple[str, str | None]] = set()  # (room, root) the bot talks in
        self._pending_txn: dict[tuple[str, str, str | None], tuple[str, float]] = {}

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        from aiohttp import ClientError
        from nio import AsyncClient, AsyncClientConfig

        s = self.settings
        if s.encryption_requested:
            log.warning("matrix: MATRIX_ENCRYPTION is set, but end-to-end encryption is not "
                        "supported here; the bot answers unencrypted rooms only")
        saved = self.state.load()
        device_id = s.device_id or str(saved.get("device_id") or "") or None
        self.client = AsyncClient(s.homeserver, user=s.user_id, device_id=device_id,
                                  config=AsyncClientConfig(
                                      encryption_enabled=False, store_sync_tokens=False,
                                      # nio would retry a 429 or a lost connection forever;
                                      # the gateway retries sends, the sync loop backs off
                                      max_limit_exceeded=0, max_timeouts=1,
                                      request_timeout=s.sync_timeout + 30.0))
        try:
            if not await asyncio.wait_for(self._log_in(device_id), s.connect_timeout):
                await self.client.close()
                return False
            saved = self.state.load()  # now that the account is known (a token alone)
            self._since = saved.get("since") if saved.get("user_id") == self.user_id else None
            self.direct_rooms = set(saved.get("direct_rooms") or [])
            for event_id in saved.get("recent") or []:
                self._remember(str(event_id))
            if self._since is None:  # first start: the rooms' history is not answered
                await asyncio.wait_for(self._first_sync(), s.connect_timeout)
        except (asyncio.TimeoutError, OSError, ClientError) as exc:
            log.error("matrix: cannot reach %s (%s); check MATRIX_HOMESERVER", s.homeserver,
                      type(exc).__name__)
            await self.client.close()
            return False
        if self.receive_on_connect:
            await self.start_receiving()
        log.info("matrix: %s connected to %s", self.user_id, s.homeserver)
        return True

    async def _log_in(self, device_id: str | None) -> bool:
        from nio import LoginResponse, ProfileGetDisplayNameResponse, WhoamiResponse

        s, client = self.settings, self.client
        if s.access_token:
            client.access_token = s.access_token
            answer = await client.whoami()
            if not isinstance(answer, WhoamiResponse):
                log.error("matrix: the homeserver refused MATRIX_ACCESS_TOKEN (%s); set a "
                          "valid token for the bot's account", _error(answer))
                return False
            if s.user_id and answer.user_id != s.user_id:
                log.error("matrix: MATRIX_ACCESS_TOKEN belongs to %s, not MATRIX_USER_ID %s; "
                          "fix one of them", answer.user_id, s.user_id)
                return False
            client.user_id = self.user_id = answer.user_id
            client.device_id = answer.device_id or device_id
        else:
            answer = await client.login(s.password, device_name=s.device_name)
            if not isinstance(answer, LoginResponse):
                log.error("matrix: logging in as %s failed (%s); check MATRIX_USER_ID and "
                          "MATRIX_PASSWORD", s.user_id, _error(answer))
                return False
            self.user_id = answer.user_id
        self.state.user_id = self.user_id
        self.state.device_id = client.device_id
        name = await client.get_displayname(self.user_id)
        if isinstance(name, ProfileGetDisplayNameResponse):
            self.display_name = name.displayname or ""
        return True

    async def _first_sync(self) -> None:
        """Skip the timeline the account already has; accept the invites waiting for it."""
        from nio import SyncResponse

        answer = await self.client.sync(timeout=0, full_state=True, sync_filter=FIRST_SYNC)
        if not isinstance(answer, SyncResponse):
            raise OSError(f"the first sync failed: {_error(answer)}")
        await self._invites(answer)
        for room_id in answer.rooms.join:
            for event in answer.rooms.join[room_id].timeline.events:
                self._remember(str(getattr(event, "event_id", "")))
        await self._save(answer.next_batch)

    async def start_receiving(self) -> None:
        if self._syncer is None:
            self._syncer = asyncio.get_running_loop().create_task(self._sync_forever())

    async def disconnect(self) -> None:
        self._closing = True
        if self._syncer is not None:
            self._syncer.cancel()
            await asyncio.gather(self._syncer, return_exceptions=True)
        if self.client is not None:
            await self.client.close()

    # --- receiving ---------------------------------------------------------------------------
    async def _sync_forever(self) -> None:
        from aiohttp import ClientError
        from nio import SyncResponse

        failures = 0
        while not self._closing:
            try:
                answer = await self.client.sync(
                    timeout=int(self.settings.sync_timeout * 1000), since=self._since,
                    sync_filter=NEXT_SYNCS)
            except (OSError, asyncio.TimeoutError, ClientError) as exc:
                answer = exc
            except Exception as exc:  # nio could not read the answer: try again, later
                log.exception("matrix: sync failed")
                answer = exc
            if not isinstance(answer, SyncResponse):
                if getattr(answer, "status_code", "") in ("M_UNKNOWN_TOKEN", "M_FORBIDDEN"):
                    reason = (f"matrix: the homeserver no longer accepts the bot's login "
                              f"({_error(answer)}); set a fresh MATRIX_ACCESS_TOKEN or "
                              "MATRIX_PASSWORD and restart the gateway")
                    log.error("%s", reason)
                    self.report_fatal(reason)
                    return
                failures += 1
                wait = min(MAX_BACKOFF, 2.0 ** (failures - 1))
                log.warning("matrix: sync failed (%s); retrying in %.0fs", _error(answer), wait)
                await asyncio.sleep(wait)
                continue
            failures = 0
            try:
                handled = await self._handle(answer)
            except (OSError, asyncio.TimeoutError, ClientError) as exc:  # joining a room
                log.warning("matrix: %s; syncing again", type(exc).__name__)
                handled = False
            if handled:
                await self._save(answer.next_batch)
            elif not self._closing:
                await asyncio.sleep(1.0)  # a message was not taken: synced again, after a pause

    async def _handle(self, answer: Any) -> bool:
        """Hand the batch's messages to the gateway; False when one was not taken."""
        await self._invites(answer)
        for room_id, room in answer.rooms.join.items():
            for event in room.timeline.events:
                source = getattr(event, "source", None)
                if not isinstance(source, dict):
                    continue
                if source.get("type") == "m.room.encrypted":
                    await self._encrypted(room_id, source)
                    continue
                event_id = str(source.get("event_id") or "")
                if event_id in self._seen:
                    continue
                message = None
                try:
                    message = await self.inbound(room_id, source)
                    outcome = await self.handle_message(message) if message else None
                except Exception:  # one bad event must not stop the others
                    log.exception("matrix: handling event %s failed", event_id)
                    outcome = None
                if outcome == "closed":
                    return False
                self._remember(event_id)
                if message is not None:  # in the inbox now: never handed over a second time
                    await self._save(self._since)
        for room_id in answer.rooms.leave:
            self.direct_rooms.discard(room_id)
        return True

    async def _invites(self, answer: Any) -> None:
        for room_id, info in answer.rooms.invite.items():
            inviter, direct = None, False
            for event in info.invite_state:  # nio's InviteMemberEvent (its source lacks content)
                if (getattr(event, "membership", None) == "invite"
                        and getattr(event, "state_key", None) == self.user_id):
                    inviter = getattr(event, "sender", None)
                    direct = bool((getattr(event, "content", None) or {}).get("is_direct"))
            if inviter and self.may_invite(str(inviter)):
                joined = await self.client.join(room_id)
                if getattr(joined, "room_id", None):
                    log.info("matrix: joined %s, invited by %s", room_id, inviter)
                    if direct:
                        self.direct_rooms.add(room_id)
                else:
                    log.warning("matrix: could not join %s: %s", room_id, _error(joined))
            else:
                log.info("matrix: declined the invite to %s from %s (not an allowed user: add "
                         "them to MATRIX_ALLOWED_USERS)", room_id, inviter)
                await self.client.room_leave(room_id)

    def may_invite(self, user_id: str) -> bool:
        s = self.settings
        return s.allow_all_users or user_id in s.allowed_users

    async def _encrypted(self, room_id: str, source: dict[str, Any]) -> None:
        if room_id in self._warned_encrypted or source.get("sender") == self.user_id:
            return
        self._warned_encrypted.add(room_id)
        log.warning("matrix: %s is end-to-end encrypted, which this platform cannot read; "
                    "use an unencrypted room", room_id)
        if self.may_invite(str(source.get("sender"))):
            await self.send(room_id, "I cannot read end-to-end encrypted messages; please talk "
                                     "to me in an unencrypted room.")

    def chat_type(self, room_id: str) -> str:
        room = self.client.rooms.get(room_id) if self.client is not None else None
        if room_id in self.direct_rooms:
            return "dm"
        return "dm" if room is not None and room.member_count <= 2 else "group"

    async def inbound(self, room_id: str, source: dict[str, Any]) -> InboundMessage | None:
        """The event as the gateway's message, or None for one the agent must not see."""
        sender = str(source.get("sender") or "")
        body = events.content(source)
        if (source.get("type") != "m.room.message" or sender == self.user_id
                or events.is_edit(source)):
            return None
        media = events.attachment(source)
        if media is None and body.get("msgtype") not in events.TEXT_TYPES:
            return None
        kind = self.chat_type(room_id)
        thread = events.thread_root(source)
        if (kind != "dm" and self.settings.require_mention
                and room_id not in self.settings.free_response_rooms
                and (room_id, thread) not in self._threads
                and not events.mentions(source, self.user_id, self.display_name)):
            return None
        if thread is not None:  # a thread the bot was called into: answered from now on
            self._threads.add((room_id, thread))
        parts: list[dict[str, Any]] = []
        if media is not None:
            text = events.caption(source)
            if self.may_talk(sender):  # a stranger's file is not fetched: nothing is stored
                parts.append(await download_part(self, media, str(source.get("event_id"))))
            text = "\n".join(filter(None, [text, *map(events.describe, parts)]))
        else:
            text = events.text_without_mention(source, self.user_id, self.display_name)
        if not text and media is None:
            return None
        return InboundMessage(
            PLATFORM, room_id, sender, text or "(attachment)", user_name=sender,
            thread_id=thread, message_id=str(source.get("event_id") or "") or None,
            chat_type="thread" if thread else kind, raw=source, attachments=parts,
            images=image_parts(parts))

    def may_talk(self, user_id: str, user_name: str = "") -> bool:
        return self.may_invite(user_id)

    def _remember(self, event_id: str) -> None:
        if event_id:
            self._seen[event_id] = None
            while len(self._seen) > SEEN:
                self._seen.popitem(last=False)

    async def _save(self, since: str | None) -> None:
        """A durable write (fsync), in a worker thread: the loop serves every chat."""
        self._since = since
        await asyncio.to_thread(self.state.save, since, sorted(self.direct_rooms),
                                list(self._seen)[-RECENT:])

    # --- sending -----------------------------------------------------------------------------
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        from aiohttp import ClientError
        from nio import RoomSendResponse

        if self.client is None:
            return SendResult(False, error="matrix is not connected")
        thread = (metadata or {}).get("thread_id")
        body: dict[str, Any] = {"msgtype": "m.text", "body": content}
        rendered = to_html(content)
        if rendered is not None:
            body.update(format="org.matrix.custom.html", formatted_body=rendered)
        if thread:
            body["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread,
                                    "is_falling_back": not reply_to,
                                    "m.in_reply_to": {"event_id": reply_to or thread}}
        elif reply_to:
            body["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        key = (chat_id, content, reply_to)
        txn = self._retry_txn(key)  # the same transaction id: the homeserver drops a duplicate
        try:
            answer = await self.client.room_send(chat_id, "m.room.message", body, tx_id=txn,
                                                 ignore_unverified_devices=True)
        except (OSError, asyncio.TimeoutError, ClientError) as exc:
            self._pending_txn[key] = (txn, time.monotonic())
            return SendResult(False, error=f"matrix: {type(exc).__name__}", retryable=True)
        if isinstance(answer, RoomSendResponse):
            self._pending_txn.pop(key, None)
            return SendResult(True, message_id=answer.event_id)
        code = getattr(answer, "status_code", "")
        retry_ms = getattr(answer, "retry_after_ms", None)
        if code == "M_LIMIT_EXCEEDED" or str(code).startswith("5"):
            self._pending_txn[key] = (txn, time.monotonic())
            return SendResult(False, error=f"matrix: {_error(answer)}", retryable=True,
                              retry_after=retry_ms / 1000 if retry_ms else None)
        return SendResult(False, error=f"matrix: {_error(answer)}")

    def _retry_txn(self, key: tuple[str, str, str | None]) -> str:
        now = time.monotonic()
        for old, (_, at) in list(self._pending_txn.items()):
            if now - at > RETRY_TXN_FOR:
                del self._pending_txn[old]
        kept = self._pending_txn.get(key)
        return kept[0] if kept else uuid.uuid4().hex

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        await self._typing(chat_id, True)

    async def stop_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        await self._typing(chat_id, False)

    async def _typing(self, chat_id: str, state: bool) -> None:
        from aiohttp import ClientError

        if self.client is not None:
            try:
                await self.client.room_typing(chat_id, typing_state=state, timeout=TYPING_MS)
            except (OSError, asyncio.TimeoutError, ClientError) as exc:
                log.debug("matrix: typing in %s: %s", chat_id, type(exc).__name__)

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        room = self.client.rooms.get(chat_id) if self.client is not None else None
        if room is None:
            return ChatInfo(name=str(chat_id))
        return ChatInfo(name=str(room.display_name or chat_id), type=self.chat_type(chat_id),
                        extra={k: v for k, v in (("topic", room.topic),
                                                 ("members", room.member_count)) if v})


def _error(answer: Any) -> str:
    if isinstance(answer, BaseException):
        return type(answer).__name__
    code = getattr(answer, "status_code", None)
    message = getattr(answer, "message", None) or type(answer).__name__
    return f"{code}: {message}" if code else str(message)
