"""The memory manager on its own: fences, signature-filtered calls, isolation of failing,
slow and hung providers, the background worker, tool routing."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_agent.api import MemoryProvider
from hermes_agent.builtin_plugins.agent.memory_fence import (
    CLOSE, OPEN, StreamScrubber, call_accepting, fence, strip_fences)
from hermes_agent.builtin_plugins.agent.memory_manager import MemoryManager


class Duck:
    """A duck-typed provider (subclasses nothing) with only a few of the optional methods."""

    def __init__(self, name: str = "duck", recall: str = "") -> None:
        self.name, self.recall = name, recall
        self.calls: list[tuple[Any, ...]] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id, hermes_home, platform):  # a subset, no **kwargs
        self.calls.append(("initialize", session_id, hermes_home, platform))

    def get_tool_schemas(self):
        return [{"name": "duck_recall", "description": "d", "parameters": {"type": "object"}}]

    def handle_tool_call(self, tool_name, args):
        if args.get("boom"):
            raise RuntimeError("backend down")
        return json.dumps({"tool": tool_name, "args": args})

    def prefetch(self, query):
        self.calls.append(("prefetch", query))
        return self.recall

    def sync_turn(self, user_content, assistant_content):
        self.calls.append(("sync_turn", user_content, assistant_content))

    def on_session_switch(self, new_session_id, **kwargs):
        self.calls.append(("switch", new_session_id, kwargs))

    def on_memory_write(self, action, target, content):  # no metadata parameter
        self.calls.append(("write", action, target, content))


class Builtin(MemoryProvider):
    name = "builtin"  # type: ignore[assignment]

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the builtin provider never hears of its own writes")


class Raising(Duck):
    def prefetch(self, query):
        raise RuntimeError("prefetch broke")

    def on_session_switch(self, new_session_id, **kwargs):
        raise RuntimeError("switch broke")


class Hung(Duck):
    """Its prefetch blocks until released (60 s at most)."""

    def __init__(self) -> None:
        super().__init__("hung")
        self.release = threading.Event()
        self.entered = threading.Event()

    def prefetch(self, query):
        self.entered.set()
        self.release.wait(60)
        return "too late"


@pytest.fixture
def hung() -> Iterator[Hung]:
    provider = Hung()
    yield provider
    provider.release.set()


def test_fence_and_strip() -> None:
    block = fence("user likes tea")
    assert block.startswith(OPEN) and block.endswith(CLOSE) and "user likes tea" in block
    assert fence("  ") == ""
    assert strip_fences(f"Hello {block} world") == "Hello  world"
    assert strip_fences(f"cut {OPEN} secret") == "cut "
    assert strip_fences(f"stray {CLOSE}end") == "stray end"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_scrubber_strips_a_fence_split_across_deltas(size: int) -> None:
    text = f"Hi {OPEN}\nrecalled secret\n{CLOSE} there <b>ok</b> <memory"
    scrub = StreamScrubber()
    out = "".join(scrub.feed(text[i:i + size]) for i in range(0, len(text), size))
    out += scrub.flush()
    assert out == "Hi  there <b>ok</b> <memory"


def test_call_accepting_passes_what_the_signature_takes() -> None:
    seen: list[Any] = []
    call_accepting(lambda a, b: seen.append((a, b)), 1, 2, 3, extra=4)
    call_accepting(lambda a, *, k=0: seen.append((a, k)), 1, k=5, other=6)
    call_accepting(lambda *a, **kw: seen.append((a, kw)), 1, x=2)
    assert seen == [(1, 2), (1, 5), ((1,), {"x": 2})]


def test_builtin_first_and_a_second_external_refused(caplog: pytest.LogCaptureFixture) -> None:
    first, second = Duck("alpha"), Duck("beta")
    with caplog.at_level(logging.WARNING):
        manager = MemoryManager([first, Builtin(), second])
    assert [p.name for p in manager.providers] == ["builtin", "alpha"]
    assert "'beta' refused" in caplog.text and "'alpha'" in caplog.text


def test_initialize_and_optional_calls_are_signature_filtered() -> None:
    duck, builtin = Duck(), Builtin()
    manager = MemoryManager([builtin, duck])
    manager.initialize("s1", hermes_home="/h", platform="cli", user_id="u", agent_context="primary")
    assert duck.calls == [("initialize", "s1", "/h", "cli")]
    assert builtin.kwargs["agent_context"] == "primary" and builtin.kwargs["user_id"] == "u"
    manager.on_session_switch("s2", parent_session_id="s1", reset=True)
    assert duck.calls[-1] == ("switch", "s2", {"parent_session_id": "s1", "reset": True})
    manager.on_memory_write("add", "user", "likes tea", {"x": 1})
    manager.sync_turn("hi", "hello", messages=[{"role": "user", "content": "hi"}])
    assert manager.drain(5)
    assert duck.calls[-2:] == [("write", "add", "user", "likes tea"),
                               ("sync_turn", "hi", "hello")]
    manager.on_delegation("task", "result")  # nobody implements it: nothing happens
    assert manager.on_pre_compress([]) == ""


def test_pre_compress_collects_the_providers_text() -> None:
    class Compressing(Duck):
        def on_pre_compress(self, messages):
            return f"{len(messages)} messages; user likes tea"

    manager = MemoryManager([Compressing()])
    assert manager.on_pre_compress([{"role": "user", "content": "x"}]) == \
        "1 messages; user likes tea"


def test_a_raising_provider_is_skipped_for_that_call(caplog: pytest.LogCaptureFixture) -> None:
    manager = MemoryManager([Builtin(), Raising("broken", "never")])
    with caplog.at_level(logging.WARNING):
        assert manager.prefetch("q") == ""
        manager.on_session_switch("s2")
    assert "prefetch failed" in caplog.text and "on_session_switch failed" in caplog.text


def test_a_hung_prefetch_is_left_behind_at_its_timeout(hung: Hung,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    good = Builtin()
    good.prefetch = lambda query: "builtin recall"  # type: ignore[method-assign]
    manager = MemoryManager([good, hung], prefetch_timeout=1.0)
    with caplog.at_level(logging.WARNING):
        block = manager.prefetch("q")
        assert hung.entered.is_set() and not hung.release.is_set()  # still hung
        assert "builtin recall" in block and "too late" not in block
        assert "did not finish within 1.0 s" in caplog.text
        caplog.clear()
        manager.prefetch("again")  # the hung call still runs: not called again
    assert "hung.prefetch skipped: the previous one still runs" in caplog.text
    hung.release.set()


def test_a_hung_sync_does_not_stop_the_worker(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    duck = Duck()
    duck.sync_turn = lambda u, a: release.wait(60)  # type: ignore[method-assign]
    manager = MemoryManager([duck], sync_timeout=1.0)
    try:
        manager.sync_turn("u", "a")
        manager.on_memory_write("add", "memory", "fact")
        assert manager.drain(5)
        assert duck.calls[-1] == ("write", "add", "memory", "fact")
    finally:
        release.set()


def test_tool_routing_and_a_raising_tool() -> None:
    duck = Duck()
    manager = MemoryManager([duck])
    routes = manager.tool_routes(set())
    provider, schema = routes["duck_recall"]
    assert provider is duck and schema["name"] == "duck_recall"
    result = json.loads(manager.handle_tool_call(duck, "duck_recall", {"q": 1}, session_id="s"))
    assert result == {"tool": "duck_recall", "args": {"q": 1}}
    error = json.loads(manager.handle_tool_call(duck, "duck_recall", {"boom": True}))
    assert "backend down" in error["error"]
    assert manager.tool_routes({"duck_recall"}) == {}  # a registered tool of that name wins


def test_a_hung_call_does_not_keep_the_process_alive() -> None:
    import subprocess
    import sys

    script = (
        "import time\n"
        "from hermes_agent.builtin_plugins.agent.memory_manager import MemoryManager\n"
        "class Hung:\n"
        "    name = 'hung'\n"
        "    def prefetch(self, query): time.sleep(60)\n"
        "    def sync_turn(self, u, a): time.sleep(60)\n"
        "m = MemoryManager([Hung()], prefetch_timeout=0.1, sync_timeout=0.1)\n"
        "m.sync_turn('u', 'a')\n"
        "print(repr(m.prefetch('q')))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=30)  # the interpreter exits although both calls still sleep
    assert done.returncode == 0 and done.stdout.strip() == "''"


def test_an_interrupt_stops_the_wait_for_a_slow_prefetch(hung: Hung) -> None:
    from hermes_agent.api import CancelToken

    manager = MemoryManager([hung], prefetch_timeout=60)
    cancel = CancelToken()
    threading.Thread(target=lambda: hung.entered.wait(10) and cancel.set(), daemon=True).start()
    assert manager.prefetch("q", cancel=cancel) == ""  # returned on the interrupt, not at 60 s
    assert not hung.release.is_set()
