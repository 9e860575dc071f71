"""Typed errors. Each message states what went wrong and how to fix it.

The CLI turns them into one clear message at the edge; library callers can catch them.
"""

from __future__ import annotations


class HermesError(Exception):
    """Base class of every error the kernel raises on purpose."""


class ConfigError(HermesError):
    """config.yaml (or a value written to it) is invalid.

    ``problems`` holds ``location: message`` lines.
    """

    def __init__(self, message: str, problems: list[str] | None = None, path: str | None = None):
        self.problems = problems or []
        self.path = path
        lines = [message, *(f"  {p}" for p in self.problems)]
        super().__init__("\n".join(lines))


class ManifestError(HermesError):
    """A plugin.yaml is missing, malformed or invalid."""

    def __init__(self, path: str, problems: list[str], code: str = "manifest_invalid"):
        self.path, self.code = path, code  # code: "manifest_invalid" or "incompatible"
        self.problems = problems
        detail = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"invalid plugin manifest {path}:\n{detail}")


class PluginError(HermesError):
    """A plugin could not be loaded or registered. Names the plugin (and the other one, on clashes)."""

    def __init__(self, plugin: str, message: str, *, hook: str | None = None, code: str = "",
                 clash: dict[str, str] | None = None):
        self.plugin = plugin
        self.hook = hook
        self.code = code  # machine-readable cause, e.g. "import_error" (PluginStatus.code)
        self.clash = clash or {}  # a name clash: kind, name, kept_by, lost_by
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
