"""Builtin plugin ``compat``: lets plugins written for Hermes Agent 0.19 import the module paths they
know (``from agent.memory_provider import MemoryProvider``, ``from tools.registry import
tool_error``, ``from gateway.platforms.base import BasePlatformAdapter``, ...), and load
memory providers that register nothing, as that version does (its ``find_slot_provider`` hook,
which the kernel asks). Builtin plugins load before any other, so both are in place in time.
"""


def register(ctx):
    from .modules import install
    from .providers import find_slot_provider

    install()
    ctx.register_hook("find_slot_provider", find_slot_provider)
