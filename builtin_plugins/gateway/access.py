"""Who may talk to the agent. Per platform: ``platforms.<name>.allowed_users`` in config.yaml,
``<NAME>_ALLOWED_USERS`` (or the platform entry's ``allowed_users_env``), then
``GATEWAY_ALLOWED_USERS`` for every platform; ``GATEWAY_ALLOW_ALL_USERS=true`` (or the entry's
``allow_all_env``, or ``platforms.<name>.allow_all_users``) opens it to anyone. Nobody is
allowed by default, except on a platform whose entry says ``authenticates=True`` (it checks
every request itself, like the api-server's bearer key): there, anyone until an allow-list is
set. A user name matches without a leading ``@`` and whatever its case; a numeric entry
matches ids only. A stranger is refused once per chat every ``REFUSE_EVERY`` seconds."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

TRUE = ("1", "true", "yes", "on")
REFUSE_EVERY = 600.0  # seconds between two refusals to the same stranger in the same chat
REFUSALS_REMEMBERED = 10_000


def _names(value: Any) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, (list, tuple, set)):
        return {str(v).strip() for v in value if str(v).strip()}
    return {part.strip() for part in str(value).split(",") if part.strip()}


class AccessPolicy:
    def __init__(self, platform: str, config: Mapping[str, Any], env: Mapping[str, str],
                 entry: Any = None):
        upper = platform.upper().replace("-", "_")
        users_env = getattr(entry, "allowed_users_env", None) or f"{upper}_ALLOWED_USERS"
        all_env = getattr(entry, "allow_all_env", None) or f"{upper}_ALLOW_ALL_USERS"
        self.users = (_names(config.get("allowed_users")) | _names(env.get(users_env))
                      | _names(env.get("GATEWAY_ALLOWED_USERS")))
        #: anyone at all may talk: said in so many words (not a platform that authenticates
        #: every request itself, like the api-server's key)
        self.anyone = (str(config.get("allow_all_users", "")).lower() in TRUE
                       or env.get(all_env, "").lower() in TRUE
                       or env.get("GATEWAY_ALLOW_ALL_USERS", "").lower() in TRUE)
        self.authenticates = bool(getattr(entry, "authenticates", False))
        self.allow_all = self.anyone or (self.authenticates and not self.users)
        # user names: without a leading @, case ignored (as Telegram and Discord treat them);
        # an entry that is a number is an id, never a user name (a Discord user may name
        # himself "418000000000000111", after someone else's id)
        self.names = {_name(u) for u in self.users if not u.lstrip("-").isdigit()}

    def warning(self, platform: str) -> str | None:
        """What the owner should hear at start: a chat platform open to the whole world, or
        one nobody may use yet."""
        if self.anyone and not self.authenticates:
            return (f"anyone on {platform} may use the agent, which can run commands on this "
                    "machine (allow_all_users or GATEWAY_ALLOW_ALL_USERS); list the users in "
                    f"platforms.{platform}.allowed_users instead")
        if not self.allow_all and not self.users:
            return (f"nobody may use the agent on {platform} yet: add user ids to "
                    f"platforms.{platform}.allowed_users")
        return None

    def untrusted_source(self, platform: str, user_id: str, user_name: str = "") -> str | None:
        """``platform:<name>:<user>`` for a sender who may talk only because the platform is
        open to anyone (not on its allow-list): the owner did not vouch for that text, so the
        agent treats it as untrusted (docs/security.md). None for a listed user."""
        listed = str(user_id) in self.users or (bool(user_name) and _name(user_name) in self.names)
        if listed or not self.anyone:
            return None
        return f"platform:{platform}:{user_name or user_id}"

    def allows(self, user_id: str, user_name: str = "") -> bool:
        return self.allow_all or str(user_id) in self.users or (
            bool(user_name) and _name(user_name) in self.names)


def _name(user_name: str) -> str:
    return user_name.strip().lstrip("@").casefold()


class RefusalLimiter:
    """Whether to send a stranger the refusal now: once per ``every`` seconds per platform,
    chat and user, so a flood of messages from strangers neither makes the bot spam a group
    nor keeps the gateway waiting out the platform's rate limits for each of them."""

    def __init__(self, every: float = REFUSE_EVERY, remembered: int = REFUSALS_REMEMBERED):
        self.every, self.remembered = every, remembered
        self._last: OrderedDict[tuple[str, str, str], float] = OrderedDict()

    def due(self, platform: str, chat_id: str, user_id: str) -> bool:
        key, now = (platform, str(chat_id), str(user_id)), time.monotonic()
        last = self._last.pop(key, None)
        if last is not None and now - last < self.every:
            self._last[key] = last
            return False
        self._last[key] = now
        while len(self._last) > self.remembered:
            self._last.popitem(last=False)
        return True
