"""config.yaml as a person edits it: misspelt keys are reported by every command, and the
commands that write the file keep the person's comments, order and indentation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from hermes_agent.cli.root import main

TYPOS = """\
    modle:
      default: x
    aproovals:
      mode: smart
    model:
      defualt: gpt-4.1
    """

COMMENTED = """\
    # my hermes settings
    model:
        provider: custom          # the local server
        base_url: http://127.0.0.1:9/v1
        default: small-model

    plugins:
        enabled:
          - web   # search first
    # keep approvals strict
    approvals:
        mode: manual
    """


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_every_command_that_loads_config_warns_once_about_typos(home, capsys):
    write(home, TYPOS)
    for command in (["plugins", "list"], ["model"], ["tools", "list"], ["config", "get", "web"]):
        code, out, err = run(capsys, *command)
        assert code == 0, err
        lines = err.splitlines()
        for typo, known in (("modle", "model"), ("aproovals", "approvals"),
                            ("model.defualt", "model.default")):
            expected = f"unknown key '{typo}' — did you mean '{known}'?"
            assert sum(expected in line for line in lines) == 1, (command, err)
        assert "did you mean" not in out  # stdout keeps the command's own output


def test_help_and_version_do_not_read_config(home, capsys):
    write(home, TYPOS)
    for command in (["--help"], ["--version"]):
        code, _, err = run(capsys, *command)
        assert code == 0 and err == ""


def test_config_set_refuses_an_unknown_key_unless_forced(home, capsys):
    path = write(home, "model:\n  default: a\n")
    code, _, err = run(capsys, "config", "set", "modle.default", "x")
    assert code == 1
    assert "'modle' is not a setting" in err and "did you mean 'model'?" in err
    assert "--force" in err and path.read_text() == "model:\n  default: a\n"
    code, _, err = run(capsys, "config", "set", "model.defualt", "x")
    assert code == 1 and "did you mean 'model.default'?" in err
    code, _, err = run(capsys, "config", "set", "--force", "modle.default", "x")
    assert code == 0
    assert yaml.safe_load(path.read_text())["modle"] == {"default": "x"}
    assert "did you mean 'model'" in err  # saved, and still reported
    # keys kept for Hermes Agent 0.19 configs are accepted without --force
    assert run(capsys, "config", "set", "display.skin", "mono")[0] == 0


def test_config_unset_leaves_no_empty_sections_behind(home, capsys):
    path = write(home, "# top\nmodel:\n  default: a\nweb:\n  backend: x  # mine\n")
    code, out, _ = run(capsys, "config", "unset", "nosuch.key")
    assert code == 0 and "nosuch.key is not set" in out
    assert path.read_text() == "# top\nmodel:\n  default: a\nweb:\n  backend: x  # mine\n"
    assert run(capsys, "config", "unset", "model.default")[0] == 0
    assert path.read_text() == "# top\nweb:\n  backend: x  # mine\n"


def test_config_set_keeps_comments_order_and_indentation(home, capsys):
    path = write(home, COMMENTED)
    assert run(capsys, "config", "set", "model.default", "bigger-model")[0] == 0
    assert run(capsys, "config", "set", "approvals.timeout", "30")[0] == 0
    expected = textwrap.dedent(COMMENTED).replace("small-model", "bigger-model").replace(
        "    mode: manual\n", "    mode: manual\n    timeout: 30\n")
    assert path.read_text() == expected


def test_plugins_enable_and_disable_keep_comments(home, calculator, capsys):
    path = write(home, COMMENTED)
    assert run(capsys, "plugins", "enable", "calculator")[0] == 0
    text = path.read_text()
    assert "      - web   # search first\n      - calculator\n" in text
    assert text.startswith("# my hermes settings\n") and "# keep approvals strict\n" in text
    assert "provider: custom          # the local server" in text
    assert run(capsys, "plugins", "disable", "calculator")[0] == 0
    text = path.read_text()
    assert "# search first" in text and "# keep approvals strict" in text
    assert yaml.safe_load(text)["plugins"] == {"enabled": ["web"], "disabled": ["calculator"]}


def test_hermes_model_switch_keeps_comments(home, capsys):
    path = write(home, COMMENTED)
    code, _, err = run(capsys, "model", "--provider", "custom", "--model", "other",
                       "--base-url", "http://127.0.0.1:9/v1")
    assert code == 0, err
    text = path.read_text()
    assert "# my hermes settings" in text and "# the local server" in text
    assert "    default: other\n" in text



BLOCKS = """\
    # my config
    a:
      enabled:
        - web   # search first
      other: 1   # o
    # keep strict
    b:
      mode: manual
    # tail
    """


def test_edits_keep_the_comment_lines_that_follow_a_block(home):
    from hermes_agent.yaml_edit import set_key, unset_key

    text = textwrap.dedent(BLOCKS)
    added = set_key(text, "a.new", "x")
    assert added == text.replace("  other: 1   # o\n", "  other: 1   # o\n  new: x\n")
    listed = set_key(text, "b.z", [1, 2])
    assert listed.endswith("  mode: manual\n  z:\n    - 1\n    - 2\n# tail\n")
    section = set_key(text, "c.d", {"e": ["f"]})
    assert section.endswith("  mode: manual\nc:\n  d:\n    e:\n      - f\n# tail\n")
    assert unset_key(text, "b.mode") == text.replace("b:\n  mode: manual\n", "")
    assert unset_key(text, "a.nosuch") is None and unset_key(text, "b.mode.deeper") is None
    assert set_key("", "a.b", 1) == "a:\n  b: 1\n"
    four = "x:\n    y: 1\n    z:\n    - 1\n"  # the document's own indentation is kept
    assert set_key(four, "x.w", True) == "x:\n    y: 1\n    z:\n    - 1\n    w: true\n"
