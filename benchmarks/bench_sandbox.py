#!/usr/bin/env python3
"""The OS sandbox's cost: a ``terminal`` call sandboxed (bubblewrap, ``sandbox.mode:
workspace``) against the same call unconfined (``sandbox.mode: off``), and ``hermes chat -q``
whose model runs one command, with and without the sandbox.

    .venv/bin/python benchmarks/bench_sandbox.py --calls 300 --chats 8 --json out.json

1. Terminal calls go through ``kernel.tools.dispatch`` exactly as the agent's loop does
   (approval gate, environment, capture, JSON), interleaved: each repetition runs both
   kernels, alternating which goes first; the added latency is the per-pair difference.
   Target: median added < 15 ms.
2. ``chat -q``: a fake model (127.0.0.1) asks for ``terminal`` once, then answers; each side
   runs alternately, after one untimed warm-up.
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


def terminal_calls(root: Path, calls: int) -> dict[str, Any]:
    import hermes_agent.builtin_plugins.core_tools as core_tools

    work = root / "user" / "proj"
    work.mkdir(parents=True)
    os.environ["HOME"] = str(root / "user")
    kernels = {}
    for mode in ("workspace", "off"):
        kernel = make_kernel(root / f"hermes-{mode}", config={"sandbox": {"mode": mode}})
        kernel.register_plugin(core_tools, "core-tools")
        kernels[mode] = kernel
    times: dict[str, list[float]] = {"workspace": [], "off": []}
    for rep in range(calls + 5):  # five warm-up pairs
        order = ("workspace", "off") if rep % 2 else ("off", "workspace")
        for mode in order:
            started = time.perf_counter()
            out = json.loads(kernels[mode].tools.dispatch("terminal", {"command": COMMAND},
                                                          cwd=str(work)))
            elapsed = time.perf_counter() - started
            if out.get("output") != "hi":
                raise RuntimeError(f"{mode}: the command failed: {out}")
            if rep >= 5:
                times[mode].append(elapsed)
    for kernel in kernels.values():
        kernel.close()
    added = [s - u for s, u in zip(times["workspace"], times["off"])]
    return {"sandboxed": stats_ms(times["workspace"]), "unconfined": stats_ms(times["off"]),
            "added": stats_ms(added), "calls": calls}


def chat_q(root: Path, chats: int) -> dict[str, Any]:
    hermes = str(Path(sys.executable).parent / "hermes")
    times: dict[str, list[float]] = {"workspace": [], "off": []}
    with FakeLLMServer() as server:
        envs, works = {}, {}
        for mode in times:
            home = root / f"chat-{mode}"
            works[mode] = home / "user" / "proj"
            works[mode].mkdir(parents=True)
            (home / "hermes").mkdir()
            (home / "hermes" / "config.yaml").write_text(
                f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
                "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n"
                f"sandbox:\n  mode: {mode}\n")
            envs[mode] = {**{k: v for k, v in os.environ.items()
                             if not k.startswith(("HERMES_", "OPENAI_"))},
                          "HOME": str(home / "user"), "HERMES_HOME": str(home / "hermes"),
                          "NO_PROXY": "127.0.0.1,localhost"}
        for rep in range(chats + 1):
            for mode in (("workspace", "off") if rep % 2 else ("off", "workspace")):
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
    return {"sandboxed": stats_ms(times["workspace"]), "unconfined": stats_ms(times["off"]),
            "chats": chats}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = mechanism()
    if not found.works:
        print(f"no sandbox mechanism here: {found.why_none}", file=sys.stderr)
        return 2
    result: dict[str, Any] = {"mechanism": f"{found.name} {found.version}"}
    # outside /tmp: the sandbox's private /tmp would hide a home there
    with tempfile.TemporaryDirectory(prefix="hermes-bench-sbx-", dir="/var/tmp") as tmp:
        result["terminal"] = terminal_calls(Path(tmp) / "calls", args.calls)
        result["chat_q"] = chat_q(Path(tmp), args.chats)
    term, chat = result["terminal"], result["chat_q"]
    print(f"mechanism: {result['mechanism']}")
    print("| measure | median ms | p95 ms |\n|---|---|---|")
    for label, row in (("terminal call, sandboxed", term["sandboxed"]),
                       ("terminal call, unconfined", term["unconfined"]),
                       ("added by the sandbox (paired)", term["added"]),
                       ("chat -q with one command, sandboxed", chat["sandboxed"]),
                       ("chat -q with one command, unconfined", chat["unconfined"])):
        print(f"| {label} | {row['median_ms']:.1f} | {row['p95_ms']:.1f} |")
    verdict = "met" if term["added"]["median_ms"] < 15 else "MISSED"
    print(f"target (median added < 15 ms): {verdict}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
