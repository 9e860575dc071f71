"""A fake Mattermost server on 127.0.0.1: the REST API v4 (on ``base_url``) and the websocket
(on ``websocket_url``; a real server has both on one port, so point
``platforms.mattermost.websocket_url`` at it).

REST: ``GET /api/v4/users/me`` and ``/users/{id}``, ``GET /api/v4/channels/{id}/posts?since=``
(the posts created or changed since, ``{"order", "posts"}``), ``POST /api/v4/posts`` (201; a message over 16383 characters
gets a 400 as the server answers), ``PUT /api/v4/posts/{id}/patch``,
``POST /api/v4/users/{id}/typing``, ``POST /api/v4/channels/members/me/view``,
``GET /api/v4/channels/{id}``, ``GET /api/v4/files/{id}`` and ``/info``. A wrong token gets a
401 ``{"id", "message", "status_code"}``. Websocket: ``hello`` first (after the
``Authorization: Bearer`` header is checked, 401 otherwise), then a ``posted`` event for every
post (the bot's own included), with ``seq`` counting up.

    with FakeMattermost() as mm:
        # MATTERMOST_URL=mm.base_url, MATTERMOST_TOKEN=mm.token,
        # platforms.mattermost.websocket_url=mm.websocket_url
        mm.user_posts("chan1", "alice", "hi")
        [reply] = mm.wait_sent(1, "chan1")
"""

from __future__ import annotations

import json
import logging
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from .fake_chat import WAIT, ChatHandler, ChatState, FakeChat, Sent
from .local_server import RecordedRequest, send_json
from .local_websocket import LocalWebsocketServer

MAX_POST = 16383
QUIET = logging.getLogger("hermes_agent.testing.fake_mattermost")
QUIET.setLevel(logging.WARNING)


class MattermostState(ChatState):
    bot: dict[str, Any]
    users: dict[str, dict[str, Any]]
    channels: dict[str, dict[str, Any]]
    posts: list[dict[str, Any]]  # every post, in order
    viewed: list[str]
    broadcast: Any  # posts an event to every websocket (set by the fake)


def _error(handler: BaseHTTPRequestHandler, status: int, message: str, error_id: str) -> None:
    send_json(handler, status, {"id": error_id, "message": message, "detailed_error": "",
                                "request_id": "fake", "status_code": status})


class _Handler(ChatHandler):
    def serve(self, state: MattermostState, request: RecordedRequest) -> None:
        if request.headers.get("authorization") != f"Bearer {state.token}":
            _error(self, 401, "Invalid or expired session, please login again.",
                   "api.context.session_expired.app_error")
            return
        path = request.path.removeprefix("/api/v4").strip("/").split("/")
        body = request.body if isinstance(request.body, dict) else {}
        route = (request.method, *path)
        if route == ("GET", "users", "me"):
            send_json(self, 200, state.bot)
        elif route == ("POST", "posts"):
            self._create(state, body)
        elif request.method == "PUT" and path[0] == "posts" and path[-1] == "patch":
            self._patch(state, path[1], body)
        elif request.method == "POST" and path[0] == "users" and path[-1] == "typing":
            send_json(self, 200, {"status": "OK"})
        elif route == ("POST", "channels", "members", "me", "view"):
            state.add_receipt(str(body.get("channel_id")))
            send_json(self, 200, {"status": "OK", "last_viewed_at_times": {}})
        elif request.method == "GET" and path[0] == "channels" and path[-1] == "posts":
            since = int(request.param("since") or 0)
            with state.lock:
                posts = {p["id"]: p for p in state.posts
                         if p["channel_id"] == path[1] and p["update_at"] > since}
            send_json(self, 200, {"order": sorted(posts, key=lambda i: -posts[i]["create_at"]),
                                  "posts": posts, "next_post_id": "", "prev_post_id": ""})
        elif request.method == "GET" and path[0] == "users" and len(path) == 2:
            with state.lock:
                user = state.users.get(path[1])
            if user is None:
                _error(self, 404, "Unable to find the user.", "app.user.missing_account.const")
            else:
                send_json(self, 200, user)
        elif request.method == "GET" and path[0] == "channels" and len(path) == 2:
            channel = state.channels.get(path[1])
            if channel is None:
                _error(self, 404, "Unable to find the channel.", "app.channel.get.existing")
            else:
                send_json(self, 200, channel)
        elif request.method == "GET" and path[0] == "files":
            self._file(state, path[1], info=path[-1] == "info")
        else:
            _error(self, 404, "Unable to find the resource.", "api.context.404.app_error")

    def _create(self, state: MattermostState, body: dict[str, Any]) -> None:
        failure = state.take_failure("posts")
        if failure is not None:
            headers = {"Retry-After": str(failure[1])} if failure[1] is not None else None
            send_json(self, failure[0], {"id": "api.context.rate_limit", "message":
                                         "command rate limit", "status_code": failure[0]},
                      headers)
            return
        message, channel = str(body.get("message") or ""), str(body.get("channel_id") or "")
        if len(message) > MAX_POST or channel not in state.channels:
            _error(self, 400, "Invalid Message", "model.post.is_valid.msg.app_error")
            return
        post = _post(state, channel, state.bot["id"], message, str(body.get("root_id") or ""))
        state.add_sent(Sent(channel, message, post["id"], thread_id=post["root_id"] or None))
        state.broadcast(post, state.bot["username"])
        send_json(self, 201, post)

    def _patch(self, state: MattermostState, post_id: str, body: dict[str, Any]) -> None:
        with state.lock:
            sent = next((m for m in state.sent if m.message_id == post_id), None)
            if sent is not None:
                sent.edits.append(str(body.get("message") or ""))
                sent.text = sent.edits[-1]
                state.lock.notify_all()
        if sent is None:
            _error(self, 404, "Unable to find the post.", "app.post.get.app_error")
        else:
            send_json(self, 200, {"id": post_id, "message": sent.text,
                                  "channel_id": sent.chat_id})

    def _file(self, state: MattermostState, file_id: str, info: bool) -> None:
        found = self.file(state, file_id)
        if found is None:
            _error(self, 404, "Unable to find the file.", "app.file_info.get.app_error")
        elif info:
            send_json(self, 200, _file_info(file_id, *found))
        else:
            self.send_bytes(found[0], found[1])


