"""Per-turn overhead of the agent's memory manager, two trivial providers active.

Run with our interpreter::

    .venv/bin/python benchmarks/bench_memory_manager.py [--turns 500]

What one turn costs the loop in time spent on the calling thread: ``on_turn_start`` and
``prefetch`` (each provider on a bounded daemon thread), then ``sync_turn`` and
``queue_prefetch`` handed to the background worker. With no memory provider the loop does
none of this (the manager is None), so the figure is the overhead over no memory. The
background jobs are drained between turns, untimed (a real turn's model call leaves them
seconds to finish; back to back they would only measure GIL contention). The
providers answer at once, so this is the manager's own cost (threads, signature filtering,
fencing). Target: under 5 ms per turn (p95). Stdlib only, besides our package.
"""

from __future__ import annotations

import argparse
import statistics
import time

from hermes_agent.builtin_plugins.agent.memory_manager import MemoryManager


class Trivial:
    def __init__(self, name: str) -> None:
        self.name = name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: object) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, object]]:
        return []

    def on_turn_start(self, turn_number: int, message: str, **kwargs: object) -> None:
        pass

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "a recalled fact" if self.name != "builtin" else ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        pass

    def sync_turn(self, user: str, assistant: str, *, session_id: str = "",
                  messages: list[dict[str, object]] | None = None) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    turns = parser.parse_args().turns
    manager = MemoryManager([Trivial("builtin"), Trivial("external")])
    manager.initialize("bench", hermes_home="/tmp", platform="cli")
    history = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    samples = []
    for turn in range(turns):
        started = time.perf_counter()
        manager.on_turn_start(turn, "what did we decide?", model="m", platform="cli")
        block = manager.prefetch("what did we decide?")
        manager.sync_turn("what did we decide?", "we chose sqlite", messages=history)
        manager.queue_prefetch("what did we decide?")
        samples.append((time.perf_counter() - started) * 1000)
        assert "a recalled fact" in block
        manager.drain(10)  # untimed: in a session the model call between turns is far longer
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"memory manager, 2 providers, {turns} turns: p50 {statistics.median(samples):.3f} ms,"
          f" p95 {p95:.3f} ms, max {samples[-1]:.3f} ms (target p95 < 5 ms)")


if __name__ == "__main__":
    main()
