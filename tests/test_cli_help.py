"""What a new user sees first: command groups run alone show their listing, and help lines
are whole sentences."""

from __future__ import annotations

import click

from hermes_agent.kits.cli import first_sentence
from hermes_agent.cli.root import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_group_alone_shows_its_listing(home, capsys):
    for group, listing in (("tools", "list"), ("config", "show"), ("plugins", "list"),
                           ("sessions", "list")):
        alone = run(capsys, group)
        assert alone[0] == 0, (group, alone)
        assert alone == run(capsys, group, listing), group


def test_help_lists_every_subcommand_with_its_whole_first_sentence(home, capsys):
    from hermes_agent.cli.commands import declared_commands
    from hermes_agent.loader import resolve
    from hermes_agent.discovery import builtin_records

    for name, declared in declared_commands(builtin_records(None)).items():
        command = resolve(declared.record, declared.entry)
        if not isinstance(command, click.Group):
            continue
        code, out, _ = run(capsys, name, "--help")
        assert code == 0
        listed = " ".join(out.split("Commands:")[1].split())
        assert "..." not in listed, name
        for sub in command.commands.values():
            sentence = first_sentence(sub)
            assert sentence.endswith(".") or not sentence, (name, sub.name, sentence)
            assert f"{sub.name} {sentence}" in listed, (name, sub.name)


def test_an_abbreviation_does_not_end_the_first_sentence(home, capsys):
    code, out, _ = run(capsys, "config", "--help")
    assert code == 0
    assert "get    Print one setting, e.g. `hermes config get memory.provider`.\n" in out
