"""Where ``send_message``, ``hermes send`` and cron may deliver: a target names a platform's
chat, and is checked against what the owner allowed before anything is sent.

A target is one of (as in Hermes Agent 0.19):

- ``platform``: its home channel (``platforms.<name>.home_channel`` or ``<NAME>_HOME_CHANNEL``);
- ``platform:chat_id`` or ``platform:chat_id:thread_id`` (a Telegram topic, a Discord
  thread; only ``<number>:<number>`` is split, a chat id with a colon such as Matrix's
  ``!room:server`` is taken whole);
- ``platform:#name`` or ``platform:name``: a name of ``platforms.<name>.channels`` or the home
  channel's name;
- ``name`` alone: a name one platform's ``channels`` (or home channel) has.

A chat may be sent to when it is the home channel, a configured channel, on the platform's
``allowed_chats`` (``<NAME>_ALLOWED_CHATS``), an allowed user's own chat (its id is the user's,
as Telegram's and Signal's private chats are), or a chat the gateway already answers (it has a
session). Anything else is refused with what to add."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_agent.kits.platform_config import id_set, platform_setting

from .access import AccessPolicy

_NUMERIC_THREAD = re.compile(r"^\s*(-?\d+):(\d+)\s*\Z")


class TargetError(ValueError):
    """The target cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    platform: str
    chat_id: str
    thread_id: str | None = None
    name: str = ""  # the configured name it was reached by, if any

    @property
    def key(self) -> str:
        """As the gateway keys chats: ``platform:chat`` or ``platform:chat:thread``."""
        base = f"{self.platform}:{self.chat_id}"
        return f"{base}:{self.thread_id}" if self.thread_id else base


def _env_name(platform: str) -> str:
    return platform.upper().replace("-", "_")


def _split(ref: str) -> tuple[str, str | None]:
    match = _NUMERIC_THREAD.match(ref)
    return (match.group(1), match.group(2)) if match else (ref.strip(), None)


def home_channel(platform: str, section: Mapping[str, Any],
                 env: Mapping[str, str]) -> Target | None:
    """``platforms.<name>.home_channel`` (a chat id, or ``{chat_id, name, thread_id}``), else
    ``<NAME>_HOME_CHANNEL`` (and ``<NAME>_HOME_CHANNEL_NAME``)."""
    upper = _env_name(platform)
    value = platform_setting(section, env, "home_channel", f"{upper}_HOME_CHANNEL")
    if value in (None, ""):
        return None
    if isinstance(value, Mapping):
        chat = str(value.get("chat_id") or "").strip()
        if not chat:
            return None
        thread = value.get("thread_id")
        name = str(value.get("name") or "Home")
        return Target(platform, chat, str(thread) if thread else None, name)
    chat, thread = _split(str(value))
    return Target(platform, chat, thread, env.get(f"{upper}_HOME_CHANNEL_NAME") or "Home")


def channels(platform: str, section: Mapping[str, Any]) -> dict[str, Target]:
    """``platforms.<name>.channels``: name -> chat id (``chat`` or ``chat:thread``)."""
    raw = section.get("channels")
    if not isinstance(raw, Mapping):
        return {}
    found = {}
    for name, ref in raw.items():
        label = str(name).lstrip("#").strip()
        if label and str(ref).strip():
            chat, thread = _split(str(ref))
            found[label.casefold()] = Target(platform, chat, thread, label)
    return found


