"""One hook dispatch, this tree against an earlier commit, in ONE interpreter.

Run with OUR interpreter (the one with this tree installed)::

    .venv/bin/python benchmarks/bench_hook_ab.py --base main

The earlier commit's package is taken out of git (``git archive``), laid out as
its pyproject maps the folders, under another name (``hermes_base``), so both
kernels live in the same process. Each builds the ``hook_dispatch_ours.py``
setup (20 ``post_tool_call`` listeners through ``kernel.hooks.add_callback``;
bundled plugins left out) and the two are timed in alternating small batches,
so the machine's noise falls on both alike. The figure is the median of the
paired ratios (this / base). Stdlib only.
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import timeit
import tomllib
from pathlib import Path
from types import ModuleType

import _hook_timing
from _hook_timing import DISPATCH_KWARGS_SRC, HOOK_NAME, make_listeners

REPO = Path(__file__).resolve().parent.parent
BASE = "hermes_base"


def extract(ref: str, into: Path) -> None:
    """Lay out ``ref``'s ``hermes_agent`` package as ``into/hermes_base``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True,
                             check=True).stdout
    src = into / "src"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="data")
    folders = tomllib.loads((src / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(folders.items()):  # parents before sub-packages
        target = into / package.replace("hermes_agent", BASE, 1).replace(".", "/")
        shutil.copytree(src / folder, target, dirs_exist_ok=True)


def bus(testing: ModuleType) -> object:
    # No bundled plugins: the earlier tree's would import today's hermes_agent (none of
    # them listens to post_tool_call, so the dispatch is the same).
    kernel = testing.make_kernel(env={"HERMES_LOAD_PLUGINS": ""})
    for index, listener in enumerate(make_listeners(20), 1):
        kernel.hooks.add_callback(HOOK_NAME, listener, plugin=f"p{index:02d}")
    _hook_timing._TRACE = []
    kernel.hooks.call(HOOK_NAME, tool_name="t", args={}, result="{}", task_id="x")
    reached, _hook_timing._TRACE = len(_hook_timing._TRACE), None
    if reached != 20:
        raise SystemExit(f"{testing.__name__}: the check dispatch reached {reached} listeners")
    return kernel.hooks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git ref to compare with")
    parser.add_argument("--pairs", type=int, default=61)
    parser.add_argument("--number", type=int, default=2000, help="dispatches per batch")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hook-ab-") as tmp:
        extract(args.base, Path(tmp))
        sys.path.insert(0, tmp)
        import hermes_agent.testing as this
        base = __import__(f"{BASE}.testing", fromlist=["make_kernel"])
        stmt = f'hooks.call("{HOOK_NAME}", {DISPATCH_KWARGS_SRC})'
        timers = {"base": timeit.Timer(stmt, globals={"hooks": bus(base)}),
                  "this": timeit.Timer(stmt, globals={"hooks": bus(this)})}
        for timer in timers.values():
            timer.timeit(args.number)  # warm up
        micros: dict[str, list[float]] = {key: [] for key in timers}
        ratios = []
        for pair in range(args.pairs):
            for key in (("base", "this") if pair % 2 == 0 else ("this", "base")):
                micros[key].append(timers[key].timeit(args.number) / args.number * 1e6)
            ratios.append(micros["this"][-1] / micros["base"][-1])
    for key, values in micros.items():
        print(f"{key}: median {statistics.median(values):.2f} us, min {min(values):.2f} us")
    print(f"this / {args.base}: {statistics.median(ratios):.3f} (median of {args.pairs} paired "
          f"ratios of {args.number} dispatches each)")


if __name__ == "__main__":
    main()
