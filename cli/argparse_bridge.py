"""Bridge a plugin's argparse command (``ctx.register_cli_command(name, help, setup_fn,
handler_fn)``) into a click command of the ``hermes`` root."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import click


def argparse_command(name: str, help_text: str, setup_fn: Callable[..., Any] | None,
                     handler_fn: Callable[..., Any] | None) -> click.Command:
    """A click command that parses its raw arguments with the plugin's argparse parser."""

    def build_parser() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=f"hermes {name}", description=help_text)
        if setup_fn is not None:
            setup_fn(parser)
        return parser

    @click.command(name=name, help=help_text, add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.pass_context
    def command(ctx: click.Context) -> None:
        parser = build_parser()
        try:
            args = parser.parse_args(ctx.args)
        except SystemExit as exc:  # argparse printed usage or help
            ctx.exit(int(exc.code or 0))
        handler = getattr(args, "func", None) or handler_fn
        if handler is None:
            parser.print_help()
            return
        result = handler(args)
        if isinstance(result, int) and result:
            ctx.exit(result)

    return command
