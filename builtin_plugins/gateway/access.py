"""Who may talk to the agent. Per platform: ``platforms.<name>.allowed_users`` in config.yaml,
``<NAME>_ALLOWED_USERS`` (or the platform entry's ``allowed_users_env``), then
``GATEWAY_ALLOWED_USERS`` for every platform; ``GATEWAY_ALLOW_ALL_USERS=true`` (or the entry's
``allow_all_env``, or ``platforms.<name>.allow_all_users``) opens it to anyone. Nobody is
allowed by default, except on a platform whose entry says ``authenticates=True`` (it checks
every request itself, like the api-server's bearer key): there, anyone until an allow-list is
set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRUE = ("1", "true", "yes", "on")


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
        self.allow_all = (str(config.get("allow_all_users", "")).lower() in TRUE
                          or env.get(all_env, "").lower() in TRUE
                          or env.get("GATEWAY_ALLOW_ALL_USERS", "").lower() in TRUE
                          or (bool(getattr(entry, "authenticates", False)) and not self.users))

    def allows(self, user_id: str, user_name: str = "") -> bool:
        return self.allow_all or str(user_id) in self.users or (
            bool(user_name) and user_name in self.users)
