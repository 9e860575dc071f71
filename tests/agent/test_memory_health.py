"""What the memory manager records of the external provider (shown by `hermes memory
status`), and the providers' shutdown: after the queued syncs, in reverse order, bounded."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from hermes_agent.kits.memory_health import load_health
from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing.fake_llm import reply_text

from hermes_agent.builtin_plugins.agent.memory_manager import MemoryManager

from .test_memory_manager import Duck, Hung, Raising, hung  # noqa: F401  (a fixture)


class Closing(Duck):
    def __init__(self, name: str, order: list[str], recall: str = "") -> None:
        super().__init__(name, recall)
        self.order = order

    def sync_turn(self, user_content, assistant_content):
        time.sleep(0.2)  # still queued when shutdown starts
        self.order.append(f"{self.name}.sync")

    def shutdown(self):
        self.order.append(f"{self.name}.shutdown")


def test_failures_timeouts_and_prefetch_are_recorded_and_saved(tmp_path: Path, hung: Hung) -> None:
    broken = MemoryManager([Raising("broken")], home=tmp_path)
    assert broken.prefetch("q") == ""
    record = broken.health["broken"]
    assert (record.failures, record.timeouts) == (1, 0)
    assert record.last_error == "prefetch: RuntimeError: prefetch broke"
    broken.sync_turn("u", "a")
    assert broken.drain(5)
    saved = load_health(tmp_path)["broken"]
    assert saved.last_error == "prefetch: RuntimeError: prefetch broke" and saved.calls >= 2
    assert saved.last_sync_at > 0  # Raising's sync_turn works

    slow = MemoryManager([hung], prefetch_timeout=0.3, home=tmp_path)
    slow.prefetch("q")
    assert slow.health["hung"].timeouts == 1
    assert slow.health["hung"].last_error == "prefetch: no answer within 0.3 s"
    slow.save_health()
    both = load_health(tmp_path)
    assert set(both) == {"broken", "hung"}  # records of other providers are kept

    fine = MemoryManager([Duck("fine", "tea")], home=tmp_path)
    assert "tea" in fine.prefetch("q")
    record = fine.health["fine"]
    assert record.last_prefetch_ms >= 0 and record.last_prefetch_chars == 3
    assert (record.failures, record.timeouts, record.last_error) == (0, 0, "")


def test_an_unreadable_health_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "provider-health.json").write_bytes(b"\xff{not json")
    assert load_health(tmp_path) == {}
    manager = MemoryManager([Raising("broken")], home=tmp_path)
    manager.prefetch("q")
    manager.save_health()  # replaces the broken diagnostic file
    assert load_health(tmp_path)["broken"].failures == 1


def test_shutdown_waits_for_queued_syncs_then_goes_in_reverse_order(tmp_path: Path) -> None:
    order: list[str] = []
    first, second = Closing("builtin", order), Closing("ext", order)
    manager = MemoryManager([first, second], home=tmp_path)
    manager.sync_turn("u", "a")
    manager.shutdown()
    assert order == ["builtin.sync", "ext.sync", "ext.shutdown", "builtin.shutdown"]
    manager.shutdown()  # once only
    assert order.count("ext.shutdown") == 1
    assert load_health(tmp_path)["ext"].last_sync_at > 0


def test_a_hung_shutdown_is_left_behind(tmp_path: Path) -> None:
    release = threading.Event()
    duck = Duck("stuck")
    duck.shutdown = lambda: release.wait(60)  # type: ignore[attr-defined]
    manager = MemoryManager([duck], sync_timeout=0.5, home=tmp_path)
    started = time.monotonic()
    try:
        manager.shutdown()
        assert time.monotonic() - started < 5
        assert load_health(tmp_path)["stuck"].last_error == "shutdown: no answer within 0.5 s"
    finally:
        release.set()


def test_the_agent_shuts_providers_down_at_exit_not_on_new(kernel_for, server) -> None:
    order: list[str] = []
    provider = Closing("closing", order)
    kernel = kernel_for(memory={"provider": "closing"})
    kernel.register_plugin(lambda ctx: ctx.register_memory_provider(provider), "closing")
    agent = Agent(kernel)
    server.script(reply_text("one"), reply_text("two"))
    agent.run_conversation("hello")
    agent.new_session()
    assert "closing.shutdown" not in order
    agent.run_conversation("again")
    agent.finalize("shutdown")
    assert order == ["closing.sync", "closing.sync", "closing.shutdown"]
