"""What keeping secrets from the model costs: building the environment of an agent command,
masking URLs in a message, and one whole terminal tool call.

The kernel has the builtin plugins and the bundled model providers loaded (their ``key_env``
names are withheld) and a $HERMES_HOME/.env of 20 variables. Reported: median and p95 of
``command_env(kernel)``, of ``mask_secrets`` on a provider error message (with and without a
URL), and of a terminal call ``true`` alongside the same command run by a bare
``subprocess.run`` (the floor the tool cannot go under), alternating call by call.

    .venv/bin/python benchmarks/bench_secrets.py [--calls 2000] [--terminal-calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_agent import Kernel
from hermes_agent.api import ToolCallContext
from hermes_agent.kits.secrets import command_env, mask_secrets

ERROR_WITH_URL = ("custom (m): Connection error. [network]. Fix: cannot reach "
                  "http://alice:pw@127.0.0.1:9/v1?api_key=k; check the network, the base_url "
                  "and that the server is running")
ERROR_PLAIN = "openrouter (m): HTTP 429: slow down [rate_limit]. Fix: wait and retry"


def timed_us(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1e6


def summary(label: str, samples: list[float], unit: str = "us") -> dict[str, float]:
    samples = sorted(samples)
    row = {"p50": statistics.median(samples), "p95": samples[int(len(samples) * 0.95) - 1]}
    scale = 1000 if unit == "ms" else 1
    print(f"{label:<46} p50 {row['p50'] / scale:9.2f} {unit}   p95 {row['p95'] / scale:9.2f} {unit}")
    return row


def measure(fn: Callable[[], Any], calls: int) -> list[float]:
    for _ in range(min(50, calls)):
        fn()
    return [timed_us(fn) for _ in range(calls)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--terminal-calls", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-secrets-"))
    (home / ".env").write_text("".join(f"BENCH_SECRET_{i}=value-{i}\n" for i in range(20)))
    os.environ["HERMES_HOME"] = str(home)
    kernel = Kernel(home, entry_points=False).boot()
    results = {
        "command_env": summary("command_env(kernel)", measure(lambda: command_env(kernel), args.calls)),
        "mask_error_with_url": summary("mask_secrets(error with a URL)", measure(
            lambda: mask_secrets(ERROR_WITH_URL), args.calls)),
        "mask_error_plain": summary("mask_secrets(error without a URL)", measure(
            lambda: mask_secrets(ERROR_PLAIN), args.calls)),
    }
    work = home / "work"
    work.mkdir()
    call = ToolCallContext(session_id="bench", cwd=work)
    tool_us, bare_us = [], []
    for _ in range(args.terminal_calls):
        tool_us.append(timed_us(lambda: json.loads(kernel.tools.dispatch(
            "terminal", {"command": "true"}, context=call))))
        bare_us.append(timed_us(lambda: subprocess.run(["bash", "-c", "true"], cwd=work,
                                                       env=dict(os.environ), check=True)))
    results["terminal_call"] = summary("terminal tool call `true`", tool_us, "ms")
    results["bare_subprocess"] = summary("bare subprocess.run bash -c true", bare_us, "ms")
    kernel.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
