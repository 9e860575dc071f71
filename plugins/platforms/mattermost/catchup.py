"""What a Mattermost bot missed while its websocket was down (a restart, a dropped
connection): the server pushes posts only to connected sockets, so the position of the last
post taken in each channel is kept (``$HERMES_HOME/gateway/mattermost-posts.json``) and, on
each connection, ``GET /api/v4/channels/{id}/posts?since=...`` lists what came after it.
Channels the bot never heard from before are not searched."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from hermes_agent import write_atomic
from hermes_agent.kits.chat_api import ChatAPI, ChatAPIError

log = logging.getLogger("hermes_agent.gateway.mattermost")


class PostCursor:
    """channel id -> the ``create_at`` of the last post taken there, and the channel's type."""

    def __init__(self, path: Path):
        self.path = path
        try:
            loaded = json.loads(path.read_text())
            self.channels: dict[str, dict[str, Any]] = {
                str(k): {"at": int(v["at"]), "type": str(v.get("type") or "O")}
                for k, v in loaded.items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self.channels = {}

    def advance(self, channel: str, kind: str, created: int) -> None:
        known = self.channels.get(channel)
        if known is not None and known["at"] >= created:
            return
        self.channels[channel] = {"at": created, "type": kind}
        try:
            write_atomic(self.path, json.dumps(self.channels), 0o600)
        except OSError as exc:
            log.warning("mattermost: cannot save the post positions to %s: %s", self.path, exc)


async def missed_posts(api: ChatAPI, cursor: PostCursor) -> list[dict[str, Any]]:
    """The posts after each channel's position, oldest first, as ``posted`` events' data
    (``sender_name`` looked up)."""
    found: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for channel, position in list(cursor.channels.items()):
        try:
            page = await api.call("GET", f"/channels/{channel}/posts",
                                  params={"since": position["at"]})
        except ChatAPIError as exc:
            log.warning("mattermost: cannot look for posts missed in %s: %s", channel, exc)
            continue
        posts = page.get("posts") if isinstance(page, dict) else None
        for post in (posts or {}).values():
            if isinstance(post, dict) and int(post.get("create_at") or 0) > position["at"] \
                    and not post.get("delete_at"):
                user = str(post.get("user_id") or "")
                if user not in names:
                    names[user] = await _username(api, user)
                found.append({"post": post, "channel_type": position["type"],
                              "sender_name": f"@{names[user]}" if names[user] else ""})
    return sorted(found, key=lambda data: int(data["post"].get("create_at") or 0))


async def _username(api: ChatAPI, user_id: str) -> str:
    try:
        user = await api.call("GET", f"/users/{user_id}")
    except ChatAPIError:
        return ""
    return str(user.get("username") or "") if isinstance(user, dict) else ""
