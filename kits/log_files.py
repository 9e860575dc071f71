"""Owner: the builtin plugin `operations` (``hermes logs`` reads them). The logs hermes writes
under ``$HERMES_HOME/logs``, rotated and bounded.

:func:`install_file_logging` (called by the CLI when it builds a run's kernel) sends the
warnings and errors of hermes's loggers into one file per component:

- ``gateway.log``: ``hermes_agent.gateway`` and below (the platforms too);
- ``cron.log``: ``hermes_agent.cron``;
- ``agent.log``: every other ``hermes_agent.*`` logger (the agent loop, models, tools,
  sessions, memory, plugins).

Each file is cut at ``MAX_BYTES`` into ``NAME.log.1`` ... ``NAME.log.N`` (``BACKUPS`` kept),
so a component's logs never take more than ``(BACKUPS + 1) * MAX_BYTES`` of disk. Files are
created (0600, in a 0700 folder) only when something is logged, and URLs' credentials are
masked in them. What a run printed on stderr before (the warnings of ``logging.lastResort``)
it still prints. ``HERMES_LOG_LEVEL`` (``DEBUG``, ``INFO``, ...) lowers or raises the level,
``HERMES_LOG_MAX_BYTES`` the size at which a file is cut.
MCP servers' stderr has its own rotated files beside these (``mcp-<server>.log``).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from collections.abc import Mapping
from pathlib import Path

MAX_BYTES = 1 << 20  # 1 MiB per file (HERMES_LOG_MAX_BYTES changes it)
BACKUPS = 3
LOG_DIR = "logs"
FORMAT = "%(asctime)s %(levelname)s %(name)s [pid %(process)d]: %(message)s"
#: component -> the logger names it takes (prefixes); "agent" takes the rest
COMPONENTS: dict[str, tuple[str, ...]] = {"gateway": ("hermes_agent.gateway",),
                                          "cron": ("hermes_agent.cron",)}
ROOT_LOGGER = "hermes_agent"


class _PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """A rotating file created 0600."""

    def _open(self):  # type: ignore[no-untyped-def]
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return os.fdopen(fd, self.mode, encoding=self.encoding, errors=self.errors)


class _Component(logging.Filter):
    def __init__(self, component: str):
        super().__init__()
        self.component = component

    def filter(self, record: logging.LogRecord) -> bool:
        return component_of(record.name) == self.component


def component_of(logger: str) -> str:
    for component, prefixes in COMPONENTS.items():
        if any(logger == p or logger.startswith(p + ".") for p in prefixes):
            return component
    return "agent"


def _level(env: Mapping[str, str]) -> int:
    value = env.get("HERMES_LOG_LEVEL", "").strip().upper()
    level = logging.getLevelName(value) if value else logging.WARNING
    return level if isinstance(level, int) else logging.WARNING


def _max_bytes(env: Mapping[str, str]) -> int:
    try:
        return max(1024, int(env.get("HERMES_LOG_MAX_BYTES", "") or MAX_BYTES))
    except ValueError:
        return MAX_BYTES


def install_file_logging(home: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Log hermes's warnings and errors into ``home/logs/<component>.log`` (idempotent: a
    second call for another home replaces the files). Returns the files' paths."""
    from hermes_agent import private_dir
    from hermes_agent.kits.secrets import SecretMaskingFilter

    env = os.environ if env is None else env
    logger = logging.getLogger(ROOT_LOGGER)
    folder = Path(home) / LOG_DIR
    wanted = [folder / f"{name}.log" for name in (*COMPONENTS, "agent")]
    ours = [h for h in logger.handlers if isinstance(h, _PrivateRotatingFile)]
    if sorted(Path(h.baseFilename) for h in ours) == sorted(wanted):
        return wanted
    for handler in ours:
        logger.removeHandler(handler)
        handler.close()
    try:
        private_dir(Path(home))
    except OSError:
        return []  # a home that cannot be created: nothing to log into
    level = _level(env)
    formatter = logging.Formatter(FORMAT)
    for path in wanted:
        handler = _PrivateRotatingFile(path, maxBytes=_max_bytes(env), backupCount=BACKUPS,
                                       encoding="utf-8", delay=True)
        handler.setLevel(level)
        handler.setFormatter(formatter)
        handler.addFilter(SecretMaskingFilter())
        handler.addFilter(_Component(path.stem))
        handler.createLock()
        logger.addHandler(handler)
    _FolderOnFirstRecord.install(logger, folder)
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    _keep_stderr_warnings(logger)
    return wanted


class _FolderOnFirstRecord(logging.Filter):
    """Creates the logs folder (0700) when the first record is written, not before."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.folder.is_dir():
            from hermes_agent import private_dir

            try:
                private_dir(self.folder)
            except OSError:
                return False
        return True

    @classmethod
    def install(cls, logger: logging.Logger, folder: Path) -> None:
        for handler in logger.handlers:
            if isinstance(handler, _PrivateRotatingFile):
                handler.filters = [f for f in handler.filters if not isinstance(f, cls)]
                handler.filters.insert(0, cls(folder))


def _keep_stderr_warnings(logger: logging.Logger) -> None:
    """Python prints warnings on stderr (``logging.lastResort``) only while no handler is
    configured anywhere on the record's way; the files above are such handlers. While the
    root logger has none, the same stderr handler is put beside them, at its own level
    (WARNING), so what a run printed before it still prints."""
    last = logging.lastResort
    if last is None or logging.getLogger().handlers or last in logger.handlers:
        return
    logger.addHandler(last)
