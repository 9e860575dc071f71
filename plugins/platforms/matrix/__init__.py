"""The Matrix platform: a bot account on any homeserver, through matrix-nio, run by the gateway
(``hermes gateway run``). Settings: ``platforms.matrix`` in config.yaml and the original's
variables (``MATRIX_HOMESERVER``, ``MATRIX_ACCESS_TOKEN`` or ``MATRIX_USER_ID`` with
``MATRIX_PASSWORD``, ``MATRIX_ALLOWED_USERS``); see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-matrix]'"
MAX_LENGTH = 4000
PROMPT_HINT = ("You are chatting on Matrix. Keep messages short (a reply over "
               f"{MAX_LENGTH} characters is split into several); bold, italics, code, links "
               "and headings render, tables do not.")


def available() -> bool:
    return importlib.util.find_spec("nio") is not None


def register(ctx: Any) -> None:
    kernel = ctx.kernel

    def factory(config: Any) -> Any:
        settings = load(config, kernel.env)  # SettingsError says what to set
        from .adapter import MatrixAdapter

        return MatrixAdapter(config, settings, kernel.home)

    ctx.register_platform("matrix", "Matrix", adapter_factory=factory, check_fn=available,
                          install_hint=INSTALL_HINT, allowed_users_env="MATRIX_ALLOWED_USERS",
                          max_message_length=MAX_LENGTH, prompt_hint=PROMPT_HINT)
