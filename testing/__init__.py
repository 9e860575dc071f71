"""Helpers for testing plugins (and hermes itself): a fresh kernel per test, no global state.

    from hermes_agent.testing import make_kernel, register_plugin, HookRecorder

    def test_my_tool(tmp_path):
        kernel = make_kernel(tmp_path, plugins=[my_plugin])
        assert json.loads(kernel.tools.dispatch("my_tool", {"x": 1}))["ok"]

The same helpers are pytest fixtures (``hermes_kernel``, ``hook_recorder``) through the
``pytest11`` entry point. A session-store backend runs the conformance suite of
:mod:`hermes_agent.testing.session_store_conformance` (see docs/sessions.md).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..hookspecs import EVENT_HOOKS
from ..kernel import Kernel, PluginStatus

__all__ = ["make_kernel", "register_plugin", "HookRecorder", "write_plugin"]


def make_kernel(home: Path | str | None = None, *, config: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None, plugins: Iterable[Any] = (),
                entry_points: bool = False, builtins: bool = False, boot: bool = True) -> Kernel:
    """A new, isolated kernel. ``home`` defaults to a fresh temporary directory; ``config`` is
    written to its config.yaml; ``env`` replaces the process environment (default: empty);
    ``plugins`` are in-memory plugin objects (modules, objects or ``register(ctx)`` callables)
    registered after boot. Entry points and builtin plugins are off unless asked for."""
    import yaml

    home_path = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="hermes-test-"))
    home_path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (home_path / "config.yaml").write_text(yaml.safe_dump(dict(config)), encoding="utf-8")
    kernel = Kernel(home_path, env={"HERMES_HOME": str(home_path), **(env or {})},
                    entry_points=entry_points, builtins=builtins)
    if boot:
        kernel.boot()
    for plugin in plugins:
        status = kernel.register_plugin(plugin)
        if status.state != "loaded":
            raise AssertionError(f"test plugin {status.name!r} failed to load: {status.reason}")
    return kernel


@contextmanager
def register_plugin(kernel: Kernel, plugin: Any, name: str | None = None) -> Iterator[PluginStatus]:
    """Register ``plugin`` for the duration of a ``with`` block, then remove everything it added."""
    status = kernel.register_plugin(plugin, name)
    try:
        yield status
    finally:
        kernel.unregister_plugin(status.name)


class HookRecorder:
    """Records every call of the given hooks (default: all event hooks) with its payload."""

    def __init__(self, kernel: Kernel, hooks: Iterable[str] = (), name: str = "hook-recorder"):
        self.kernel = kernel
        self.name = name
        self.calls: list[tuple[str, dict[str, Any]]] = []
        wanted = list(hooks) or list(EVENT_HOOKS)

        def register(ctx: Any) -> None:
            for hook in wanted:
                ctx.register_hook(hook, self._recorder(hook))

        kernel.register_plugin(register, name)

    def _recorder(self, hook: str) -> Any:
        def record(**payload: Any) -> None:
            payload.pop("telemetry_schema_version", None)
            self.calls.append((hook, payload))
        return record

    def names(self) -> list[str]:
        return [hook for hook, _ in self.calls]

    def payloads(self, hook: str) -> list[dict[str, Any]]:
        return [payload for name, payload in self.calls if name == hook]

    def close(self) -> None:
        self.kernel.unregister_plugin(self.name)


def write_plugin(root: Path, name: str, init_source: str, *, manifest: str | None = None,
                 files: Mapping[str, str] | None = None) -> Path:
    """Create a directory plugin ``root/name`` with an ``__init__.py`` and a plugin.yaml."""
    import textwrap

    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "__init__.py").write_text(textwrap.dedent(init_source), encoding="utf-8")
    (directory / "plugin.yaml").write_text(
        textwrap.dedent(manifest) if manifest is not None else f"name: {name}\nversion: 1.0.0\n",
        encoding="utf-8")
    for rel, text in (files or {}).items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return directory
