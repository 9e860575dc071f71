"""The validation results shipped with the package (hermes_agent/prevalidated.json): current,
used by a new home instead of pydantic, and ignored for a plugin.yaml that differs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_agent.cli import prevalidated
from hermes_agent.discovery import bundled_dir, discover
from hermes_agent.home import SHIPPED, ValidationCache

PROBE = ("import sys\nfrom hermes_agent.cli.root import main\n"
         "try:\n    main(sys.argv[1:])\nexcept SystemExit: pass\n"
         "print('HEAVY', sorted({'pydantic', 'yaml', 'hermes_agent.validation', 'importlib.metadata'} & set(sys.modules)))")


def run(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    import os

    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          check=True, env={**os.environ, "HERMES_HOME": str(home), **(env or {})})
    return proc.stdout


def test_the_shipped_table_is_current() -> None:
    shipped = SHIPPED.read_text(encoding="utf-8")
    assert shipped == prevalidated.render(prevalidated.compute()), (
        f"{SHIPPED} is stale (a builtin or bundled plugin.yaml, a validation model or the "
        f"version changed): run `{prevalidated.COMMAND}` and commit the result")


def test_a_first_help_in_an_empty_home_imports_no_pydantic(tmp_path: Path) -> None:
    home = tmp_path / "new-home"  # does not exist yet: no config.yaml, no cache
    out = run(home, "--help")
    assert out.strip().endswith("HEAVY []"), out
    assert "sessions" in out and "plugins" in out  # builtin plugins' commands are listed
    cached = json.loads((home / "cache" / "validated.json").read_text(encoding="utf-8"))
    assert set(json.loads(SHIPPED.read_text(encoding="utf-8"))) <= set(cached)
    again = run(tmp_path / "other-home", "plugins", "list")  # a first `plugins list` too
    assert again.strip().endswith("HEAVY []") and "web-local" in again, again
    assert out.split("HEAVY")[0] == run(home, "--help").split("HEAVY")[0]  # warm: the same


def test_a_bundled_plugin_yaml_edited_in_place_is_validated(tmp_path: Path) -> None:
    tree = tmp_path / "bundled"
    shutil.copytree(bundled_dir({}), tree)
    edited = next(iter(sorted(tree.glob("*/*/plugin.yaml"))))
    edited.write_text(edited.read_text(encoding="utf-8") + "kind: sideways\n", encoding="utf-8")
    found = discover(tmp_path / "home", {"HERMES_BUNDLED_PLUGINS": str(tree)},
                     cache=ValidationCache(tmp_path / "validated.json"), entry_points=False)
    broken = [r for r in found.all_records() if r.error]
    assert [r.path for r in broken] == [edited.parent]
    assert "kind:" in broken[0].error, broken[0].error
    # the edit is validated, with pydantic; the unedited copies matched the table
    out = run(tmp_path / "home2", "--help", env={"HERMES_BUNDLED_PLUGINS": str(tree)})
    assert "'pydantic'" in out, out
    edited.write_text(edited.read_text(encoding="utf-8").replace("kind: sideways\n", ""),
                      encoding="utf-8")
    assert run(tmp_path / "home3", "--help",
               env={"HERMES_BUNDLED_PLUGINS": str(tree)}).strip().endswith("HEAVY []")
