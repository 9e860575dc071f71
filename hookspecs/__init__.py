"""Hook specifications of hermes_agent: the contract between the kernel and plugins.

Every hook is a pluggy hookspec, grouped by phase into :mod:`.tools`, :mod:`.llm`,
:mod:`.session`, :mod:`.gateway`, :mod:`.boot`, :mod:`.health` and :mod:`.registration`. Each spec's docstring states
its arguments, its return contract, how results are combined (``Dispatch:``), which
kinds of plugin implement it and whether this version fires it. ``docs/hooks.md`` is
the author-facing version of the same reference.

Rules shared by every event hook:

* Both kinds of implementation are registered in the kernel's pluggy plugin manager:
  ``@hookimpl`` functions, and ``ctx.register_hook(name, callback)`` callbacks (each as
  a small adapter plugin). The kernel's hook bus dispatches what pluggy holds.
* Arguments are passed by keyword. A ``@hookimpl`` function may accept any subset of
  the spec's arguments; a ``ctx.register_hook`` callback receives the whole payload and
  should accept ``**kwargs``.
* Implementations run in plugin load order; ``tryfirst``/``trylast`` are respected.
* An implementation that raises is logged and skipped; the others still run.
* ``async def`` implementations are awaited.
* A spec is ``firstresult`` exactly when its ``DISPATCH`` rule stops at the first
  accepted result (see :mod:`.results`).

This package depends only on pluggy and the standard library, so importing it is cheap
and never pulls in the rest of the runtime.
"""

from __future__ import annotations

from types import FunctionType, ModuleType

from . import boot, gateway, health, llm, registration, session, tools
from .markers import PROJECT_NAME, hookimpl, hookspec

__all__ = [
    "COMPAT_HOOKS",
    "DISPATCH",
    "EVENT_HOOKS",
    "KERNEL_HOOKS",
    "LIFECYCLE_HOOKS",
    "MODULES",
    "NOT_FIRED",
    "PROJECT_NAME",
    "REGISTRATION_HOOKS",
    "hook_arguments",
    "hookimpl",
    "hookspec",
    "spec_function",
]

#: The modules holding hookspecs; pass each to ``PluginManager.add_hookspecs``.
MODULES: tuple[ModuleType, ...] = (tools, llm, session, gateway, boot, health, registration)

#: The 14 lifecycle hooks every Hermes plugin author knows about.
LIFECYCLE_HOOKS: tuple[str, ...] = (
    "pre_tool_call",
    "post_tool_call",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "transform_terminal_output",
    "transform_tool_result",
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "subagent_stop",
    "on_memory_write",
)

#: Further event hooks kept for compatibility with existing Hermes plugins.
COMPAT_HOOKS: tuple[str, ...] = (
    "transform_llm_output",
    "subagent_start",
    "api_request_error",
    "pre_gateway_dispatch",
    "pre_approval_request",
    "post_approval_response",
    "pre_verify",
    "kanban_task_claimed",
    "kanban_task_completed",
    "kanban_task_blocked",
)

#: Events of the kernel itself, the questions it (and a plugin's ``ctx``) asks the plugin
#: owning the answer, and the one ``hermes doctor`` asks every plugin.
KERNEL_HOOKS: tuple[str, ...] = ("on_plugins_loaded", "on_shutdown", "plugin_install_times",
                                 "find_slot_provider", "inject_message", "platform_adapter",
                                 "doctor_checks")

#: Every event hook (``ctx.register_hook`` accepts exactly these names).
EVENT_HOOKS: tuple[str, ...] = LIFECYCLE_HOOKS + COMPAT_HOOKS + KERNEL_HOOKS

#: Collector hooks that take a single ``register`` callable.
REGISTRATION_HOOKS: tuple[str, ...] = (
    "register_tools",
    "register_toolsets",
    "register_cli_commands",
    "register_slash_commands",
    "register_skills",
    "register_providers",
)

#: Hooks that are specified but never fired by this version, with the reason.
NOT_FIRED: dict[str, str] = {
    "pre_verify": "Not fired by this version: there are no verification nudges yet.",
    "kanban_task_claimed": "Not fired by this version: there is no kanban board yet.",
    "kanban_task_completed": "Not fired by this version: there is no kanban board yet.",
    "kanban_task_blocked": "Not fired by this version: there is no kanban board yet.",
}

#: How the results of each hook are combined (applied by :mod:`.results`):
#:
#: ``broadcast``           every callback runs, return values are ignored;
#: ``veto``                the first valid block/approve directive wins;
#: ``context``             all non-empty strings / ``{"context": str}`` are joined;
#: ``first_str``           the first ``str`` (empty counts) replaces the value;
#: ``first_nonempty_str``  the first non-empty ``str`` replaces the value;
#: ``gateway_directive``   the first skip/rewrite/allow directive wins;
#: ``verify_directive``    the first continue/block directive with a message wins;
#: ``first_result``        the first result that is not ``None`` wins;
#: ``gather``              every callback runs, the lists they return are joined;
#: ``collector``           every plugin registers through a bound ``register`` callable.
DISPATCH: dict[str, str] = {
    "pre_tool_call": "veto",
    "post_tool_call": "broadcast",
    "transform_tool_result": "first_str",
    "transform_terminal_output": "first_str",
    "pre_llm_call": "context",
    "post_llm_call": "broadcast",
    "transform_llm_output": "first_nonempty_str",
    "pre_api_request": "broadcast",
    "post_api_request": "broadcast",
    "api_request_error": "broadcast",
    "on_session_start": "broadcast",
    "on_session_end": "broadcast",
    "on_session_finalize": "broadcast",
    "on_session_reset": "broadcast",
    "subagent_start": "broadcast",
    "subagent_stop": "broadcast",
    "on_memory_write": "broadcast",
    "pre_gateway_dispatch": "gateway_directive",
    "pre_approval_request": "broadcast",
    "post_approval_response": "broadcast",
    "pre_verify": "verify_directive",
    "kanban_task_claimed": "broadcast",
    "kanban_task_completed": "broadcast",
    "kanban_task_blocked": "broadcast",
    "on_plugins_loaded": "broadcast",
    "on_shutdown": "broadcast",
    "plugin_install_times": "first_result",
    "find_slot_provider": "first_result",
    "inject_message": "first_result",
    "platform_adapter": "first_result",
    "doctor_checks": "gather",
    **{name: "collector" for name in REGISTRATION_HOOKS},
}

_SPEC_ATTR = PROJECT_NAME + "_spec"


def _spec_index() -> dict[str, FunctionType]:
    index: dict[str, FunctionType] = {}
    for module in MODULES:
        for name, obj in vars(module).items():
            if isinstance(obj, FunctionType) and hasattr(obj, _SPEC_ATTR):
                index[name] = obj
    return index


_SPECS: dict[str, FunctionType] = _spec_index()


def spec_function(name: str) -> FunctionType:
    """Return the hookspec function called ``name``; raise ``KeyError`` if unknown."""
    try:
        return _SPECS[name]
    except KeyError:
        known = ", ".join(sorted(_SPECS))
        raise KeyError(f"unknown hook {name!r}; known hooks: {known}") from None


_ARGUMENTS: dict[str, tuple[str, ...]] = {}


def hook_arguments(name: str) -> tuple[str, ...]:
    """Return the argument names of hook ``name``, in the spec's order (cached)."""
    if name not in _ARGUMENTS:
        import inspect  # deferred: keeps ``import hermes_agent.hookspecs`` cheap

        _ARGUMENTS[name] = tuple(inspect.signature(spec_function(name)).parameters)
    return _ARGUMENTS[name]
