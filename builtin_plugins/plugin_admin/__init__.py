"""Builtin plugin: plugin, config and tool administration.

Its CLI commands are declared in its plugin.yaml (``cli_commands:``, resolved
lazily, so ``hermes --help`` imports nothing); at run time it adds the ``/plugins`` slash
command and keeps the load ledger (``on_plugins_loaded``, and ``kernel.fault_listeners`` for
plugins unloaded while running) through the same ``register(ctx)`` API third-party plugins use.
"""


def doctor_checks(kernel, config, offline, **_):
    """``hermes doctor``: broken, failed or quarantined plugins, with their fixes."""
    from .doctor_checks import plugin_findings

    return plugin_findings(kernel)


def register(ctx):
    def show_plugins(raw_args: str) -> str:
        from .listing import format_slash_listing

        return format_slash_listing(ctx.kernel)

    from hermes_agent.api import PLUGIN_HEALTH

    from .inactive import PluginHealth
    from .install_order import InstallTimes
    from .ledger import record_fault, record_outcomes

    def record(plugins, home, **_):
        record_outcomes(plugins, home, tools=ctx.kernel.tools)

    ctx.register_service(PLUGIN_HEALTH, PluginHealth)
    ctx.register_hook("plugin_install_times", InstallTimes(ctx.kernel))  # the kernel's load order
    ctx.register_command("plugins", show_plugins, description="Show plugins and their state")
    ctx.register_hook("on_plugins_loaded", record)
    ctx.register_hook("doctor_checks", doctor_checks)
    home = ctx.kernel.home
    ctx.kernel.fault_listeners.append(lambda status: record_fault(status, home))
