"""Builtin plugin: the agent (system prompt assembly and the conversation loop).

It is a library that the CLI, the gateway and subagents drive; the kernel knows nothing about
it. It registers only the ``delegate_task`` tool; other plugins add system-prompt layers through
:func:`hermes_agent.prompt_layers` (see :mod:`.layers`).
"""


def register(ctx):
    """The agent is used as a library by its front ends; it registers ``delegate_task``."""
    from .delegate import register as register_delegation

    register_delegation(ctx)
