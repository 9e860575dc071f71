"""hermes_agent: the public API for plugin authors and embedders.

Everything a plugin needs is importable from here. Names are loaded lazily (PEP 562), so
``import hermes_agent`` stays cheap for the CLI.
"""

from ._version import __version__

_EXPORTS = {
    # markers
    "hookimpl": "hookspecs.markers", "hookspec": "hookspecs.markers",
    # kernel
    "Kernel": "kernel", "PluginStatus": "kernel", "PluginContext": "context",
    "Config": "config", "load_config": "config", "hermes_home": "config",
    "write_config_value": "config", "read_env_file": "config", "runtime_kernel": "cli",
    "decide": "policy", "Decision": "policy", "truthy": "policy", "load_filter": "policy",
    "selected_by_slot": "policy", "DEFAULT_ON_KINDS": "policy",
    "Manifest": "manifest", "EnvRequirement": "manifest", "read_manifest": "manifest",
    "PluginRecord": "discovery", "Discovery": "discovery", "discover": "discovery",
    "HookBus": "hooks", "tool_directive": "hookspecs.results", "join_context": "hookspecs.results",
    "write_atomic": "vcache",
    "ToolRegistry": "tools", "tool_result": "tools", "tool_error": "tools",
    "ToolSpec": "registration", "ToolsetSpec": "registration", "Registration": "registration",
    "SLOTS": "registration", "Slots": "slots", "SLOT_INFO": "slots",
    # model providers
    "ProviderProfile": "builtin_plugins.models.types", "ChatRequest": "builtin_plugins.models.types",
    "ChatResponse": "builtin_plugins.models.types", "ToolCall": "builtin_plugins.models.types",
    "Usage": "builtin_plugins.models.types", "Cost": "builtin_plugins.models.types",
    "StreamEvent": "builtin_plugins.models.types", "CancelToken": "builtin_plugins.models.types",
    "ModelProvider": "builtin_plugins.models.types", "RuntimeProvider": "builtin_plugins.models.runtime",
    "ModelClient": "builtin_plugins.models.client", "CallContext": "builtin_plugins.models.client",
    "resolve_provider": "builtin_plugins.models.resolve", "RetryPolicy": "builtin_plugins.models.retry",
    "ProviderError": "builtin_plugins.models.errors", "RequestInterrupted": "builtin_plugins.models.errors",
    "NoProviderError": "builtin_plugins.models.errors", "estimate_cost": "builtin_plugins.models.pricing",
    "PartialStreamError": "builtin_plugins.models.errors",
    "call_llm": "builtin_plugins.models.auxiliary",
    # the agent loop
    "Agent": "builtin_plugins.agent.loop", "AgentOptions": "builtin_plugins.agent.loop",
    "TurnResult": "builtin_plugins.agent.loop",
    # agent: tool-call context and system-prompt layers
    "ToolCallContext": "builtin_plugins.core_tools.context",
    "ApprovalRequest": "builtin_plugins.core_tools.context",
    "tool_kwargs": "builtin_plugins.core_tools.context",
    "prompt_layers": "builtin_plugins.agent.layers", "LayerRequest": "builtin_plugins.agent.layers",
    # session store slot
    "SessionStore": "builtin_plugins.sessions.interface",
    "SessionStoreError": "builtin_plugins.sessions.interface",
    "TitleConflictError": "builtin_plugins.sessions.interface",
    "session_store": "builtin_plugins.sessions.interface",
    "SqliteSessionStore": "builtin_plugins.sessions.store",
    # slot provider base classes and helpers (also served under 0.19's module paths)
    "MemoryProvider": "builtin_plugins.legacy_api.bases",
    "ContextEngine": "builtin_plugins.legacy_api.bases",
    "WebSearchProvider": "builtin_plugins.legacy_api.bases",
    "set_interrupted": "builtin_plugins.legacy_api.helpers",
    "approval_gate": "builtin_plugins.core_tools.approval",
    "set_env_values": "builtin_plugins.plugin_admin.envfile",
    # errors
    "HermesError": "errors", "ConfigError": "errors", "ManifestError": "errors",
    "PluginError": "errors", "SlotError": "errors", "ToolError": "errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_agent' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
