"""Fixtures of the web tool tests: the fake web, the test backend plugins installed in
$HERMES_HOME/plugins, a kernel with the builtin plugins over them, and a tool caller."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import ToolCallContext
from hermes_agent.testing import make_kernel

from .fake_web import FakeWeb

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    with FakeWeb() as fake:
        yield fake
        fake.release()


@pytest.fixture
def backends(home: Path) -> Path:
    """The ``fakeweb`` and ``keyed`` test plugins, copied into $HERMES_HOME/plugins."""
    for name in ("fakeweb", "keyed"):
        shutil.copytree(PLUGINS / name, home / "plugins" / name)
    return home / "plugins"


def web_config(web: FakeWeb, **section: Any) -> dict[str, Any]:
    return {"plugins": {"enabled": ["fakeweb", "keyed"],
                        "entries": {"fakeweb": {"url": web.url}}},
            "web": section}


@pytest.fixture
def kernel_with(home: Path, backends: Path, web: FakeWeb):  # type: ignore[no-untyped-def]
    """``kernel_with(web_section, env=..., **config)``: a booted kernel with the test backends."""

    def build(section: dict[str, Any] | None = None, env: dict[str, str] | None = None,
              **extra: Any) -> Any:
        config = {**web_config(web, **(section or {})), **extra}
        return make_kernel(home, config=config, env={"HERMES_HOME": str(home), **(env or {})},
                           builtins=True)

    return build


def call(kernel: Any, tool: str, session: str = "s1", **args: Any) -> dict[str, Any]:
    """Dispatch ``tool`` as the agent does and parse its JSON result."""
    text = kernel.tools.dispatch(tool, args, context=ToolCallContext(session_id=session))
    return json.loads(text)
