"""The kernel of a ``hermes`` run lives on the root click context: built on first use by the
run's factory, once, closed when the command ends; no module holds it between runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_agent import HermesError, Kernel
from hermes_agent.cli import process
from hermes_agent.cli import root as cli_root
from hermes_agent.kits.cli import cli_kernel


@pytest.fixture
def factory(home: Path):  # type: ignore[no-untyped-def]
    """A kernel factory for ``home`` that keeps every kernel it built."""
    built: list[Kernel] = []

    def build() -> Kernel:
        built.append(Kernel(home, env={"HERMES_HOME": str(home)}))
        return built[-1]

    build.built = built  # type: ignore[attr-defined]
    return build


def test_a_run_builds_its_kernel_once_and_closes_it_when_the_command_ends(factory, capsys):
    assert cli_root.main(["plugins", "list"], kernel_factory=factory) == 0
    assert "NAME" in capsys.readouterr().out
    assert len(factory.built) == 1 and factory.built[0].closed
    assert cli_root.main(["plugins", "list"], kernel_factory=factory) == 0
    assert len(factory.built) == 2 and factory.built[1].closed  # each run its own
    assert not [v for v in vars(process).values() if isinstance(v, Kernel)]
    assert not [v for v in vars(cli_root).values() if isinstance(v, Kernel)]


def test_help_builds_no_kernel(factory, capsys):
    assert cli_root.main(["--help"], kernel_factory=factory) == 0
    assert "Commands:" in capsys.readouterr().out and factory.built == []


def test_a_caller_gives_the_root_its_kernel_through_the_context_object(home: Path, factory):
    run = process.RunKernel(factory)
    result = CliRunner().invoke(cli_root._build_root(), ["plugins", "list"], obj=run,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(factory.built) == 1 and factory.built[0].closed
    again = CliRunner().invoke(cli_root._build_root(), ["plugins", "list"],
                               catch_exceptions=False)  # no obj: a default one, for $HERMES_HOME
    assert again.exit_code == 0 and len(factory.built) == 1


def test_reload_closes_the_kernel_and_builds_the_next_with_the_factory(factory):
    run = process.RunKernel(factory)
    first = run.kernel(boot=False)
    assert run.kernel(boot=False) is first  # built once
    second = run.reload()
    assert first.closed and second is factory.built[1] and second.booted
    run.close()
    assert second.closed


def test_each_warning_is_printed_once_per_run(capsys):
    run = process.RunKernel()
    run.report_warnings(["a typo in config.yaml", "a typo in config.yaml"])
    run.report_config_warnings(_Config(["a typo in config.yaml", "unset ${KEY}"]))
    assert capsys.readouterr().err == "warning: a typo in config.yaml\nwarning: unset ${KEY}\n"
    process.RunKernel().report_warnings(["a typo in config.yaml"])  # a new run says it again
    assert capsys.readouterr().err == "warning: a typo in config.yaml\n"


def test_cli_kernel_outside_a_hermes_command_says_how_to_get_one() -> None:
    with pytest.raises(HermesError, match="inside a `hermes` command only"):
        cli_kernel()


class _Config:
    def __init__(self, warnings: list[str]):
        self.startup_warnings: list[Any] = warnings
