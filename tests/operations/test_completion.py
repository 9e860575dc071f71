"""`hermes completion SHELL`: the scripts, and the completions they get back from `hermes`
(bash sourced and driven for real; zsh and fish through click's protocol when the shells
are not installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .ops_home import environ, hermes, hermes_argv, make_home


def complete(home: Path, shell: str, words: str, cword: int | str) -> str:
    """What ``hermes`` answers a shell's completion call (fish passes the word being
    completed as COMP_CWORD, bash and zsh its index)."""
    done = subprocess.run(hermes_argv(), env=environ(home, _HERMES_COMPLETE=f"{shell}_complete",
                                                     COMP_WORDS=words, COMP_CWORD=str(cword)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_and_options(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    script = hermes(home, "completion", "bash")
    assert script.code == 0 and "_HERMES_COMPLETE=bash_complete" in script.out
    bindir = Path(hermes_argv()[0]).parent
    driver = (f'source <(hermes completion bash)\n'
              'COMP_WORDS=(hermes ins); COMP_CWORD=1; COMPREPLY=(); _hermes_completion hermes\n'
              'echo "commands: ${COMPREPLY[*]}"\n'
              'COMP_WORDS=(hermes insights --d); COMP_CWORD=2; COMPREPLY=(); '
              '_hermes_completion hermes\n'
              'echo "options: ${COMPREPLY[*]}"\n'
              'COMP_WORDS=(hermes completion ""); COMP_CWORD=2; COMPREPLY=(); '
              '_hermes_completion hermes\n'
              'echo "shells: ${COMPREPLY[*]}"\n')
    done = subprocess.run(["bash", "-c", driver], capture_output=True, text=True, timeout=120,
                          env=environ(home, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}"))
    assert done.returncode == 0, done.stderr
    assert "commands: insights\n" in done.stdout
    assert "options: --days\n" in done.stdout
    assert "shells: bash fish zsh\n" in done.stdout


def test_zsh_and_fish_scripts_and_their_protocol(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    zsh = hermes(home, "completion", "zsh").out
    fish = hermes(home, "completion", "fish").out
    assert "#compdef hermes" in zsh and "zsh_complete" in zsh
    assert "complete --no-files --command hermes" in fish and "fish_complete" in fish
    assert "plain\nbackup\n" in complete(home, "zsh", "hermes back", 1)
    assert "plain,restore" in complete(home, "fish", "hermes rest", "rest")
    bad = hermes(home, "completion", "tcsh")
    assert bad.code == 2 and "bash" in bad.err