class Directory:
    """The targets of one kernel's configuration. ``platforms``: the platform names that
    exist (registered); ``known_chat(key)``: whether the gateway has a session for a chat."""

    def __init__(self, config: Any, env: Mapping[str, str], platforms: list[str],
                 known_chat: Callable[[str], bool] = lambda key: False,
                 entries: Mapping[str, Any] | None = None):
        self.config, self.env, self.platforms = config, env, sorted(platforms)
        self.known_chat, self.entries = known_chat, dict(entries or {})

    def section(self, platform: str) -> Mapping[str, Any]:
        section = self.config.get(f"platforms.{platform}") or {}
        return section if isinstance(section, Mapping) else {}

    def named(self, platform: str) -> dict[str, Target]:
        found = channels(platform, self.section(platform))
        home = home_channel(platform, self.section(platform), self.env)
        if home is not None:
            found.setdefault(home.name.casefold(), home)
        return found

    def resolve(self, target: str) -> Target:
        """The chat ``target`` names, or :class:`TargetError` saying how to name one."""
        text = str(target or "").strip()
        if not text:
            raise TargetError("no target: give 'platform', 'platform:chat_id' or a configured "
                              "name (send_message action 'list' shows them)")
        platform, sep, ref = text.partition(":")
        platform = platform.strip().lower()
        if platform not in self.platforms:
            if not sep:
                return self._bare_name(text)
            raise TargetError(f"unknown platform {platform!r} in {text!r}: the platforms are "
                              f"{', '.join(self.platforms) or 'none'}")
        ref = ref.strip()
        if not ref:
            home = home_channel(platform, self.section(platform), self.env)
            if home is None:
                raise TargetError(
                    f"{platform} has no home channel: name the chat ('{platform}:CHAT_ID') or "
                    f"set platforms.{platform}.home_channel in config.yaml (or "
                    f"{_env_name(platform)}_HOME_CHANNEL)")
            return home
        named = self.named(platform)
        if ref.startswith("#") or ref.casefold() in named:
            found = named.get(ref.lstrip("#").strip().casefold())
            if found is None:
                raise TargetError(
                    f"{platform} has no channel named {ref!r}: name it under "
                    f"platforms.{platform}.channels in config.yaml, or use its chat id")
            return found
        chat, thread = _split(ref)
        return Target(platform, chat, thread)

    def _bare_name(self, name: str) -> Target:
        wanted = name.lstrip("#").strip().casefold()
        found = [t for p in self.platforms if (t := self.named(p).get(wanted)) is not None]
        if len(found) == 1:
            return found[0]
        if found:
            where = ", ".join(f"{t.platform}:#{t.name}" for t in found)
            raise TargetError(f"{name!r} names a channel on several platforms ({where}); "
                              "say which")
        raise TargetError(f"{name!r} is neither a platform ({', '.join(self.platforms)}) nor a "
                          "configured channel name; use 'platform:chat_id'")

    def check(self, target: Target) -> None:
        """:class:`TargetError` unless the owner allowed sending to that chat."""
        if self.allowed(target):
            return
        upper = _env_name(target.platform)
        raise TargetError(
            f"{target.key} is not a chat hermes may send to: it is not the home channel, a "
            f"configured channel, an allowed chat or user, nor a chat the gateway answers. To "
            f"allow it, add {target.chat_id} to platforms.{target.platform}.allowed_chats (or "
            f"{upper}_ALLOWED_CHATS), or name it under platforms.{target.platform}.channels")

    def allowed(self, target: Target) -> bool:
        section = self.section(target.platform)
        home = home_channel(target.platform, section, self.env)
        if home is not None and home.chat_id == target.chat_id:
            return True
        if any(t.chat_id == target.chat_id for t in channels(target.platform, section).values()):
            return True
        upper = _env_name(target.platform)
        chats = id_set(platform_setting(section, self.env, "allowed_chats",
                                        f"{upper}_ALLOWED_CHATS"))
        if target.chat_id in chats:
            return True
        policy = AccessPolicy(target.platform, section, self.env,
                              self.entries.get(target.platform))
        if target.chat_id in policy.users:  # a user's own chat (Telegram, Signal, email)
            return True
        return self.known_chat(target.key) or self.known_chat(
            f"{target.platform}:{target.chat_id}")

    def listing(self, platform: str | None = None) -> list[dict[str, Any]]:
        """Home channels and configured channels, per platform (``send_message`` ``list``)."""
        rows = []
        for name in self.platforms:
            if platform and name != platform:
                continue
            home = home_channel(name, self.section(name), self.env)
            if home is not None:
                rows.append({"target": name, "platform": name, "chat_id": home.chat_id,
                             "thread_id": home.thread_id, "name": home.name, "home": True})
            for label, found in sorted(channels(name, self.section(name)).items()):
                rows.append({"target": f"{name}:#{found.name}", "platform": name,
                             "chat_id": found.chat_id, "thread_id": found.thread_id,
                             "name": found.name, "home": False})
        return rows
