"""The kernel of one ``hermes`` run, kept on the root click context (``ctx.obj``): built on
first use, closed when the root context closes. Commands (builtin or a plugin's) reach it
through :func:`hermes_agent.kits.cli.cli_kernel`, which reads the root context's object.

A caller that drives the root itself gives the run its kernel through the factory::

    CliRunner().invoke(root, ["chat", "-q", "hi"], obj=RunKernel(lambda: make_kernel(home)))
    main(["chat", "-q", "hi"], kernel_factory=lambda: make_kernel(home))
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel

__all__ = ["RunKernel", "new_kernel"]


def new_kernel() -> "Kernel":
    """The default factory: a kernel for $HERMES_HOME (it applies $HERMES_HOME/.env), with
    what this process logs masked of URL credentials, and its warnings and errors kept in
    $HERMES_HOME/logs (rotated: kits/log_files.py)."""
    from hermes_agent import Kernel
    from hermes_agent.kits.log_files import install_file_logging
    from hermes_agent.kits.secrets import install_log_masking  # after the kernel (it imports logging)

    install_log_masking()
    kernel = Kernel()
    install_file_logging(kernel.home, kernel.env)
    return kernel


class RunKernel:
    """This run's kernel, built once by ``factory`` (default :func:`new_kernel`), and the
    warnings this run printed (each is printed once)."""

    def __init__(self, factory: Callable[[], "Kernel"] | None = None):
        self.factory = factory or new_kernel
        self._kernel: Kernel | None = None
        self._reported: set[str] = set()
        self.secret_file_notes: list[str] = []  # what tighten_secret_files said (hermes doctor)

    def kernel(self, boot: bool = True) -> "Kernel":
        """The kernel, built on first use; with ``boot``, every enabled plugin loaded."""
        if self._kernel is None:
            self._kernel = self.factory()
            self.report_config_warnings(self._kernel.config)
        if boot:
            self._kernel.boot()
        return self._kernel

    def reload(self) -> "Kernel":
        """Stop the kernel (its plugins get ``on_shutdown``) and boot a new one, e.g. after
        the configuration changed under it; the new one is closed with the run."""
        self.close()
        return self.kernel()

    def close(self) -> None:
        """Close the kernel, if one was built; the next use builds a new one."""
        kernel, self._kernel = self._kernel, None
        if kernel is not None:
            kernel.close()

    def report_config_warnings(self, config: Any) -> None:
        """Print config.yaml's warnings (misspelt or unknown keys, unset ${VAR}s) on stderr,
        each once per run, so a typo is never silently ignored."""
        self.report_warnings(config.startup_warnings)

    def report_warnings(self, warnings: list[str]) -> None:
        """Print each of ``warnings`` on stderr unless this run already did."""
        for warning in warnings:
            if warning not in self._reported:
                self._reported.add(warning)
                sys.stderr.write(f"warning: {warning}\n")

    def tighten_secret_files(self) -> None:
        """Make $HERMES_HOME/.env and auth.json private when others may read them, saying so
        (or, where that fails, what to run) once on stderr: one stat each."""
        from hermes_agent import hermes_home, tighten_secret_files

        self.secret_file_notes = tighten_secret_files(hermes_home())
        self.report_warnings(self.secret_file_notes)
