"""Cost of one ``post_tool_call`` dispatch in hermes-agent 0.19.0.

Run with the ORIGINAL's interpreter (the driver does this)::

    /tmp/hermes-bench/venv-original/bin/python benchmarks/hook_dispatch_original.py

API used (hermes_cli/plugins.py in 0.19.0): ``PluginContext.register_hook``
appends the callback to ``PluginManager._hooks[hook_name]``, and
``PluginManager.invoke_hook(name, **kwargs)`` calls every callback in a
try/except, after ``kwargs.setdefault("telemetry_schema_version", ...)``.
Each listener is registered through its own ``PluginContext``, the way
plugins do it; no discovery runs.
"""

from __future__ import annotations

from hermes_cli.plugins import PluginContext, PluginManager, PluginManifest

from _hook_timing import (
    DISPATCH_KWARGS_SRC,
    HOOK_NAME,
    emit,
    make_listeners,
    parse_args,
    time_dispatch,
)


def main() -> None:
    options = parse_args()
    manager = PluginManager()
    for index, listener in enumerate(make_listeners(options.listeners), 1):
        context = PluginContext(PluginManifest(name=f"p{index:02d}"), manager)
        context.register_hook(HOOK_NAME, listener)
    stmt = f'manager.invoke_hook("{HOOK_NAME}", {DISPATCH_KWARGS_SRC})'
    result = time_dispatch(
        stmt,
        {"manager": manager},
        listeners=options.listeners,
        batches=options.batches,
        min_batch_seconds=options.min_batch_seconds,
    )
    result["implementation"] = "original"
    emit(result)


if __name__ == "__main__":
    main()
