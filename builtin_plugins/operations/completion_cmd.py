"""``hermes completion bash|zsh|fish``: click's shell completion script for ``hermes``.

The script calls ``hermes`` back with ``_HERMES_COMPLETE`` set (click's protocol), so the
completions always match the installed commands, plugins' included."""

from __future__ import annotations

import click

HINTS = {
    "bash": 'eval "$(hermes completion bash)"   # in ~/.bashrc',
    "zsh": 'eval "$(hermes completion zsh)"    # in ~/.zshrc',
    "fish": "hermes completion fish > ~/.config/fish/completions/hermes.fish",
}


@click.command(name="completion")
@click.argument("shell", type=click.Choice(sorted(HINTS)))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish). Install it with:
    bash: eval "$(hermes completion bash)" in ~/.bashrc; zsh: the same with zsh in ~/.zshrc;
    fish: hermes completion fish > ~/.config/fish/completions/hermes.fish"""
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command
    complete_class = get_completion_class(shell)
    if complete_class is None:  # not reachable: the choice is checked
        raise click.ClickException(f"no completion for {shell}")
    try:
        script = complete_class(root, {}, "hermes", "_HERMES_COMPLETE").source()
    except RuntimeError as exc:  # bash older than 4.4
        raise click.ClickException(f"{exc}; use zsh or fish, or a newer bash") from exc
    click.echo(script)
