"""A plugin cannot stop hermes: SystemExit, KeyboardInterrupt and other BaseExceptions from
plugin code fail that plugin alone; a real Ctrl-C (a SIGINT) still propagates."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent import Kernel, UserInterrupt
from hermes_agent.builtin_plugins.agent.chat.slash import ChatState, run_slash
from hermes_agent.testing import make_kernel, write_plugin

TOOL = """\
    ctx.register_tool("{tool}", "t", {{"name": "{tool}", "description": "d",
                      "parameters": {{"type": "object", "properties": {{}}}}}},
                      lambda args, **kw: "{{}}")
"""


class Doom(BaseException):
    """Neither an Exception nor anything Python itself raises."""


def boot(home: Path, plugins: dict[str, str]) -> Kernel:
    for name, source in plugins.items():
        write_plugin(home / "plugins", name, source)
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": list(plugins)}}))
    return Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False).boot()


@pytest.mark.parametrize(("source", "code", "cause"), [
    ("import sys\ndef register(ctx):\n" + TOOL.format(tool="x") + "    sys.exit(3)\n",
     "register_error", "SystemExit: 3"),
    ("def register(ctx):\n" + TOOL.format(tool="x") + "    raise KeyboardInterrupt\n",
     "register_error", "KeyboardInterrupt"),
    ("def register(ctx):\n" + TOOL.format(tool="x") + "    raise GeneratorExit\n",
     "register_error", "GeneratorExit"),
    ("class Doom(BaseException):\n    pass\ndef register(ctx):\n" + TOOL.format(tool="x")
     + "    raise Doom('no')\n", "register_error", "Doom: no"),
    ("import sys\nsys.exit('bye')\n", "import_error", "SystemExit: bye"),
    ("from hermes_agent import hookimpl\n\n@hookimpl\ndef register_tools(register):\n"
     "    raise SystemExit(4)\n", "register_error", "SystemExit: 4"),
])
def test_an_exit_while_loading_fails_that_plugin_alone(home: Path, source: str, code: str,
                                                      cause: str) -> None:
    kernel = boot(home, {"bad": source, "good": "def register(ctx):\n" + TOOL.format(tool="y")})
    bad = kernel.plugins["bad"]
    assert (bad.state, bad.code, bad.cause) == ("failed", code, cause)
    assert "x" not in kernel.tools.tools  # rolled back
    assert "hermes_plugins.bad" not in sys.modules
    assert kernel.plugins["good"].state == "loaded" and "y" in kernel.tools.tools


def test_a_real_ctrl_c_while_loading_propagates_after_the_rollback(home: Path) -> None:
    source = ("import signal\ndef register(ctx):\n" + TOOL.format(tool="x")
              + "    signal.raise_signal(signal.SIGINT)\n    raise AssertionError('not reached')\n")
    with pytest.raises(UserInterrupt):
        boot(home, {"victim": source})
    assert "hermes_plugins.victim" not in sys.modules
    assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler


def hooked(home: Path, callback) -> Kernel:  # type: ignore[no-untyped-def]
    kernel = make_kernel(home)
    calls: list[str] = []

    def bad(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.register_hook("on_session_start", callback)
        ctx.register_tool("bad_tool", "t", {"name": "bad_tool"}, lambda args, **kw: "{}")

    def good(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.register_hook("on_session_start", lambda **kw: calls.append("good") or "ok")

    kernel.register_plugin(bad, "bad")
    kernel.register_plugin(good, "good")
    kernel.calls = calls  # type: ignore[attr-defined]
    return kernel


def exits(**kw: object) -> None:
    sys.exit(5)


async def exits_async(**kw: object) -> None:
    await asyncio.sleep(0)
    raise KeyboardInterrupt


@pytest.mark.parametrize("callback", [exits, exits_async, lambda **kw: (_ for _ in ()).throw(Doom())])
def test_a_hook_that_exits_is_skipped_and_its_plugin_unloaded(home: Path, callback) -> None:  # type: ignore[no-untyped-def]
    kernel = hooked(home, callback)
    assert kernel.hooks.call("on_session_start", session_id="s") == ["ok"]
    assert kernel.calls == ["good"]
    status = kernel.plugins["bad"]
    assert (status.state, status.code) == ("failed", "halt_attempt")
    assert "on_session_start hook" in status.reason
    assert kernel.faults == [status]
    assert "bad_tool" not in kernel.tools.tools  # the whole plugin is unloaded
    assert [c.plugin for c in kernel.hooks.callbacks("on_session_start")] == ["good"]
    assert kernel.hooks.call("on_session_start", session_id="s") == ["ok"]


def test_an_exception_in_a_hook_does_not_unload_the_plugin(home: Path) -> None:
    kernel = hooked(home, lambda **kw: 1 / 0)
    assert kernel.hooks.call("on_session_start", session_id="s") == ["ok"]
    assert kernel.plugins["bad"].state == "loaded" and kernel.faults == []


def test_a_forged_user_interrupt_is_still_the_plugins(home: Path) -> None:
    def forges(**kw: object) -> None:
        raise UserInterrupt()

    kernel = hooked(home, forges)
    assert kernel.hooks.call("on_session_start", session_id="s") == ["ok"]
    assert kernel.plugins["bad"].code == "halt_attempt"


def test_a_real_ctrl_c_in_a_hook_propagates_and_blames_no_plugin(home: Path) -> None:
    def interrupted(**kw: object) -> None:
        signal.raise_signal(signal.SIGINT)

    kernel = hooked(home, interrupted)
    with pytest.raises(UserInterrupt):
        kernel.hooks.call("on_session_start", session_id="s")
    assert kernel.plugins["bad"].state == "loaded" and kernel.faults == []


def test_a_real_ctrl_c_a_plugin_turns_into_an_exit_is_still_the_users(home: Path) -> None:
    def converts(**kw: object) -> None:
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            sys.exit(1)

    kernel = hooked(home, converts)
    with pytest.raises(UserInterrupt):
        kernel.hooks.call("on_session_start", session_id="s")
    assert kernel.plugins["bad"].state == "loaded"


def test_async_dispatch_contains_plugin_exits_but_not_its_own_cancellation(home: Path) -> None:
    async def cancels(**kw: object) -> None:
        raise asyncio.CancelledError  # nobody cancelled: the plugin's own doing

    kernel = hooked(home, cancels)
    assert asyncio.run(kernel.hooks.acall("on_session_start", session_id="s")) == ["ok"]
    assert kernel.plugins["bad"].code == "halt_attempt"

    async def waits(**kw: object) -> None:
        await asyncio.Event().wait()

    kernel = hooked(home, waits)

    async def cancel_the_dispatch() -> None:
        task = asyncio.create_task(kernel.hooks.acall("on_session_start", session_id="s"))
        await asyncio.sleep(0)  # the task runs until the plugin waits
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_the_dispatch())
    assert kernel.plugins["bad"].state == "loaded"


def test_a_tool_or_check_fn_that_exits_fails_its_plugin(home: Path) -> None:
    kernel = make_kernel(home)

    def plugin(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.register_tool("quit_tool", "t", {"name": "quit_tool"},
                          lambda args, **kw: sys.exit(0))

    def checker(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.register_tool("checked", "t", {"name": "checked"}, lambda args, **kw: "{}",
                          check_fn=lambda: (_ for _ in ()).throw(KeyboardInterrupt()))

    kernel.register_plugin(plugin, "quitter")
    kernel.register_plugin(checker, "checker")
    result = json.loads(kernel.tools.dispatch("quit_tool", {}))
    assert result["error"].startswith("Tool execution failed: SystemExit")
    assert kernel.plugins["quitter"].code == "halt_attempt"
    assert "quit_tool" not in kernel.tools.tools
    assert kernel.tools.is_available("checked") is False
    assert kernel.plugins["checker"].code == "halt_attempt"


def test_a_slash_command_that_exits_fails_its_plugin(home: Path) -> None:
    kernel = make_kernel(home)
    kernel.register_plugin(lambda ctx: ctx.register_command("leave", lambda args: sys.exit(2)),
                           "leaver")
    state = ChatState(agent=None, kernel=kernel)
    text = run_slash(state, "/leave now")
    assert "plugin 'leaver' raised SystemExit" in text and "doctor leaver" in text
    assert kernel.plugins["leaver"].code == "halt_attempt" and "leave" not in kernel.registered("slash_command")
