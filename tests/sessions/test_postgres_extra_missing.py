"""Without the ``session-postgres`` extra (psycopg not installed) the postgres store's commands
print the install hint and exit 1, with no traceback. The missing package is real: each
command runs in a process whose imports of psycopg fail as in an environment without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

HINT = "pip install 'hermes-agent-runtime[session-postgres]'"
WITHOUT_PSYCOPG = r"""
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_pool", "psycopg_binary", "psycopg_c"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
from hermes_agent.cli.root import main
sys.exit(main(sys.argv[1:]))
"""


def _hermes_without_psycopg(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_PSYCOPG, *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "HERMES_HOME": str(home)})


@pytest.mark.parametrize("sessions", [0, 1])  # an empty source still opens the target
def test_migrate_to_postgres_without_the_extra_prints_the_install_hint(home, sessions):
    store = SqliteSessionStore(home / "state.db")
    for n in range(sessions):
        store.create_session(f"kept{n}", source="cli")
    store.close()
    done = _hermes_without_psycopg(home, "sessions", "migrate", "--to",
                                   "postgresql://hermes:hunter2@127.0.0.1:5432/hermes")
    assert done.returncode == 1, done.stderr
    assert HINT in done.stderr and "psycopg" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "hunter2" not in done.stderr
    store = SqliteSessionStore(home / "state.db")
    assert len(store.list_sessions()) == sessions  # the source untouched
    store.close()


def test_the_postgres_store_selected_without_the_extra_prints_the_install_hint(home):
    (home / "config.yaml").write_text(json.dumps(
        {"sessions": {"store": "postgres", "dsn": "postgresql://hermes@127.0.0.1:5432/x"}}))
    done = _hermes_without_psycopg(home, "sessions", "list")
    assert done.returncode == 1, done.stderr
    assert HINT in done.stderr and "Traceback" not in done.stderr
