"""The kernel of a ``hermes`` command run: built on first use, one per run. The CLI root owns
it; commands (builtin or a plugin's) reach it through ``hermes_agent.api.cli_kernel()``, which
reads the root click context's :class:`~.cli_root.KernelAccess`.
"""

from __future__ import annotations

import sys
from typing import Any

_kernel: Any = None
_reported: set[str] = set()


def runtime_kernel(boot: bool = True) -> Any:
    """The kernel for this process (built once; it applies $HERMES_HOME/.env)."""
    global _kernel
    if _kernel is None:
        from hermes_agent import Kernel
        from hermes_agent.kits.secrets import install_log_masking  # after the kernel (logging)

        install_log_masking()  # what this process logs has URL credentials masked
        _kernel = Kernel()
        report_config_warnings(_kernel.config)
    if boot:
        _kernel.boot()
    return _kernel


def reload_runtime_kernel() -> Any:
    """Stop this process's kernel (its plugins get ``on_shutdown``) and boot a new one, e.g.
    after the configuration changed under it; the new one is closed at exit."""
    close_runtime_kernel()
    return runtime_kernel()


def close_runtime_kernel() -> None:
    """Close this process's kernel, if one was built; the next use builds a new one."""
    global _kernel
    if _kernel is not None:
        _kernel.close()
        _kernel = None


def forget_runtime_kernel() -> None:
    """Start afresh (a new command run in the same process): no kernel, no warnings shown."""
    global _kernel
    _kernel = None
    _reported.clear()


def tighten_secret_files() -> None:
    """At the start of every command: make $HERMES_HOME/.env and auth.json private when
    others may read them, saying so (or, where that fails, what to run) once on stderr."""
    from ..home import hermes_home, tighten_secret_files as tighten

    report_warnings(tighten(hermes_home()))


def report_config_warnings(config: Any) -> None:
    """Print config.yaml's warnings (misspelt or unknown keys, unset ${VAR}s) on stderr, each
    once per command, so a typo is never silently ignored."""
    report_warnings(config.startup_warnings)


def report_warnings(warnings: list[str]) -> None:
    """Print each of ``warnings`` on stderr unless this command already did."""
    for warning in warnings:
        if warning not in _reported:
            _reported.add(warning)
            sys.stderr.write(f"warning: {warning}\n")
