#!/usr/bin/env python3
"""Danger-detection benchmark: time per command of the parsing detector
(``core_tools/danger``) over the benign and the attack corpus of
tests/core_tools/danger_corpus.py, and, for comparison, of the regex detector it replaced
(loaded from git history), with how many commands each one flags.

    .venv/bin/python benchmarks/bench_danger.py --repeat 30 --json out.json

Every call is timed on its own (the detector's result cache is bypassed); the table gives
the median, p95 and maximum per call in microseconds. ``--fold`` also times the detector
comparing names case-folded (as on macOS and Windows). ``--old-rev`` names the commit whose
``approval.py`` holds the regex detector (default: the parent of the commit that added the
danger package); ``--no-old`` skips it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "core_tools"))

from danger_corpus import ATTACKS, BENIGN  # noqa: E402

from hermes_agent.builtin_plugins.core_tools.danger import verdict  # noqa: E402

CWD = "/work/project"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ours(fold: bool | None = None) -> Callable[[str], tuple[str, ...]]:
    """The detector; ``fold``: judge names ignoring case (None: as this system does)."""
    uncached = getattr(verdict._analyse, "__wrapped__", verdict._analyse)  # never cached now
    if fold is None:
        return lambda command: uncached(command, CWD, "/root", None)
    return lambda command: uncached(command, CWD, "/root", None, fold)


def old_detector(rev: str | None) -> Callable[[str], tuple[str, ...]] | None:
    """The regex detector of ``approval.py`` at ``rev``, or None when git cannot give it."""
    git = ["git", "-C", str(REPO)]
    if rev is None:
        added = subprocess.run(
            [*git, "log", "--diff-filter=A", "--format=%H", "--",
             "builtin_plugins/core_tools/danger/__init__.py"],
            capture_output=True, text=True).stdout.split()
        if not added:
            return None
        rev = added[-1] + "^"
    shown = subprocess.run([*git, "show", f"{rev}:builtin_plugins/core_tools/approval.py"],
                           capture_output=True, text=True)
    if shown.returncode != 0 or "DANGEROUS" not in shown.stdout:
        return None
    source = shown.stdout[:shown.stdout.index("@dataclass\nclass Verdict")]
    source = source.replace(
        "from .context import APPROVAL_CHOICES, ApprovalRequest, ToolCallContext", "")
    module = types.ModuleType("approval_regex")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{rev}:approval.py", "exec"), module.__dict__)

    def detect(command: str) -> tuple[str, ...]:
        found = (module.hardline(command), module.dangerous(command))
        return tuple(k for f in found if f is not None for k in f.keys)

    return detect


def measure(detect: Callable[[str], tuple[str, ...]], commands: list[str],
            repeat: int) -> dict[str, Any]:
    samples: list[float] = []
    for _ in range(repeat):
        for command in commands:
            started = time.perf_counter_ns()
            detect(command)
            samples.append((time.perf_counter_ns() - started) / 1000)
    samples.sort()
    flagged = sum(1 for c in commands if detect(c))
    return {"commands": len(commands), "flagged": flagged, "calls": len(samples),
            "median_us": statistics.median(samples),
            "p95_us": samples[int(0.95 * (len(samples) - 1))], "max_us": samples[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="passes over each corpus")
    parser.add_argument("--old-rev", default=None)
    parser.add_argument("--no-old", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--fold", action="store_true",
                        help="also time the detector with names compared ignoring case "
                             "(as on macOS and Windows)")
    options = parser.parse_args()
    corpora = {"benign": list(BENIGN),
               "attacks": [c for commands in ATTACKS.values() for c in commands]}
    detectors: dict[str, Callable[[str], tuple[str, ...]]] = {"ours (parser)": ours()}
    if options.fold:
        detectors["ours (case folded)"] = ours(fold=True)
    if not options.no_old:
        old = old_detector(options.old_rev)
        if old is None:
            log("the regex detector is not in git history here; skipping it")
        else:
            detectors["regex (before)"] = old
    results: dict[str, dict[str, Any]] = {}
    for name, detect in detectors.items():
        for corpus, commands in corpora.items():
            for command in commands[:20]:  # warm up imports and regex caches
                detect(command)
            log(f"{name}: {corpus} ({len(commands)} commands x {options.repeat})")
            results[f"{name} / {corpus}"] = measure(detect, commands, options.repeat)
    print(f"{'detector / corpus':<28} {'cmds':>5} {'flagged':>8} {'median us':>10} "
          f"{'p95 us':>9} {'max us':>9}")
    for label, r in results.items():
        print(f"{label:<28} {r['commands']:>5} {r['flagged']:>8} {r['median_us']:>10.1f} "
              f"{r['p95_us']:>9.1f} {r['max_us']:>9.1f}")
    if options.json:
        options.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
