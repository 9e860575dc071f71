"""Gathering the findings: every loaded plugin's ``doctor_checks``, called plugin by plugin so
what one returns or raises is its own (a check that raises is a warning naming the plugin,
and the others still run). Without a kernel (config.yaml invalid) only the checks of the
home itself run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ConfigError
from hermes_agent.api import Finding

from .config_checks import invalid_config
from .home_checks import home_findings

if TYPE_CHECKING:
    from hermes_agent import Kernel

HOOK = "doctor_checks"


def from_kernel(kernel: "Kernel", offline: bool) -> list[Finding]:
    """The findings of every plugin implementing ``doctor_checks``, in load order."""
    plugins = list(dict.fromkeys(callback.plugin for callback in kernel.hooks.callbacks(HOOK)))
    findings: list[Finding] = []
    for plugin in plugins:
        failed = kernel.hooks.errors.get(plugin, 0)
        results = kernel.hooks.call_plugin(HOOK, plugin, kernel=kernel, config=kernel.config,
                                           offline=offline)
        if kernel.hooks.errors.get(plugin, 0) > failed:
            status = kernel.plugins.get(plugin)
            unloaded = (" (it tried to stop hermes and was unloaded)"
                        if status is not None and status.state == "failed" else "")
            findings.append(Finding(f"plugin {plugin}", "warn", f"the doctor checks of plugin "
                                    f"{plugin!r} raised an error{unloaded}, so its part was "
                                    "not checked",
                                    f"run `HERMES_TRACE_HOOKS=1 hermes doctor` to see it; "
                                    f"update or disable the plugin: hermes plugins disable {plugin}"))
        for item in _joined(results):
            findings.append(item if isinstance(item, Finding) else Finding(
                f"plugin {plugin}", "warn", f"its doctor checks returned {type(item).__name__}, "
                "not a hermes_agent.api.Finding", "ask its author to return Findings"))
    return findings


def _joined(results: list[Any]) -> list[Any]:
    """The hook's rule (gather; plugins do not import hookspecs): lists joined, a single
    value counts as one."""
    return [item for result in results
            for item in (result if isinstance(result, (list, tuple)) else [result])]


def without_kernel(home: Path, env: Mapping[str, str], error: ConfigError,
                   notes: list[str]) -> list[Finding]:
    """config.yaml is invalid: say so, and check what needs no plugin."""
    path = error.path or Path(home) / "config.yaml"
    return [invalid_config(path, error.problems, str(error)), *home_findings(home, env, notes)]
