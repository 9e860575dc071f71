"""Owner: the CLI (`hermes_agent.cli`), whose root context holds the run's kernel.

Kit for the CLI commands plugins add: the kernel of the running ``hermes`` command, and
the click group the builtin commands use (:class:`ListingGroup`).

A command declared by a plugin (``hermes sessions``, ``hermes model``, a third-party
``hermes my-plugin``) runs inside the ``hermes`` click group, which owns one kernel per
invocation. The command asks for it here instead of building a second one::

    @click.command()
    def stats() -> None:
        kernel = cli_kernel()          # booted: every enabled plugin loaded
        ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from hermes_agent import HermesError

if TYPE_CHECKING:
    from hermes_agent import Kernel

__all__ = ["cli_kernel", "reload_cli_kernel", "report_config_warnings", "ListingGroup",
           "first_sentence", "confirm_at_terminal", "secret_file_notes"]


def _access() -> Any:
    """The run's kernel holder: the root click context's object (``hermes_agent.cli``'s
    ``RunKernel``)."""
    ctx = click.get_current_context(silent=True)
    access = ctx.find_root().obj if ctx is not None else None
    if access is None or not callable(getattr(access, "kernel", None)):
        raise HermesError("cli_kernel() works inside a `hermes` command only; elsewhere build "
                          "one with hermes_agent.Kernel(...).boot()")
    return access


def cli_kernel(boot: bool = True) -> "Kernel":
    """The running command's kernel; with ``boot`` false, plugins are discovered but not
    loaded (for commands that only read plugin.yaml files or the configuration)."""
    return _access().kernel(boot)  # type: ignore[no-any-return]


def reload_cli_kernel() -> "Kernel":
    """Stop the running command's kernel (its plugins get ``on_shutdown``) and boot a new one,
    e.g. after the configuration changed under it."""
    return _access().reload()  # type: ignore[no-any-return]


def report_config_warnings(config: Any) -> None:
    """Print ``config``'s warnings (misspelt or unknown keys, unset ${VAR}s) on stderr, each
    once per ``hermes`` command, for a command that loaded the configuration itself."""
    _access().report_config_warnings(config)


def secret_file_notes() -> list[str]:
    """What the start of the running ``hermes`` command said about $HERMES_HOME's key files
    (it makes a loose .env or auth.json private, saying so); [] outside a command."""
    ctx = click.get_current_context(silent=True)
    access = ctx.find_root().obj if ctx is not None else None
    return list(getattr(access, "secret_file_notes", None) or [])


def confirm_at_terminal(question: str, without_asking: str, default: bool = False) -> bool:
    """Ask ``question`` (y/n). An answer piped in is read like a typed one; with nothing to
    read (``< /dev/null``, no terminal) nobody can answer: fail (exit 1, no traceback) with
    the question and ``without_asking``, how to give the answer on the command line (e.g.
    "run it again with --yes")."""
    import sys

    try:
        return click.confirm(question, default=default)
    except click.Abort:
        if sys.stdin is not None and sys.stdin.isatty():
            raise  # Ctrl-C or Ctrl-D at the terminal
        click.echo("", err=True)
        raise click.ClickException(f"{question} Nothing was done: there is no answer on "
                                   f"standard input (not a terminal); {without_asking}.") from None


class ListingGroup(click.Group):
    """``default``: the subcommand that runs when none is given."""

    def __init__(self, *args: Any, default: str | None = None, **kwargs: Any):
        kwargs.setdefault("invoke_without_command", default is not None)
        super().__init__(*args, **kwargs)
        self.default = default
        if default is not None:
            self.callback = self._then_default(self.callback)

    def _then_default(self, callback: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            result = callback(*args, **kwargs) if callback is not None else None
            ctx = click.get_current_context()
            if ctx.invoked_subcommand is None:
                return ctx.invoke(self.get_command(ctx, self.default))  # type: ignore[arg-type]
            return result
        return run

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, first_sentence(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def first_sentence(command: click.Command) -> str:
    """``short_help``, or the help text's first sentence (whole, however long)."""
    if command.short_help:
        return command.short_help
    text = " ".join((command.help or "").split("\n\n")[0].split())
    for index, char in enumerate(text):  # a sentence ends at ". " before a capital letter
        if char == "." and (index + 1 == len(text)
                            or text[index + 1:index + 3].startswith(" ")
                            and text[index + 2:index + 3].isupper()):
            return text[:index + 1]
    return text
