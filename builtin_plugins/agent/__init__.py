"""Builtin plugin: the agent (system prompt assembly and the conversation loop).

It is a library that the CLI, the gateway and subagents drive; the kernel knows nothing about
it. It registers the ``delegate_task`` tool and offers two services: ``prompt_layers``, where
other plugins add system-prompt layers (:func:`hermes_agent.api.prompt_layers`), and ``agent``,
which builds agents for every surface (:mod:`.service`).
"""


def register(ctx):
    from .delegate import register as register_delegation
    from .layers import PromptLayers
    from .service import AgentService

    register_delegation(ctx)
    ctx.register_service("prompt_layers", lambda kernel: PromptLayers())
    ctx.register_service("agent", AgentService)
