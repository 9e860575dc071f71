"""Builtin plugin: the chat gateway. ``register(ctx)`` offers the ``gateway`` service (which
knows the running gateway) and answers the ``platform_adapter`` hook from it, so
``ctx.get_platform_adapter(name)`` reaches a live adapter;
``hermes gateway run`` builds the runner and starts the enabled platforms."""

from __future__ import annotations

from typing import Any


def register(ctx: Any) -> None:
    from hermes_agent.api import GATEWAY

    from .service import GatewayService

    ctx.register_service(GATEWAY, GatewayService)
    kernel = ctx.kernel
    ctx.register_hook("platform_adapter", lambda name: kernel.service(GATEWAY).adapter(name))
