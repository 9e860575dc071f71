"""A plugin's ``python_dependencies`` that are not installed: `hermes plugins enable` and
`hermes plugins doctor` name them and the pip command that installs them (a bundled plugin's
libraries are an extra of the package, not installed with it)."""

from __future__ import annotations

import json

from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

MANIFEST = """name: needy
python_dependencies:
  - pytest>=1
  - hermes-surely-not-installed-lib>=1.0
  - pluggy>=999
  - "windows-only-lib; sys_platform == 'win32'"
"""


def run(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_enable_names_the_missing_packages_and_the_pip_command(home, capsys) -> None:
    write_plugin(home / "plugins", "needy", "def register(ctx):\n    pass\n", manifest=MANIFEST)
    code, out, err = run(capsys, "plugins", "enable", "needy")
    assert code == 0 and "Plugin needy enabled" in out
    assert "not installed (hermes-surely-not-installed-lib>=1.0, pluggy>=999)" in err
    assert "-m pip install 'hermes-surely-not-installed-lib>=1.0' 'pluggy>=999'" in err
    assert "pytest" not in err and "windows-only-lib" not in err


def test_doctor_warns_and_a_satisfied_plugin_gets_no_warning(home, capsys) -> None:
    write_plugin(home / "plugins", "needy", "def register(ctx):\n    pass\n", manifest=MANIFEST)
    write_plugin(home / "plugins", "content", "def register(ctx):\n    pass\n",
                 manifest="name: content\npython_dependencies: [pytest>=1]\n")
    for name in ("needy", "content"):
        run(capsys, "plugins", "enable", name)
    code, out, _ = run(capsys, "plugins", "doctor", "--load", "--json")
    reports = {r["name"]: r for r in json.loads(out)["plugins"]}
    [reason] = [r for r in reports["needy"]["reasons"] if r["code"] == "missing_dependency"]
    assert reason["level"] == "warning" and reports["needy"]["active"] is True
    assert "hermes-surely-not-installed-lib>=1.0, pluggy>=999" in reason["message"]
    assert "-m pip install" in reason["fix"]
    assert reports["content"]["reasons"] == []
