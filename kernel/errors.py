"""Typed errors, each message saying what went wrong and how to fix it."""

from __future__ import annotations


class HermesError(Exception):
    """Base class of every error the kernel raises on purpose."""


class ConfigError(HermesError):
    """config.yaml (or a value written to it) is invalid; ``problems``: ``location: message``."""

    def __init__(self, message: str, problems: list[str] | None = None, path: str | None = None):
        self.problems = problems or []
        self.path = path
        super().__init__("\n".join([message, *(f"  {p}" for p in self.problems)]))


class ManifestError(HermesError):
    """A plugin.yaml is missing, malformed or invalid (``code``: or ``incompatible``)."""

    def __init__(self, path: str, problems: list[str], code: str = "manifest_invalid"):
        self.path, self.code = path, code
        self.problems = problems
        detail = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"invalid plugin manifest {path}:\n{detail}")


class PluginError(HermesError):
    """A plugin could not be loaded or registered; ``code`` is ``PluginStatus.code`` and
    ``clash`` (on a name clash) holds kind, name, kept_by and lost_by."""

    def __init__(self, plugin: str, message: str, *, hook: str | None = None, code: str = "",
                 clash: dict[str, str] | None = None):
        self.plugin = plugin
        self.hook = hook
        self.code = code
        self.clash = clash or {}
        super().__init__(message)


class SlotError(HermesError):
    """A provider slot's selection does not name an installed provider."""


class ToolError(HermesError):
    """A tool is unknown or cannot be registered."""


class ServiceError(HermesError, LookupError):
    """No loaded plugin offers the service asked for."""

    def __init__(self, name: str, booted: bool = True):
        self.service = name
        hint = ("the plugin that offers it is not loaded; `hermes plugins list` shows why "
                "(disabled, failed or not installed)") if booted else (
            "the kernel has not been booted yet; call kernel.boot() first")
        super().__init__(f"no plugin offers the service {name!r}: {hint}")
