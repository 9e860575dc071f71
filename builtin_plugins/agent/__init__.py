"""Builtin plugin: the agent (system prompt assembly and the conversation loop).

It is a library that the CLI, the gateway and subagents drive; the kernel knows nothing about
it. It registers the ``delegate_task`` and ``execute_code`` tools and offers the ``agent``
service, which builds agents for every surface (:mod:`.service`), and the ``injection_scan`` service: the
prompt-file injection scan for other plugins' text (``scan(text) -> list[str]`` findings,
empty when clean; builtin memory scans what the model writes with it). Other plugins add
system-prompt layers through :func:`hermes_agent.api.prompt_layers`.
"""


def register(ctx):
    from hermes_agent.api import AGENT, INJECTION_SCAN

    from .code_exec import register as register_code_execution
    from .delegate import register as register_delegation
    from .inbox import deliver
    from .service import AgentService

    register_delegation(ctx)
    register_code_execution(ctx)
    kernel = ctx.kernel
    ctx.register_hook("on_memory_write", lambda **payload: _mirror_memory_write(kernel, payload))
    ctx.register_hook("inject_message", lambda content, role: deliver(kernel, content, role))
    ctx.register_service(AGENT, AgentService)
    ctx.register_service(INJECTION_SCAN, InjectionScan)


class InjectionScan:
    """The prompt-file injection scan, offered to other plugins (findings remembered in the
    kernel's validation cache like those of prompt files)."""

    def __init__(self, kernel):
        cache = getattr(kernel, "cache", None)
        self._cache = cache if callable(getattr(cache, "key", None)) else None

    def scan(self, text: str) -> list[str]:
        from .scan_memo import scan_findings

        return scan_findings(text, self._cache)


def _mirror_memory_write(kernel, payload):
    """Builtin memory changed: tell the external memory provider of that session, if any."""
    from .memory_manager import forward_memory_write

    forward_memory_write(kernel, **payload)
