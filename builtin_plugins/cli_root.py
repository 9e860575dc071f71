"""The ``hermes`` command: a small click root whose subcommands come from plugins.

It is not part of the kernel: like any surface, it drives the kernel through the public API.
Builtin commands are resolved lazily from ``builtin_plugins.CLI_COMMANDS`` so ``--help``
imports none of them; any other first word boots the kernel and looks for a plugin's
command. Errors raised on purpose (:class:`HermesError`) print as one clear message;
``HERMES_RAISE_ERRORS=1`` shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .._version import __version__


def main(argv: list[str] | None = None) -> int:
    """Run one ``hermes`` command; ``argv=None`` means this process's command line (the
    console script), after which the process exits."""
    if argv is None:
        _collect_in_larger_batches()
        try:
            code = _run(sys.argv[1:])
        finally:
            _ready_to_exit()
        return code
    return _run(list(argv))


#: allocations between young-generation collections (Python's default is 700)
GC_YOUNG_THRESHOLD = 50_000


def _collect_in_larger_batches() -> None:
    """Run the garbage collector's young generation every 50,000 allocations, not every 700.
    Start-up builds some hundred thousand objects that live as long as the process (the
    SDKs' models and classes); with the default threshold they are promoted and scanned
    again by 16 middle and one full collection during a ``chat -q`` (175 young ones in all),
    with this one by 5 young collections only, which roughly halves the time spent in the
    collector (about 0.08 -> 0.04 s here). Garbage cycles are still collected, in larger
    batches; peak memory is unchanged."""
    import gc

    gc.set_threshold(GC_YOUNG_THRESHOLD)


def _ready_to_exit() -> None:
    """Close what the command opened, then freeze the garbage collector: the interpreter's
    shutdown would otherwise run full collections over every object the SDKs built, a
    quarter of a second after the answer is printed. (Objects in reference cycles are not
    finalised at exit, which Python never promised; everything hermes owns is closed here.)"""
    import gc

    if _kernel is not None:
        _kernel.close()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    gc.freeze()


def _run(args: list[str]) -> int:
    if args in (["--version"], ["-V"]):  # fast path: no imports at all
        sys.stdout.write(f"hermes {__version__}\n")
        return 0
    import click

    from ..errors import HermesError

    global _kernel
    _kernel = None  # one kernel per invocation (main may run several times in one process)
    _reported.clear()
    try:
        result = root.main(args=args, prog_name="hermes", standalone_mode=False,
                           obj=KernelAccess())
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.message = _masked(exc.message)  # e.g. a failed `git clone https://user:token@...`
        exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except HermesError as exc:
        if os.environ.get("HERMES_RAISE_ERRORS"):
            raise
        click.echo(f"Error: {_masked(str(exc))}", err=True)
        return 1
    return result if isinstance(result, int) else 0


def _masked(message: str) -> str:
    """An error message with the credentials of the URLs it quotes masked."""
    from ..api import mask_secrets

    return mask_secrets(message)


def runtime_kernel(boot: bool = True) -> Any:
    """The kernel for this CLI process (built once; it applies $HERMES_HOME/.env)."""
    global _kernel
    if _kernel is None:
        from ..api import install_log_masking  # after the kernel, which imports logging
        from ..kernel import Kernel

        install_log_masking()  # what this process logs has URL credentials masked
        _kernel = Kernel()
        report_config_warnings(_kernel.config)
    if boot:
        _kernel.boot()
    return _kernel


def reload_runtime_kernel() -> Any:
    """Stop this process's kernel (its plugins get ``on_shutdown``) and boot a new one, e.g.
    after the configuration changed under it; the new one is closed at exit."""
    global _kernel
    if _kernel is not None:
        _kernel.close()
        _kernel = None
    return runtime_kernel()


class KernelAccess:
    """The root click context's ``obj``: how commands reach this process's kernel
    (``hermes_agent.api.cli_kernel``) without importing this module."""

    def kernel(self, boot: bool = True) -> Any:
        return runtime_kernel(boot)

    def reload(self) -> Any:
        return reload_runtime_kernel()

    def report_config_warnings(self, config: Any) -> None:
        report_config_warnings(config)


_kernel: Any = None
_reported: set[str] = set()


def report_config_warnings(config: Any) -> None:
    """Print config.yaml's warnings (misspelt or unknown keys, unset ${VAR}s) on stderr, each
    once per command, so a typo is never silently ignored."""
    for warning in config.startup_warnings:
        if warning not in _reported:
            _reported.add(warning)
            sys.stderr.write(f"warning: {warning}\n")


def _plugin_commands_last_run() -> list[tuple[str, str]]:
    """The commands plugins registered when they were last loaded, read from the load ledger
    (a small JSON file), so ``--help`` neither loads config nor imports plugin code."""
    import json
    from pathlib import Path

    home = os.environ.get("HERMES_HOME")
    ledger = (Path(home).expanduser() if home else Path.home() / ".hermes") / "cache" / \
        "plugin-status.json"
    try:
        entries = json.loads(ledger.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = {}
    for plugin, entry in entries.items() if isinstance(entries, dict) else ():
        if isinstance(entry, dict) and entry.get("state") == "loaded":
            for name in entry.get("cli_commands") or ():
                rows[str(name)] = f"(from the {plugin} plugin)"
    return sorted(rows.items())


def _build_root() -> Any:
    import click

    from . import CLI_COMMANDS

    class HermesGroup(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(CLI_COMMANDS)

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            if name in CLI_COMMANDS:
                import importlib

                module, _, attr = CLI_COMMANDS[name][0].partition(":")
                return getattr(importlib.import_module(module), attr)
            if ctx.resilient_parsing:
                return None
            entry = runtime_kernel().cli_commands.get(name)
            if entry is None or entry.command is not None:
                return entry.command if entry else None
            from .cli_argparse import argparse_command

            return argparse_command(name, entry.help, entry.setup_fn, entry.handler_fn)

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            rows = [(name, CLI_COMMANDS[name][1]) for name in sorted(CLI_COMMANDS)]
            with formatter.section("Commands"):
                formatter.write_dl(rows)
            added = _plugin_commands_last_run()
            if added:
                with formatter.section("Commands added by plugins (as of their last load)"):
                    formatter.write_dl(added)
            formatter.write_paragraph()
            formatter.write_text("Plugins may add more commands once they are enabled and "
                                 "loaded: `hermes plugins list` shows them.\n")

        def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
            name = args[0] if args else ""
            command = self.get_command(ctx, name)
            if command is None and not ctx.resilient_parsing:
                import difflib

                known = [*CLI_COMMANDS, *runtime_kernel().cli_commands]
                close = difflib.get_close_matches(name, known, 2)
                hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
                raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
            return super().resolve_command(ctx, args)

    @click.group(cls=HermesGroup, invoke_without_command=True,
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, "-V", "--version", prog_name="hermes",
                          message="%(prog)s %(version)s")
    @click.option("--safe-mode", is_flag=True, help="Load builtin plugins only.")
    @click.pass_context
    def hermes(ctx: click.Context, safe_mode: bool) -> Any:
        """hermes: a self-hosted AI agent whose every capability is a plugin.

        Without a command, starts the interactive chat (`hermes chat`)."""
        ctx.ensure_object(KernelAccess)  # set by main(); this covers other callers
        if safe_mode:
            os.environ["HERMES_SAFE_MODE"] = "1"
        if ctx.invoked_subcommand is None:
            return ctx.invoke(ctx.command.get_command(ctx, "chat"))
        return None

    return hermes


class _LazyRoot:
    """Builds the click group on first use, keeping the import cheap."""

    _group: Any = None

    def __getattr__(self, name: str) -> Any:
        if _LazyRoot._group is None:
            _LazyRoot._group = _build_root()
        return getattr(_LazyRoot._group, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__getattr__("__call__")(*args, **kwargs)


root = _LazyRoot()

if __name__ == "__main__":
    sys.exit(main())
