#!/usr/bin/env python3
"""The OS sandbox's cost: a ``terminal`` call sandboxed under each mechanism this machine has
(``sandbox.mechanism: bubblewrap`` and ``landlock``, ``sandbox.mode: workspace``) against the
same call unconfined (``sandbox.mode: off``), and ``hermes chat -q`` whose model runs one
command, with each mechanism and without the sandbox.

    .venv/bin/python benchmarks/bench_sandbox.py --calls 300 --chats 8 --json out.json

1. Terminal calls go through ``kernel.tools.dispatch`` exactly as the agent's loop does
   (approval gate, environment, capture, JSON), interleaved: each repetition runs every
   kernel, rotating which goes first; a mechanism's added latency is the difference to the
   unconfined call of the same repetition. Target: median added < 15 ms.
2. ``chat -q``: a fake model (127.0.0.1) asks for ``terminal`` once, then answers; the sides
   run in rotation, after one untimed warm-up round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_agent.builtin_plugins.core_tools.sandbox.runner import mechanism
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

COMMAND = "echo hi > out.txt && cat out.txt"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def stats_ms(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values) * 1000, "p95_ms": pct(values, 0.95) * 1000,
            "min_ms": min(values) * 1000}


def sandbox_config(side: str) -> dict[str, Any]:
    """``off``, or a mechanism's name: that mechanism in ``sandbox.mode: workspace``."""
    return {"mode": "off"} if side == "off" else {"mode": "workspace", "mechanism": side}


def rotated(sides: list[str], rep: int) -> list[str]:
    shift = rep % len(sides)
    return sides[shift:] + sides[:shift]


def terminal_calls(root: Path, calls: int, mechanisms: list[str]) -> dict[str, Any]:
    import hermes_agent.builtin_plugins.core_tools as core_tools

    work = root / "user" / "proj"
    work.mkdir(parents=True)
    os.environ["HOME"] = str(root / "user")
    sides = [*mechanisms, "off"]
    kernels = {}
    for side in sides:
        kernel = make_kernel(root / f"hermes-{side}", config={"sandbox": sandbox_config(side)})
        kernel.register_plugin(core_tools, "core-tools")
        kernels[side] = kernel
    times: dict[str, list[float]] = {side: [] for side in sides}
    for rep in range(calls + 5):  # five warm-up rounds
        for side in rotated(sides, rep):
            started = time.perf_counter()
            out = json.loads(kernels[side].tools.dispatch("terminal", {"command": COMMAND},
                                                          cwd=str(work)))
            elapsed = time.perf_counter() - started
            if out.get("output") != "hi":
                raise RuntimeError(f"{side}: the command failed: {out}")
            if rep >= 5:
                times[side].append(elapsed)
    for kernel in kernels.values():
        kernel.close()
    result: dict[str, Any] = {"unconfined": stats_ms(times["off"]), "calls": calls}
    for side in mechanisms:
        added = [s - u for s, u in zip(times[side], times["off"])]
        result[side] = {"sandboxed": stats_ms(times[side]), "added": stats_ms(added)}
    return result


def chat_q(root: Path, chats: int, mechanisms: list[str]) -> dict[str, Any]:
    hermes = str(Path(sys.executable).parent / "hermes")
    times: dict[str, list[float]] = {side: [] for side in [*mechanisms, "off"]}
    with FakeLLMServer() as server:
        envs, works = {}, {}
        for mode in times:
            section = "".join(f"  {key}: {value}\n" for key, value in sandbox_config(mode).items())
            home = root / f"chat-{mode}"
            works[mode] = home / "user" / "proj"
            works[mode].mkdir(parents=True)
            (home / "hermes").mkdir()
            (home / "hermes" / "config.yaml").write_text(
                f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
                "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n"
                f"sandbox:\n{section}")
            envs[mode] = {**{k: v for k, v in os.environ.items()
                             if not k.startswith(("HERMES_", "OPENAI_"))},
                          "HOME": str(home / "user"), "HERMES_HOME": str(home / "hermes"),
                          "NO_PROXY": "127.0.0.1,localhost"}
        for rep in range(chats + 1):
            for mode in rotated(list(times), rep):
                server.script(reply_tool_call("terminal", {"command": COMMAND}),
                              reply_text("done"))
                started = time.perf_counter()
                proc = subprocess.run([hermes, "chat", "-q", "write it"], cwd=works[mode],
                                      env=envs[mode], capture_output=True, text=True,
                                      stdin=subprocess.DEVNULL, timeout=300)
                elapsed = time.perf_counter() - started
                if proc.returncode or "done" not in proc.stdout:
                    raise RuntimeError(f"{mode}: chat -q failed ({proc.returncode}): "
                                       f"{proc.stdout[-500:]} {proc.stderr[-1500:]}")
                if rep:
                    times[mode].append(elapsed)
    return {**{side: stats_ms(values) for side, values in times.items() if side != "off"},
            "unconfined": stats_ms(times["off"]), "chats": chats}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = {name: mechanism(wanted=name) for name in ("bubblewrap", "landlock")}
    mechanisms = [name for name, one in found.items() if one.works]
    for name, one in found.items():
        if not one.works:
            print(f"no {name} here (left out): {one.why_none}", file=sys.stderr)
    if not mechanisms:
        return 2
    result: dict[str, Any] = {"mechanisms": {name: found[name].version for name in mechanisms}}
    # outside /tmp: the sandbox's private /tmp would hide a home there
    with tempfile.TemporaryDirectory(prefix="hermes-bench-sbx-", dir="/var/tmp") as tmp:
        result["terminal"] = terminal_calls(Path(tmp) / "calls", args.calls, mechanisms)
        result["chat_q"] = chat_q(Path(tmp), args.chats, mechanisms)
    term, chat = result["terminal"], result["chat_q"]
    print("mechanisms: " + ", ".join(f"{name} ({version})"
                                     for name, version in result["mechanisms"].items()))
    rows = [("terminal call, unconfined", term["unconfined"])]
    for name in mechanisms:
        rows += [(f"terminal call, {name}", term[name]["sandboxed"]),
                 (f"added by {name} (paired)", term[name]["added"])]
    rows += [(f"chat -q with one command, {name}", chat[name]) for name in mechanisms]
    rows.append(("chat -q with one command, unconfined", chat["unconfined"]))
    print("| measure | median ms | p95 ms |\n|---|---|---|")
    for label, row in rows:
        print(f"| {label} | {row['median_ms']:.1f} | {row['p95_ms']:.1f} |")
    for name in mechanisms:
        verdict = "met" if term[name]["added"]["median_ms"] < 15 else "MISSED"
        print(f"target (median added < 15 ms), {name}: {verdict}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
