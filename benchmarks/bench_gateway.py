"""What the gateway adds to a turn: 200 concurrent chats through the api-server against the
same 200 conversations driven directly through the agent API.

Run with our interpreter::

    .venv/bin/python benchmarks/bench_gateway.py [--chats 200] [--rounds 5] [--delay 0.5]
        [--loads 0.5,0.8] [--paced-rounds 8]

The model is the fake server on 127.0.0.1 answering at once. Each mode runs in a fresh
process (so peak memory is its own):

* ``direct``: one agent per chat, every chat's turns in its own thread, all at once;
* ``gateway``: a real gateway runner with the api-server; one HTTP connection per chat
  (``X-Hermes-Session``), all at once, each sending its turns one after another, from a
  separate client process (a lean load generator; :func:`clients` says why).

Four runs:

* one chat, its turns one after another: the latency the gateway adds to a turn when
  nothing competes for the CPU (target: p95 added under 20 ms);
* ``--chats`` chats at once, ``--rounds`` turns each (every chat starts a round together):
  latencies (the first round also
  creates each chat's agent and session), turns per second, CPU per turn and peak memory of
  the serving process, and the time each turn spends outside the agent call. With an
  instant model both modes are bound by the interpreter lock (turns/s x CPU per turn is
  about one core): every turn queues for it in both modes, so the gateway's extra CPU per
  turn (mostly its loop's: HTTP, dispatch, reply) shows as extra queueing. The CPU column
  of the gateway stops before its shutdown (ending every chat's session, which the direct
  run does not do);
* ``--chats`` chats paced (``--loads``): turns arrive at a steady rate, a fraction of the
  direct path's throughput measured by the run before, each chat sending one every
  ``chats / rate`` seconds with the chats' turns spread evenly, after an unmeasured warm-up
  turn that creates every chat's agent. A turn's latency counts from when it was due (so a
  backlog shows, unlike in a closed loop). This is the latency the gateway adds when the
  machine keeps up with the chats; the saturated run above gives the throughput and what
  the gateway costs once turns queue for the interpreter lock;
* a model taking ``--delay`` seconds: how many model calls were in flight at once. All
  ``--chats`` of them means no chat waited for another chat's turn;
* worker scaling (``--workers 0,1,2``): the saturated run through the gateway with
  ``gateway.workers: N`` (turns in N worker processes sharing the home's session store; 0:
  the gateway's threads): turns per second against one worker (target: 1.6x with 2), and CPU
  per turn counting the workers' CPU.

The targets it checks (issue 37): the gateway's CPU per turn at most 1.15x the direct
agent's (200 chats, instant model), and at 50% of the direct path's throughput a p95 added
under 20 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

KEY = "bench-key"


def kernel(base_url: str, workers: int = 0) -> Any:
    from hermes_agent.testing import make_kernel

    home = tempfile.mkdtemp(prefix="bench-gateway-")
    config = {"model": {"provider": "custom", "base_url": base_url, "default": "fake-model",
                        "max_retries": 0},
              "sessions": {"auto_title": False}, "gateway": {"workers": workers},
              "platforms": {"api_server": {"enabled": True, "port": 0}}}
    return make_kernel(home, config=config, builtins=True,
                       env={"HERMES_HOME": home, "API_SERVER_KEY": KEY})


def run_direct(k: Any, chats: int, rounds: int) -> tuple[list[list[float]], float]:
    samples: list[list[float]] = [[] for _ in range(rounds)]
    lock = threading.Lock()
    start = threading.Barrier(chats)

    def chat(n: int) -> None:
        agent = None
        for r in range(rounds):
            start.wait()  # every chat starts each round together
            began = time.perf_counter()
            if agent is None:
                agent = k.service("agent").create(platform="api_server", sender_id=f"u{n}")
            result = agent.run_conversation(f"hello {r}")
            assert result.final_response, result.error
            with lock:
                samples[r].append((time.perf_counter() - began) * 1000)

    began = time.perf_counter()
    with ThreadPoolExecutor(chats) as pool:
        list(pool.map(chat, range(chats)))
    return samples, time.perf_counter() - began


def schedule(chats: int, rounds: int, rate: float) -> list[list[float]]:
    """When each chat sends each turn, in seconds from the start: every chat sends a turn
    every ``chats / rate`` seconds, their first turns spread evenly over that period, so
    turns arrive at ``rate`` per second in all."""
    period = chats / rate
    return [[n * period / chats + r * period for r in range(rounds)] for n in range(chats)]


def run_direct_paced(k: Any, chats: int, rounds: int, rate: float
                     ) -> tuple[list[list[float]], float]:
    """Each chat's turns at the times :func:`schedule` gives, after an unmeasured turn that
    creates its agent and session. A turn's latency counts from the time it was due, so a
    turn that starts late (its chat's previous turn still running) counts the wait too."""
    plan = schedule(chats, rounds, rate)
    samples: list[list[float]] = [[] for _ in range(rounds)]
    lock = threading.Lock()
    warm = threading.Barrier(chats + 1, timeout=600)
    start = [0.0]

    def chat(n: int) -> None:
        agent = k.service("agent").create(platform="api_server", sender_id=f"u{n}")
        assert agent.run_conversation("warm up").final_response
        warm.wait()  # every chat is warm...
        warm.wait()  # ...and the clock is set
        for r, at in enumerate(plan[n]):
            due = start[0] + at
            time.sleep(max(0.0, due - time.perf_counter()))
            result = agent.run_conversation(f"hello {r}")
            assert result.final_response, result.error
            with lock:
                samples[r].append((time.perf_counter() - due) * 1000)

    with ThreadPoolExecutor(chats) as pool:
        futures = [pool.submit(chat, n) for n in range(chats)]
        warm.wait()
        start[0] = time.perf_counter() + 0.2
        warm.wait()
        for future in futures:
            future.result()
    return samples, time.perf_counter() - start[0]


async def run_gateway(k: Any, chats: int, rounds: int, rate: float = 0.0
                      ) -> tuple[list[list[float]], float]:
    """A gateway in this process; the HTTP clients in another, as real clients would be."""
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    adapters, entries, problems = build_adapters(k)
    assert not problems, problems
    runner = GatewayRunner(k, adapters, entries=entries)
    assert await runner.start() == ["api_server"]
    workers_cpu = runner.workers.cpu_seconds() if runner.workers else 0.0  # booted already
    agent_ms = time_agent_turns()
    url = f"http://127.0.0.1:{adapters['api_server'].port}/v1/chat/completions"
    clients = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--clients", url, "--chats", str(chats),
        "--rounds", str(rounds), "--rate", str(rate), stdout=asyncio.subprocess.PIPE)
    out, _ = await clients.communicate()
    sessions = {chat.agent.session_id: int(chat.chat_id[1:]) for chat in runner.chats.values()}
    if runner.workers:  # gateway.workers: the turns' CPU in the worker processes
        WORKERS_CPU.append(await runner.in_thread(runner.workers.cpu_seconds) - workers_cpu)
    SERVED_CPU.append(_cpu())  # before the shutdown ends every session (direct ends none)
    await runner.stop(60)
    if clients.returncode:
        raise SystemExit("the client process failed (see above)")
    result = json.loads(out)
    per_chat = result["per_chat"]
    samples = [[per_chat[n][r] for n in range(chats)] for r in range(rounds)]
    outside = [[] for _ in range(rounds)]  # the part of each turn spent outside the agent
    for session, n in sessions.items():  # (with gateway.workers the agents run elsewhere)
        for r, inside in enumerate(agent_ms.get(session, [])[1 if rate else 0:]):  # paced:
            outside[r].append(per_chat[n][r] - inside)  # the warm-up turn first
    OUTSIDE.extend(outside)
    return samples, result["wall"]


