"""Builtin plugin: the agent (system prompt assembly and the conversation loop).

It is a library that the CLI, the gateway and subagents drive; the kernel knows nothing about
it. It registers the ``delegate_task`` tool and offers the ``agent`` service, which builds
agents for every surface (:mod:`.service`). Other plugins add system-prompt layers through
:func:`hermes_agent.api.prompt_layers`.
"""


def register(ctx):
    from .delegate import register as register_delegation
    from .service import AgentService

    register_delegation(ctx)
    ctx.register_service("agent", AgentService)
