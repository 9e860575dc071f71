"""The click group the builtin commands use: run alone it shows its listing (``hermes tools``
is ``hermes tools list``) instead of exiting with a usage error, and its help lists each
subcommand with its whole first sentence, wrapped, never cut off with "..."."""

from __future__ import annotations

from typing import Any

import click


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
