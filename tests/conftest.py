"""Shared fixtures: every test gets its own HERMES_HOME and no real home is touched."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def _keep_the_test_process_debuggable() -> None:
    """Tests build agents in this process, and an agent makes its process private (not
    dumpable): a non-root user's tests could then no longer read /proc/<this pid>/... from the
    commands they start, and results would depend on test order. The decision is taken once
    per process, here; the processes the tests start are private, as in use."""
    from hermes_agent.kits.private_process import keep_process_private

    before = os.environ.get("HERMES_DEBUGGABLE")
    os.environ["HERMES_DEBUGGABLE"] = "1"
    try:
        assert keep_process_private() is False
    finally:
        if before is None:
            del os.environ["HERMES_DEBUGGABLE"]
        else:
            os.environ["HERMES_DEBUGGABLE"] = before


_keep_the_test_process_debuggable()


def _ctrl_c_as_at_a_terminal() -> None:
    """A suite started as a background job of a script (``cmd &``) inherits SIGINT ignored:
    neither the tests of Ctrl-C in this process nor the hermes processes they start (which
    inherit the ignored signal) would see one. The tests run with Python's own handler, as at
    a terminal; the processes they start get the default action."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_ctrl_c_as_at_a_terminal()


#: Settings of the test run itself (e.g. HERMES_TEST_POSTGRES_DSN), not read by hermes.
_TEST_RUN_PREFIX = "HERMES_TEST_"


@pytest.fixture(autouse=True)
def _no_caller_hermes_env(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the caller's HERMES_* variables (HERMES_HOME, HERMES_SAFE_MODE,
    HERMES_LOAD_PLUGINS, HERMES_MODEL, ...): each starts with none of them and with
    HERMES_HOME at a throwaway folder of its own, so nothing reaches a real home. A test
    that means the default home (~/.hermes) says so with ``monkeypatch.delenv``."""
    for name in [n for n in os.environ if n.startswith("HERMES_")]:
        if not name.startswith(_TEST_RUN_PREFIX):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("unpinned-hermes-home")))
    # the caches' seal key (kernel/seal.py) of this test run, not the user's
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-state"))


@pytest.fixture(autouse=True)
def _restore_environ() -> Iterator[None]:
    """A kernel on the process environment exports $HERMES_HOME/.env into os.environ;
    give each test the environment it started with."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HERMES_HOME (also exported, for CLI tests)."""
    path = tmp_path / "hermes-home"
    (path / "plugins").mkdir(parents=True)
    monkeypatch.setenv("HERMES_HOME", str(path))
    for var in ("HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS",
                "HERMES_TRACE_HOOKS", "HERMES_BUNDLED_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return path


@pytest.fixture
def calculator(home: Path) -> Path:
    """The seed guide's calculator plugin, copied unmodified into $HERMES_HOME/plugins/."""
    target = home / "plugins" / "calculator"
    shutil.copytree(FIXTURES / "calculator", target)
    return target


# --- PostgreSQL ------------------------------------------------------------------------------

DEFAULT_POSTGRES_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The test server's DSN (HERMES_TEST_POSTGRES_DSN, else the local default); skips the
    test with the reason when psycopg is missing or no server answers."""
    import os

    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install "
                                  "'hermes-agent-runtime[session-postgres]'")
    dsn = os.environ.get("HERMES_TEST_POSTGRES_DSN") or DEFAULT_POSTGRES_DSN
    try:
        conn = psycopg.connect(dsn, connect_timeout=3, autocommit=True)
    except psycopg.Error as exc:
        pytest.skip(f"no PostgreSQL server for the postgres session-store tests at {dsn} "
                    f"({str(exc).strip().splitlines()[0]}); start one there or set "
                    "HERMES_TEST_POSTGRES_DSN")
    try:
        # once, in public: a test's own schema (dropped after it) must not hold it
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
    except psycopg.errors.UniqueViolation:
        pass  # another test process created it at the same moment
    except psycopg.Error as exc:
        pytest.skip(f"the PostgreSQL test database at {dsn} lacks pg_trgm and this user "
                    f"cannot create it ({str(exc).strip().splitlines()[0]}); run CREATE "
                    "EXTENSION pg_trgm; there (Debian/Ubuntu: postgresql-contrib)")
    finally:
        conn.close()
    return dsn


@pytest.fixture
def pg_schemas(postgres_dsn: str) -> Iterator[Callable[..., str]]:
    """``pg_schemas(name)``: the DSN of a schema of this test's own (created on first use,
    dropped after the test), so tests run in parallel without colliding. Its search_path is
    that schema alone: whatever other runs left in ``public`` is never on it.
    ``pg_schemas(name, then=[other, ...])`` puts this test's schemas ``other`` after it."""
    import uuid

    import psycopg
    from psycopg.conninfo import make_conninfo

    made: dict[str, str] = {}
    prefix = f"hermes_test_{uuid.uuid4().hex[:12]}"

    def schema(name: str) -> str:
        if name not in made:
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{prefix}_{name}"')
            made[name] = f"{prefix}_{name}"
        return made[name]

    def dsn_for(name: str = "main", then: Iterable[str] = ()) -> str:
        path = ",".join([schema(name), *(schema(other) for other in then)])
        return make_conninfo(postgres_dsn, options=f"-csearch_path={path}",
                             application_name=f"{prefix}_{name}")
    yield dsn_for
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for made_schema in made.values():
            conn.execute(f'DROP SCHEMA IF EXISTS "{made_schema}" CASCADE')
