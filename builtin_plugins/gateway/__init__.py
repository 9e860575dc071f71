"""Builtin plugin: the chat gateway. ``register(ctx)`` offers the ``gateway`` service (which
knows the running gateway) and answers the ``platform_adapter`` hook from it, so
``ctx.get_platform_adapter(name)`` reaches a live adapter; the ``delivery`` service and the
``send_message`` tool (toolset ``messaging``) send to a platform's chat through it (or through
the running gateway's control socket); ``hermes gateway run`` builds the runner and starts the
enabled platforms, ``hermes send`` delivers a message from a shell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl

if TYPE_CHECKING:
    from hermes_agent import Kernel


def register(ctx: Any) -> None:
    from hermes_agent.api import GATEWAY
    from hermes_agent.api.services import DELIVERY

    from .service import GatewayService

    ctx.register_service(GATEWAY, GatewayService)
    kernel = ctx.kernel
    ctx.register_hook("platform_adapter", lambda name: kernel.service(GATEWAY).adapter(name))
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the enabled platforms are configured")

    def delivery(k: Kernel) -> Any:
        from .delivery import DeliveryService

        return DeliveryService(k)

    ctx.register_service(DELIVERY, delivery)
    tool: list[Any] = []

    def send_message(args: dict[str, Any], **kwargs: Any) -> str:
        if not tool:
            from .send_tool import SendMessageTool

            tool.append(SendMessageTool(kernel))
        return str(tool[0](args, **kwargs))

    from .send_schema import SEND_MESSAGE

    ctx.register_tool(name="send_message", toolset="messaging", schema=SEND_MESSAGE,
                      handler=send_message, description=SEND_MESSAGE["description"],
                      emoji="📨")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from .doctor import platform_findings

    return platform_findings(kernel)


@hookimpl
def register_toolsets(register: Any) -> None:
    register("messaging", tools=("send_message",), kind="leaf",
             description="Send messages to chats on the connected platforms")
