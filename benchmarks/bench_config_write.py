"""What a config.yaml write costs now that it keeps the user's comments (ruamel.yaml
round-trip), and that reading the file stays where it was.

Reported: p50 and p95 of one ``write_config_value`` in-process (ruamel already imported, the
validation cache warm), of a cold ``hermes config set`` and ``hermes config get`` (a new
process each: the write pays the ruamel import, the read must not), on a commented
config.yaml of about 60 lines.

    .venv/bin/python benchmarks/bench_config_write.py [--calls 200] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_agent import write_config_value

CONFIG = "".join(
    f"# section {n}: what it is for\n"
    f"agent_{n}:\n  enabled: true   # on by default\n  items:\n    - one\n    - two\n"
    for n in range(8)
).replace("agent_", "display_") + (
    "model:\n  provider: custom  # the local server\n  base_url: http://127.0.0.1:9/v1\n"
    "  default: small-model\nplugins:\n  enabled:\n    - calculator  # math\n")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def report(label: str, samples: list[float]) -> None:
    p50, p95 = percentiles(samples)
    print(f"{label:<44} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   (n={len(samples)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-config-"))
    (home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    env = {**os.environ, "HERMES_HOME": str(home)}
    hermes = str(Path(sys.executable).parent / "hermes")

    samples = []
    for n in range(args.calls):
        started = time.perf_counter()
        write_config_value(home, "model.default", f"model-{n % 2}")
        samples.append((time.perf_counter() - started) * 1000)
    report("write_config_value (in-process)", samples)
    assert "# the local server" in (home / "config.yaml").read_text()

    for label, argv in (("hermes config set (new process)", ["config", "set", "model.default", "m"]),
                        ("hermes config get (new process)", ["config", "get", "model.default"])):
        subprocess.run([hermes, *argv], env=env, check=True, capture_output=True)  # warm caches
        samples = []
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run([hermes, *argv], env=env, check=True, capture_output=True)
            samples.append((time.perf_counter() - started) * 1000)
        report(label, samples)


if __name__ == "__main__":
    main()
