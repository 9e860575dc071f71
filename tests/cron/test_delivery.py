"""A run's output is saved under cron/output/<job>/ and delivered: appended to a file, sent to
a platform chat through the delivery service (send_message's path: the running gateway's
adapter, the chat checked against the allow-lists), or recorded as not delivered with the
reason when no gateway runs or the chat is not allowed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hermes_agent.api import PlatformAdapter, SendResult
from hermes_agent.testing.fake_llm import reply_error, reply_text

from .conftest import WAIT, Clock, add_job


class ChatAdapter(PlatformAdapter):
    """A tiny platform: records what it sends, on the loop it was connected on."""

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.sent: list[tuple[str, str]] = []
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.arrived = asyncio.Event()

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        return True

    async def disconnect(self) -> None:
        pass

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        self.loops.append(asyncio.get_running_loop())
        self.sent.append((chat_id, content))
        self.arrived.set()
        return SendResult(True, message_id=str(len(self.sent)))


def test_output_is_saved_and_appended_to_a_file_target(kernel_for, server, tmp_path: Path):
    kernel = kernel_for()
    report = tmp_path / "reports" / "daily.md"
    job = add_job(kernel, "every 1h", "Write the report.", deliver=f"file:{report}")
    server.script(reply_text("Report one."), reply_text("Report two."))
    clock = Clock()
    scheduler = kernel.service("cron").scheduler(clock=clock)
    first = scheduler.tick(clock.advance(hours=1))[0]
    second = scheduler.tick(clock.advance(hours=1))[0]
    assert report.read_text() == "Report one.\nReport two.\n"
    assert oct(report.stat().st_mode & 0o777) == "0o600"
    outputs = sorted((kernel.home / "cron" / "output" / job["id"]).glob("*.md"))
    assert [str(p) for p in outputs] == [first.output_path, second.output_path]
    assert [p.name for p in outputs] == ["2026-03-02_09-00-00.md", "2026-03-02_10-00-00.md"]
    assert "Report one." in outputs[0].read_text()
    assert first.delivery == [{"target": f"file:{report}", "ok": True, "error": None}]


def test_a_platform_target_goes_out_through_the_running_gateway_on_its_loop(kernel_for,
                                                                             server):
    """The delivery service (send_message's path) sends through the gateway's adapter, on the
    gateway's loop, after checking the chat is allowed; an unlisted chat is refused."""
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    kernel = kernel_for(platforms={"testchat": {"allowed_chats": ["chat-42"]}})
    job = add_job(kernel, "every 1h", "Summarise the news.",
                  deliver="testchat:chat-42,testchat:chat-99")
    server.script(reply_text("Here is the summary."))

    async def scenario() -> None:
        adapter = ChatAdapter()
        runner = GatewayRunner(kernel, {"testchat": adapter})
        assert await runner.start() == ["testchat"]
        # the tool's `run` makes the job due now; the loop picks it up at its first tick
        result = json.loads(kernel.tools.dispatch("cronjob", {"action": "run",
                                                               "job_id": job["id"]}))
        assert result["success"]
        stop = asyncio.Event()
        serving = asyncio.create_task(kernel.service("cron").serve(stop, interval=0.05))
        try:
            await asyncio.wait_for(adapter.arrived.wait(), WAIT)
            await asyncio.wait_for(_recorded(kernel, job["id"]), WAIT)
        finally:
            stop.set()
            await asyncio.wait_for(serving, WAIT)
            await runner.stop(WAIT)
        assert adapter.sent == [("chat-42", "Here is the summary.")]
        assert adapter.loops == [asyncio.get_running_loop()]  # sent on the gateway's loop

    asyncio.run(scenario())
    [run] = kernel.service("cron").scheduler().runs.list(job["id"])
    assert run["status"] == "ok"
    sent, refused = run["delivery"]
    assert sent == {"target": "testchat:chat-42", "ok": True, "error": None}
    assert refused["target"] == "testchat:chat-99" and not refused["ok"]
    assert "not a chat hermes may send to" in refused["error"]
    assert "platforms.testchat.allowed_chats" in refused["error"]
    assert not (kernel.home / "cron" / "scheduler.json").exists()  # the loop's record is gone


async def _recorded(kernel: Any, job_id: str) -> None:
    """Until the job's run is recorded as finished (polled: the run is in another thread)."""
    while not any(r["status"] != "running"
                  for r in kernel.service("cron").scheduler().runs.list(job_id)):
        await asyncio.sleep(0.02)


def test_without_a_gateway_a_platform_target_is_recorded_as_not_delivered(kernel_for, server):
    kernel = kernel_for()
    job = add_job(kernel, "every 1h", "Ping.", deliver="telegram:123,local")
    clock = Clock()
    [record] = kernel.service("cron").scheduler(clock=clock).tick(clock.advance(hours=1))
    assert record.status == "ok"
    telegram, local = record.delivery
    assert telegram["target"] == "telegram:123" and not telegram["ok"]
    assert "no gateway is running" in telegram["error"]
    assert local == {"target": "local", "ok": True, "error": None}
    stored = json.loads((kernel.home / "cron" / "jobs.json").read_text())["jobs"][0]
    assert "`hermes gateway run`" in stored["last_delivery_error"]
    assert stored["last_status"] == "ok"


def test_a_final_failure_is_delivered_as_a_notice(kernel_for, server, tmp_path: Path):
    kernel = kernel_for()
    notices = tmp_path / "failures.md"
    add_job(kernel, "every 1h", "Fragile.", deliver=f"file:{notices}", retries=0)
    server.script(reply_error(500, "the model is down"))
    clock = Clock()
    [record] = kernel.service("cron").scheduler(clock=clock).tick(clock.advance(hours=1))
    assert record.status == "error"
    assert "Cron job 'Fragile.' failed:" in notices.read_text()
    assert "the model is down" in notices.read_text()
    assert "status: error" in Path(record.output_path).read_text()


def test_beside_a_running_gateway_a_job_reaches_a_chat_through_its_adapter(kernel_for,
                                                                           server):
    """The gateway runner connects the platform (its platform_adapter hook then answers for
    it); the cron loop runs in the same event loop, as `hermes gateway` runs it."""
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    kernel = kernel_for(platforms={"testchat": {"home_channel": "room-7"}})
    job = add_job(kernel, "every 1h", "Morning digest.", deliver="testchat")  # home channel
    server.script(reply_text("Your digest."))

    async def scenario() -> None:
        adapter = ChatAdapter()
        runner = GatewayRunner(kernel, {"testchat": adapter})
        assert await runner.start() == ["testchat"]
        stop = asyncio.Event()
        serving = asyncio.create_task(kernel.service("cron").serve(stop, interval=0.05))
        kernel.tools.dispatch("cronjob", {"action": "run", "job_id": job["id"]})
        try:
            await asyncio.wait_for(adapter.arrived.wait(), WAIT)
        finally:
            stop.set()
            await asyncio.wait_for(serving, WAIT)
            await runner.stop(WAIT)
        assert adapter.sent == [("room-7", "Your digest.")]

    asyncio.run(scenario())
