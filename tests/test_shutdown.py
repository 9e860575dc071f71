"""Plugins are stopped once: ``on_shutdown`` when the kernel closes (the ``hermes`` command
closes it before exiting) or when one plugin is unloaded; a child process a plugin started
in register() is gone afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent.testing import make_kernel, write_plugin

HELPER = """\
import subprocess


def register(ctx):
    child = subprocess.Popen(["sleep", "60"])
    data = ctx.data_dir
    data.mkdir(parents=True, exist_ok=True)
    (data / "pid").write_text(str(child.pid))

    def stop(reason, **kwargs):
        child.terminate()
        child.wait(timeout=10)
        with open(data / "stops", "a") as out:
            out.write(reason + "\\n")

    ctx.register_hook("on_shutdown", stop)
"""


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie of ours counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and ") Z " in stat.read_text())


@pytest.fixture
def helper(home: Path) -> Iterator[Path]:
    """An enabled plugin that starts `sleep 60` in register(); yields its data folder. Any
    child a failing test leaves behind is killed."""
    write_plugin(home / "plugins", "helper", HELPER, manifest="name: helper\n"
                 "provides_hooks: [on_shutdown]\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [helper]\n")
    data = home / "plugin-data" / "helper"
    yield data
    if (data / "pid").exists():
        try:
            os.kill(int((data / "pid").read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def stops(data: Path) -> list[str]:
    return (data / "stops").read_text().split() if (data / "stops").exists() else []


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep` and POSIX signals")
def test_hook_on_shutdown(home: Path, helper: Path) -> None:
    kernel = make_kernel(home)
    assert kernel.plugins["helper"].state == "loaded"
    pid = int((helper / "pid").read_text())
    assert alive(pid)
    kernel.close()
    assert not alive(pid) and stops(helper) == ["exit"]
    kernel.close()  # once only
    assert stops(helper) == ["exit"]


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep` and POSIX signals")
def test_unloading_one_plugin_stops_only_it_and_close_does_not_stop_it_again(
        home: Path, helper: Path) -> None:
    write_plugin(home / "plugins", "other", "def register(ctx):\n"
                 "    ctx.register_hook('on_shutdown', lambda reason, **kw: "
                 "(ctx.data_dir.mkdir(parents=True, exist_ok=True), "
                 "(ctx.data_dir / 'stops').write_text(reason)))\n",
                 manifest="name: other\nprovides_hooks: [on_shutdown]\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [helper, other]\n")
    kernel = make_kernel(home)
    pid = int((helper / "pid").read_text())
    kernel.unregister_plugin("helper")
    assert not alive(pid) and stops(helper) == ["unload"]
    other = home / "plugin-data" / "other" / "stops"
    assert not other.exists()  # only the unloaded plugin was told
    kernel.close()
    assert stops(helper) == ["unload"] and other.read_text() == "exit"


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep` and POSIX signals")
def test_the_hermes_command_stops_plugins_before_it_exits(home: Path, helper: Path) -> None:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home)}
    proc = subprocess.run([str(hermes), "plugins", "list", "--load"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "helper" in proc.stdout and "loaded" in proc.stdout
    pid = int((helper / "pid").read_text())
    assert not alive(pid) and stops(helper) == ["exit"]


def test_legacy_provider_shutdown_is_called_on_close(home: Path) -> None:
    calls: list[str] = []

    class Memory:
        name = "legacy-mem"

        def shutdown(self) -> None:
            calls.append("shutdown")

    def register(ctx):  # type: ignore[no-untyped-def]
        ctx.register_memory_provider(Memory())

    kernel = make_kernel(home, plugins=[register])
    kernel.close()
    kernel.close()
    assert calls == ["shutdown"]


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep` and POSIX signals")
def test_remove_stops_a_plugin_loaded_in_this_process(home: Path, helper: Path) -> None:
    from click.testing import CliRunner

    from hermes_agent import Kernel
    from hermes_agent.cli import root as cli_root

    kernel = Kernel(home, env={"HERMES_HOME": str(home)}).boot()
    run = cli_root.RunKernel(lambda: kernel)  # the run's kernel has it loaded
    pid = int((helper / "pid").read_text())
    result = CliRunner().invoke(cli_root._build_root(), ["plugins", "remove", "helper",
                                                          "--keep-data"], obj=run,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "✓ Removed helper" in result.output
    assert not alive(pid) and stops(helper) == ["unload"]
    assert not (home / "plugins" / "helper").exists() and "helper" not in kernel.plugins
    kernel.close()
    assert stops(helper) == ["unload"]
