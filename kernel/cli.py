"""``hermes_agent.cli``: the entry point of the ``hermes`` command (``python -m hermes_agent.cli``).

The click root lives outside the kernel, in ``hermes_agent.builtin_plugins.cli_root``.
"""

import sys

from .builtin_plugins.cli_root import main, reload_runtime_kernel, root, runtime_kernel

__all__ = ["main", "reload_runtime_kernel", "root", "runtime_kernel"]

if __name__ == "__main__":
    sys.exit(main())
