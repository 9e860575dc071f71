#!/usr/bin/env python3
"""Session-store benchmark: our SqliteSessionStore vs hermes_state.SessionDB of hermes-agent
0.19.0, on the same generated corpus (see _session_corpus.py).

    .venv/bin/python benchmarks/bench_sessions.py --count 100000 --big 1000000 --json out.json

Measures: append throughput over ``--count`` messages per 10k block (does it decline as the file
grows?), the worst append, stalls over 100 ms; size on disk; search p50/p95 by query kind at
``--count`` and (with ``--big``) at ``--big`` messages; list_sessions_rich over the sessions of
the corpus (20 messages each: 5,000 at 100k); ``--writers`` concurrent writer processes of
``--writer-count`` messages each (wall time, worst append); crafted queries (an attacker's:
hundreds of short prefixes, long CJK OR chains) at ``--count`` messages, each while another
thread of the same process appends (query time, worst append during it). The original runs in
a throwaway virtualenv made under --workdir (``pip install hermes-agent==0.19.0``) unless
--original-python is given. Each phase runs in a fresh process of the implementation's own
interpreter.

Fairness on a shared machine: the implementation that goes first alternates from phase to
phase, and searches run in ``--rounds`` rounds (each a fresh process per implementation with
every ``rounds``-th query, the order swapping every round), pooled into one p50/p95. The
--only-big table also gives the searching thread's CPU time per query (p50/p95), which the
load of a shared machine barely moves.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
WORKER = HERE / "_sessions_worker.py"
IMPLS = ("original", "ours")


def order(step: int) -> tuple[str, ...]:
    """Both implementations, the first one alternating with ``step``."""
    return IMPLS if step % 2 == 0 else IMPLS[::-1]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def original_python(workdir: Path, given: str | None) -> str:
    if given:
        return given
    venv = workdir / "venv-hermes-agent-0.19.0"
    python = venv / "bin" / "python"
    if not python.exists():
        log(f"creating {venv} with hermes-agent==0.19.0 from PyPI")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "hermes-agent==0.19.0"],
                       check=True)
    return str(python)


class Runner:
    def __init__(self, pythons: dict[str, str], workdir: Path):
        self.pythons = pythons
        self.workdir = workdir
        self.env = {**os.environ, "HERMES_HOME": str(workdir / "home")}

    def db(self, impl: str, name: str) -> Path:
        return self.workdir / f"{impl}-{name}.db"

    def fresh(self, impl: str, name: str) -> Path:
        path = self.db(impl, name)
        for suffix in ("", "-wal", "-shm", "-lock", "-checked"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return path

    def spawn(self, impl: str, phase: str, path: Path, opts: dict[str, Any]) -> subprocess.Popen[str]:
        return subprocess.Popen([self.pythons[impl], str(WORKER), impl, phase, str(path),
                                 json.dumps(opts)], stdout=subprocess.PIPE, text=True,
                                env=self.env, cwd=str(self.workdir))

    def run(self, impl: str, phase: str, path: Path, opts: dict[str, Any]) -> dict[str, Any]:
        log(f"{impl}: {phase} {opts}")
        proc = self.spawn(impl, phase, path, opts)
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{impl} {phase} failed (exit {proc.returncode})")
        return json.loads(out.strip().splitlines()[-1])

    def writers(self, impl: str, n: int, count: int) -> dict[str, Any]:
        path = self.fresh(impl, "writers")
        self.run(impl, "init", path, {})
        start_at = time.time() + 3.0
        log(f"{impl}: {n} concurrent writers x {count}")
        procs = [self.spawn(impl, "writer", path, {"seed": 100 + i, "count": count,
                                                     "wait_until": start_at}) for i in range(n)]
        results = []
        for proc in procs:
            out, _ = proc.communicate()
            results.append(json.loads(out.strip().splitlines()[-1]))
        wall = max(r["started"] + r["wall_s"] for r in results) - min(r["started"] for r in results)
        return {"wall_s": wall, "worst_ms": max(r["worst_ms"] for r in results),
                "p99_ms": max(r["p99_ms"] for r in results),
                "errors": sum(r["errors"] for r in results)}

    def searches(self, name: str, queries: int, rounds: int) -> dict[str, dict[str, Any]]:
        """Search p50/p95 per kind for both implementations, interleaved round by round."""
        from _sessions_worker import summarise

        raw: dict[str, dict[str, Any]] = {impl: {} for impl in IMPLS}
        for r in range(rounds):
            for impl in order(r):
                part = self.run(impl, "search", self.db(impl, name),
                                {"queries": queries, "round": r, "rounds": rounds})
                for kind, v in part.items():
                    slot = raw[impl].setdefault(kind, {"times": [], "cpu": [], "hits": []})
                    for key in slot:
                        slot[key] += v[key]
        return {impl: summarise(raw[impl]) for impl in IMPLS}


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    o, u = res["original"], res["ours"]
    lines = []

    def row(label: str, a: float, b: float, unit: str, ratio: bool = True) -> None:
        r = f"{b / a:7.2f}x" if ratio and a else ""
        lines.append(f"{label:<40} {a:12.2f} {b:12.2f} {unit:<8} {r}")

    lines.append(f"{'':<40} {'original':>12} {'ours':>12} {'':<8} ours/orig")
    ao, au = o["append"], u["append"]
    row(f"append rate over {args.count} msgs", ao["rate"], au["rate"], "msg/s")
    row(f"  first block of {min(10000, args.count // 10)}", ao["rate_by_block"][0], au["rate_by_block"][0], "msg/s")
    row("  last block", ao["rate_by_block"][-1], au["rate_by_block"][-1], "msg/s")
    row("  p50 append", ao["p50_ms"], au["p50_ms"], "ms")
    row("  p99 append", ao["p99_ms"], au["p99_ms"], "ms")
    row("  worst append", ao["worst_ms"], au["worst_ms"], "ms")
    row("  appends over 50 ms", ao["over_50ms"], au["over_50ms"], "count", False)
    row("  share of time in stalls > 100 ms", ao["stall_share"] * 100, au["stall_share"] * 100,
        "%", False)
    row("size on disk per message", ao["size_bytes"] / args.count / 1024,
        au["size_bytes"] / args.count / 1024, "KiB")
    row("size on disk / text", ao["size_bytes"] / ao["text_bytes"],
        au["size_bytes"] / au["text_bytes"], "x")
    for label, key in ((f"search at {args.count}", "search"), (f"search at {args.big}", "big")):
        if key not in o:
            continue
        for kind in o[key]:
            row(f"{label}: {kind} p50", o[key][kind]["p50_ms"], u[key][kind]["p50_ms"], "ms")
            row(f"{label}: {kind} p95", o[key][kind]["p95_ms"], u[key][kind]["p95_ms"], "ms")
        worst_o = max(v["p95_ms"] for v in o[key].values())
        worst_u = max(v["p95_ms"] for v in u[key].values())
        row(f"{label}: worst p95 of any kind", worst_o, worst_u, "ms")
    if "crafted" in o:
        for name in u["crafted"]:
            co, cu = o["crafted"][name], u["crafted"][name]
            row(f"crafted: {name}", co["query_ms"], cu["query_ms"], "ms")
            row("  worst append during it", co["worst_append_ms"], cu["worst_append_ms"], "ms")
            row("  appends completed during it", co["appends_during"], cu["appends_during"],
                "count", False)
    row(f"list_sessions_rich ({ao['sessions']} sessions) p50", o["rich"]["p50_ms"],
        u["rich"]["p50_ms"], "ms")
    row("list_sessions_rich p95", o["rich"]["p95_ms"], u["rich"]["p95_ms"], "ms")
    wo, wu = o["writers"], u["writers"]
    row(f"{args.writers} writers x {args.writer_count}: wall", wo["wall_s"], wu["wall_s"], "s")
    row("  worst append", wo["worst_ms"], wu["worst_ms"], "ms")
    row("  failed appends", wo["errors"], wu["errors"], "count", False)
    if "big_build" in o:
        row(f"bulk build of {args.big} (then FTS optimize)", o["big_build"]["build_s"],
            u["big_build"]["build_s"], "s")
        row(f"  size per message at {args.big}", o["big_build"]["size_bytes"] / args.big / 1024,
            u["big_build"]["size_bytes"] / args.big / 1024, "KiB")
    return "\n".join(lines)


def report_big(res: dict[str, Any], args: argparse.Namespace) -> str:
    """The --only-big table: search p50/p95 per kind and the crafted queries."""
    o, u = res["original"], res["ours"]
    lines = [f"{'':<44} {'original':>10} {'ours':>10}  ours/orig"]
    for kind in o["big"]:
        for q in ("p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms"):
            a, b = o["big"][kind].get(q, 0.0), u["big"][kind].get(q, 0.0)
            lines.append(f"search at {args.big}: {kind} {q[:-3].replace('_', ' '):<8}".ljust(44)
                         + f" {a:10.2f} {b:10.2f}  {b / a if a else 0:7.2f}x")
    for name in u.get("big_crafted", {}):
        co, cu = o["big_crafted"][name], u["big_crafted"][name]
        lines.append(f"crafted: {name}"[:44].ljust(44)
                     + f" {co['query_ms']:10.1f} {cu['query_ms']:10.1f}  ms {cu['error']}")
        lines.append("  worst append during it".ljust(44)
                     + f" {co['worst_append_ms']:10.1f} {cu['worst_append_ms']:10.1f}  ms")
        lines.append("  appends completed during it".ljust(44)
                     + f" {co['appends_during']:10d} {cu['appends_during']:10d}")
    return "\n".join(lines)


def build_big(runner: Runner, res: dict[str, Any], args: argparse.Namespace) -> None:
    for impl in order(0):
        path = runner.fresh(impl, "big")
        res[impl]["big_build"] = runner.run(impl, "bulk", path, {"count": args.big})
    for impl, found in runner.searches("big", args.queries, args.rounds).items():
        res[impl]["big"] = found
    if args.crafted:
        for impl in order(1):  # last: it appends to the database
            res[impl]["big_crafted"] = runner.run(impl, "crafted", runner.db(impl, "big"), {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100000)
    parser.add_argument("--big", type=int, default=0, help="also search at this size (0: skip)")
    parser.add_argument("--queries", type=int, default=40, help="queries per kind")
    parser.add_argument("--rounds", type=int, default=4,
                        help="search rounds, implementations alternating")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--writer-count", type=int, default=2000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hermes-bench-sessions"))
    parser.add_argument("--original-python")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only-big", action="store_true",
                        help="run only the --big build and search (results go to --json)")
    parser.add_argument("--crafted", action="store_true",
                        help="with --only-big: also the crafted queries at --big messages")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    runner = Runner({"original": original_python(args.workdir, args.original_python),
                     "ours": sys.executable}, args.workdir)
    res: dict[str, Any] = {impl: {} for impl in IMPLS}
    if args.only_big:
        build_big(runner, res, args)
        print(report_big(res, args))
        if args.json:
            args.json.write_text(json.dumps({"results": res}, indent=2))
        return
    for impl in order(0):
        path = runner.fresh(impl, "main")
        res[impl]["append"] = runner.run(impl, "append", path, {"count": args.count})
    for impl, found in runner.searches("main", args.queries, args.rounds).items():
        res[impl]["search"] = found
    for impl in order(1):
        res[impl]["rich"] = runner.run(impl, "rich", runner.db(impl, "main"), {
            "sessions": res[impl]["append"]["sessions"]})
    for impl in order(0):  # last on the main db: it appends to it
        res[impl]["crafted"] = runner.run(impl, "crafted", runner.db(impl, "main"), {})
    for impl in order(1):
        res[impl]["writers"] = runner.writers(impl, args.writers, args.writer_count)
    if args.big:
        build_big(runner, res, args)
    text = report(res, args)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"workdir": str(args.workdir),
                                                              "json": str(args.json)},
                                         "results": res, "report": text}, indent=2))
    if shutil.which("nproc"):
        log(f"cores: {os.cpu_count()}, load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
