"""`hermes plugins install | update | rollback | remove | doctor | validate | new`.

Thin click wrappers; the work is in install.py, update.py, remove.py, doctor.py,
validate.py and scaffold.py. Each command imports its module only when it runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from hermes_agent.kits.cli import cli_kernel

NO_INPUT = click.option("--no-input", is_flag=True,
                        help="Never prompt (for scripts): unanswered questions mean no.")


ALLOW_BUILD = click.option("--allow-build", is_flag=True,
                           help="Build a package from source: an sdist, a package folder "
                                "(pyproject.toml or setup.py) or a requirement published as "
                                "source only (runs its setup code before you see what it "
                                "registers).")


@click.command()
@click.argument("spec")
@click.option("--enable/--no-enable", default=None,
              help="Enable the plugin after installing (default: ask).")
@ALLOW_BUILD
@NO_INPUT
def install(spec: str, enable: bool | None, allow_build: bool, no_input: bool) -> None:
    """Install a plugin from a folder, a git repository (URL, owner/repo[/path], #subdirectory=)
    or pip (a requirement, a wheel, an sdist or a package folder)."""
    from .install import install as run_install

    run_install(cli_kernel(boot=False), spec, enable=enable, no_input=no_input,
                allow_build=allow_build)


@click.command()
@click.argument("name", required=False)
@click.option("--all", "update_all", is_flag=True, help="Update every plugin in plugins.lock.")
@click.option("--from", "from_spec", metavar="SPEC",
              help="Update from another source (a newer wheel, another folder or git URL).")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Accept new capabilities without asking.")
@ALLOW_BUILD
@NO_INPUT
def update(name: str | None, update_all: bool, from_spec: str | None, dry_run: bool, yes: bool,
           allow_build: bool, no_input: bool) -> None:
    """Update a plugin from its recorded source, showing the capability diff first."""
    from .lockfile import read_lock
    from .update import update as run_update

    kernel = cli_kernel(boot=False)
    if bool(name) == update_all:
        raise click.UsageError("give a plugin NAME or --all (not both)")
    if update_all and from_spec:
        raise click.UsageError("--from needs a single plugin NAME")
    names = sorted(read_lock(kernel.home)) if update_all else [name]
    if update_all and not names:
        click.echo("No plugins in plugins.lock; install plugins with `hermes plugins install`.")
    failures = []
    for plugin in names:
        try:
            run_update(kernel, plugin, from_spec=from_spec, dry_run=dry_run, yes=yes,
                       no_input=no_input, allow_build=allow_build)
        except click.ClickException as exc:
            if not update_all:
                raise
            failures.append(plugin)
            click.echo(f"✗ {plugin}: {exc.format_message()}", err=True)
    if failures:
        raise click.ClickException(f"not updated: {', '.join(failures)}")


@click.command()
@click.argument("name")
def rollback(name: str) -> None:
    """Return a plugin to the version it had before its last update."""
    from .update import rollback as run_rollback

    run_rollback(cli_kernel(boot=False), name)


@click.command()
@click.argument("name")
@click.option("--keep-data", is_flag=True, help="Keep $HERMES_HOME/plugin-data/NAME.")
@click.option("--with-deps", is_flag=True, help="Also uninstall the pip dependencies nothing "
              "else installed needs (default: ask at a terminal, else only list them).")
@NO_INPUT
def remove(name: str, keep_data: bool, with_deps: bool, no_input: bool) -> None:
    """Remove a plugin: its files or pip distribution, config entries and lock entry; it is
    stopped first if loaded, and its now unneeded pip dependencies are offered for removal."""
    from .remove import remove as run_remove

    run_remove(cli_kernel(boot=False), name, keep_data=keep_data, with_deps=with_deps,
               no_input=no_input)


@click.command()
@click.argument("name", required=False)
@click.option("--all", "show_all", is_flag=True, help="Include builtin plugins.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--load", is_flag=True, help="Load plugins now (runs their code) instead of "
              "reporting the last load.")
@click.option("--isolated", is_flag=True, help="Load the plugins in a child process, so even "
              "one that ends the process (os._exit) is named.")
def doctor(name: str | None, show_all: bool, as_json: bool, load: bool,
           isolated: bool) -> None:
    """Explain why plugins are not active, from plugin.yaml, config and the last load (--load
    loads them now, --isolated in a child process). Exits 1 when a plugin you enabled is not
    active."""
    from .doctor import diagnose, exit_code, format_reports
    from .remove import unknown

    kernel = cli_kernel(boot=False)
    if isolated:
        from .isolated import isolated_diagnose

        reports, general = isolated_diagnose(kernel, name, show_all)
    else:
        reports, general = diagnose(kernel, name, include_builtin=show_all or bool(name),
                                    load=load)
    if name and not reports and not general:
        raise unknown(kernel, name)
    if as_json:
        click.echo(json.dumps({"plugins": [r.to_dict() for r in reports],
                               "problems": [g.__dict__ for g in general]}, indent=2))
    else:
        click.echo(format_reports(reports, general))
    click.get_current_context().exit(exit_code(reports, general))


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def validate(path: Path, as_json: bool) -> None:
    """Check a plugin under development: its manifest, and that it registers what it declares.
    Loads it in a throw-away kernel; nothing is enabled or written."""
    from .validate import format_validation
    from .validate import validate as run_validate

    result = run_validate(path)
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_validation(result))
    click.get_current_context().exit(0 if result.ok else 1)


@click.command()
@click.argument("name")
@click.option("--kind", type=click.Choice(["tool", "hook", "memory", "model-provider", "web",
                                           "platform"]), default="tool", show_default=True)
@click.option("--dir", "parent", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="Where to create the project folder.")
def new(name: str, kind: str, parent: Path) -> None:
    """Create a pip-installable plugin project (with a passing test) to start from."""
    from .scaffold import scaffold

    root = scaffold(name, kind, parent)
    click.echo(f"✓ Created {root}\n  cd {root} && pip install -e '.[test]' && pytest\n"
               f"  hermes plugins validate {root}")


def add_management_commands(group: click.Group) -> None:
    for command in (install, update, rollback, remove, doctor, validate, new):
        group.add_command(command)
    group.add_command(remove, name="uninstall")
