"""Builtin plugin: plugin, config and tool administration.

Its CLI commands are declared in ``hermes_agent.builtin_plugins.CLI_COMMANDS`` (resolved
lazily, so ``hermes --help`` imports nothing); at run time it adds the ``/plugins`` slash
command and keeps the load ledger (``on_plugins_loaded``) through the same ``register(ctx)``
API third-party plugins use.
"""


def register(ctx):
    def show_plugins(raw_args: str) -> str:
        from .listing import format_slash_listing

        return format_slash_listing(ctx.kernel)

    def record(plugins, home, **_):
        from .ledger import record_outcomes

        record_outcomes(plugins, home, tools=ctx.kernel.tools)

    ctx.register_command("plugins", show_plugins, description="Show plugins and their state")
    ctx.register_hook("on_plugins_loaded", record)
