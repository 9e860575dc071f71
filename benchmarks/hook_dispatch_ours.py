"""Cost of one ``post_tool_call`` dispatch in our kernel (hermes_agent).

Run with OUR interpreter (the driver does this)::

    /tmp/hermes-bench/venv-ours/bin/python benchmarks/hook_dispatch_ours.py

API used: ``hermes_agent.testing.make_kernel()`` builds a kernel;
``kernel.hooks.add_callback(hook, fn, plugin=...)`` adds one listener per
plugin name (registered in the kernel's pluggy plugin manager, the way
``ctx.register_hook`` callbacks are), and ``kernel.hooks.call(hook, **kwargs)``
dispatches to what pluggy holds.
"""

from __future__ import annotations

from hermes_agent.testing import make_kernel

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
    kernel = make_kernel()
    for index, listener in enumerate(make_listeners(options.listeners), 1):
        kernel.hooks.add_callback(HOOK_NAME, listener, plugin=f"p{index:02d}")
    stmt = f'hooks.call("{HOOK_NAME}", {DISPATCH_KWARGS_SRC})'
    result = time_dispatch(
        stmt,
        {"hooks": kernel.hooks},
        listeners=options.listeners,
        batches=options.batches,
        min_batch_seconds=options.min_batch_seconds,
    )
    result["implementation"] = "ours"
    emit(result)


if __name__ == "__main__":
    main()