OUTSIDE: list[list[float]] = []
WORKERS_CPU: list[float] = []
SERVED_CPU: list[float] = []


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def time_agent_turns() -> dict[str, list[float]]:
    """Record how long each ``run_conversation`` takes, per session (benchmark only)."""
    from hermes_agent.builtin_plugins.agent.loop import Agent

    timings: dict[str, list[float]] = {}
    lock = threading.Lock()
    run = Agent.run_conversation

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return run(self, *args, **kwargs)
        finally:
            with lock:
                timings.setdefault(self.session_id, []).append(
                    (time.perf_counter() - began) * 1000)

    Agent.run_conversation = timed  # type: ignore[method-assign]
    return timings


async def clients(url: str, chats: int, rounds: int, rate: float) -> None:
    """One keep-alive HTTP/1.1 connection per chat, all at once, each sending its turns in
    order: every round together, or (``rate``) paced as :func:`schedule` says after an
    unmeasured warm-up turn. A lean load generator (like wrk): each request is written whole
    and its response read by its Content-Length. An httpx AsyncClient here spent 3.4 to 4.8
    ms of CPU per request in this process's one loop thread: with 200 chats starting a round
    together, the last request left the client hundreds of ms after the first, and that
    queueing was counted as the gateway's (this generator spends about 0.35 ms per request)."""
    host, port, path = _split(url)
    per_chat: list[list[float]] = [[] for _ in range(chats)]  # [chat][round]
    together = asyncio.Barrier(chats)
    plans = schedule(chats, rounds, rate) if rate else None
    start = [0.0]
    warm = asyncio.Barrier(chats + 1)

    def request(n: int, text: str) -> bytes:
        body = json.dumps({"model": "hermes-agent",
                           "messages": [{"role": "user", "content": text}]}).encode()
        return (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {KEY}\r\nX-Hermes-Session: c{n}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        status, reply = await _response(reader)
        assert status == 200, reply
        assert json.loads(reply)["choices"][0]["message"]["content"]

    async def chat(n: int) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        if plans:
            await send(reader, writer, request(n, "warm up"))
            await warm.wait()  # every chat is warm...
            await warm.wait()  # ...and the clock is set
        for r in range(rounds):
            data = request(n, f"hello {r}")
            if plans:
                began = start[0] + plans[n][r]  # latency counts from when the turn was due
                await asyncio.sleep(max(0.0, began - time.perf_counter()))
            else:
                await together.wait()  # every chat starts each round together
                began = time.perf_counter()
            if reader.at_eof():  # the server closed the idle connection: open another, as
                writer.close()  # HTTP clients do (its keep-alive timeout is 5 s)
                reader, writer = await asyncio.open_connection(host, port)
            try:
                await send(reader, writer, data)
            except asyncio.IncompleteReadError as exc:  # closed as idle while we sent: the
                if exc.partial:  # request was not read (HTTP clients retry it likewise)
                    raise
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                await send(reader, writer, data)
            per_chat[n].append((time.perf_counter() - began) * 1000)
        writer.close()

    async def clock() -> None:
        if plans:
            await warm.wait()
            start[0] = time.perf_counter() + 0.2
            await warm.wait()

    began = time.perf_counter()
    await asyncio.gather(clock(), *(chat(n) for n in range(chats)))
    wall = time.perf_counter() - (start[0] if plans else began)
    print(json.dumps({"per_chat": per_chat, "wall": wall}))


def _split(url: str) -> tuple[str, int, str]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80, parts.path


async def _response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """A response's status and body (the server sends Content-Length: no chunked bodies)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(line.split(":", 1)[1]) for line in lines
                  if line.lower().startswith("content-length:"))
    return int(lines[0].split(" ", 2)[1]), await reader.readexactly(length)


def child(mode: str, chats: int, rounds: int, delay: float, rate: float,
          workers: int = 0) -> None:
    from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

    server = FakeLLMServer(default_reply=reply_text("hi there", delay=delay or None))
    with server:
        k = kernel(server.openai_base_url, workers)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        if mode == "direct":
            samples, wall = (run_direct_paced(k, chats, rounds, rate) if rate
                             else run_direct(k, chats, rounds))
        else:
            samples, wall = asyncio.run(run_gateway(k, chats, rounds, rate))
        usage = resource.getrusage(resource.RUSAGE_SELF)
        end = SERVED_CPU[0] if SERVED_CPU else usage.ru_utime + usage.ru_stime
        peak, cpu = usage.ru_maxrss, end - cpu + sum(WORKERS_CPU)
        in_flight = server.max_in_flight
    print(json.dumps({"samples": samples, "wall": wall, "rss_before_kb": before,
                      "rss_peak_kb": peak, "cpu_s": cpu, "outside": OUTSIDE,
                      "max_in_flight": in_flight}))


def measure(mode: str, chats: int, rounds: int, delay: float = 0.0, rate: float = 0.0,
            workers: int = 0) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", mode, "--chats", str(chats),
                          "--rounds", str(rounds), "--delay", str(delay), "--rate", str(rate),
                          "--gateway-workers", str(workers)],
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{mode} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)]


def summary(result: dict[str, Any], skip_first: bool = True) -> dict[str, Any]:
    """Latencies of the turns after the first round (which creates the agents), unless the
    run was paced (its warm-up turn was not measured)."""
    later = [v for r in result["samples"][1 if skip_first else 0:] for v in r]
    first = result["samples"][0]
    turns = sum(len(r) for r in result["samples"])
    return {"first_p50": statistics.median(first), "first_p95": pct(first, 0.95),
            "p50": statistics.median(later), "p95": pct(later, 0.95),
            "rps": turns / result["wall"], "cpu_ms": result["cpu_s"] * 1000 / turns,
            "peak_mb": result["rss_peak_kb"] / 1024,
            "grew_mb": (result["rss_peak_kb"] - result["rss_before_kb"]) / 1024,
            "outside": result.get("outside") or []}


def saturated_reps(chats: int, rounds: int, reps: int) -> None:
    """The saturated run ``reps`` times, direct and gateway interleaved (so a slow spell of
    the machine hits both), with each pair's differences and their medians."""
    added_p50, added_p95, ratio = [], [], []
    print(f"{chats} concurrent chats x {rounds} turns, instant model, {reps} interleaved pairs")
    for rep in range(reps):
        direct = summary(measure("direct", chats, rounds))
        gateway = summary(measure("gateway", chats, rounds))
        added_p50.append(gateway["p50"] - direct["p50"])
        added_p95.append(gateway["p95"] - direct["p95"])
        ratio.append(gateway["rps"] / direct["rps"])
        print(f"  pair {rep + 1}: direct p95 {direct['p95']:.1f} ms, {direct['rps']:.1f} turns/s;"
              f" gateway p95 {gateway['p95']:.1f} ms, {gateway['rps']:.1f} turns/s; added p50 "
              f"{added_p50[-1]:+.1f}, p95 {added_p95[-1]:+.1f} ms; throughput {ratio[-1]:.2f}x",
              flush=True)
    print(f"  median of {reps} pairs: added p50 {statistics.median(added_p50):+.1f} ms, p95 "
          f"{statistics.median(added_p95):+.1f} ms (target p95 < 20 ms); throughput "
          f"{statistics.median(ratio):.2f}x direct")


def report_scaling(chats: int, rounds: int, workers: list[int]) -> None:
    """The saturated run through the gateway with ``gateway.workers`` at each of ``workers``
    (0: turns in the gateway's threads), against one worker."""
    import os

    print(f"worker scaling: {chats} concurrent chats x {rounds} turns through the gateway, "
          f"instant model, {os.cpu_count()} CPUs (CPU: the gateway's and its workers')")
    base = None
    for count in workers:
        row = summary(measure("gateway", chats, rounds, workers=count))
        if count == 1:
            base = row["rps"]
        scale = f" ({row['rps'] / base:.2f}x one worker)" if base and count > 1 else ""
        label = f"gateway.workers: {count}" if count else "threads (workers: 0)"
        print(f"  {label:<21} {row['rps']:7.1f} turns/s{scale}, p95 {row['p95']:.1f} ms, CPU "
              f"{row['cpu_ms']:.2f} ms per turn", flush=True)
    print("  (target: 1.6x one worker with 2 workers, on a machine whose 2 cores are free)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--turns", type=int, default=40, help="turns of the one-chat run")
    parser.add_argument("--child", choices=("direct", "gateway"))
    parser.add_argument("--loads", default="0.5,0.8",
                        help="paced runs: turns per second as fractions of the direct path's "
                        "throughput at saturation")
    parser.add_argument("--paced-rounds", type=int, default=8)
    parser.add_argument("--reps", type=int, default=1,
                        help="only the saturated run: this many direct/gateway pairs, "
                        "interleaved, and their medians (single saturated runs swing widely)")
    parser.add_argument("--rate", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--clients", metavar="URL")
    parser.add_argument("--workers", default="0,1,2",
                        help="worker scaling: gateway.workers values to compare ('' skips it)")
    parser.add_argument("--only-workers", action="store_true",
                        help="run the worker scaling only")
    parser.add_argument("--gateway-workers", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    workers = [int(x) for x in args.workers.split(",") if x.strip()]
    if args.only_workers:
        report_scaling(args.chats, args.rounds, workers)
        return
    if args.clients:
        asyncio.run(clients(args.clients, args.chats, args.rounds, args.rate))
        return
    if args.child:
        child(args.child, args.chats, args.rounds, args.delay, args.rate, args.gateway_workers)
        return
    if args.reps > 1:
        saturated_reps(args.chats, args.rounds, args.reps)
        return
    one_direct = summary(measure("direct", 1, args.turns))
    one_gateway = summary(measure("gateway", 1, args.turns))
    print(f"one chat, {args.turns} turns one after another, instant model (ms per turn, "
          "turns after the first)")
    print(f"  direct p50 {one_direct['p50']:.2f}, p95 {one_direct['p95']:.2f}; gateway p50 "
          f"{one_gateway['p50']:.2f}, p95 {one_gateway['p95']:.2f}; added p50 "
          f"{one_gateway['p50'] - one_direct['p50']:+.2f}, p95 "
          f"{one_gateway['p95'] - one_direct['p95']:+.2f} (target p95 < 20 ms)")
    direct = summary(measure("direct", args.chats, args.rounds))
    gateway = summary(measure("gateway", args.chats, args.rounds))
    print(f"{args.chats} concurrent chats x {args.rounds} turns, instant model "
          "(ms per turn; first round creates the agents)")
    print(f"  {'':<10} {'first p50':>10} {'first p95':>10} {'p50':>8} {'p95':>8} "
          f"{'turns/s':>8} {'CPU ms':>7} {'peak MB':>8} {'grew MB':>8}")
    for label, row in (("direct", direct), ("gateway", gateway)):
        print(f"  {label:<10} {row['first_p50']:10.1f} {row['first_p95']:10.1f} "
              f"{row['p50']:8.1f} {row['p95']:8.1f} {row['rps']:8.1f} {row['cpu_ms']:7.2f} "
              f"{row['peak_mb']:8.1f} {row['grew_mb']:8.1f}")
    print(f"  gateway minus direct: p50 {gateway['p50'] - direct['p50']:+.1f} ms, "
          f"p95 {gateway['p95'] - direct['p95']:+.1f} ms; "
          f"throughput {gateway['rps'] / direct['rps']:.2f}x direct")
    cpu_ratio = gateway["cpu_ms"] / direct["cpu_ms"]
    print(f"  CPU per turn of the serving process: gateway {gateway['cpu_ms']:.2f} ms, direct "
          f"{direct['cpu_ms']:.2f} ms: {cpu_ratio:.2f}x (target <= 1.15x: "
          f"{'met' if cpu_ratio <= 1.15 else 'NOT met'})")
    outside = [v for r in gateway["outside"][1:] for v in r]
    print(f"  time each gateway turn spends outside the agent call (HTTP, dispatch, queue, "
          f"reply): p50 {statistics.median(outside):.1f} ms, p95 {pct(outside, 0.95):.1f} ms")
    for load in (float(x) for x in args.loads.split(",") if x.strip()):
        rate = load * direct["rps"]
        paced = {mode: summary(measure(mode, args.chats, args.paced_rounds, rate=rate), False)
                 for mode in ("direct", "gateway")}
        outside = [v for r in paced["gateway"]["outside"] for v in r]
        added = paced["gateway"]["p95"] - paced["direct"]["p95"]
        verdict = ("" if abs(load - 0.5) > 1e-9 else
                   f" [target at 50%: {'met' if added < 20 else 'NOT met'}]")
        print(f"{args.chats} concurrent chats, turns arriving at {rate:.0f}/s ({load:.0%} of the "
              f"direct path's throughput), {args.paced_rounds} turns each: direct p50 "
              f"{paced['direct']['p50']:.1f} / p95 {paced['direct']['p95']:.1f} ms; gateway p50 "
              f"{paced['gateway']['p50']:.1f} / p95 {paced['gateway']['p95']:.1f} ms; added p50 "
              f"{paced['gateway']['p50'] - paced['direct']['p50']:+.1f}, p95 "
              f"{paced['gateway']['p95'] - paced['direct']['p95']:+.1f} ms (target p95 < 20 ms); "
              f"outside the agent call p50 {statistics.median(outside):.1f} / p95 "
              f"{pct(outside, 0.95):.1f} ms{verdict}")
    slow = measure("gateway", args.chats, 2, args.delay)
    second = slow["samples"][1]  # agents exist
    print(f"  model taking {args.delay * 1000:.0f} ms, {args.chats} chats at once through the "
          f"gateway: {slow['max_in_flight']} model calls in flight at once "
          f"({'no chat waited on another chat' if slow['max_in_flight'] >= args.chats else 'chats waited on other chats'}"
          f"'s turn); turn p50 {statistics.median(second):.0f} ms, slowest {max(second):.0f} ms")
    if workers:
        report_scaling(args.chats, args.rounds, workers)

if __name__ == "__main__":
    main()
