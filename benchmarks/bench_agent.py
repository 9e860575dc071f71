"""Agent benchmark: our loop vs hermes-agent 0.19.0, both pointed at the same fake server.

Measures, in one run:
  1. per-turn wall time of sessions of 20 turns with 3 tool calls per turn and an instant model
     (the agent's own overhead: prompt, hooks, tools, persistence, HTTP to a local server);
     ``--sessions`` sessions per implementation, alternating which goes first;
  2. wall time of one `hermes chat -q` (process start to exit), interleaved: every repetition
     runs both, alternating which goes first; and the model requests and probing GETs each
     sends;
  3. the `import openai` floor of each interpreter, timed just before each `chat -q` run
     (paired, so the machine's drift affects both sides of the difference);
  4. prompt-cache reuse: the share of each request's bytes that is a byte-identical prefix of
     the previous request over our 20-turn session.

Fair to the original: same provider (a custom OpenAI-compatible endpoint), model and prompt
for both, one untimed warm-up run each, and the original configured as a careful user would
(``security.allow_lazy_installs: false``, so it does not try a `pip install` on every run; see
_bench_homes.configure_original).

    .venv/bin/python benchmarks/bench_agent.py [--runs 5] [--turns 20] [--sessions 2] [--no-original]

The original is installed once into a cached virtualenv (see _bench_env.py).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _bench_env import base_env, log, setup_original  # noqa: E402
from _bench_homes import configure_original  # noqa: E402

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_calls  # noqa: E402


def turn_replies(work: Path, turn: int) -> list[Any]:
    return [reply_tool_calls(("read_file", {"path": str(work / "a.txt")}),
                             ("search_files", {"pattern": "hello", "path": str(work)}),
                             ("read_file", {"path": str(work / "b.txt")})),
            reply_text(f"Answer {turn}: both files say hello.")]


def make_work(root: Path) -> Path:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "a.txt").write_text("hello from a\n" * 20)
    (work / "b.txt").write_text("hello from b\n" * 20)
    return work


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = base_env()
    env.update({"HOME": str(home / "user"), "HERMES_HOME": str(home / "hermes"),
                "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost", **extra})
    (home / "user").mkdir(parents=True, exist_ok=True)
    (home / "hermes").mkdir(parents=True, exist_ok=True)
    return env


def write_config(home: Path, server: FakeLLMServer, original: bool = False) -> None:
    """The same provider and model for both; the original also as a careful user sets it up."""
    (home / "hermes" / "config.yaml").write_text(
        f"model:\n  default: fake-model\n  provider: custom\n  base_url: {server.openai_base_url}\n")
    if original:
        configure_original(home / "hermes")


# --- 1. per-turn overhead ------------------------------------------------------------------
def ours_turns(root: Path, turns: int) -> tuple[list[float], list[dict[str, Any]]]:
    from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
    from hermes_agent.testing import make_kernel

    work = make_work(root)
    with FakeLLMServer() as server:
        env = env_for(root / "ours")
        write_config(root / "ours", server)
        with (root / "ours" / "hermes" / "config.yaml").open("a") as config:
            # no background title call: it would take a reply scripted for the loop
            config.write("sessions:\n  auto_title: false\n")
        kernel = make_kernel(Path(env["HERMES_HOME"]), env={"HERMES_HOME": env["HERMES_HOME"]},
                             builtins=True)
        agent = Agent(kernel, AgentOptions(toolsets=["file"], cwd=work))
        times = []
        for turn in range(turns):
            server.script(*turn_replies(work, turn))
            started = time.perf_counter()
            result = agent.run_conversation(f"turn {turn}: look at the files in {work}")
            times.append(time.perf_counter() - started)
            assert result.completed, result
        agent.finalize("shutdown")
        return times, [p.body for p in server.posts()]


def original_turns(python: Path, root: Path, turns: int) -> tuple[list[float], int]:
    work = make_work(root)
    with FakeLLMServer() as server:
        for turn in range(turns):
            server.script(*turn_replies(work, turn))
        env = env_for(root / "orig", OPENAI_API_KEY="x")
        configure_original(root / "orig" / "hermes")
        proc = subprocess.run([str(python), str(BENCH / "_agent_turns_original.py"),
                               server.openai_base_url, str(turns), str(work)],
                              env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(f"original turns failed:\n{proc.stderr[-2000:]}")
        gets = sum(1 for r in server.requests if r.method == "GET")
        return json.loads(proc.stdout.strip().splitlines()[-1]), gets


# --- 2. chat -q ------------------------------------------------------------------------------
@dataclass
class ChatQSide:
    """One implementation's ``hermes chat -q``: its command, home, interpreter (for the
    ``import openai`` floor) and extra environment."""

    key: str
    hermes: list[str]
    home: Path
    python: Path
    extra: dict[str, str] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    posts: int = 0
    gets: int = 0


def chat_q(sides: list[ChatQSide], runs: int) -> dict[str, Any]:
    """``hermes chat -q`` of every side, interleaved: each repetition runs every side once,
    alternating which goes first, so drift in the machine's load falls on all alike. Each run
    is paired with an ``import openai`` run of the same interpreter just before it. One warm-up
    repetition (pyc, first-run setup, config caches) is not timed."""
    with FakeLLMServer(default_reply=reply_text("pong")) as server:
        envs = {}
        for side in sides:
            envs[side.key] = env_for(side.home, **side.extra)
            write_config(side.home, server, original=side.key == "original")
        for run in range(runs + 1):
            for side in sides if run % 2 else list(reversed(sides)):
                floor = import_floor(side.python)
                before = len(server.requests)
                started = time.perf_counter()
                proc = subprocess.run([*side.hermes, "chat", "-q", "ping"], env=envs[side.key],
                                      capture_output=True, text=True, timeout=300)
                elapsed = time.perf_counter() - started
                if proc.returncode or "pong" not in proc.stdout:
                    raise RuntimeError(f"{side.key}: chat -q failed ({proc.returncode}):\n"
                                       f"{proc.stdout[-800:]}\n{proc.stderr[-1500:]}")
                if run == 0:
                    continue
                side.times.append(elapsed)
                side.floors.append(floor)
                new = server.requests[before:]
                side.posts += sum(1 for r in new if r.method == "POST")
                side.gets += sum(1 for r in new if r.method == "GET")
    return {side.key: {
        "median_s": statistics.median(side.times), "runs": side.times,
        "floor_runs": side.floors, "floor_median_s": statistics.median(side.floors),
        "over_floor_median_s": statistics.median(t - f for t, f in zip(side.times, side.floors)),
        "posts_per_run": side.posts / runs, "gets_per_run": side.gets / runs}
        for side in sides}


def import_floor(python: Path) -> float:
    """Wall time of one ``python -c "import openai"``."""
    started = time.perf_counter()
    subprocess.run([str(python), "-c", "import openai"], check=True, env=base_env())
    return time.perf_counter() - started


# --- 4. prompt-cache prefix --------------------------------------------------------------------
def prefix_stats(bodies: list[dict[str, Any]]) -> dict[str, float]:
    """Bytes of each request (after the first) that are a byte-identical prefix of the
    previous request (tools first, then messages, as providers cache them). ``session``: all
    such bytes over all bytes sent; ``breaks``: requests that changed an earlier byte."""
    def wire(body: dict[str, Any]) -> str:
        return json.dumps({"tools": body.get("tools"), "messages": body["messages"]},
                          ensure_ascii=False)

    texts = [wire(b) for b in bodies]
    shared = total = breaks = 0
    shares = []
    for before, after in zip(texts, texts[1:]):
        common = len(os.path.commonprefix([before, after]))
        breaks += common < len(before) - 2  # only the closing "]}" may differ
        shared, total = shared + common, total + len(after)
        shares.append(common / len(after))
    return {"session": shared / total, "min": min(shares), "breaks": breaks,
            "requests": len(texts)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=2,
                        help="sessions of --turns turns per implementation, interleaved")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "hermes-bench")
    parser.add_argument("--no-original", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    report: dict[str, Any] = {}
    try:
        args.workdir.mkdir(parents=True, exist_ok=True)
        original = None if args.no_original else setup_original(args.workdir, sys.executable)
        ours_times: list[float] = []
        orig_times: list[float] = []
        for session in range(args.sessions):  # alternate which implementation goes first
            order = ["ours", "original"] if session % 2 == 0 else ["original", "ours"]
            for key in order:
                if key == "ours":
                    times, bodies = ours_turns(root / f"t-ours-{session}", args.turns)
                    ours_times += times
                    report.setdefault("prefix", prefix_stats(bodies))
                elif original is not None:
                    times, gets = original_turns(original, root / f"t-orig-{session}", args.turns)
                    orig_times += times
                    report["original_session_gets"] = gets
        report["ours_turn_median_s"] = statistics.median(ours_times)
        report["ours_turns_s"] = ours_times
        if orig_times:
            report["original_turn_median_s"] = statistics.median(orig_times)
            report["original_turns_s"] = orig_times
        hermes = shutil.which("hermes", path=str(Path(sys.executable).parent))
        sides = [ChatQSide("ours", [str(hermes)], root / "q-ours", Path(sys.executable),
                           {"OPENAI_API_KEY": "x"})]
        if original is not None:
            sides.append(ChatQSide("original", [str(original.parent / "hermes")],
                                   root / "q-orig", original, {"OPENAI_API_KEY": "x"}))
        chat = chat_q(sides, args.runs)
        report["ours_chat_q"] = chat["ours"]
        report["import_openai_floor_s"] = chat["ours"]["floor_median_s"]
        if "original" in chat:
            report["original_chat_q"] = chat["original"]
            report["original_import_openai_floor_s"] = chat["original"]["floor_median_s"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(report, indent=2))
    summarize(report)
    return 0


def summarize(r: dict[str, Any]) -> None:
    log(f"per turn (3 tools each): ours {r['ours_turn_median_s'] * 1000:.1f} ms median "
        f"of {len(r['ours_turns_s'])}")
    p = r["prefix"]
    log(f"prompt-cache prefix over the session: {p['session']:.1%} of {p['requests']} requests' "
        f"bytes (lowest single request {p['min']:.1%}; {p['breaks']} requests changed an "
        "earlier byte)")
    q = r["ours_chat_q"]
    log(f"chat -q: ours {q['median_s']:.3f} s ({q['gets_per_run']:.0f} GETs); import openai "
        f"floor {r['import_openai_floor_s']:.3f} s; over the floor, median of paired runs: "
        f"{q['over_floor_median_s']:+.3f} s")
    if "original_chat_q" in r:
        o = r["original_chat_q"]
        log(f"per turn: original {r['original_turn_median_s'] * 1000:.1f} ms median "
            f"(ratio {r['original_turn_median_s'] / r['ours_turn_median_s']:.1f}x)")
        log(f"chat -q: original {o['median_s']:.3f} s ({o['gets_per_run']:.0f} GETs, "
            f"{o['posts_per_run']:.0f} model requests); its import openai floor "
            f"{o['floor_median_s']:.3f} s, over it {o['over_floor_median_s']:+.3f} s; "
            f"ours/original = {q['median_s'] / o['median_s']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
