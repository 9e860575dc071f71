"""Builtin plugin ``compat``: lets plugins written for Hermes Agent 0.19 import the module paths they
know (``from agent.memory_provider import MemoryProvider``, ``from tools.registry import
tool_error``, ``from gateway.platforms.base import BasePlatformAdapter``, ...). Builtin plugins
load before any other, so the paths exist in time.
"""


def register(ctx):
    from .modules import install

    install()
