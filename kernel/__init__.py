"""hermes_agent: the public API for plugin authors and embedders.

Everything a plugin needs is importable from here. Names are loaded lazily (PEP 562), so
``import hermes_agent`` stays cheap for the CLI.
"""

from ._version import __version__

# name -> module (relative to this package); the builtin plugins' public names come from
# their own table, builtin_plugins.PUBLIC_API, so the kernel names none of their modules.
_EXPORTS = {
    # markers
    "hookimpl": "hookspecs.markers", "hookspec": "hookspecs.markers",
    # kernel
    "Kernel": "kernel", "PluginStatus": "kernel", "PluginContext": "context",
    "Config": "config", "load_config": "config", "hermes_home": "config",
    "write_config_value": "config", "read_env_file": "config", "runtime_kernel": "cli",
    "decide": "policy", "Decision": "policy", "truthy": "policy", "load_filter": "policy",
    "selected_by_slot": "policy", "DEFAULT_ON_KINDS": "policy",
    "inactive_plugins": "health", "Inactive": "health",
    "Manifest": "manifest", "EnvRequirement": "manifest", "read_manifest": "manifest",
    "PluginRecord": "discovery", "Discovery": "discovery", "discover": "discovery",
    "reraise_shutdown": "containment", "UserInterrupt": "containment",
    "HookBus": "hooks", "tool_directive": "hookspecs.results", "join_context": "hookspecs.results",
    "write_atomic": "vcache", "private_dir": "private",
    "mask_url": "redact", "mask_secrets": "redact",
    "SecretMaskingFilter": "redact", "install_log_masking": "redact",
    "command_env": "command_env", "secret_env_names": "command_env",
    "ToolRegistry": "tools", "tool_result": "tools", "tool_error": "tools",
    "ToolSpec": "registration", "ToolsetSpec": "registration", "Registration": "registration",
    "SLOTS": "registration", "Slots": "slots", "SLOT_INFO": "slots",
    # errors
    "HermesError": "errors", "ConfigError": "errors", "ManifestError": "errors",
    "PluginError": "errors", "SlotError": "errors", "ToolError": "errors",
}

from .builtin_plugins import PUBLIC_API  # noqa: E402  (a table; imports no plugin)

_EXPORTS.update({name: f"builtin_plugins.{module}" for name, module in PUBLIC_API.items()})
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
