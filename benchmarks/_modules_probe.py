"""Run a CLI entry point in-process, then record which modules it imported.

Usage (run with the implementation's own interpreter, by the driver)::

    python _modules_probe.py OUT.json MODULE:FUNC [CLI ARGS...]

Imports ``MODULE``, calls ``FUNC()`` with ``sys.argv = ["hermes", *ARGS]``,
swallows its ``SystemExit``, and writes ``sorted(sys.modules)`` to OUT.json.
It imports nothing beyond what the interpreter already has before the entry
point runs (``json`` is imported only afterwards), so the module list is the
CLI's own.
"""

from __future__ import annotations

import importlib
import sys


def main() -> int:
    out_path, entry_point, *cli_args = sys.argv[1:]
    module_name, _, func_name = entry_point.partition(":")
    sys.argv = ["hermes", *cli_args]
    exit_code: object = 0
    error: str | None = None
    try:
        func = getattr(importlib.import_module(module_name), func_name)
        exit_code = func()
    except SystemExit as exc:
        exit_code = exc.code
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        exit_code, error = 1, f"{type(exc).__name__}: {exc}"
    modules = sorted(sys.modules)
    import json  # after the CLI ran: must not pollute the module list

    if exit_code is not None and not isinstance(exit_code, int):
        exit_code, error = 1, str(exit_code)  # sys.exit("message")
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump({"exit_code": exit_code or 0, "error": error, "modules": modules}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
