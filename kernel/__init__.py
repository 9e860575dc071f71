"""hermes_agent: the kernel's entry points for plugin authors and embedders (docs/api.md).

The shared contracts are in :mod:`hermes_agent.api`. Names load lazily (PEP 562), so
``import hermes_agent`` stays cheap for the CLI.
"""

from ._version import __version__

# name -> module of this package that defines it
_EXPORTS = {
    # writing plugins
    "hookimpl": "hookspecs.markers", "hookspec": "hookspecs.markers",
    "PluginContext": "context", "Manifest": "manifest", "EnvRequirement": "manifest",
    "read_manifest": "manifest_read", "find_manifest": "manifest", "MANIFEST_NAMES": "manifest",
    # the kernel, its plugins and slots
    "Kernel": "kernel", "PluginStatus": "records", "PluginRecord": "discovery",
    "ServiceKey": "service_keys",
    # tools a plugin adds to kernel.tools while hermes runs (kernel.tools.add / discard)
    "ToolSpec": "records", "ToolsetSpec": "records",
    # why a plugin loads or not (for administration commands)
    "Decision": "policy", "decide": "policy", "load_filter": "policy",
    "selected_by_slot": "policy", "DEFAULT_ON_KINDS": "policy",
    # stopping: what a plugin's code may raise, and how hermes tells a real Ctrl-C
    "UserInterrupt": "containment", "reraise_shutdown": "containment",
    # configuration
    "Config": "config", "load_config": "config", "hermes_home": "home",
    "read_env_file": "dotenv", "write_config_value": "config_write",
    # project trust (projects.trusted): whose folder's context files and plugins count as
    # the user's own
    "ProjectTrust": "trust",
    # plugins found without a kernel, for a surface's listings (the CLI's command table and
    # its cached help), and the home's validation cache they are read through
    "discover": "discovery", "discovery_inputs": "discovery", "resolve": "loader",
    "ValidationCache": "home", "tighten_secret_files": "home",
    # files under $HERMES_HOME: private folders (0700) and atomic writes; caches kept there
    # are sealed with a key outside it, so an edited one is not believed (docs/cache.md)
    "private_dir": "home", "write_atomic": "home",
    "seal_json": "seal", "unseal_json": "seal", "cache_key_path": "seal",
    # errors
    "HermesError": "errors", "ConfigError": "errors", "ManifestError": "errors",
    "PluginError": "errors", "SlotError": "errors", "ToolError": "errors",
    "ServiceError": "errors",
}
__all__ = ["__version__", "api", *sorted(_EXPORTS)]


def __getattr__(name: str) -> object:
    import importlib

    if name == "api":
        return importlib.import_module(f"{__name__}.api")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_agent' has no attribute {name!r}; the shared "
                             "contracts are in hermes_agent.api (docs/api.md)")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
