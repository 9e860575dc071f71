"""The ``hermes`` command, a small click root whose subcommands come from plugins: the
console script, also ``python -m hermes_agent.cli.root``.

It is not part of the kernel: like any surface, it drives the kernel through its facade
(``from hermes_agent import ...``). The run's kernel is the root click context's object
(:class:`~.process.RunKernel`): built on first use, closed with the root context. The
commands plugins declare in plugin.yaml (``cli_commands:``) are listed from the manifests
alone (the listing is cached, see :mod:`.help_index`) and imported only when they run, so
``--help`` imports no plugin; a command whose plugin is off explains why instead of running.
Any other first word boots the kernel and looks for a command a plugin registered. Errors
raised on purpose (:class:`HermesError`) print as one clear message; ``HERMES_RAISE_ERRORS=1``
shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_agent import __version__

from .process import RunKernel

if TYPE_CHECKING:
    from hermes_agent import Kernel

__all__ = ["RunKernel", "main", "root"]


def main(argv: list[str] | None = None, *,
         kernel_factory: Callable[[], "Kernel"] | None = None) -> int:
    """Run one ``hermes`` command; ``argv=None`` means this process's command line (the
    console script), after which the process exits. ``kernel_factory`` builds the run's
    kernel on first use (default: ``Kernel()`` for $HERMES_HOME); it is closed at the end."""
    if argv is None:
        _collect_in_larger_batches()
        try:
            code = _run(sys.argv[1:], kernel_factory)
        finally:
            _ready_to_exit()
        return code
    return _run(list(argv), kernel_factory)


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
    """Once the command closed what it opened (the run's kernel closes with the root click
    context), freeze the garbage collector: the interpreter's shutdown would otherwise run
    full collections over every object the SDKs built, a quarter of a second after the
    answer is printed. (Objects in reference cycles are not finalised at exit, which Python
    never promised; everything hermes owns is closed before.)"""
    import gc

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    gc.freeze()


def _run(args: list[str], kernel_factory: Callable[[], "Kernel"] | None) -> int:
    if args in (["--version"], ["-V"]):  # fast path: no imports at all
        sys.stdout.write(f"hermes {__version__}\n")
        return 0
    import click

    from hermes_agent import HermesError

    run = RunKernel(kernel_factory)  # one kernel per invocation (main may run several times)
    run.tighten_secret_files()  # one stat of .env: a hand-written one is often 0644
    try:
        result = root.main(args=args, prog_name="hermes", standalone_mode=False, obj=run)
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
    from hermes_agent.kits.secrets import mask_secrets

    return mask_secrets(message)


def _build_root() -> Any:
    import click

    from .help_index import help_index  # the listing: cached, see help_index

    class RunContext(click.Context):
        """The root context: its ``obj`` is the run's :class:`RunKernel` (a new one unless
        the caller gave one), closed with the context."""

        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            if self.parent is None:
                if not isinstance(self.obj, RunKernel):
                    self.obj = RunKernel()
                self.call_on_close(self.obj.close)

    class HermesGroup(click.Group):
        context_class = RunContext

        def list_commands(self, ctx: click.Context) -> list[str]:
            return help_index(ctx).available

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            from . import commands

            command = commands.command_for(ctx, name, boot=not ctx.resilient_parsing)
            if command is not None or ctx.resilient_parsing:
                return command
            kernel = _run_kernel(ctx).kernel()
            entry = kernel.cli_commands.get(name)
            if entry is None or entry.command is not None:
                return entry.command if entry else None
            if entry.entry:  # declared by a plugin found after start-up
                return commands.load(kernel.plugins[entry.plugin].record, name, entry.entry)
            from .argparse_bridge import argparse_command

            return argparse_command(name, entry.help, entry.setup_fn, entry.handler_fn)

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            index = help_index(ctx)
            rows = [(name, index.commands[name][0]) for name in index.available]
            with formatter.section("Commands"):
                formatter.write_dl(rows)
            added = index.added_last_run()
            if added:
                with formatter.section("Commands added by plugins (as of their last load)"):
                    formatter.write_dl([(name, f"(from the {plugin} plugin)")
                                        for name, plugin in added.items()])
            formatter.write_paragraph()
            if index.off:
                off = ", ".join(f"{name} (plugin {index.commands[name][1]})"
                                for name in sorted(index.off))
                formatter.write_text(f"Not available while their plugin is off: {off}. "
                                     "`hermes plugins list` shows why.\n")
            formatter.write_text("Plugins may add more commands once they are enabled and "
                                 "loaded: `hermes plugins list` shows them.\n")

        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            return super().parse_args(ctx, _chat_options_to_chat(self, ctx, args))

        def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
            name = args[0] if args else ""
            command = self.get_command(ctx, name)
            if command is None and not ctx.resilient_parsing:
                import difflib

                known = dict.fromkeys([*help_index(ctx).available,
                                       *_run_kernel(ctx).kernel().cli_commands])
                close = difflib.get_close_matches(name, list(known), 2)
                hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
                raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
            return super().resolve_command(ctx, args)

    @click.group(cls=HermesGroup, invoke_without_command=True,
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, "-V", "--version", prog_name="hermes",
                          message="%(prog)s %(version)s")
    @click.option("--safe-mode", is_flag=True, help="Load builtin plugins only.",
                  callback=_safe_mode, expose_value=False)
    @click.option("--accept-hooks", is_flag=True, callback=_accept_hooks, expose_value=False,
                  help="Run config.yaml's shell hooks without approval, for this run.")
    @click.pass_context
    def hermes(ctx: click.Context) -> Any:
        """hermes: a self-hosted AI agent whose every capability is a plugin.

        Without a command, starts the interactive chat (`hermes chat`), and takes its options:
        `hermes -c`, `hermes --resume ID`, `hermes -q TEXT`, `hermes -m MODEL` ...
        (`hermes chat --help` lists them)."""
        if ctx.invoked_subcommand is None:
            return ctx.invoke(ctx.command.get_command(ctx, "chat"))
        return None

    return hermes


def _run_kernel(ctx: Any) -> RunKernel:
    """The run's kernel holder, on the root context (see ``RunContext``)."""
    run: RunKernel = ctx.find_root().obj
    return run


def _chat_options_to_chat(group: Any, ctx: Any, args: list[str]) -> list[str]:
    """``hermes -c`` is ``hermes chat -c``: an option the root does not know, before any
    command, starts ``hermes chat``'s arguments (the root's own options take no value)."""
    own = {opt for param in group.get_params(ctx) for opt in (*param.opts, *param.secondary_opts)}
    for index, arg in enumerate(args):
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return args
        if arg not in own:
            return [*args[:index], "chat", *args[index:]]
    return args


def _accept_hooks(ctx: Any, param: Any, value: bool) -> None:
    """``--accept-hooks`` is ``HERMES_ACCEPT_HOOKS=1`` for this run (docs/hooks.md)."""
    if value:
        os.environ["HERMES_ACCEPT_HOOKS"] = "1"


def _safe_mode(ctx: Any, param: Any, value: bool) -> None:
    """Set while the options are parsed, before the command (and the kernel) is looked up."""
    if value:
        os.environ["HERMES_SAFE_MODE"] = "1"


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
