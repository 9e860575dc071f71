"""Builtin plugins: the product's own capabilities, loaded through the same public API as
third-party plugins. Each sub-package has a plugin.yaml.

Nothing here is imported at start-up except these tables.
"""

# Builtin plugins that plugins.disabled cannot turn off.
ESSENTIAL: frozenset[str] = frozenset({"plugin-admin"})

# Commands of builtin plugins, resolved lazily so `hermes --help` imports none of them.
# name -> ("module:attribute", short help)
CLI_COMMANDS: dict[str, tuple[str, str]] = {
    "plugins": ("hermes_agent.builtin_plugins.plugin_admin.plugins_cmd:plugins",
                "List, inspect, enable and disable plugins."),
    "config": ("hermes_agent.builtin_plugins.plugin_admin.config_cmd:config",
               "Show, read and change config.yaml."),
    "tools": ("hermes_agent.builtin_plugins.plugin_admin.tools_cmd:tools",
              "List tools and toolsets."),
    "model": ("hermes_agent.builtin_plugins.models.model_cmd:model",
              "Show, list and switch model providers and models."),
    "setup": ("hermes_agent.builtin_plugins.models.setup_cmd:setup",
              "First-run wizard: provider, API key, model, test call."),
    "chat": ("hermes_agent.builtin_plugins.agent.chat.command:chat",
             "Chat with the agent (also `hermes` alone); -q asks once."),
    "sessions": ("hermes_agent.builtin_plugins.sessions.cli:sessions",
                 "List, show, search, export, import and prune stored sessions."),
}

# config.yaml keys owned by builtin plugins, validated with the rest of the file:
# key -> "module:attribute" (a pydantic section model, or a (type, default) pair).
_CORE = "hermes_agent.builtin_plugins.core_tools.config_schema"
_AGENT = "hermes_agent.builtin_plugins.agent.config_schema"
_MODELS = "hermes_agent.builtin_plugins.models.config_schema"
CONFIG_SECTIONS: dict[str, str] = {
    "model": f"{_MODELS}:model_key",
    "fallback_providers": f"{_MODELS}:fallback_providers",
    "auxiliary": f"{_MODELS}:auxiliary",
    "approvals": f"{_CORE}:ApprovalsSection",
    "command_allowlist": f"{_CORE}:command_allowlist",
    "terminal": f"{_CORE}:TerminalSection",
    "tool_output": f"{_CORE}:ToolOutputSection",
    "agent": f"{_AGENT}:AgentSection",
    "delegation": f"{_AGENT}:DelegationSection",
    "context_file_max_chars": f"{_AGENT}:context_file_max_chars",
}

# Names of builtin plugins that the `hermes_agent` facade re-exports for plugin authors:
# name -> module under builtin_plugins (imported only when the name is first used).
PUBLIC_API: dict[str, str] = {
    "ProviderProfile": "models.types", "ChatRequest": "models.types",
    "ChatResponse": "models.types", "ToolCall": "models.types", "Usage": "models.types",
    "Cost": "models.types", "StreamEvent": "models.types", "CancelToken": "models.types",
    "ModelProvider": "models.types",
    "RuntimeProvider": "models.runtime",
    "ModelClient": "models.client", "CallContext": "models.client",
    "resolve_provider": "models.resolve",
    "RetryPolicy": "models.retry",
    "ProviderError": "models.errors", "RequestInterrupted": "models.errors",
    "NoProviderError": "models.errors", "PartialStreamError": "models.errors",
    "estimate_cost": "models.pricing",
    "call_llm": "models.auxiliary",
    "Agent": "agent.loop", "AgentOptions": "agent.loop", "TurnResult": "agent.loop",
    "prompt_layers": "agent.layers", "LayerRequest": "agent.layers",
    "SessionStore": "sessions.interface", "SessionStoreError": "sessions.interface",
    "TitleConflictError": "sessions.interface", "session_store": "sessions.interface",
    "SqliteSessionStore": "sessions.store",
    "MemoryProvider": "legacy_api.bases", "ContextEngine": "legacy_api.bases",
    "WebSearchProvider": "legacy_api.bases",
    "set_interrupted": "legacy_api.helpers",
    "approval_gate": "core_tools.approval",
    "set_env_values": "plugin_admin.envfile",
}