def _file_info(file_id: str, data: bytes, media_type: str, name: str) -> dict[str, Any]:
    return {"id": file_id, "name": name, "extension": name.rpartition(".")[2],
            "size": len(data), "mime_type": media_type}


def _post(state: MattermostState, channel: str, user: str, message: str, root: str,
          files: list[str] | None = None) -> dict[str, Any]:
    with state.lock:  # a post's time is unique and grows, as the server's ordering needs
        post_id = f"post{next(state.ids):022d}"
        now = max(int(time.time() * 1000), state.posts[-1]["create_at"] + 1 if state.posts else 0)
    post: dict[str, Any] = {"id": post_id, "create_at": now, "update_at": now, "edit_at": 0,
                            "delete_at": 0, "user_id": user, "channel_id": channel,
                            "root_id": root, "original_id": "", "message": message, "type": "",
                            "props": {}, "hashtags": "", "pending_post_id": "",
                            "file_ids": list(files or []), "metadata": {}}
    with state.lock:
        if files:
            post["metadata"]["files"] = [_file_info(f, *state.files[f]) for f in files]
        state.posts.append(post)
    return post


class FakeMattermost(FakeChat):
    thread_name = "fake-mattermost"
    handler = _Handler

    def __init__(self, token: str = "fakemattermostbottoken0000a"):
        state = MattermostState(token)
        state.bot = {"id": "botuserid00000000000000000", "username": "hermes", "is_bot": True}
        state.users, state.channels, state.viewed, state.posts = {}, {}, [], []
        state.broadcast = self._broadcast
        self._state = state
        self.websocket_url = ""
        self._ws = LocalWebsocketServer(self._socket, name="fake-mattermost-ws", logger=QUIET,
                                        process_request=self._authorize)
        self._sockets: set[Any] = set()
        self.hellos = 0
        self._seq = 0

    @property
    def bot(self) -> dict[str, Any]:
        return dict(self._state.bot)

    def start(self) -> FakeMattermost:
        super().start()
        self.websocket_url = f"{self._ws.start()}/api/v4/websocket"
        return self

    def close(self) -> None:
        super().close()
        self._ws.close()

    def _authorize(self, connection: Any, request: Any) -> Any:
        if request.headers.get("Authorization") != f"Bearer {self._state.token}":
            return connection.respond(401, "Invalid or expired session\n")
        return None

    async def _socket(self, ws: Any) -> None:
        self._sockets.add(ws)
        try:
            await ws.send(json.dumps(self._event("hello", {"connection_id": "fake",
                                                           "server_version": "9.11.0"})))
            with self._state.lock:
                self.hellos += 1
                self._state.lock.notify_all()
            async for _ in ws:
                pass
        except Exception:
            pass
        finally:
            self._sockets.discard(ws)

    def _event(self, name: str, data: dict[str, Any], channel: str = "") -> dict[str, Any]:
        self._seq += 1
        return {"event": name, "data": data, "seq": self._seq,
                "broadcast": {"omit_users": None, "user_id": "", "channel_id": channel,
                              "team_id": "", "connection_id": ""}}

    def _broadcast(self, post: dict[str, Any], sender: str) -> None:
        channel = self._state.channels[post["channel_id"]]
        data = {"channel_display_name": channel["display_name"], "channel_name": channel["name"],
                "channel_type": channel["type"], "post": json.dumps(post),
                "sender_name": f"@{sender}", "team_id": channel.get("team_id", "")}

        async def send() -> None:
            frame = json.dumps(self._event("posted", data, post["channel_id"]))
            for ws in list(self._sockets):
                try:
                    await ws.send(frame)
                except Exception:
                    pass

        self._ws.run(send())

    # --- what users do -----------------------------------------------------------------------
    def add_user(self, user_id: str, username: str) -> None:
        with self._state.lock:
            self._state.users[user_id] = {"id": user_id, "username": username}

    def add_channel(self, channel_id: str, kind: str = "O", name: str = "") -> None:
        """A channel the bot is in: ``kind`` O (public), P (private), D (direct), G (group)."""
        with self._state.lock:
            self._state.channels.setdefault(channel_id, {
                "id": channel_id, "type": kind, "name": name or channel_id,
                "display_name": name or channel_id, "team_id": "team1"})

    def user_posts(self, channel_id: str, user_id: str, text: str, *, kind: str = "O",
                   root_id: str = "", files: list[str] | None = None) -> dict[str, Any]:
        """A user's post, pushed on the websocket as a ``posted`` event; the post."""
        self.add_channel(channel_id, kind)
        with self._state.lock:
            username = self._state.users.get(user_id, {}).get("username", user_id)
        post = _post(self._state, channel_id, user_id, text, root_id, files)
        self._broadcast(post, username)
        return post

    def drop(self) -> None:
        """Close every websocket (the client reconnects)."""
        async def close() -> None:
            for ws in list(self._sockets):
                await ws.close()

        self._ws.run(close())

    def wait_hellos(self, count: int, timeout: float = WAIT) -> None:
        self.wait_until(lambda: self.hellos >= count, timeout)

    @property
    def viewed(self) -> list[str]:
        """The channels the bot marked viewed, in order."""
        return [str(r) for r in self.receipts]
