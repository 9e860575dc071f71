"""Builtin plugins: the product's own capabilities, loaded through the same public API as
third-party plugins. Each sub-package has a plugin.yaml.

Nothing here is imported at start-up except these two tables.
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
