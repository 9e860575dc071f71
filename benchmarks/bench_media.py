#!/usr/bin/env python3
"""What voice and image generation cost when installed but unused: ``hermes chat -q`` against
a fake model (127.0.0.1) with the plugins ``voice``, ``image_gen`` and their providers
enabled (the default) and disabled (``plugins.disabled``), interleaved, after an untimed
warm-up round; plus the modules each side imports (none of the SDKs' audio or image code
loads until a tool runs). Target: no added time on ``chat -q`` (median difference within the
noise, < 20 ms), no added third-party module (the plugins' own small modules do load).

    .venv/bin/python benchmarks/bench_media.py --chats 15 --json out.json
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

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

MEDIA_PLUGINS = ["voice", "image_gen", "espeak", "openai-voice", "openai-images", "fal"]
PROBE = ("import sys, runpy; sys.argv = ['hermes', 'chat', '-q', 'hi']\n"
         "try:\n    runpy.run_module('hermes_agent.cli.root', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)")
OURS = ("hermes_agent", "hermes_plugins")  # our own small modules (the plugins' code)


def stats_ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_ms": statistics.median(ordered) * 1000,
            "p95_ms": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    hermes = str(Path(sys.executable).parent / "hermes")
    sides = {"enabled": "", "disabled": f"plugins:\n  disabled: {json.dumps(MEDIA_PLUGINS)}\n"}
    times: dict[str, list[float]] = {side: [] for side in sides}
    modules: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="hermes-bench-media-") as tmp, \
            FakeLLMServer() as server:
        envs = {}
        for side, extra in sides.items():
            home = Path(tmp) / side
            home.mkdir()
            (home / "config.yaml").write_text(
                f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
                "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n"
                + extra)
            envs[side] = {**{k: v for k, v in os.environ.items()
                             if not k.startswith(("HERMES_", "OPENAI_"))},
                          "HERMES_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost"}
        for rep in range(args.chats + 1):
            order = list(sides) if rep % 2 else list(reversed(sides))
            for side in order:
                server.script(reply_text("hello"))
                started = time.perf_counter()
                proc = subprocess.run([hermes, "chat", "-q", "hi"], env=envs[side],
                                      capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                      timeout=300)
                elapsed = time.perf_counter() - started
                if proc.returncode or "hello" not in proc.stdout:
                    raise RuntimeError(f"{side}: chat -q failed ({proc.returncode}): "
                                       f"{proc.stdout[-300:]} {proc.stderr[-800:]}")
                if rep:
                    times[side].append(elapsed)
        for side in sides:
            server.script(reply_text("hello"))
            proc = subprocess.run([sys.executable, "-c", PROBE], env=envs[side],
                                  capture_output=True, text=True, timeout=300)
            line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES")), "")
            modules[side] = set(line.split()[1:])
    result = {side: stats_ms(values) for side, values in times.items()}
    result["added_median_ms"] = result["enabled"]["median_ms"] - result["disabled"]["median_ms"]
    added = sorted(modules["enabled"] - modules["disabled"])
    foreign = [m for m in added if not m.startswith(OURS)]
    result["modules_added"] = {"ours": [m for m in added if m.startswith(OURS)],
                               "third_party": foreign}
    print("| chat -q | median ms | p95 ms |\n|---|---|---|")
    for side in sides:
        print(f"| media plugins {side} | {result[side]['median_ms']:.0f} | "
              f"{result[side]['p95_ms']:.0f} |")
    print(f"added by the media plugins: {result['added_median_ms']:+.0f} ms (median); modules "
          f"added: {len(added) - len(foreign)} of ours, third-party: {', '.join(foreign) or 'none'}")
    verdict = result["added_median_ms"] < 20 and not foreign
    print(f"target (no added time or module on chat -q): {'met' if verdict else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
