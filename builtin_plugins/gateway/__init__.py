"""Builtin plugin: the chat gateway. ``register(ctx)`` offers the ``gateway`` service (which
knows the running gateway) and answers the ``platform_adapter`` hook from it, so
``ctx.get_platform_adapter(name)`` reaches a live adapter;
``hermes gateway run`` builds the runner and starts the enabled platforms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


def register(ctx: Any) -> None:
    from hermes_agent.api import GATEWAY

    from .service import GatewayService

    ctx.register_service(GATEWAY, GatewayService)
    kernel = ctx.kernel
    ctx.register_hook("platform_adapter", lambda name: kernel.service(GATEWAY).adapter(name))
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the enabled platforms are configured")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from .doctor import platform_findings

    return platform_findings(kernel)
