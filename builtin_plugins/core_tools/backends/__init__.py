"""Where the terminal's commands run: ``terminal.backend`` (or the original's ``TERMINAL_ENV``).

``local`` (the default) is the terminal's own path (:func:`..terminal.run_command`, with its
sandbox); it has no object here. ``ssh`` runs each command on a host the user names
(:mod:`.ssh`). The original's container backends (docker, modal, singularity, daytona) are
refused with an error, never run locally instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .ssh import SSHBackend, SSHError, SSHSettings

if TYPE_CHECKING:
    from hermes_agent import Kernel

__all__ = ["SSHBackend", "SSHError", "SSHSettings", "backend_name", "remote_backend"]

BACKENDS = ("local", "ssh")


def backend_name(kernel: "Kernel") -> str:
    """``terminal.backend``, else ``TERMINAL_ENV``, else ``local``."""
    name = kernel.config.get("terminal.backend") or kernel.env.get("TERMINAL_ENV") or "local"
    name = str(name).strip().lower()
    if name not in BACKENDS:
        raise SSHError(f"terminal backend {name!r} is not available in this version (it has "
                       f"{' and '.join(BACKENDS)}): set terminal.backend in config.yaml (or "
                       "TERMINAL_ENV) to local or ssh.")
    return name


def remote_backend(kernel: "Kernel") -> SSHBackend | None:
    """The backend the terminal runs its commands through, or None for ``local``."""
    if backend_name(kernel) == "ssh":
        return SSHBackend(SSHSettings.from_kernel(kernel))
    return None
