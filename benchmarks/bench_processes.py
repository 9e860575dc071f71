#!/usr/bin/env python3
"""The cost of watching a background process: ``process`` calls through
``kernel.tools.dispatch``, as the agent's loop makes them, on a real sandboxed process.

    .venv/bin/python benchmarks/bench_processes.py --calls 500 --json out.json

1. ``poll`` of an idle process (nothing new: the fixed cost of a call);
2. ``poll`` of a chatty one (a process printing a line every millisecond: each poll carries
   the lines since the last, up to the output bound);
3. ``list`` with 20 processes running;
4. the start of a background process (``terminal`` with ``background: true``: approval gate,
   sandbox policy, spawn), a ``sleep``, so the 0.3 s glance at its first output runs in full
   and is subtracted.
Target: median ``poll`` under 1 ms, p95 under 5 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import hermes_agent.builtin_plugins.core_tools as core_tools
from hermes_agent.api import ToolCallContext
from hermes_agent.builtin_plugins.core_tools.process_tool import START_GLANCE
from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism
from hermes_agent.testing import make_kernel

PYTHON = sys.executable


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def stats_ms(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values) * 1000, 3),
            "p95_ms": round(pct(values, 0.95) * 1000, 3), "n": len(values)}


def timed(call: Any, args: dict[str, Any], calls: int, pause: float = 0.0) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call(args)
        times.append(time.perf_counter() - started)
        if pause:
            time.sleep(pause)
    return times


def run(calls: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="hermes-bench-proc-"))
    work = root / "work"
    work.mkdir()
    kernel = make_kernel(root / "home")
    kernel.register_plugin(core_tools, "core-tools")
    context = ToolCallContext(session_id="bench", cwd=work)

    def tool(name: str) -> Any:
        return lambda args: json.loads(kernel.tools.dispatch(name, args, context=context))

    terminal, process = tool("terminal"), tool("process")
    starts = []
    for _ in range(10):
        began = time.perf_counter()
        idle = terminal({"command": "sleep 600", "background": True})
        starts.append(time.perf_counter() - began - START_GLANCE)
    chatty = terminal({"background": True, "command": (
        f"{PYTHON} -u -c \"import time\nwhile True: print('line', time.time()); "
        "time.sleep(0.001)\"")})
    for _ in range(10):
        terminal({"command": "sleep 600", "background": True})
    results = {
        "mechanism": mechanism().name,
        "poll_idle": stats_ms(timed(process, {"action": "poll", "session_id": idle["session_id"]},
                                    calls)),
        "poll_chatty": stats_ms(timed(process, {"action": "poll",
                                                "session_id": chatty["session_id"]},
                                      calls, pause=0.005)),
        "list_20": stats_ms(timed(process, {"action": "list"}, max(calls // 5, 20))),
        "start_background": stats_ms(starts),
    }
    kernel.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    results = run(options.calls)
    for name, value in results.items():
        print(f"{name}: {value}")
    if options.json:
        options.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
