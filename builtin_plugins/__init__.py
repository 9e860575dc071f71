"""Builtin plugins: the product's own capabilities, loaded through the same public API as
third-party plugins. Each sub-package has a plugin.yaml, which also declares what the kernel
needs without importing the plugin: ``essential``, ``cli_commands`` and ``config_sections``.
"""

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
    "ToolCallContext": "core_tools.context", "ApprovalRequest": "core_tools.context",
    "tool_kwargs": "core_tools.context",
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
