"""The suite does not depend on the caller's shell: no test sees its HERMES_* variables."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_no_caller_hermes_variable_is_visible_and_the_home_is_a_throwaway() -> None:
    seen = {n for n in os.environ if n.startswith("HERMES_") and not n.startswith("HERMES_TEST_")}
    assert seen == {"HERMES_HOME"}, f"a test would see the caller's {sorted(seen - {'HERMES_HOME'})}"
    home = Path(os.environ["HERMES_HOME"])
    assert home.is_relative_to(tempfile.gettempdir()) and "unpinned-hermes-home" in home.name
    assert home != Path.home() / ".hermes"


def test_each_test_gets_its_own_home(tmp_path: Path) -> None:
    (Path(os.environ["HERMES_HOME"]) / "config.yaml").write_text("left: behind\n")


def test_a_home_left_by_an_earlier_test_is_not_seen() -> None:
    assert not (Path(os.environ["HERMES_HOME"]) / "config.yaml").exists()
