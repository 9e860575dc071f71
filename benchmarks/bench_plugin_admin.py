"""Plugin administration without loading plugins vs with a real load, and the dependency walk
of `hermes plugins remove`.

Each CLI case runs as a fresh subprocess of this interpreter's `hermes` (``--repeat`` times,
the two variants interleaved) against one temporary HERMES_HOME holding the seed calculator
plugin (enabled) and a load ledger from one earlier `hermes plugins list --load`. The walk is
timed in-process: building the requirement graph of every installed distribution and finding
what only one of them needs. Prints medians and p95 in milliseconds; stdlib only.

    python benchmarks/bench_plugin_admin.py [--repeat 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES = {  # name -> (default argv, argv with a real load)
    "tools list": (["tools", "list", "--json"], ["tools", "list", "--json", "--load"]),
    "plugins doctor": (["plugins", "doctor", "--json"], ["plugins", "doctor", "--json", "--load"]),
}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values) * 1000, "p95_ms": p95(values) * 1000}


def run_cli(hermes: str, argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([hermes, *argv], env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # doctor exits 1 when an enabled plugin is not active
        raise SystemExit(f"hermes {' '.join(argv)} failed:\n{proc.stderr}")
    return elapsed


def bench_cli(repeat: int) -> dict[str, dict[str, dict[str, float]]]:
    hermes = str(Path(sys.executable).parent / "hermes")
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-admin-"))
    try:
        shutil.copytree(REPO / "tests" / "fixtures" / "calculator", home / "plugins" / "calculator")
        (home / "config.yaml").write_text("plugins:\n  enabled: [calculator]\n")
        env = {**os.environ, "HERMES_HOME": str(home)}
        run_cli(hermes, ["plugins", "list", "--load"], env)  # writes the ledger
        results = {}
        for case, (plain, loading) in CASES.items():
            times: dict[str, list[float]] = {"default": [], "--load": []}
            for index in range(repeat):
                order = [("default", plain), ("--load", loading)]
                for label, argv in order if index % 2 == 0 else order[::-1]:
                    times[label].append(run_cli(hermes, argv, env))
            results[case] = {label: summary(values) for label, values in times.items()}
        return results
    finally:
        shutil.rmtree(home, ignore_errors=True)


def bench_walk(repeat: int) -> dict[str, float]:
    from hermes_agent.builtin_plugins.plugin_admin.orphans import orphaned_dependencies

    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        orphaned_dependencies(["pytest"])
        times.append(time.perf_counter() - started)
    return summary(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {"cli": bench_cli(args.repeat), "dependency walk": bench_walk(args.repeat)}
    for case, variants in results["cli"].items():
        for label, figures in variants.items():
            print(f"{case:16} {label:8} median {figures['median_ms']:7.1f} ms  "
                  f"p95 {figures['p95_ms']:7.1f} ms")
    walk = results["dependency walk"]
    print(f"{'dependency walk':25} median {walk['median_ms']:7.1f} ms  p95 {walk['p95_ms']:7.1f} ms")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
